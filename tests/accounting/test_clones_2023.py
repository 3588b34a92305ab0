"""Tests of ``clones-krr-2023`` (Feldman, McMillan, Talwar 2023 stronger-clones pair with k-RR's p).

Truths, all independent of the library:

* the pair itself, enumerated outcome by outcome in mpmath from its definition (three branches of
  u's report over the trinomial of the others);
* :func:`brute_force.true_worst_case_delta`: the max over every dataset of the other n - 1 users and
  both directions of the exact shuffled-histogram delta (k^n-free enumeration, 50 digits);
* :func:`brute_force.pair_distributions` of the dataset with no other user on x0 or x1.

Findings pinned here (docs/decisions/generic-bounds.md, "clones-krr-2023: not a guarantee for k >= 3"): at
k = 2 the pair is an upper bound on every tiny case; at k >= 3 (p = 1/(e^eps0 + k - 1) < 1/(e^eps0 + 1), the
erratum's failing range) it is *below* the worst case on some datasets -- not a guarantee -- and it equals the
exact delta of the (count of x0, count of x1) marginal of the dataset with every other user on a third
value, hence it is a lower bound on the worst case there.
"""

from __future__ import annotations

import itertools

import mpmath
import numpy as np
import pytest
from brute_force import hockey_stick, pair_distributions, true_worst_case_delta

from shuffledp.accounting import BoundKind, get_accountant
from shuffledp.accounting.composition import compose

NAME = "clones-krr-2023"
RTOL = 1e-9


def _delta(eps0, n, k, eps):
    accountant = get_accountant(NAME, epsilon_local=eps0, n_users=n, k=k)
    return float(np.exp(accountant.log_delta_for_epsilon(np.array([eps]))[0]))


def _pair_mpmath(n, k, eps0, dps=50):
    """(P, Q) of the 2023 pair by definition: others ~ Mult(n - 1; q, q, 1 - 2q); u adds (1, 0), (0, 1)
    or (0, 0) with probabilities e^eps0 q, q, 1 - (e^eps0 + 1) q under P (x0 and x1 swapped under Q)."""
    with mpmath.workdps(dps):
        e = mpmath.exp(mpmath.mpf(eps0))
        q = 1 / (e + k - 1)
        m = n - 1
        branches = {(1, 0): (e * q, q), (0, 1): (q, e * q), (0, 0): (1 - (e + 1) * q, 1 - (e + 1) * q)}
        P, Q = {}, {}
        for a, b in itertools.product(range(m + 1), repeat=2):
            if a + b > m:
                continue
            w = mpmath.factorial(m) / (
                mpmath.factorial(a) * mpmath.factorial(b) * mpmath.factorial(m - a - b)
            )
            w *= q ** (a + b) * (1 - 2 * q) ** (m - a - b)
            for (da, db), (wp, wq) in branches.items():
                o = (a + da, b + db)
                P[o] = P.get(o, 0) + w * wp
                Q[o] = Q.get(o, 0) + w * wq
        return P, Q


def test_labels_say_not_a_guarantee():
    accountant = get_accountant(NAME, epsilon_local=1.0, n_users=10, k=3)
    assert accountant.kind is BoundKind.AS_PRINTED
    assert "not a guarantee" in accountant.scope and "k = 2" in accountant.scope
    assert "2023" in accountant.label and "invalid for k >= 3" in accountant.label
    ours = get_accountant("clones-krr", epsilon_local=1.0, n_users=10, k=3)
    assert ours.kind is BoundKind.UPPER and "joint convexity" in ours.label and "not Feldman" in ours.scope


@pytest.mark.parametrize("k", [2, 3, 4, 5])
@pytest.mark.parametrize("n", [1, 2, 5, 9])
@pytest.mark.parametrize("eps0", [0.5, 2.0])
def test_matches_the_pair_enumerated_in_mpmath(k, n, eps0):
    P, Q = _pair_mpmath(n, k, eps0)
    for eps in (0.0, 0.2, 0.45):
        truth = float(max(hockey_stick(P, Q, eps), hockey_stick(Q, P, eps)))
        assert _delta(eps0, n, k, eps) == pytest.approx(truth, rel=1e-12, abs=1e-300)


@pytest.mark.parametrize("eps0,n,eps", [(0.5, 5, 0.1), (2.0, 20, 0.5), (float(np.log(13)), 1000, 0.3)])
def test_k2_equals_clones_krr(eps0, n, eps):
    """At k = 2 u's third branch is empty: the pair is clones-krr's pair (weight 1)."""
    ours = get_accountant("clones-krr", epsilon_local=eps0, n_users=n, k=2)
    ref = float(np.exp(ours.log_delta_for_epsilon(np.array([eps]))[0]))
    assert _delta(eps0, n, 2, eps) == pytest.approx(ref, rel=1e-9)


# every tiny case: n <= 6, k in {2, 3, 4, 5}, eps0 in {0.5, 1, 2, 3}, eps in {0, 0.1, 0.3, 0.6, 1} below eps0
TINY = [
    (k, n, e0, eps)
    for k in (2, 3, 4, 5)
    for n in (2, 3, 4, 5, 6)
    for e0 in (0.5, 1.0, 2.0, 3.0)
    for eps in (0.0, 0.1, 0.3, 0.6, 1.0)
    if eps < e0
]


