"""Tests of the privacy-blanket accountants (shuffledp.accounting.accountants.blanket).

The checks that every UPPER accountant dominates the exact delta are in test_upper_bounds.py.
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from shuffledp.accounting import BoundKind, Direction, ShuffleSetting, get_accountant
from shuffledp.accounting.numerics.safe_side import LOG_ULPS
from shuffledp.accounting.views.strong.view import log_delta_direct as strong_adversary_log_delta_direct

BLANKET_NAMES = [
    "strong-adversary",
    "balle-blanket",
    "balle-hoeffding-generic",
    "balle-hoeffding-krr",
    "balle-bennett-generic",
    "balle-bennett-krr",
]


@pytest.mark.parametrize("name", BLANKET_NAMES)
def test_labels(name):
    accountant = get_accountant(name, epsilon_local=1.0, n_users=10, k=3)
    assert accountant.kind is BoundKind.UPPER
    assert "all neighbouring datasets" in accountant.scope
    assert accountant.reference


# ---------------------------------------------------------------- strong adversary: exactness


def _mp_strong_adversary(n, k, eps0, eps, dps=60):
    """mpmath reference: (1 - gamma) sum_s Bin(n-1, 2q)(s) [pmf_s(x_s - 1) - (e^eps - 1) Pr(B_s >= x_s)].

    Same decomposition as the library (validated separately against the trinomial double sum), but
    every number in 60-digit arithmetic: tests the floating-point evaluation, pruning and tails.
    """
    with mpmath.workdps(dps):
        e0, e = mpmath.mpf(eps0), mpmath.mpf(eps)
        q = 1 / (mpmath.exp(e0) + k - 1)
        r = 2 * q
        total = mpmath.mpf(0)
        for s in range(n):
            weight = mpmath.binomial(n - 1, s) * r**s * (1 - r) ** (n - 1 - s)
            x = int(mpmath.floor(mpmath.exp(e) * (s + 1) / (1 + mpmath.exp(e)))) + 1
            pmf = mpmath.binomial(s, x - 1) / mpmath.mpf(2) ** s
            tail = mpmath.betainc(x, s - x + 1, 0, 0.5, regularized=True) if x <= s else 0
            total += weight * (pmf - mpmath.expm1(e) * tail)
        return (mpmath.exp(e0) - 1) * q * total


@pytest.mark.parametrize(
    "n, k, eps0, eps",
    [
        (30, 3, 1.0, 0.3),
        (200, 10, 0.49, 0.1),
        (500, 5, 2.0, 0.7),
        (1045, 2, 0.01, 5.0),  # delta ~ 1e-300
        (1200, 2, 0.01, 5.0),  # delta below the double range: compared in log space
    ],
)
def test_strong_adversary_matches_mpmath(n, k, eps0, eps):
    reference = _mp_strong_adversary(n, k, eps0, eps)
    ours = get_accountant("strong-adversary", epsilon_local=eps0, n_users=n, k=k).log_delta_for_epsilon(eps)[
        0
    ]
    # |log ours - log ref| <= 1e-9 is a relative error <= 1e-9 on delta
    assert abs(ours - float(mpmath.log(reference))) <= 1e-9


def test_mpmath_reference_reaches_1e_minus_300():
    assert 1e-302 < _mp_strong_adversary(1045, 2, 0.01, 5.0) < 1e-298


@pytest.mark.parametrize(
    "n, k, eps0", [(1, 3, 1.0), (2, 2, 0.5), (17, 3, 1.0), (120, 10, 0.49), (400, 4, 3.0), (300, 2, 0.05)]
)
def test_strong_adversary_matches_straightforward_double_sum(n, k, eps0):
    epsilons = np.array([0.0, 0.01, 0.1, 0.4, 1.0, 2.5, 6.0])
    fast = get_accountant("strong-adversary", epsilon_local=eps0, n_users=n, k=k).log_delta_for_epsilon(
        epsilons
    )
    direct = strong_adversary_log_delta_direct(epsilons, ShuffleSetting(epsilon_local=eps0, n_users=n, k=k))
    np.testing.assert_allclose(fast, direct, rtol=0, atol=1e-9)


@pytest.mark.parametrize("n, k, eps0", [(40, 3, 1.0), (150, 10, 0.49)])
def test_strong_adversary_is_symmetric_in_direction(n, k, eps0):
    epsilons = np.array([0.05, 0.3, 1.2])
    forward = strong_adversary_log_delta_direct(epsilons, ShuffleSetting(epsilon_local=eps0, n_users=n, k=k))
    backward = strong_adversary_log_delta_direct(
        epsilons, ShuffleSetting(epsilon_local=eps0, n_users=n, k=k), direction=Direction.ADD
    )
    np.testing.assert_allclose(forward, backward, atol=1e-12)


def test_strong_adversary_closed_form_at_n_1():
    """n = 1: no other users, the adversary sees user u's report when truthful: delta = 1 - gamma."""
    eps0, k = 1.3, 4
    expected = (math.exp(eps0) - 1) / (math.exp(eps0) + k - 1)
    delta = get_accountant("strong-adversary", epsilon_local=eps0, n_users=1, k=k).delta_for_epsilon(
        [0.0, 2.0, 9.0]
    )
    np.testing.assert_allclose(delta, expected, rtol=1e-12)


