"""k >= 4 worst case by branch and bound over blocks of datasets (worst_case/k4/blocks.py).

References, each able to fail:
* brute force, 50 digits (``brute_force.histogram_distribution_of_counts``): every node's bound is above
  the exact forward delta of every dataset in it, and every leaf equals its dataset's delta; the root
  (no sure user) equals Koskela et al.'s weak adversary by literal enumeration of blanket bits;
* the independent exact enumeration (``exact_enumeration.worst_case``): the search is above the true
  worst case (both directions) and, where it closed, equal to it to 1e-9;
* ``worst-case-upper`` (which now takes the minimum with this search) stays above the truth and above
  ``worst-case-lower``, and is at most ``weak-adversary``.
"""

from __future__ import annotations

import itertools

import mpmath
import numpy as np
import pytest
from brute_force import histogram_distribution_of_counts, hockey_stick, weak_adversary_view_bruteforce
from exact_enumeration import worst_case

from shuffledp.accounting import get_accountant
from shuffledp.accounting.worst_case.k4.blocks import (
    K4BlockSearch,
    _children,
    _Node,
    _params,
    node_bound,
    node_laws,
)


def _datasets(n: int, k: int) -> list[tuple]:
    """Every dataset (a, b, c_1 >= ... >= c_{k-2}) of the n - 1 others, outside values up to permutation."""
    out = []
    for a in range(n):
        for b in range(n - a):
            rest = n - 1 - a - b
            for parts in itertools.product(range(rest + 1), repeat=k - 2):
                if sum(parts) == rest and all(x >= y for x, y in itertools.pairwise(parts)):
                    out.append((a, b) + parts)
    return out


def _exact(d: tuple, e0: float, eps: float, forward: bool = True) -> float:
    """50-digit delta of the dataset ``d`` of the others (u on x0 vs x1; reversed if not ``forward``)."""
    P = histogram_distribution_of_counts((d[0] + 1,) + d[1:], len(d), epsilon_local=mpmath.mpf(e0))
    Q = histogram_distribution_of_counts((d[0], d[1] + 1) + d[2:], len(d), epsilon_local=mpmath.mpf(e0))
    return float(hockey_stick(P, Q, mpmath.mpf(eps)) if forward else hockey_stick(Q, P, mpmath.mpf(eps)))


def _inside(node: tuple, d: tuple) -> bool:
    """Whether dataset ``d`` belongs to the node: its counts before the open value exact, the open one >=."""
    return d[: len(node) - 1] == node[:-1] and d[len(node) - 1] >= node[-1]


def _tree(par) -> list[tuple]:
    nodes, todo = [], [(0,)]
    while todo:
        node = todo.pop()
        nodes.append(node)
        todo.extend(kid.counts for kid in _children(par, _Node(node)))
    return nodes


@pytest.mark.parametrize(
    "n,k,e0,f",
    [
        (4, 4, 0.5, 0.5),
        (5, 4, 2.0, 0.3),
        (5, 4, 1.0, 0.9),
        (6, 4, 4.0, 0.5),
        (4, 5, 2.0, 0.5),
        (5, 5, 0.5, 0.25),
        (4, 6, 1.0, 0.75),
    ],
)
def test_every_node_is_above_each_of_its_datasets(n, k, e0, f):
    """Both directions: the forward delta of every dataset below each node's bound; leaves equal to it; every
    dataset in exactly one leaf; the reverse direction of each dataset is the forward one of a relabelled
    dataset, so the search is above both."""
    eps = f * e0
    par = _params(n, k, e0)
    data = _datasets(n, k)
    forward = {d: _exact(d, e0, eps) for d in data}
    leaves = []
    for node in _tree(par):
        bound = node_bound(par, node, eps)
        inside = [d for d in data if _inside(node, d)]
        assert inside, node
        assert all(bound >= forward[d] for d in inside), (node, bound, max(forward[d] for d in inside))
        if sum(node) == n - 1:
            leaves.append(node)
            (d,) = inside
            assert forward[d] <= bound <= forward[d] * (1 + 1e-10) + 1e-300  # certified: rounding added
    padded = sorted(tuple(leaf) + (0,) * (k - len(leaf)) for leaf in leaves)
    assert padded == sorted(data)
    worst = K4BlockSearch(n_users=n, k=k, epsilon_local=e0).worst(eps)
    truth = max(max(forward.values()), max(_exact(d, e0, eps, forward=False) for d in data))
    assert worst.exact
    assert truth <= worst.upper <= truth * (1 + 1e-10)


