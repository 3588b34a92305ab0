"""Tests of calibrate_epsilon_local (src/shuffledp/accounting/calibrate.py)."""

import pytest

from shuffledp.accounting import get_accountant
from shuffledp.accounting.calibrate import calibrate_epsilon_local


@pytest.mark.parametrize(
    "accountant,n,k,n_x0,eps,delta",
    [
        ("biswas-exact", 200, 10, 20, 0.3, 1e-6),
        ("biswas-printed", 100, 10, 80, 0.1, 1e-20),
        ("histogram-exact", 30, 4, 10, 0.5, 1e-3),
    ],
)
def test_largest_eps0_meets_target_and_next_does_not(accountant, n, k, n_x0, eps, delta):
    eps0 = calibrate_epsilon_local(
        accountant, n_users=n, k=k, n_x0=n_x0, epsilon=eps, delta=delta, tolerance=1e-8
    )
    assert eps0 >= eps  # eps0 <= eps always gives delta = 0
    at = get_accountant(accountant, epsilon_local=eps0, n_users=n, k=k, n_x0=n_x0).delta_for_epsilon(eps)[0]
    above = get_accountant(
        accountant, epsilon_local=eps0 * (1 + 1e-6), n_users=n, k=k, n_x0=n_x0
    ).delta_for_epsilon(eps)[0]
    assert at <= delta < above


def test_zero_delta_target_gives_eps0_equal_eps():
    # delta = 0 exactly iff eps >= eps0 (the loss never exceeds eps0)
    eps0 = calibrate_epsilon_local(
        "biswas-exact", n_users=50, k=5, n_x0=10, epsilon=0.7, delta=0.0, tolerance=1e-10
    )
    assert eps0 == pytest.approx(0.7, abs=1e-8)


def test_errors():
    with pytest.raises(ValueError, match=r"every `epsilon_local` up to `upper` = 0.5 meets"):
        calibrate_epsilon_local("biswas-exact", n_users=50, k=5, n_x0=10, epsilon=0.7, delta=0.1, upper=0.5)
    with pytest.raises(ValueError, match=r"`delta` must be in \[0, 1\); got 1.0"):
        calibrate_epsilon_local("biswas-exact", n_users=50, k=5, n_x0=10, epsilon=0.7, delta=1.0)
    with pytest.raises(ValueError, match=r"`epsilon` must be in \[0, inf\); got -1.0"):
        calibrate_epsilon_local("biswas-exact", n_users=50, k=5, n_x0=10, epsilon=-1.0, delta=0.1)
    with pytest.raises(
        ValueError, match=r"no `epsilon_local` in \[1e-06, 30.0\] meets \(epsilon, delta\) = \(0.0, 0.0\)"
    ):
        calibrate_epsilon_local("biswas-exact", n_users=50, k=5, n_x0=10, epsilon=0.0, delta=0.0)


# --- the certified accountants of the equal-guarantee experiment -------------------------

from shuffledp.accounting.calibrate import calibrate_epsilon_local_traced  # noqa: E402

CERTIFIED_CASES = [  # (accountant, n, k, eps, delta): the grid's corners and a middle point
    ("weak-adversary", 1000, 15, 0.1, 1e-6),
    ("weak-adversary", 10_000, 192, 1.0, 10_000**-1.1),
    ("weak-adversary", 1_000_000, 408, 4.0, 1e-6),
    ("worst-case-lower", 1000, 408, 0.25, 1000**-1.1),
    ("worst-case-lower", 100_000, 15, 2.0, 1e-6),
    ("worst-case-lower", 1_000_000, 192, 0.5, 1_000_000**-1.1),
]


def _delta(accountant, eps0, n, k, eps):
    return get_accountant(accountant, epsilon_local=eps0, n_users=n, k=k).delta_for_epsilon(eps)[0]


@pytest.mark.parametrize("accountant,n,k,eps,delta", CERTIFIED_CASES)
def test_certified_calibration_meets_target_and_plus_1e6_does_not(accountant, n, k, eps, delta):
    eps0 = calibrate_epsilon_local(accountant, n_users=n, k=k, epsilon=eps, delta=delta)
    assert eps0 >= eps
    assert _delta(accountant, eps0, n, k, eps) <= delta
    assert _delta(accountant, eps0 + 1e-6, n, k, eps) > delta


@pytest.mark.parametrize("accountant,n,k,eps,delta", CERTIFIED_CASES[:3])
def test_illinois_agrees_with_bisection_in_fewer_evaluations(accountant, n, k, eps, delta):
    fast = calibrate_epsilon_local_traced(accountant, n_users=n, k=k, epsilon=eps, delta=delta)
    slow = calibrate_epsilon_local_traced(
        accountant, n_users=n, k=k, epsilon=eps, delta=delta, method="bisection"
    )
    assert fast.epsilon_local_fails - fast.epsilon_local <= 1e-6
    assert abs(fast.epsilon_local - slow.epsilon_local) <= 1e-6  # both brackets hold the same crossing
    assert fast.evaluations < slow.evaluations