def test_strong_adversary_large_n_is_finite_and_in_range():
    accountant = get_accountant("strong-adversary", epsilon_local=0.49, n_users=10**7, k=10)
    log_delta = accountant.log_delta_for_epsilon(np.linspace(0.0, 0.5, 6))
    assert np.all(np.isfinite(log_delta)) and np.all(log_delta <= 0)
    assert np.all(np.diff(log_delta) < 0)


@pytest.mark.parametrize(
    "direction, message",
    [
        ("up", r"`direction` must be one of 'forward', 'reverse', 'both'; got 'up'"),
        (Direction.BOTH, r"`direction` must be one of 'forward', 'reverse'; got 'both'"),
    ],
)
def test_strong_adversary_direct_rejects_unknown_direction(direction, message):
    with pytest.raises(ValueError, match=message):
        strong_adversary_log_delta_direct(
            [0.1], ShuffleSetting(epsilon_local=1.0, n_users=5, k=3), direction=direction
        )


# ---------------------------------------------------------------- closed forms, by hand


def test_balle_blanket_hand_evaluated():
    """Balle et al. (2019) Thm 3.1: delta = 2 exp(-gamma (n-1) eps^2 / (14 k)) when gamma (n-1) eps >= 27 k."""
    n, k, eps0, eps = 100_001, 2, 1.0, 0.5
    gamma = 2 / (math.e + 1)
    assert gamma * (n - 1) * eps >= 27 * k
    expected = 2 * math.exp(-gamma * (n - 1) * eps**2 / (14 * k))
    accountant = get_accountant("balle-blanket", epsilon_local=eps0, n_users=n, k=k)
    # an UPPER bound is widened up by its declared rounding bound (numerics/safe_side.py): at or above the
    # closed form, and within that widening of it: log1p(r) + LOG_ULPS ulp x |log delta| in log delta
    # (1.4e-11 relative here, log delta = -480), and the declared relative rounding r once more for this test's
    # own evaluation of the closed form (the same few roundings of gamma (n - 1) eps^2 / (14 k) ~ 480 as the
    # accountant's, each <= 2^-53 x 480 = 5.3e-14 relative in delta, which r = 5e-13 bounds)
    assert (
        expected * (1 - 1e-15)
        <= accountant.delta_for_epsilon(eps)[0]
        <= expected * _widened(accountant, expected)
    )
    # eps > 1 uses the eps = 1 guarantee
    at_one = 2 * math.exp(-gamma * (n - 1) / (14 * k))
    assert (
        at_one * (1 - 1e-15) <= accountant.delta_for_epsilon(3.0)[0] <= at_one * _widened(accountant, at_one)
    )


def _widened(accountant, delta: float) -> float:
    """The factor by which safe_side.widen moves an UPPER delta up, times (1 + r) for the closed form's own rounding."""
    if delta == 0.0:  # underflowed (the eps = 1 guarantee here, e^-1922): nothing to widen
        return 1.0
    step = math.log1p(accountant.relative_rounding) + LOG_ULPS * 2.0**-52 * abs(math.log(delta))
    return math.exp(step) * (1.0 + accountant.relative_rounding)


def test_balle_blanket_is_trivial_outside_conditions():
    # gamma (n - 1) eps < 27 k
    accountant = get_accountant("balle-blanket", epsilon_local=1.0, n_users=100, k=10)
    assert np.all(accountant.delta_for_epsilon([0.0, 0.1, 0.9, 5.0]) == 1.0)


def _hoeffding(n, gamma, a, b):
    return b**2 / (4 * a * gamma * n) * (1 - gamma * (1 - math.exp(-2 * a**2 / b**2))) ** n


def _bennett(n, gamma, a, b_plus, moment):
    beta = a * b_plus / moment
    phi = (1 + beta) * math.log(1 + beta) - beta
    rate = moment / b_plus**2 * phi
    return (
        b_plus
        / (gamma * n * math.log(1 + beta))
        * ((1 - gamma * (1 - math.exp(-rate))) ** n - (1 - gamma) ** n)
    )