@pytest.mark.parametrize("n,k,e0,eps", [(4, 4, 1.0, 0.5), (5, 5, 2.0, 0.6), (5, 4, 0.5, 0.1)])
def test_root_is_the_weak_adversary(n, k, e0, eps):
    """The node with no sure user reveals every other user's blanket bit: Koskela et al.'s weak adversary."""
    root = node_bound(_params(n, k, e0), (0,), eps)
    literal = float(weak_adversary_view_bruteforce(eps, e0, n, k))
    assert root == pytest.approx(literal, rel=1e-12)


@pytest.mark.parametrize("n,k", [(10, 4), (16, 4), (8, 5), (10, 5)])
@pytest.mark.parametrize("e0", [0.5, 2.0, 4.0])
def test_search_against_the_exact_enumeration(n, k, e0):
    """Above the true worst case over every dataset and both directions; equal to it (1e-9) where it closed."""
    epsilons = [f * e0 for f in (0.05, 0.25, 0.5, 0.75, 0.95)]
    search = K4BlockSearch(n_users=n, k=k, epsilon_local=e0)
    for eps, truth in zip(epsilons, worst_case(epsilons, e0, n, k)):
        found = search.worst(eps)
        assert found.upper >= truth.low * (1 - 1e-12)
        if found.exact:
            assert found.upper <= truth.high * (1 + 1e-9) + 1e-300


def test_screening_changes_nothing():
    """A search that saw other epsilons (screening by bounds at smaller epsilons) equals fresh searches."""
    warm = K4BlockSearch(n_users=12, k=4, epsilon_local=2.0)
    for eps in (0.3, 1.5, 0.9, 1.2, 0.1):
        fresh = K4BlockSearch(n_users=12, k=4, epsilon_local=2.0).worst(eps)
        assert warm.worst(eps).upper == fresh.upper


@pytest.mark.parametrize("n,k,e0", [(10, 4, 1.0), (12, 5, 2.0), (8, 10, 0.5), (6, 100, 1.0)])
def test_accountant_between_lower_and_weak(n, k, e0):
    """worst-case-upper: above worst-case-lower, at most weak-adversary, above the truth where it is enumerated."""
    epsilons = [f * e0 for f in (0.1, 0.4, 0.7)]
    upper = get_accountant("worst-case-upper", epsilon_local=e0, n_users=n, k=k).delta_for_epsilon(epsilons)
    lower = get_accountant("worst-case-lower", epsilon_local=e0, n_users=n, k=k).delta_for_epsilon(epsilons)
    weak = get_accountant("weak-adversary", epsilon_local=e0, n_users=n, k=k).delta_for_epsilon(epsilons)
    for up, lo, wk in zip(upper, lower, weak):
        assert lo * (1 - 1e-12) <= up <= wk * (1 + 1e-12)
    if (n + 1) ** (k - 1) <= 200_000:
        for up, truth in zip(upper, worst_case(epsilons, e0, n, k)):
            assert up >= truth.low * (1 - 1e-12)


def test_bad_input_names_the_parameter():
    with pytest.raises(ValueError, match="`k`"):
        K4BlockSearch(n_users=5, k=3, epsilon_local=1.0)
    with pytest.raises(ValueError, match="`n_users`"):
        K4BlockSearch(n_users=1, k=4, epsilon_local=1.0)


@pytest.mark.slow
@pytest.mark.parametrize("n,k", [(24, 4), (14, 5)])
@pytest.mark.parametrize("e0", [1.0, 2.0])
def test_upper_within_1_05_of_the_truth_on_the_largest_enumerations(n, k, e0):
    """The goal: worst-case-upper / true delta <= 1.05 on the exact enumerations at these sizes; measured
    here <= 1 + 1e-9 (the search closes)."""
    epsilons = [f * e0 for f in (0.25, 0.5, 0.75)]
    upper = get_accountant("worst-case-upper", epsilon_local=e0, n_users=n, k=k).delta_for_epsilon(epsilons)
    for up, truth in zip(upper, worst_case(epsilons, e0, n, k)):
        assert truth.low * (1 - 1e-12) <= up <= truth.high * 1.05


