"""``worst-case-upper``: certified maximum over datasets for k = 2 (branch and bound over n_x0).

References, each able to fail: (i) brute force over every dataset of the other users and both
directions (``brute_force.true_worst_case_delta``, 50-digit enumeration), from both sides; (ii) an
independent scan of ``biswas-exact`` (SingleBinLaw: for k = 2 the x0 count is the whole histogram)
over every n_x0 and both directions at moderate n; (iii) the block view with every user's bit known
(U(0, n - 1)) against ``weak-adversary`` (a separate implementation of the same view).
"""

from __future__ import annotations

import functools
import math

import numpy as np
import pytest
from brute_force import true_worst_case_delta

from shuffledp.accounting import get_accountant
from shuffledp.accounting.worst_case.k2.blocks import Block, binary_forward_delta
from shuffledp.accounting.worst_case.k2.pair_search import PairCache, large_forward_delta
from shuffledp.accounting.worst_case.k2.pair_sum import PairSum
from shuffledp.accounting.worst_case.regimes import MAX_USERS_K2

TINY = [
    (n, e0, eps)
    for n in range(2, 8)
    for e0 in (0.5, 1.0, 2.0, 4.0)
    for eps in (0.0, 0.1, 0.5, 1.0, 3.0)
    if eps < e0
]


@pytest.mark.parametrize("n,e0,eps", TINY)
def test_k2_equals_brute_force_worst_case(n, e0, eps):
    """Upper bound on, and within 1e-9 of, the true worst case over every dataset (both directions)."""
    truth = float(true_worst_case_delta(eps, e0, n, 2).delta)
    value = float(
        get_accountant("worst-case-upper", epsilon_local=e0, n_users=n, k=2).delta_for_epsilon([eps])[0]
    )
    assert truth * (1 - 1e-12) <= value <= truth * (1 + 1e-9) + 1e-300, (value, truth)


@pytest.mark.parametrize("n,e0", [(40, 1.0), (61, 2.0), (50, 4.0)])
def test_k2_matches_scan_of_biswas_exact_over_every_n_x0(n, e0):
    epsilons = np.array([0.05, 0.2, 0.5]) * e0
    scan = np.max(
        [
            get_accountant(
                "biswas-exact", epsilon_local=e0, n_users=n, k=2, n_x0=j, direction="both"
            ).delta_for_epsilon(epsilons)
            for j in range(n)
        ],
        axis=0,
    )
    value = get_accountant("worst-case-upper", epsilon_local=e0, n_users=n, k=2).delta_for_epsilon(epsilons)
    assert np.all(value >= scan * (1 - 1e-9)), (value, scan)
    assert np.all(value <= scan * (1 + 1e-8) + 1e-300), (value, scan)


def test_block_view_bounds_every_dataset_in_the_block_and_all_bits_is_the_weak_adversary():
    n, e0, eps = 30, 2.0, 0.4
    log_den = float(np.logaddexp(e0, 0.0))
    log_p, log_q = e0 - log_den, -log_den
    p, q = math.exp(log_p), math.exp(log_q)
    single = [Block(j, j, n, log_p, log_q).upper(p, q, eps)[1] for j in range(n)]
    for a, b in [(0, 3), (5, 17), (20, 29)]:
        upper = Block(a, b, n, log_p, log_q).upper(p, q, eps)[0]
        assert upper >= max(single[a : b + 1])
    everything = Block(0, n - 1, n, log_p, log_q).upper(p, q, eps)[1]
    weak = float(
        get_accountant("weak-adversary", epsilon_local=e0, n_users=n, k=2).delta_for_epsilon([eps])[0]
    )
    assert everything == pytest.approx(weak, rel=1e-10)
    upper, best, _ = binary_forward_delta(eps, n_users=n, epsilon_local=e0)
    assert best <= max(single) <= upper <= max(single) * (1 + 1e-9)


