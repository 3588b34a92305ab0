"""Tests of the clones accountants (shuffledp.accounting.accountants.clones).

The checks that every UPPER accountant dominates the exact delta are in test_upper_bounds.py.
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from shuffledp.accounting import BoundKind, get_accountant

CLONES_NAMES = ["feldman-closed", "feldman-numerical", "clones-krr"]


@pytest.mark.parametrize("name", CLONES_NAMES)
def test_labels(name):
    accountant = get_accountant(name, epsilon_local=1.0, n_users=10, k=3)
    assert accountant.kind is BoundKind.UPPER
    assert "all neighbouring datasets" in accountant.scope


def _mp_clones_parameters(eps0, eps, k):
    """(e^eps, alpha, clone probability r, weight) of the clones pair, at the caller's mpmath precision."""
    e0, e = mpmath.mpf(eps0), mpmath.exp(mpmath.mpf(eps))
    alpha = mpmath.exp(e0) / (mpmath.exp(e0) + 1)
    if k is None:
        return e, alpha, mpmath.exp(-e0), mpmath.mpf(1)
    q = 1 / (mpmath.exp(e0) + k - 1)
    return e, alpha, 2 * q, (mpmath.exp(e0) + 1) * q


def _mp_clones(n, eps0, eps, *, k=None, dps=60):
    """mpmath: sum over every outcome of max(P - e^eps Q, 0) for the clones pair (no tail identities)."""
    with mpmath.workdps(dps):
        e, alpha, r, weight = _mp_clones_parameters(eps0, eps, k)
        total = mpmath.mpf(0)
        for c in range(n):
            w = mpmath.binomial(n - 1, c) * r**c * (1 - r) ** (n - 1 - c)
            pmf = [mpmath.binomial(c, a) / mpmath.mpf(2) ** c for a in range(c + 1)] + [0]
            for x in range(c + 2):
                below = pmf[x - 1] if x >= 1 else 0
                p = alpha * below + (1 - alpha) * pmf[x]
                q_ = (1 - alpha) * below + alpha * pmf[x]
                total += w * max(p - e * q_, 0)
        return weight * total


def _mp_clones_tails(n, eps0, eps, *, k=None, dps=60):
    """mpmath, O(n): sum_c Bin(n-1, r)(c) [u pmf_c(x_c - 1) - (e^eps - 1) Pr(B_c >= x_c)] times the weight,
    u = alpha - e^eps (1 - alpha), v = e^eps alpha - (1 - alpha), x_c = floor(v (c + 1) / (u + v)) + 1.
    Validated against the outcome-by-outcome :func:`_mp_clones` on small n."""
    with mpmath.workdps(dps):
        e, alpha, r, weight = _mp_clones_parameters(eps0, eps, k)
        u, v = alpha - e * (1 - alpha), e * alpha - (1 - alpha)
        total = mpmath.mpf(0)
        for c in range(n):
            w = mpmath.binomial(n - 1, c) * r**c * (1 - r) ** (n - 1 - c)
            x = int(mpmath.floor(v * (c + 1) / (u + v))) + 1
            pmf = mpmath.binomial(c, x - 1) / mpmath.mpf(2) ** c
            tail = mpmath.betainc(x, c - x + 1, 0, 0.5, regularized=True) if x <= c else 0
            total += w * (u * pmf - (e - 1) * tail)
        return weight * total


@pytest.mark.parametrize(
    "name, n, k, eps0, eps",
    [
        ("feldman-numerical", 40, 3, 1.0, 0.2),
        ("clones-krr", 60, 3, 1.0, 0.3),
        ("clones-krr", 30, 2, 0.2, 0.15),
    ],
)
def test_mpmath_tail_form_matches_outcome_enumeration(name, n, k, eps0, eps):
    kk = None if name == "feldman-numerical" else k
    assert mpmath.almosteq(
        _mp_clones(n, eps0, eps, k=kk), _mp_clones_tails(n, eps0, eps, k=kk), rel_eps=1e-40
    )


@pytest.mark.parametrize(
    "name, n, k, eps0, eps",
    [
        ("feldman-numerical", 40, 3, 1.0, 0.2),
        ("feldman-numerical", 300, 10, 0.49, 0.1),
        ("feldman-numerical", 400, 2, 3.0, 2.0),
        ("feldman-numerical", 4000, 10, 3.0, 2.9),  # delta ~ 1e-45
        ("clones-krr", 60, 3, 1.0, 0.3),
        ("clones-krr", 300, 10, 0.49, 0.4),
        ("clones-krr", 400, 2, 0.2, 0.15),
        ("clones-krr", 3000, 2, 0.3, 0.29),  # delta ~ 1e-646, below the double range
    ],
)
def test_numerical_matches_mpmath(name, n, k, eps0, eps):
    reference = _mp_clones_tails(n, eps0, eps, k=None if name == "feldman-numerical" else k)
    ours = get_accountant(name, epsilon_local=eps0, n_users=n, k=k).log_delta_for_epsilon(eps)[0]
    assert abs(ours - float(mpmath.log(reference))) <= 1e-9