@pytest.mark.parametrize("n,k,e0", [(10, 4, 1.0), (8, 5, 2.0)])
def test_cropped_laws_and_beta_tails_stay_above_the_truth(n, k, e0):
    """The mass allowances used above n = 24 (crops of the laws' edges, Bin(U, gamma) tails left out), forced
    large here so that they bite at small n: the search stays above the exact enumeration in every cell, and
    within the allowances of the uncropped search."""
    epsilons = [f * e0 for f in (0.05, 0.25, 0.5, 0.75, 0.95)]
    plain = K4BlockSearch(n_users=n, k=k, epsilon_local=e0)
    rough = K4BlockSearch(n_users=n, k=k, epsilon_local=e0, crop=1e-2, tail=1e-1)
    for eps, truth in zip(epsilons, worst_case(epsilons, e0, n, k)):
        exact, cropped = plain.worst(eps), rough.worst(eps)
        assert cropped.upper >= truth.low * (1 - 1e-12)
        assert cropped.upper <= exact.upper + 1.0


def test_crops_drop_mass_and_count_it():
    """A crop removes edge slabs of total mass <= tau each and reports at least the mass it removed."""
    par = _params(30, 4, 1.0)
    law, lost = node_laws(par, (20, 3, 4), crop=1e-9).laws[-1], node_laws(par, (20, 3, 4), crop=1e-9).lost[-1]
    full = node_laws(par, (20, 3, 4)).laws[-1]
    assert law.size < full.size
    assert 0.0 < float(full.sum()) - float(law.sum()) <= lost * (1 + 1e-9) + 1e-15
    assert lost <= 1e-9 * 2 * law.ndim * 30


def test_tightened_nodes_partition_the_datasets():
    """With the open outside count raised to the least its datasets hold, the leaves are still every
    dataset exactly once (k = 4, 5, 6)."""
    for n, k in [(7, 4), (6, 5), (6, 6)]:
        par = _params(n, k, 1.0)
        leaves = [node for node in _tree(par) if sum(node) == n - 1]
        padded = sorted(tuple(leaf) + (0,) * (k - len(leaf)) for leaf in leaves)
        assert padded == sorted(_datasets(n, k))


def _group_law(count: int, probs) -> np.ndarray:
    """Multinomial(count; probs over x0..x3) as an array over (h0, h1, h2), h3 implied (closed form)."""
    from scipy.special import gammaln

    h = np.arange(count + 1.0)
    h0, h1, h2 = np.meshgrid(h, h, h, indexing="ij")
    h3 = count - h0 - h1 - h2
    ok = h3 >= 0
    logs = np.log(probs)
    with np.errstate(invalid="ignore"):
        log_pmf = (
            gammaln(count + 1.0)
            - gammaln(h0 + 1)
            - gammaln(h1 + 1)
            - gammaln(h2 + 1)
            - gammaln(np.where(ok, h3, 0) + 1)
            + h0 * logs[0]
            + h1 * logs[1]
            + h2 * logs[2]
            + np.where(ok, h3, 0) * logs[3]
        )
    return np.where(ok, np.exp(log_pmf), 0.0)


def _dataset_delta(counts: tuple, n: int, e0: float, eps: float, forward: bool = True) -> float:
    """Independent reference (k = 4): exact delta of one dataset (a, b, c1, c2) of the n - 1 others, from the
    closed-form multinomial law of each value's users, convolved (FFT; ~1e-15 absolute), u added."""
    return _dataset_hockey_stick(*_dataset_laws(counts, n, e0), eps, forward)


def _dataset_hockey_stick(P: np.ndarray, Q: np.ndarray, eps: float, forward: bool = True) -> float:
    """sum (P - e^eps Q)_+ of :func:`_dataset_laws` (Q and P swapped if not ``forward``)."""
    import math

    if not forward:
        P, Q = Q, P
    return float(np.sum(np.maximum(P - math.exp(eps) * Q, 0.0)))