def test_epsilon_lies_in_the_bracket_and_k4_and_large_k3_are_the_weak_adversary():
    n, e0 = 1000, 2.0
    upper = get_accountant("worst-case-upper", epsilon_local=e0, n_users=n, k=2).epsilon_for_delta(1e-6)
    lower = get_accountant("worst-case-lower", epsilon_local=e0, n_users=n, k=2).epsilon_for_delta(1e-6)
    weak = get_accountant("weak-adversary", epsilon_local=e0, n_users=n, k=2).epsilon_for_delta(1e-6)
    assert lower <= upper <= lower * 1.001 and upper < 0.9 * weak
    eps = [0.0, 0.05, 0.3]
    # k = 3 at n <= 200 is the exact maximum (test_worst_case_exact.py, test_k3_blocks.py); k = 4 is searched up to
    # n = 50 (test_k4_blocks.py), so n = 51 is the weak adversary
    for n, k in ((51, 4), (201, 3)):
        assert np.array_equal(
            get_accountant("worst-case-upper", epsilon_local=1.0, n_users=n, k=k).log_delta_for_epsilon(eps),
            get_accountant("weak-adversary", epsilon_local=1.0, n_users=n, k=k).log_delta_for_epsilon(eps),
        )
    exact = get_accountant("worst-case-upper", epsilon_local=1.0, n_users=50, k=3).log_delta_for_epsilon(eps)
    weak = get_accountant("weak-adversary", epsilon_local=1.0, n_users=50, k=3).log_delta_for_epsilon(eps)
    # eps = 0: both are the exact TV distance (the exact bound adds ~1e-12 relative for rounding)
    assert np.all(exact <= weak + 1e-11) and exact[2] < weak[2] - 0.01


# ---------------------------------------------------------------- large n: pair-sum blocks (_pair_sum)
# References: (i) the exact single-dataset value of the blanket-bit block view above (direct
# convolution in linear space, a separate implementation); (ii) a direct convolution of
# Bin(a, p) * Bin(ell, q) * Bin(c, 1/2) for the bound with blanket reports; (iii) brute force over every
# dataset; (iv) the certified maximum of ``binary_forward_delta``.


def _logs(e0):
    log_den = float(np.logaddexp(e0, 0.0))
    return e0 - log_den, -log_den