def test_balle_section5_hand_evaluated():
    """Hoeffding (Thm 5.3) and Bennett (Lemma 5.6) with Lemma 5.4 (generic) / 5.7 (k-RR) constants."""
    n, k, eps0, eps = 5000, 10, 1.0, 0.3
    a = math.exp(eps) - 1
    # generic eps0-LDP: gamma >= e^-eps0, range (e^eps + 1)(e^eps0 - e^-eps0)
    gamma_g = math.exp(-eps0)
    b_g = (math.exp(eps) + 1) * (math.exp(eps0) - math.exp(-eps0))
    bplus_g = math.exp(eps0) * (1 - math.exp(eps - 2 * eps0))
    moment_g = math.exp(eps0) * (math.exp(2 * eps) + 1) - 2 * math.exp(eps - 3 * eps0)
    # k-RR blanket
    gamma = k / (math.exp(eps0) + k - 1)
    b_k = (1 - gamma) * k * (math.exp(eps) + 1)
    bplus_k = gamma * (1 - math.exp(eps)) + (1 - gamma) * k
    moment_k = gamma * (2 - gamma) * (math.exp(eps) - 1) ** 2 + (1 - gamma) ** 2 * k * (math.exp(2 * eps) + 1)
    expected = {
        "balle-hoeffding-generic": _hoeffding(n, gamma_g, a, b_g),
        "balle-hoeffding-krr": _hoeffding(n, gamma, a, b_k),
        "balle-bennett-generic": _bennett(n, gamma_g, a, bplus_g, moment_g),
        "balle-bennett-krr": _bennett(n, gamma, a, bplus_k, moment_k),
    }
    for name, value in expected.items():
        ours = get_accountant(name, epsilon_local=eps0, n_users=n, k=k).delta_for_epsilon(eps)[0]
        assert math.isclose(ours, min(value, 1.0), rel_tol=1e-9), name


def test_krr_second_moment_matches_direct_expectation():
    """Lemma 5.7's second moment from the three values of L under the uniform blanket."""
    k, eps0, eps = 7, 1.2, 0.4
    gamma = k / (math.exp(eps0) + k - 1)
    truthful = (1 - gamma) * k + gamma  # k * Pr(report = y | x) / 1 for y = x
    other = gamma
    values = [truthful - math.exp(eps) * other, other - math.exp(eps) * truthful] + [
        other * (1 - math.exp(eps))
    ] * (k - 2)
    mean = sum(values) / k
    second = sum(v * v for v in values) / k
    assert math.isclose(mean, 1 - math.exp(eps), rel_tol=1e-12)  # Lemma 5.4 (1)
    expected = gamma * (2 - gamma) * (math.exp(eps) - 1) ** 2 + (1 - gamma) ** 2 * k * (math.exp(2 * eps) + 1)
    assert math.isclose(second, expected, rel_tol=1e-12)
    assert math.isclose(max(values) - min(values), (1 - gamma) * k * (math.exp(eps) + 1), rel_tol=1e-12)


@pytest.mark.parametrize("name", BLANKET_NAMES[2:])
def test_section5_bounds_vanish_at_and_above_eps0(name):
    accountant = get_accountant(name, epsilon_local=0.8, n_users=500, k=5)
    assert np.all(accountant.delta_for_epsilon([0.8, 1.0, 4.0]) == 0.0)


# ---------------------------------------------------------------- properties


@settings(max_examples=25, deadline=None)
@given(
    name=st.sampled_from(BLANKET_NAMES),
    eps0=st.floats(0.05, 5.0),
    n=st.integers(1, 3000),
    k=st.integers(2, 50),
    epsilons=st.lists(st.floats(0.0, 8.0), min_size=1, max_size=8),
)
def test_delta_in_unit_interval(name, eps0, n, k, epsilons):
    delta = get_accountant(name, epsilon_local=eps0, n_users=n, k=k).delta_for_epsilon(epsilons)
    assert np.all((delta >= 0) & (delta <= 1))


@settings(max_examples=25, deadline=None)
@given(
    name=st.sampled_from(["strong-adversary", "balle-blanket"]),
    eps0=st.floats(0.05, 5.0),
    n=st.integers(1, 3000),
    k=st.integers(2, 50),
)
def test_non_increasing_in_epsilon(name, eps0, n, k):
    """A theorem for the hockey-stick divergence (strong adversary) and for the Thm 3.1 closed form."""
    epsilons = np.linspace(0.0, 6.0, 61)
    delta = get_accountant(name, epsilon_local=eps0, n_users=n, k=k).delta_for_epsilon(epsilons)
    assert np.all(delta[1:] <= delta[:-1] * (1 + 1e-12))