def _dataset_laws(counts: tuple, n: int, e0: float) -> tuple[np.ndarray, np.ndarray]:
    """(P, Q): the histogram's (h0, h1, h2) laws of :func:`_dataset_delta`'s dataset, u on x0 and on x1 (they
    do not depend on epsilon or the direction: formed once per dataset, the deltas from them)."""
    import math

    from scipy.signal import fftconvolve

    p = math.exp(e0) / (math.exp(e0) + 3)
    q = 1.0 / (math.exp(e0) + 3)
    law = np.ones((1, 1, 1))
    for value, count in enumerate(counts):
        if count:
            probs = [p if i == value else q for i in range(4)]
            law = np.clip(fftconvolve(law, _group_law(count, probs)), 0.0, None)
    size = tuple(s + 1 for s in law.shape)

    def with_u(probs):
        out = np.zeros(size)
        out[:-1, :-1, :-1] += probs[3] * law
        out[1:, :-1, :-1] += probs[0] * law
        out[:-1, 1:, :-1] += probs[1] * law
        out[:-1, :-1, 1:] += probs[2] * law
        return out

    return with_u([p, q, q, q]), with_u([q, p, q, q])


@pytest.mark.slow
@pytest.mark.parametrize("n,k,e0", [(50, 4, 1.0), (50, 4, 2.0), (100, 4, 2.0)])
def test_random_datasets_at_larger_n_never_above_the_upper(n, k, e0):
    """Seeded random datasets (both directions) at n = 50 (block search) and 100 (weak-adversary): the
    independent single-dataset delta never above ``worst-case-upper``; the shapes "all on x0 but one on x2" and
    "all on one outside value" included (the observed maximisers)."""

    rng = np.random.default_rng(34)
    data = [(n - 2, 0, 1, 0), (0, 0, n - 1, 0), (0, n - 1, 0, 0)]
    for _ in range(4):
        cut = np.sort(rng.integers(0, n, size=3))
        a, b, c, d = cut[0], cut[1] - cut[0], cut[2] - cut[1], n - 1 - cut[2]
        data.append((int(a), int(b), int(max(c, d)), int(min(c, d))))
    epsilons = [0.5 * e0, 0.8 * e0]
    upper = get_accountant("worst-case-upper", epsilon_local=e0, n_users=n, k=k).delta_for_epsilon(epsilons)
    for d in data:
        laws = _dataset_laws(
            d, n, e0
        )  # the same reference at each epsilon and direction: its laws formed once
        for eps, up in zip(epsilons, upper):
            for forward in (True, False):
                assert _dataset_hockey_stick(*laws, eps, forward) <= up * (1 + 1e-9), (d, eps, forward)


@pytest.mark.parametrize(
    "counts,e0,eps", [((48, 0, 1), 2.0, 1.6), ((0, 0, 49), 2.0, 1.2), ((20, 9, 12, 8), 1.0, 0.4)]
)
def test_cropped_leaf_equals_the_independent_reference_at_n_50(counts, e0, eps):
    """A leaf of the search at n = 50 (laws cropped, the dropped mass added) is its dataset's delta: above the
    independent closed-form reference and within 1e-9 of it; the search at that epsilon is above it."""
    from shuffledp.accounting.worst_case.k4.blocks import leaf_delta

    full = tuple(counts) + (0,) * (4 - len(counts))
    ref = _dataset_delta(full, 50, e0, eps)
    search = K4BlockSearch(n_users=50, k=4, epsilon_local=e0)
    leaf = node_bound(_params(50, 4, e0), tuple(counts), eps, search._node_laws(tuple(counts)), search._tail)
    assert ref * (1 - 1e-9) <= leaf <= ref * (1 + 1e-9)
    assert leaf_delta(eps, n_users=50, k=4, epsilon_local=e0, counts=tuple(counts)) == pytest.approx(
        ref, rel=1e-9
    )


@pytest.mark.slow
@pytest.mark.parametrize("e0,delta", [(2.0, 1e-6), (1.0, 1e-9)])
def test_bracket_rows_fixed_at_n_50(e0, delta):
    """The bracket goal on rows of the default bracket grid (k = 4, n = 50) where the weak adversary as the
    upper end gives 1.0349 and 1.0464: eps_upper / eps_lower <= 1.01."""
    from shuffledp.accounting.bracket import bracket

    (row,) = bracket(epsilon_local=e0, n_users=50, k=4, deltas=[delta])
    assert row["eps_lower"] <= row["eps_upper"] <= 1.01 * row["eps_lower"]