@pytest.mark.parametrize("accountant", ["weak-adversary", "worst-case-lower"])
def test_never_below_epsilon_even_when_only_epsilon_meets(accountant):
    # a target so small that only eps0 <= eps (delta = 0) meets it: the answer is eps itself
    eps0 = calibrate_epsilon_local(accountant, n_users=1000, k=15, epsilon=0.5, delta=1e-300)
    assert 0.5 <= eps0 <= 0.5 + 0.5  # never below eps; a loose upper end would still be valid
    assert _delta(accountant, eps0, 1000, 15, 0.5) <= 1e-300


def test_weak_adversary_eps0_is_at_most_the_lower_bounds():
    # weak-adversary delta >= worst-case-lower delta, so its eps0 is never larger
    for accountant_case in CERTIFIED_CASES[:3]:
        _, n, k, eps, delta = accountant_case
        weak = calibrate_epsilon_local("weak-adversary", n_users=n, k=k, epsilon=eps, delta=delta)
        lower = calibrate_epsilon_local("worst-case-lower", n_users=n, k=k, epsilon=eps, delta=delta)
        assert weak <= lower + 1e-6


def test_unknown_method_is_named():
    with pytest.raises(ValueError, match=r"`method` must be one of"):
        calibrate_epsilon_local_traced(
            "weak-adversary", n_users=100, k=5, epsilon=1.0, delta=1e-6, method="newton"
        )


# --- a k = 2 calibration bracketed first by a cheap lower bound (``lower=``) -----------------------

LOWER_FIRST_CASES = [  # (n, eps, delta): small n (block search), the n = 10^4 edge, large n (pair sums)
    (100, 0.05, 1e-6),
    (1000, 1.0, 1000**-1.1),
    (10_000, 0.05, 1e-6),
    (200_000, 1.0, 1e-6),
    (10**7, 0.5, 1e-9),
]


@pytest.mark.parametrize("n,eps,delta", LOWER_FIRST_CASES)
def test_lower_first_calibration_keeps_the_guarantee_in_fewer_evaluations(n, eps, delta):
    """The answer meets the target by worst-case-upper's own value, worst-case-upper's value at the failing end
    exceeds it (re-evaluated here, whichever bound certified it in the search), the bracket is within the
    tolerance, the answer is within the tolerance of the plain search's, and worst-case-upper ran fewer times."""
    import math

    tolerance = 1e-3
    arguments = dict(n_users=n, k=2, epsilon=eps, delta=delta, tolerance=tolerance)
    plain = calibrate_epsilon_local_traced("worst-case-upper", **arguments)
    cheap = calibrate_epsilon_local_traced("worst-case-upper", lower="worst-case-lower", **arguments)

    def log_delta(eps0):
        return float(
            get_accountant("worst-case-upper", epsilon_local=eps0, n_users=n, k=2).log_delta_for_epsilon(eps)[
                0
            ]
        )

    assert cheap.epsilon_local >= eps
    assert cheap.epsilon_local == eps or log_delta(cheap.epsilon_local) <= math.log(delta)
    assert log_delta(cheap.epsilon_local_fails) > math.log(delta)
    assert 0 < cheap.epsilon_local_fails - cheap.epsilon_local <= tolerance
    assert abs(cheap.epsilon_local - plain.epsilon_local) <= tolerance
    assert cheap.evaluations < plain.evaluations


def test_lower_first_falls_back_where_the_lower_bound_meets_the_target_at_upper():
    """When even ``upper`` meets the target by the lower bound, the plain search decides (here: it raises, as
    worst-case-upper meets it at ``upper`` too)."""
    arguments = dict(n_users=100, k=2, epsilon=1.0, delta=0.4, upper=1.5, tolerance=1e-3)
    with pytest.raises(ValueError, match=r"every `epsilon_local` up to `upper` = 1.5 meets"):
        calibrate_epsilon_local_traced("worst-case-upper", **arguments)
    with pytest.raises(ValueError, match=r"every `epsilon_local` up to `upper` = 1.5 meets"):
        calibrate_epsilon_local_traced("worst-case-upper", lower="worst-case-lower", **arguments)


def test_lower_first_refuses_a_bound_that_is_not_lower():
    with pytest.raises(
        ValueError, match=r"`lower` must be a lower-bound accountant .*'weak-adversary' \(upper bound\)"
    ):
        calibrate_epsilon_local_traced(
            "worst-case-upper",
            lower="weak-adversary",
            n_users=100,
            k=2,
            epsilon=0.5,
            delta=1e-6,
            tolerance=1e-3,
        )