def _validity_counts(cases):
    """(number of cases below the brute-force worst case, number above it, total) per k."""
    counts = {}
    for k, n, e0, eps in cases:
        truth = float(true_worst_case_delta(eps, e0, n, k).delta)
        ours = _delta(e0, n, k, eps)
        below, above, total = counts.get(k, (0, 0, 0))
        counts[k] = (below + (ours < truth * (1 - RTOL)), above + (ours > truth * (1 + RTOL)), total + 1)
    return counts


def test_validity_counts_on_every_tiny_case():  # ~2 s: not `slow` (a library test, both Pythons)
    """The counts recorded in docs/decisions/generic-bounds.md: k = 2 never below the worst case;
    k >= 3 below it on some cases (invalid as an upper bound) and never above it (a lower bound)."""
    counts = _validity_counts(TINY)
    assert counts[2][0] == 0
    for k in (3, 4, 5):
        assert counts[k][0] > 0 and counts[k][1] == 0
    assert {k: v[0] for k, v in counts.items()} == {2: 0, 3: 8, 4: 18, 5: 17}
    assert {k: v[2] for k, v in counts.items()} == {2: 85, 3: 85, 4: 85, 5: 85}
    assert {k: v[1] for k, v in counts.items()} == {2: 52, 3: 0, 4: 0, 5: 0}


@pytest.mark.parametrize("k,n,eps0,eps", [(k, n, e0, eps) for k, n, e0, eps in TINY if n <= 3])
def test_k2_upper_and_k3plus_lower_on_small_tiny_cases(k, n, eps0, eps):
    truth = float(true_worst_case_delta(eps, eps0, n, k).delta)
    ours = _delta(eps0, n, k, eps)
    if k == 2:
        assert ours >= truth * (1 - RTOL)
    else:
        assert ours <= truth * (1 + RTOL) + 1e-300


def test_counterexample_k4_n2():
    """k = 4, n = 2, eps0 = 0.5, eps = 0.3: the other user on x1 gives true delta 0.022800879...
    (direction D(x1) vs D(x0)), above the pair's 0.018081313... (brute force, 50 digits)."""
    worst = true_worst_case_delta(0.3, 0.5, 2, 4)
    assert worst.others == (0, 1, 0, 0) and worst.direction == "P1||P0"
    ours = _delta(0.5, 2, 4, 0.3)
    assert float(worst.delta) == pytest.approx(0.02280087940351592, rel=1e-12)
    assert ours == pytest.approx(0.01808131380647984, rel=1e-12)
    assert ours < 0.8 * float(worst.delta)


@pytest.mark.parametrize("k,n,eps0", [(3, 5, 1.0), (4, 4, 0.5), (5, 4, 2.0)])
def test_equals_the_pair_marginal_of_the_all_third_dataset(k, n, eps0):
    """The 2023 pair at k >= 3 is the (x0 count, x1 count) law when no other user holds x0 or x1."""
    P, Q = pair_distributions(n, k, 0, "spread", epsilon_local=eps0)
    for eps in (0.0, 0.25, 0.4):
        truth = float(max(hockey_stick(P, Q, eps), hockey_stick(Q, P, eps)))
        assert _delta(eps0, n, k, eps) == pytest.approx(truth, rel=1e-10)


def test_koskela_fig3_parameters_agree_with_worst_case_lower():
    """n = 1000, k = 4, eps0 = log 13 (Koskela et al. Fig. 3): the pair equals worst-case-lower's 'none'
    member (the same (h0, h1) marginal), lies below worst-case-lower (whose whole-histogram "one value"
    member is larger) and below the weak adversary's valid upper bound."""
    eps0 = float(np.log(13.0))
    eps = np.array([0.2, 0.39, 0.63])
    ours = get_accountant(NAME, epsilon_local=eps0, n_users=1000, k=4).log_delta_for_epsilon(eps)
    accountant = get_accountant("worst-case-lower", epsilon_local=eps0, n_users=1000, k=4)
    none = np.array([accountant.member_log_deltas(float(e))["none"] for e in eps])
    lower = accountant.log_delta_for_epsilon(eps)
    upper = get_accountant("weak-adversary", epsilon_local=eps0, n_users=1000, k=4).log_delta_for_epsilon(eps)
    assert np.allclose(ours, none, rtol=0, atol=1e-9)
    assert np.all(ours <= lower + 1e-12) and np.all(lower <= upper + 1e-12)


def test_composes_and_one_round_matches_exact():
    eps0 = float(np.log(13.0))
    composed = compose(NAME, epsilon_local=eps0, n_users=1000, k=4, compositions=1)
    exact = _delta(eps0, 1000, 4, 0.39)
    assert float(composed.delta_for_epsilon(np.array([0.39]))[0]) == pytest.approx(exact, rel=2e-2)


def test_refuses_large_n_in_one_line():
    with pytest.raises(
        ValueError, match=r"`n_users` must be an integer in \[1, about \d+\] .*got 100000000\."
    ):
        get_accountant(NAME, epsilon_local=1.0, n_users=10**8, k=10)