def _add_every_axis(law: np.ndarray, probs: tuple, rest: float) -> np.ndarray:
    """The reference form of ``_add``: every axis's term formed and added, probability 0 or not."""
    out = np.zeros(tuple(m + 1 for m in law.shape))
    base = tuple(slice(0, m) for m in law.shape)
    if rest > 0:
        out[base] = rest * law
    for axis, prob in enumerate(probs):
        dst = list(base)
        dst[axis] = slice(1, law.shape[axis] + 1)
        out[tuple(dst)] += prob * law
    return out


def _view_sums_reference(law: np.ndarray, par, eps: float, users: int, swapped: bool = False) -> float:
    """The reference form of ``_view_sums``: the common part by ``_add_every_axis``, each product formed where
    it is added (``swapped``, the probe: u's x1 report added before its x0 report, the same terms in another
    order)."""
    import math

    u, tiny = 2.0**-53, 2.0**-1074
    e = math.exp(eps)
    axes = law.ndim
    ops = (users + 4) * (axes + 8) * 1.01 + users * par.rho
    common = _add_every_axis(law, (0.0, 0.0) + (par.q,) * (axes - 2), (par.k - axes) * par.q)
    base = tuple(slice(0, m) for m in law.shape)
    on_x0 = (slice(1, law.shape[0] + 1),) + base[1:]
    on_x1 = base[:1] + (slice(1, law.shape[1] + 1),) + base[2:]
    P, Q = common.copy(), common
    order = [(on_x0, par.p), (on_x1, par.q)]
    for on, p_or_q in order[::-1] if swapped else order:
        P[on] += p_or_q * law
    for on, p_or_q in ((on_x0, par.q), (on_x1, par.p)):
        Q[on] += p_or_q * law
    Q *= e
    tol = (P + Q) * (ops * u)
    P = P - Q + tol
    upper = float(np.sum(np.maximum(P, 0.0)))
    return upper * (1.0 + 2.0 * P.size * u) + P.size * ops * (1.0 + e) * tiny


def test_zero_probability_axes_and_shared_products_change_no_bit():
    """``_add`` skips the axes of probability 0 and ``_view_sums`` forms p law and q law once: the same bits as
    the reference forms on the laws of a search's nodes (k = 4, 5; two and three axes) and random laws down
    to the subnormals. The probe: the same sums in another order differ somewhere, so the comparison can
    fail."""
    from shuffledp.accounting.worst_case.k4.blocks import _add, _view_sums

    rng = np.random.default_rng(5)
    laws = [rng.random((6, 7, 5)) * 10.0 ** rng.integers(-320, 0, size=(6, 7, 5)), rng.random((9, 4))]
    for n, k, counts in [(12, 4, (3, 2, 4)), (12, 4, (5,)), (9, 5, (1, 2, 3, 1)), (30, 4, (20, 3, 4))]:
        laws.append(node_laws(_params(n, k, 1.0), counts).laws[-1])
    par, differs = _params(30, 4, 1.5), False
    for law in laws:
        zeros = (0.0, 0.0) + (0.2,) * (law.ndim - 2)
        for probs, rest in [(zeros, 0.3), ((0.5,) + (0.1,) * (law.ndim - 1), 0.0), ((0.0,) * law.ndim, 0.25)]:
            assert _add(law, probs, rest).tobytes() == _add_every_axis(law, probs, rest).tobytes()
        for eps in (0.0, 0.4, 1.4):
            assert _view_sums(law, par, eps, 30).hex() == _view_sums_reference(law, par, eps, 30).hex()
            differs |= _view_sums(law, par, eps, 30) != _view_sums_reference(law, par, eps, 30, swapped=True)
    assert differs


