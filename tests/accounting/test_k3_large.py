"""k = 3 above n = 200: the certified block search on windowed laws (worst_case/k3/large.py).

References, each able to fail:
* the exact enumeration of every dataset (``exact_enumeration.worst_case``, independent of the library,
  certified interval) at n <= 40: the search's upper value is never below the truth, its lower value (a
  dataset's exact delta) never above it, and the two are within the stated tolerance;
* 50-digit brute force at n <= 7: every block's bound is above the exact delta of each of its datasets, and a
  leaf is its dataset's delta;
* at the large settings (n = 400 and 1000, eps0 = 4; n = 10^4, eps0 = 8), an independent float64 reference
  (closed-form multinomial pmfs of each group by log-gamma, direct 2-D convolution by scipy) for random datasets
  and the datasets of the observed argmax shape: the search's upper value is above each, and each leaf equals it;
* the accountants: ``worst-case-lower`` <= ``worst-case-upper`` at the large setting, and the bracket row
  n = 1000, eps0 = 4, delta = 1e-9 within 1.001.
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from brute_force import histogram_distribution_of_counts, hockey_stick
from exact_enumeration import worst_case
from scipy.signal import convolve2d
from scipy.special import gammaln

from shuffledp.accounting import get_accountant
from shuffledp.accounting.bracket import bracket
from shuffledp.accounting.worst_case.k3.blocks import Block
from shuffledp.accounting.worst_case.k3.large import RELATIVE_STOP, K3LargeSearch, searched


def _exact(n, a, b, e0, eps):
    """50-digit forward delta of the dataset (a on x0, b on x1, the rest on x2)."""
    m = n - 1 - a - b
    P = histogram_distribution_of_counts((a + 1, b, m), 3, epsilon_local=mpmath.mpf(e0))
    Q = histogram_distribution_of_counts((a, b + 1, m), 3, epsilon_local=mpmath.mpf(e0))
    return float(hockey_stick(P, Q, mpmath.mpf(eps)))


def _group(count, probs):
    """(r0, r1) law of ``count`` users with report probabilities (x0, x1, x2), closed-form multinomial."""
    r = np.arange(count + 1, dtype=float)
    r0, r1 = r[:, None], r[None, :]
    rest = count - r0 - r1
    with np.errstate(invalid="ignore", divide="ignore"):
        log = (
            gammaln(count + 1.0)
            - gammaln(r0 + 1)
            - gammaln(r1 + 1)
            - gammaln(np.maximum(rest, 0) + 1)
            + r0 * math.log(probs[0])
            + r1 * math.log(probs[1])
            + rest * math.log(probs[2])
        )
    return np.where(rest >= 0, np.exp(log), 0.0)


def _trimmed(law):
    """(the box of ``law`` holding every entry above 1e-45, its corner): what is cut is below 1e-45 per cell, far
    below the 1e-9 relative tolerance of the checks (their deltas are above 1e-15)."""
    rows, cols = np.flatnonzero((law > 1e-45).any(axis=1)), np.flatnonzero((law > 1e-45).any(axis=0))
    return law[rows[0] : rows[-1] + 1, cols[0] : cols[-1] + 1], (rows[0], cols[0])


def _hockey_stick(P, Q, eps):
    """Independent float64 forward delta at ``eps`` from the laws of :func:`_reference_laws`."""
    return float(np.sum(np.maximum(P - math.exp(eps) * Q, 0.0)))


def _reference_laws(n, a, b, e0):
    """(P, Q): the histogram's (h0, h1) laws under D and D' for (a on x0, b on x1, the rest on x2), which do not
    depend on epsilon (formed once per dataset, the delta at each epsilon from them)."""
    E = math.exp(e0)
    p, q = E / (E + 2), 1 / (E + 2)
    parts = [
        _trimmed(_group(a, (p, q, q))),
        _trimmed(_group(b, (q, p, q))),
        _trimmed(_group(n - 1 - a - b, (q, q, p))),
    ]
    g = convolve2d(convolve2d(parts[0][0], parts[1][0]), parts[2][0])
    corner = [sum(part[1][axis] for part in parts) for axis in (0, 1)]
    full = np.zeros((n + g.shape[0], n + g.shape[1]))
    full[corner[0] : corner[0] + g.shape[0], corner[1] : corner[1] + g.shape[1]] = g
    g = full[:n, :n]
    P, Q = np.zeros((n + 1, n + 1)), np.zeros((n + 1, n + 1))
    for out, first, second in ((P, p, q), (Q, q, p)):
        out[1:, :-1] += first * g
        out[:-1, 1:] += second * g
        out[:-1, :-1] += q * g
    return P, Q


@pytest.mark.parametrize("n,e0,f", [(5, 0.5, 0.5), (6, 4.0, 0.7), (7, 2.0, 0.3)])
def test_every_block_is_above_each_of_its_datasets(n, e0, f):
    eps = f * e0
    search = K3LargeSearch(n_users=n, epsilon_local=e0)
    exact = {(a, b): _exact(n, a, b, e0, eps) for a in range(n) for b in range(n - a)}
    blocks = [
        Block(a1, a2, b1, b2)
        for a1 in range(n)
        for a2 in range(a1, n)
        for b1 in range(n - a1)
        for b2 in range(b1, n - a1)
    ]
    for block in blocks:
        inside = [
            value
            for (a, b), value in exact.items()
            if block.a1 <= a <= block.a2 and block.b1 <= b <= block.b2
        ]
        bound = search._leaf(block.a1, block.b1, eps)[0] if block.leaf() else search._bound(block, eps)
        assert max(inside) <= bound * (1 + 1e-12), (block, max(inside), bound)
    for (a, b), value in exact.items():
        upper, lower = search._leaf(a, b, eps)
        assert (
            lower <= value * (1 + 1e-12)
            and value <= upper * (1 + 1e-12)
            and upper == pytest.approx(value, rel=1e-11)
        )


@pytest.mark.parametrize("n", [8, 16, pytest.param(40, marks=pytest.mark.slow)])
@pytest.mark.parametrize("e0", [0.5, 2.0, 4.0, 8.0])
def test_against_the_exact_enumeration(n, e0):
    """The search's upper value is >= the exact maximum over every dataset, its lower value <= it, and both are
    within RELATIVE_STOP of each other."""
    fractions = (0.05, 0.25, 0.5, 0.75, 0.95)
    search = K3LargeSearch(n_users=n, epsilon_local=e0)
    for f, truth in zip(fractions, worst_case([f * e0 for f in fractions], e0, n, 3)):
        mine = search.worst(f * e0)
        assert mine.upper >= truth.low * (1 - 1e-12), (f, mine, truth)
        assert mine.lower <= truth.high * (1 + 1e-12), (f, mine, truth)
        if truth.low > 1e-12:
            assert mine.upper <= mine.lower * (1 + RELATIVE_STOP) * (1 + 1e-9), (f, mine, truth)


def _shape_and_random(n, seed):
    """The datasets of the observed argmax shape (all others on x0, x1 or x2, or all but a few) and random ones."""
    shape = [(0, 0), (n - 1, 0), (0, n - 1), (1, 0), (0, 1), (n - 2, 0), (n - 4, 0), (n - 4, 3), (2, 1)]
    rng = np.random.default_rng(seed)
    randoms = []
    for _ in range(6):
        a = int(rng.integers(0, n))
        randoms.append((a, int(rng.integers(0, n - a))))
    randoms += [(int(rng.integers(0, n)), int(rng.integers(0, 3))) for _ in range(4)]
    return [(a, b) for a, b in shape + randoms if a + b <= n - 1]


@pytest.mark.parametrize(
    "n,e0,fractions",
    [
        (400, 4.0, (0.5, 0.75, 0.83)),
        pytest.param(1000, 4.0, (0.8, 0.827, 0.836), marks=pytest.mark.slow),
    ],
)
def test_above_every_dataset_at_large_n(n, e0, fractions):
    """Upper value >= the independent reference delta of each dataset checked; leaves equal the reference."""
    search = K3LargeSearch(n_users=n, epsilon_local=e0)
    pairs = _shape_and_random(n, seed=n)
    epsilons = [f * e0 for f in fractions]
    worst = {eps: search.worst(eps) for eps in epsilons}
    for a, b in pairs:
        laws = _reference_laws(n, a, b, e0)  # the same reference at every epsilon: its laws formed once
        for eps in epsilons:
            mine, reference = worst[eps], _hockey_stick(*laws, eps)
            assert mine.upper >= reference * (1 - 1e-9), (eps, (a, b), mine, reference)
            upper, lower = search._leaf(a, b, eps)
            assert lower * (1 - 1e-9) <= reference <= upper * (1 + 1e-9) or reference < 1e-15, (
                (a, b),
                upper,
                reference,
            )
    for mine in worst.values():
        assert mine.lower <= mine.upper


def test_a_search_does_not_depend_on_the_epsilons_seen_before():
    fresh = K3LargeSearch(n_users=300, epsilon_local=4.0)
    used = K3LargeSearch(n_users=300, epsilon_local=4.0)
    for eps in (2.0, 3.5, 2.5):
        used.worst(eps)
    for eps in (2.5, 3.0):
        assert fresh.worst(eps) == used.worst(eps)


def test_where_it_runs():
    assert searched(1000, 4.0) and searched(201, 3.0) and searched(10_000, 8.0)
    assert (
        not searched(200, 4.0)
        and not searched(201, 1.0)
        and not searched(1000, 2.0)
        and not searched(100_000, 8.0)
    )


def test_the_bracket_at_n_1000_k_3_eps0_4_is_within_1_001():
    """n = 1000, k = 3, eps0 = 4: lower <= upper at several epsilons, and the bracket at delta = 1e-9 (1.0107 with
    the weak adversary as the upper end) within 1.001."""
    upper = get_accountant("worst-case-upper", epsilon_local=4.0, n_users=1000, k=3)
    lower = get_accountant("worst-case-lower", epsilon_local=4.0, n_users=1000, k=3)
    weak = get_accountant("weak-adversary", epsilon_local=4.0, n_users=1000, k=3)
    epsilons = [1.0, 2.5, 3.3, 3.6]
    hi, lo, wk = (acc.log_delta_for_epsilon(epsilons) for acc in (upper, lower, weak))
    assert np.all(lo <= hi) and np.all(hi <= wk)
    row = bracket(epsilon_local=4.0, n_users=1000, k=3, deltas=[1e-9])[0]
    assert row["ratio"] <= 1.001, row