@settings(max_examples=20, deadline=None)
@given(eps0=st.floats(0.1, 4.0), n=st.integers(2, 5000), k=st.integers(2, 30), eps=st.floats(0.01, 3.0))
def test_strong_adversary_epsilon_for_delta_inverts(eps0, n, k, eps):
    """epsilon(delta(eps)) <= eps and meets delta; equal to eps where delta is strictly decreasing.

    (For tiny n the curve has flat stretches -- the discrete privacy losses skip intervals -- and
    the smallest epsilon meeting delta is then below eps.)
    """
    accountant = get_accountant("strong-adversary", epsilon_local=eps0, n_users=n, k=k)
    # a hair above delta(eps): on a flat stretch reaching to eps = inf (mass of the infinite privacy
    # loss), delta(eps) itself may differ from the plateau in the last bit
    delta = accountant.delta_for_epsilon(eps)[0] * (1 + 1e-12)
    assume(delta > 1e-300)  # epsilon_for_delta takes delta as a float (normal range)
    back = accountant.epsilon_for_delta(delta)
    assert back <= eps + 1e-8
    assert accountant.delta_for_epsilon(back)[0] <= delta * (1 + 1e-9)
    if accountant.log_delta_for_epsilon(max(eps - 1e-6, 0.0))[0] > np.log(delta) + 1e-12:
        assert back == pytest.approx(eps, abs=1e-6)


def test_bad_input_is_rejected_with_clear_message():
    with pytest.raises(ValueError, match=r"`epsilon_local` must be in \(0, inf.; got -1.0"):
        get_accountant("strong-adversary", epsilon_local=-1.0, n_users=10, k=3)
    with pytest.raises(ValueError, match=r"`epsilon` must be in \[0, inf.; got -0.5"):
        get_accountant("balle-blanket", epsilon_local=1.0, n_users=10, k=3).delta_for_epsilon([0.1, -0.5])
    with pytest.raises(ValueError, match=r"`k` must be an integer in \[2, 1000000000000000\]; got 1"):
        get_accountant("balle-bennett-krr", epsilon_local=1.0, n_users=10, k=1)


# ---------------------------------------------------------------- dp_accounting


@pytest.mark.parametrize("n, k, eps0", [(40, 5, 1.0), (80, 10, 0.49)])
def test_strong_adversary_between_dp_accounting_pessimistic_and_optimistic(n, k, eps0):
    """dp_accounting's PLD of the explicit pair (A + 1, C) vs (A, C + 1) brackets our exact delta."""
    from dp_accounting.pld import privacy_loss_distribution as pld

    with mpmath.workdps(40):
        q = 1 / (mpmath.exp(eps0) + k - 1)
        one_minus_gamma = (mpmath.exp(eps0) - 1) * q
        trinomial = {}
        for a in range(n):
            for c in range(n - a):
                trinomial[(a, c)] = (
                    mpmath.factorial(n - 1)
                    / (mpmath.factorial(a) * mpmath.factorial(c) * mpmath.factorial(n - 1 - a - c))
                    * q ** (a + c)
                    * (1 - 2 * q) ** (n - 1 - a - c)
                )
        # the view includes the target's blanket bit: with probability gamma an identical outcome "blanket"
        log_p = {
            ("truthful", a + 1, c): float(mpmath.log(one_minus_gamma * v)) for (a, c), v in trinomial.items()
        }
        log_q = {
            ("truthful", a, c + 1): float(mpmath.log(one_minus_gamma * v)) for (a, c), v in trinomial.items()
        }
        log_p["blanket"] = log_q["blanket"] = float(mpmath.log(1 - one_minus_gamma))
    upper = pld.from_two_probability_mass_functions(log_q, log_p, pessimistic_estimate=True, symmetric=False)
    lower = pld.from_two_probability_mass_functions(log_q, log_p, pessimistic_estimate=False, symmetric=False)
    ours = get_accountant("strong-adversary", epsilon_local=eps0, n_users=n, k=k)
    for eps in [0.05, 0.2, 0.5, 1.5]:
        exact = ours.delta_for_epsilon(eps)[0]
        pessimistic, optimistic = upper.get_delta_for_epsilon(eps), lower.get_delta_for_epsilon(eps)
        assert optimistic <= exact * (1 + 1e-9) and exact <= pessimistic * (1 + 1e-9)
        assert exact == pytest.approx(pessimistic, rel=1e-2)