@pytest.mark.parametrize("n,k,e0,eps", [(30, 4, 2.0, 1.5), (12, 5, 1.0, 0.5), (14, 6, 4.0, 2.5)])
def test_sure_laws_continued_from_kept_steps_are_the_laws_built_from_no_user(n, k, e0, eps):
    """The search continues each node's sure law from the longest kept step of its path (``_sequence``): every
    law it built equals the law built from no user, bit for bit, and the lost mass too (n = 30: cropped laws).
    At least a quarter of the nodes were continued, not built afresh. The probe: a step that miscounts its
    users by one (the law holds one more than the step says) gives another law, so the comparison can fail."""
    from shuffledp.accounting.worst_case.k4 import blocks

    search, starts = K4BlockSearch(n_users=n, k=k, epsilon_local=e0), []
    original = blocks._sure_law

    def recording(par, counts, crop=0.0, start=None):
        starts.append(start is not None)
        return original(par, counts, crop, start)

    blocks._sure_law = recording
    try:
        search.worst(eps)
    finally:
        blocks._sure_law = original
    assert len(search._sure) > 10 and sum(starts) >= len(starts) / 4
    par, probed = search._par, False
    nodes = _nodes_by_sequence(par, n, k)
    for (key, users), (law, lost) in search._sure.items():
        counts = nodes[key, users]
        fresh, fresh_lost = blocks._sure_law(par, counts, search._crop)
        assert (
            law.tobytes() == fresh.tobytes() and law.shape == fresh.shape and lost.hex() == fresh_lost.hex()
        )
        if not probed and sum(users):
            last = max(i for i, count in enumerate(users) if count)
            miscounted = (*users[:last], users[last] - 1, *users[last + 1 :])
            other, _ = blocks._sure_law(par, counts, search._crop, (miscounted, fresh, fresh_lost))
            probed = other.shape != fresh.shape or other.tobytes() != fresh.tobytes()
    assert probed


def _node_counts(n: int, k: int):
    """Every node's counts (a, b, s_1 >= s_2 >= ...) with at most n - 1 sure users, the last entry open."""
    for a in range(n):
        yield (a,)
        for b in range(n - a):
            yield (a, b)
            stack = [((a, b), n - 1 - a - b)]
            while stack:
                counts, left = stack.pop()
                if len(counts) >= k:
                    continue
                cap = counts[-1] if len(counts) > 2 else left
                for c in range(min(cap, left) + 1):
                    yield counts + (c,)
                    if c:
                        stack.append((counts + (c,), left - c))


def _nodes_by_sequence(par, n: int, k: int) -> dict:
    """A node's counts for each order of sure users (``_sequence``) that some node's law follows."""
    from shuffledp.accounting.worst_case.k4 import blocks

    nodes: dict = {}
    for counts in _node_counts(n, k):
        nodes.setdefault(blocks._sequence(par, counts), counts)
    return nodes


@pytest.mark.parametrize(
    "n,k,counts,crop",
    [(14, 4, (3, 2, 4, 3), 0.0), (30, 4, (6, 0, 9, 7), 1e-12), (12, 5, (2, 1, 3, 2, 2), 0.0)],
)
def test_a_sure_law_continued_from_any_step_of_its_path_is_the_same(n, k, counts, crop):
    """Every step of a node's path that is a node's own law (one user fewer at a time, from the last position
    holding one: the implied value's users first), continued to the node, gives the law and lost mass built
    from no user, bit for bit; with the crops of n > 24 too. The searches measured never continued from a
    step holding users of the implied value, so those steps are checked here. Probe: the same step with its
    last position's users counted one short gives a law with one more user."""
    from shuffledp.accounting.worst_case.k4 import blocks

    par = _params(n, k, 1.0)
    key, users = blocks._sequence(par, counts)
    assert users[-1] > 0  # the implied value holds users
    fresh, fresh_lost = blocks._sure_law(par, counts, crop)
    nodes = _nodes_by_sequence(par, n, k)
    step, checked = list(users), 0
    while any(step):
        last = max(i for i, count in enumerate(step) if count)
        step[last] -= 1
        at = nodes.get((key, tuple(step)))
        if at is None:  # no node's law is this step (an axis still empty: another layout)
            continue
        checked += 1
        law, lost = blocks._sure_law(par, at, crop)
        continued, continued_lost = blocks._sure_law(par, counts, crop, (tuple(step), law, lost))
        assert continued.tobytes() == fresh.tobytes() and continued.shape == fresh.shape
        assert continued_lost.hex() == fresh_lost.hex()
        if last == len(users) - 1 and step[last] > 0:
            short = (*step[:last], step[last] - 1)
            probe, _ = blocks._sure_law(par, counts, crop, (short, law, lost))
            assert probe.shape != fresh.shape or probe.tobytes() != fresh.tobytes()
    # every step through the implied value's users and the last axis's, but the one with that axis empty
    assert checked == users[-1] + users[-2] - 1