@pytest.mark.parametrize(
    "n,e0,eps", [(300, 1.0, 0.6), (1000, 1.0, 0.2), (5000, 8.0, 0.5), (20000, 2.0, 0.05), (10000, 0.5, 0.03)]
)
def test_pair_sum_equals_the_exact_single_dataset_delta_from_above(n, e0, eps):
    log_p, log_q = _logs(e0)
    p, q = math.exp(log_p), math.exp(log_q)
    for j in (0, 1, n // 3, n // 2, n - 2, n - 1):
        exact = Block(j, j, n, log_p, log_q).upper(p, q, eps)[1]
        ours = math.exp(PairSum(j, n - 1 - j, log_p, log_q).log_bound(eps))
        assert exact <= ours <= exact * (1 + 1e-6), (j, ours, exact)


@pytest.mark.parametrize("ell,e0,eps", [(1999, 4.0, 3.9), (500, 1.0, 0.9), (3000, 2.0, 0.02)])
def test_pair_sum_deep_values_against_mpmath(ell, e0, eps):
    """j = 0 (S = Bin(ell, q)) summed term by term at 50 digits, down to delta = e^-6656 (the linear-space
    block view above rounds such values to spurious ~1e-40 there: it is only an upper bound)."""
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.dps = 50
    p = mpmath.e**e0 / (mpmath.e**e0 + 1)
    q = 1 - p
    alpha, beta = p - mpmath.e**eps * q, mpmath.e**eps * p - q
    f = [mpmath.binomial(ell, h) * q**h * p ** (ell - h) for h in range(ell + 1)] + [mpmath.mpf(0)]
    truth = mpmath.fsum(max(alpha * (f[h - 1] if h else 0) - beta * f[h], 0) for h in range(ell + 2))
    log_p, log_q = _logs(e0)
    value = PairSum(0, ell, log_p, log_q).log_bound(eps)
    assert float(mpmath.log(truth)) <= value <= float(mpmath.log(truth)) + 1e-6, (
        value,
        float(mpmath.log(truth)),
    )


def _direct_delta(a, ell, c, e0, eps):
    """H(S + Bern(p) || S + Bern(q)) for S = Bin(a, p) + Bin(ell, q) + Bin(c, 1/2), by direct convolution."""
    from scipy.stats import binom

    p = math.exp(e0) / (math.exp(e0) + 1.0)
    f = np.convolve(
        np.convolve(binom.pmf(np.arange(a + 1), a, p), binom.pmf(np.arange(ell + 1), ell, 1 - p)),
        binom.pmf(np.arange(c + 1), c, 0.5),
    )
    prev, cur = np.concatenate([[0.0], f]), np.concatenate([f, [0.0]])
    terms = (p - math.exp(eps) * (1 - p)) * prev - (math.exp(eps) * p - (1 - p)) * cur
    return float(terms[terms > 0].sum())


@pytest.mark.parametrize(
    "a,ell,c,e0,eps",
    [
        (40, 200, 30, 1.0, 0.3),
        (500, 3, 100, 4.0, 0.5),
        (0, 300, 0, 2.0, 0.4),
        (120, 0, 50, 0.5, 0.1),
        (700, 900, 400, 1.0, 0.05),
    ],
)
def test_pair_sum_with_blanket_reports_against_direct_convolution(a, ell, c, e0, eps):
    log_p, log_q = _logs(e0)
    value = math.exp(PairSum(a, ell, log_p, log_q, blanket=c).log_bound(eps))
    truth = _direct_delta(a, ell, c, e0, eps)
    assert truth <= value <= truth * (1 + 1e-6) + 1e-300, (value, truth)


@pytest.mark.parametrize(
    "a,ell,c,e0,eps",
    [
        (40, 200, 30, 1.0, 0.3),
        (500, 3, 100, 4.0, 0.5),
        (0, 300, 0, 2.0, 0.4),
        (120, 0, 50, 0.5, 0.1),
        (700, 900, 400, 1.0, 0.05),
        (3000, 2500, 900, 0.5, 0.02),
        (4000, 3000, 0, 1.0, 0.05),
    ],
)
def test_key_pair_sum_brackets_the_direct_convolution(a, ell, c, e0, eps):
    """A key's pair sum (10-sd windows, Bernstein outside mass, the other tail bounded both ways) gives an
    upper value above the delta and a lower value below it (a certified bracket of the pair's delta), each
    within 1e-6 relative at the sizes the search uses them."""
    log_p, log_q = _logs(e0)
    pair = PairSum(a, ell, log_p, log_q, blanket=c, sds=10.0, key=True)
    upper, lower = pair.log_bounds(eps)
    truth = _direct_delta(a, ell, c, e0, eps)
    assert math.exp(lower) <= truth <= math.exp(upper), (lower, math.log(truth), upper)
    pair.refine()  # the other binomial's tail beyond the window from log_sf
    refined_upper, refined_lower = pair.log_bounds(eps)
    assert lower <= refined_lower and math.exp(refined_lower) <= truth <= math.exp(refined_upper) <= math.exp(
        upper
    )
    if a + ell >= 5000:  # the search's range (n > 10^4); small sums' keys are looser (crude tail bounds)
        assert math.exp(upper) <= truth * (1 + 1e-6) and math.exp(lower) >= truth * (1 - 1e-6), (
            lower,
            upper,
            truth,
        )


@pytest.mark.parametrize("n,e0,eps", [case for case in TINY if case[0] >= 3 and case[2] > 0][::3])
def test_large_search_bounds_the_brute_force_worst_case(n, e0, eps):
    truth = float(true_worst_case_delta(eps, e0, n, 2).delta)
    top, _, _ = large_forward_delta(eps, n_users=n, epsilon_local=e0)
    assert math.exp(top) >= truth * (1 - 1e-12), (math.exp(top), truth)


@pytest.mark.parametrize(
    "n,e0,eps", [(1000, 1.0, 0.2), (5000, 8.0, 0.5), (20000, 2.0, 0.05), (4000, 0.5, 0.05)]
)
def test_large_search_is_above_and_near_the_certified_maximum(n, e0, eps):
    upper, best, _ = binary_forward_delta(eps, n_users=n, epsilon_local=e0)
    top, _, _ = large_forward_delta(eps, n_users=n, epsilon_local=e0)
    assert best <= math.exp(top) <= upper * 1.05, (math.exp(top), best, upper)


def test_large_n_bracket_is_tight_and_below_the_weak_adversary():
    """n = 2 x 10^5 > MAX_USERS_K2 takes the pair-sum path; before it, worst-case-upper was weak-adversary's
    value there (ratio 1.24 here)."""
    n, e0 = 200_000, 2.0
    assert n > MAX_USERS_K2
    upper = get_accountant("worst-case-upper", epsilon_local=e0, n_users=n, k=2).epsilon_for_delta(1e-6)
    lower = get_accountant("worst-case-lower", epsilon_local=e0, n_users=n, k=2).epsilon_for_delta(1e-6)
    weak = get_accountant("weak-adversary", epsilon_local=e0, n_users=n, k=2).epsilon_for_delta(1e-6)
    assert lower <= upper <= lower * 1.005 and upper < 0.9 * weak
    accountant = get_accountant("worst-case-upper", epsilon_local=e0, n_users=n, k=2)
    assert accountant.delta_for_epsilon([e0, 2 * e0]).tolist() == [0.0, 0.0]


# ------------------------------------------------- reuse across epsilons: the same numbers
@pytest.mark.parametrize(
    "a,ell,c,e0",
    [
        (40, 200, 30, 1.0),
        (500, 3, 100, 4.0),
        (0, 3000, 0, 0.5),
        (20000, 70000, 9000, 0.5),
        (300_000, 200_000, 0, 2.0),
    ],
)
def test_boundary_warm_started_is_the_crossing_of_the_computed_gaps(a, ell, c, e0):
    """The boundary found from a guess (cold, then warm from the last one, epsilons in a search's
    jumping order) is the first h whose computed gap log f(h - 1) - log f(h) exceeds the ratio, read
    off a scan of every h of the window; and the exponential search from the normal guess agrees."""
    log_p, log_q = _logs(e0)
    pair = PairSum(a, ell, log_p, log_q, blanket=c)
    fresh = PairSum(a, ell, log_p, log_q, blanket=c)
    centre = int(round(pair.mean))
    span = np.arange(
        max(centre - 12 * int(math.sqrt(pair.var)) - 40, 1),
        min(centre + 12 * int(math.sqrt(pair.var)) + 40, pair.total) + 1,
    )
    lf = pair.log_f(np.concatenate([[span[0] - 1], span]))
    gaps = lf[:-1] - lf[1:]  # g(h), h in span
    for eps in (0.6 * e0, 0.1 * e0, 0.3 * e0, 0.29 * e0, 0.2900001 * e0, 0.01 * e0, 0.95 * e0):
        log_ratio = math.log(
            (math.exp(eps) * math.exp(log_p) - math.exp(log_q))
            / (math.exp(log_p) - math.exp(eps) * math.exp(log_q))
        )
        hits = np.flatnonzero(gaps > log_ratio)
        if hits.size == 0 or hits[0] == 0:
            continue  # the crossing is outside the scanned window
        expected = int(span[hits[0]])
        assert pair.boundary(log_ratio) == expected
        assert fresh._boundary_search(log_ratio) == expected


def test_pair_sums_sharing_pieces_give_the_same_bounds_bit_for_bit():
    """Pair sums built from a shared memo (windows, pmf ranges) and re-evaluated at many epsilons
    (cached log f, tails and boundaries) give exactly the values of fresh ones."""
    log_p, log_q = _logs(0.5)
    memo: dict = {}
    cases = [(50_000, 140_000, 3000), (50_000, 120_000, 5000), (60_000, 140_000, 0), (140_000, 50_000, 3000)]
    shared = [PairSum(a, ell, log_p, log_q, blanket=c, memo=memo) for a, ell, c in cases]
    for eps in (0.02, 0.011, 0.0125, 0.01253, 0.012529999):
        for (a, ell, c), pair in zip(cases, shared):
            assert pair.log_bound(eps) == PairSum(a, ell, log_p, log_q, blanket=c).log_bound(eps), (
                a,
                ell,
                c,
                eps,
            )
    assert len(memo) < 3 * len(cases)  # pieces were shared


def _eager_search(eps, n, e0, relative_stop=1e-3, max_evaluations=200):
    """The branch and bound without lazy bounds: every block's bound computed when
    the block is made, (-bound, a, b) on the heap; the reference the lazy search must reproduce."""
    import heapq

    from shuffledp.accounting.worst_case.k2 import pair_search as pair_sum

    bound = pair_sum._BlockBounds(eps, n_users=n, epsilon_local=e0, cache=pair_sum.PairCache())
    best, best_j = -np.inf, -1
    for j in (0, n - 1):
        value = bound(j, j)
        if value > best:
            best, best_j = value, j
    bound.choose_blanket(best)
    size = max(1, -(-n // pair_sum._FIRST_BLOCKS))
    heap = [(-bound(a, min(n - 1, a + size - 1)), a, min(n - 1, a + size - 1)) for a in range(0, n, size)]
    heapq.heapify(heap)
    log_stop = math.log1p(relative_stop)
    while True:
        negative, a, b = heapq.heappop(heap)
        if (
            a == b
            or -negative <= best + log_stop
            or negative == np.inf
            or bound.evaluations >= max_evaluations
        ):
            return -negative, best, best_j
        middle = (a + b) // 2
        for lo, hi in ((a, middle), (middle + 1, b)):
            value = bound(lo, hi)
            heapq.heappush(heap, (-value, lo, hi))
            if lo == hi and value > best:
                best, best_j = value, lo
        value = bound(middle, middle)
        if value > best:
            best, best_j = value, middle


@pytest.mark.parametrize(
    "n,e0,eps,evaluations",
    [
        (7, 1.0, 0.3, 200),
        (40, 2.0, 0.2, 200),
        (1000, 1.0, 0.2, 200),
        (5000, 8.0, 0.5, 200),
        (20000, 2.0, 0.05, 120),
        (200_000, 0.5, 0.004, 200),
        (200_000, 4.0, 0.2, 60),
        (200_000, 0.5, 0.02, 120),
        (50_000, 8.0, 1.5, 120),
    ],
)
def test_lazy_search_returns_the_eager_search_bit_for_bit(n, e0, eps, evaluations):
    """Keys are certified and above the bounds they stand for, so the lazy search resolves blocks in the
    eager order: the same (top, best, best j), to the last bit."""
    assert large_forward_delta(
        eps, n_users=n, epsilon_local=e0, max_evaluations=evaluations
    ) == _eager_search(eps, n, e0, max_evaluations=evaluations)


@pytest.mark.parametrize(
    "n,e0,eps",
    [(6, 1.0, 0.3), (30, 2.0, 0.2), (25, 0.5, 0.1), (300, 4.0, 1.0), (200, 8.0, 2.0), (400, 0.5, 0.25)],
)
def test_keys_bound_the_block_bound_and_every_dataset_of_the_block(n, e0, eps):
    """key(a, b) >= the block's bound >= F(j) for every j in the block (exact single-dataset delta of the
    blanket-bit view, a separate implementation), over every block of a grid of sizes."""
    from shuffledp.accounting.worst_case.k2 import pair_search as pair_sum

    bound = pair_sum._BlockBounds(eps, n_users=n, epsilon_local=e0, cache=pair_sum.PairCache())
    bound.choose_blanket(-20.0)
    log_p, log_q = _logs(e0)
    p, q = math.exp(log_p), math.exp(log_q)
    delta = [Block(j, j, n, log_p, log_q).upper(p, q, eps)[1] for j in range(n)]
    for width in (1, 2, 3, max(1, n // 5), n):
        for a in range(0, n, width):
            b = min(n - 1, a + width - 1)
            exact = bound.exact(a, b)
            key, is_exact, lower = _key_alone(bound, a, b)
            assert not is_exact and key >= exact >= math.log(max(delta[a : b + 1])) - 1e-12, (
                a,
                b,
                key,
                exact,
            )
            assert lower <= exact, (a, b, lower, exact)
            refined, refined_lower = bound.refine(a, b)  # the other tail from log_sf: both tighten
            assert refined <= key and refined >= exact >= refined_lower >= lower, (
                a,
                b,
                refined,
                refined_lower,
            )


def _key_alone(bound, a, b):
    """A key computed without the block's bound in the cache (else key() returns the bound itself)."""
    from shuffledp.accounting.worst_case.k2.binomial_pieces import WINDOW_SDS

    name = bound._key(a, b, WINDOW_SDS)
    saved = bound.cache.pairs.pop(name, None)
    try:
        return bound.key(a, b)
    finally:
        if saved is not None:
            bound.cache.pairs[name] = saved


def test_window_size_is_the_size_of_log_window():
    """A key's rounding allowance uses the width of the full window, computed without its values."""
    from shuffledp.accounting.numerics.windows import log_window
    from shuffledp.accounting.worst_case.k2.binomial_pieces import WINDOW_SDS, window_size

    for e0 in (0.5, 4.0):
        log_p, log_q = _logs(e0)
        for N in (0, 1, 5, 100, 12_345, 10**6, 5 * 10**7):
            for pair in ((log_p, log_q), (log_q, log_p), (math.log(0.5), math.log(0.5))):
                assert window_size(N, *pair) == log_window(N, *pair, WINDOW_SDS)[1].size


def test_chunked_convolution_and_a_key_on_it():
    """Chunked convolution of positive arrays: the direct one to ~length x 2^-52 relative, any length of
    the shorter array (also not a multiple of the chunk); and a key whose blanket window is convolved in
    chunks is above the bound it stands for and within 1e-6 of it."""
    from shuffledp.accounting.worst_case.k2.log_sums import convolve_positive

    rng = np.random.default_rng(7)
    for sizes in ((5000, 3001), (777, 9000), (20, 20)):
        x, y = rng.random(sizes[0]), rng.random(sizes[1])
        direct = np.convolve(x, y)
        chunked = convolve_positive(x, y, direct_up_to=100, chunk=256)
        assert chunked.shape == direct.shape
        assert np.max(np.abs(chunked - direct) / direct) < 1e-13 * min(sizes)
    log_p, log_q = _logs(0.5)
    a, ell, c, eps = 300_000, 400_000, 200_000, 0.002  # delta ~ 1e-8 (far below it keys loosen: module doc)
    exact = PairSum(a, ell, log_p, log_q, blanket=c)
    key = PairSum(a, ell, log_p, log_q, blanket=c, sds=10.0, key=True)
    assert key.log_w.size > 4096  # the key's blanket window went through the chunks
    assert exact.log_bound(eps) <= key.log_bound(eps) + math.log1p(1e-9) <= exact.log_bound(eps) + 1e-6


@pytest.mark.parametrize("n,e0,eps", [(200_000, 0.5, (0.004, 0.0035)), (50_000, 2.0, (0.12, 0.08))])
def test_stale_keys_bound_the_block_bound(n, e0, eps):
    """A key from an earlier step's pair sum with fewer blanket reports (a larger blanket_sds) is above
    this step's block bound (less noise: a larger delta), and the search's steps that use such keys
    return the eager search's (top, best, best j) bit for bit."""
    from shuffledp.accounting.worst_case.k2 import pair_search as pair_sum

    cache = PairCache()
    large_forward_delta(eps[0], n_users=n, epsilon_local=e0, cache=cache)
    bound = pair_sum._BlockBounds(eps[1], n_users=n, epsilon_local=e0, cache=cache)
    bound.blanket_sds = min(cache.blanket_sds)[0] - 0.5  # this step: more blanket reports
    checked = 0
    for name in [k for k in cache.pairs if len(k) == 4]:
        a, b = name[0], n - 1 - name[1]
        if a < b:
            stale = bound._stale(a, b)
            assert stale is not None and stale >= bound.exact(a, b), (a, b, stale)
            checked += 1
    assert checked > 20
    bound.blanket_sds = max(cache.blanket_sds)[0] + 0.5  # fewer reports than every earlier step: none
    assert all(bound._stale(k[0], n - 1 - k[1]) is None for k in cache.pairs if len(k) == 4)
    for step in eps[1:] + (eps[1] * 1.01,):
        assert large_forward_delta(step, n_users=n, epsilon_local=e0, cache=cache) == _eager_search(
            step, n, e0
        ), step


@functools.cache
def _fresh_search(eps: float, n: int, e0: float) -> tuple[float, float, int]:
    """A search with a cache of its own, at the library's cache limit: a function of its arguments
    alone, so the cases below that compare against the same one compute it once."""
    return large_forward_delta(eps, n_users=n, epsilon_local=e0)


@pytest.mark.parametrize("limit", [200_000, 2_000_000])
def test_search_steps_sharing_a_small_cache_give_fresh_values(monkeypatch, limit):
    """Pair sums kept across a search's steps, evicted (those of earlier steps first, or all) when the
    cache passes its limit: every step's (top, best, best j) equals a fresh search's, bit for bit."""
    from shuffledp.accounting.worst_case.k2 import pair_search as pair_sum

    n, e0, cache = 200_000, 0.5, PairCache()
    steps = (0.004, 0.003, 0.0035, 0.00351, 0.0035099, 0.005)
    for eps in steps:
        _fresh_search(eps, n, e0)  # before the limit below
    monkeypatch.setattr(pair_sum, "_CACHE_DOUBLES", limit)
    for eps in steps:
        assert large_forward_delta(eps, n_users=n, epsilon_local=e0, cache=cache) == _fresh_search(
            eps, n, e0
        ), eps
        assert cache.doubles <= 2 * limit + 4 * 10**5  # bounded (one pair sum past the limit at most)