@pytest.mark.parametrize("name", ["feldman-numerical", "clones-krr"])
@pytest.mark.parametrize("n, k, eps0", [(1, 3, 1.0), (25, 3, 1.0), (250, 10, 0.49), (300, 2, 4.0)])
def test_numerical_matches_straightforward_enumeration(name, n, k, eps0):
    accountant = get_accountant(name, epsilon_local=eps0, n_users=n, k=k)
    epsilons = np.array([0.0, 0.01, 0.1, 0.4, 0.9 * eps0, eps0, 2 * eps0])
    np.testing.assert_allclose(
        accountant.log_delta_for_epsilon(epsilons),
        accountant.log_delta_for_epsilon_direct(epsilons),
        atol=1e-9,
    )


def test_feldman_numerical_large_n_finite():
    accountant = get_accountant("feldman-numerical", epsilon_local=2.0, n_users=10**6, k=10)
    log_delta = accountant.log_delta_for_epsilon(np.linspace(0.0, 1.9, 20))
    assert np.all(np.isfinite(log_delta)) and np.all(np.diff(log_delta) < 0)


def test_feldman_closed_hand_evaluated():
    """Feldman et al. (2021) Thm 3.1 at delta = 1e-6: eps from the printed formula, then delta(eps)."""
    n, eps0, delta = 100_000, 1.0, 1e-6
    assert eps0 <= math.log(n / (16 * math.log(2 / delta)))
    eps = math.log(
        1
        + (math.exp(eps0) - 1)
        / (math.exp(eps0) + 1)
        * (8 * math.sqrt(math.exp(eps0) * math.log(4 / delta)) / math.sqrt(n) + 8 * math.exp(eps0) / n)
    )
    accountant = get_accountant("feldman-closed", epsilon_local=eps0, n_users=n, k=10)
    assert accountant.delta_for_epsilon(eps)[0] == pytest.approx(delta, rel=1e-9)


def test_feldman_closed_outside_condition():
    # eps0 > log(n / (16 log(2/delta))) for every delta < 1 when n e^-eps0 / 16 <= log 2
    accountant = get_accountant("feldman-closed", epsilon_local=3.0, n_users=200, k=10)
    assert np.all(accountant.delta_for_epsilon([0.0, 0.5, 2.9]) == 1.0)
    assert accountant.delta_for_epsilon(3.0)[0] == 0.0
    # when the formula's delta is below the condition's minimum, the minimum is returned
    n, eps0 = 2000, 1.0
    accountant = get_accountant("feldman-closed", epsilon_local=eps0, n_users=n, k=10)
    assert accountant.delta_for_epsilon(0.99)[0] == pytest.approx(
        2 * math.exp(-n * math.exp(-eps0) / 16), rel=1e-9
    )


def test_feldman_numerical_is_not_ordered_with_strong_adversary():
    """feldman-numerical >= strong-adversary is not a theorem (different adversaries): both orders occur."""
    clones = get_accountant("feldman-numerical", epsilon_local=0.49, n_users=100, k=10).delta_for_epsilon(
        [0.4, 0.01]
    )
    strong = get_accountant("strong-adversary", epsilon_local=0.49, n_users=100, k=10).delta_for_epsilon(
        [0.4, 0.01]
    )
    assert clones[0] < strong[0]  # 1.6e-13 vs 3.7e-3
    assert clones[1] > strong[1]  # 2.0e-2 vs 1.1e-2


def test_generic_clones_dominate_krr_clones_factor():
    """Sanity of the k-RR weight: (e^eps0 + 1) / (e^eps0 + k - 1) <= 1 for k >= 2."""
    for eps0, k in [(0.1, 2), (1.0, 3), (5.0, 10)]:
        assert (math.exp(eps0) + 1) / (math.exp(eps0) + k - 1) <= 1.0


@settings(max_examples=25, deadline=None)
@given(
    name=st.sampled_from(CLONES_NAMES),
    eps0=st.floats(0.05, 5.0),
    n=st.integers(1, 3000),
    k=st.integers(2, 50),
)
def test_delta_in_unit_interval_non_increasing_and_zero_above_eps0(name, eps0, n, k):
    accountant = get_accountant(name, epsilon_local=eps0, n_users=n, k=k)
    epsilons = np.linspace(0.0, 1.5 * eps0, 31)
    delta = accountant.delta_for_epsilon(epsilons)
    assert np.all((delta >= 0) & (delta <= 1))
    assert np.all(delta[1:] <= delta[:-1] * (1 + 1e-12))
    assert np.all(accountant.delta_for_epsilon([eps0, 2 * eps0]) == 0.0)


@settings(max_examples=15, deadline=None)
@given(eps0=st.floats(0.2, 4.0), n=st.integers(50, 5000), k=st.integers(2, 30), fraction=st.floats(0.05, 0.9))
def test_feldman_numerical_epsilon_for_delta_inverts(eps0, n, k, fraction):
    accountant = get_accountant("feldman-numerical", epsilon_local=eps0, n_users=n, k=k)
    eps = fraction * eps0
    delta = accountant.delta_for_epsilon(eps)[0]
    assume(delta > 1e-300)  # epsilon_for_delta takes delta as a float (normal range)
    back = accountant.epsilon_for_delta(delta)
    assert back <= eps + 1e-8
    assert accountant.delta_for_epsilon(back)[0] <= delta * (1 + 1e-9)
