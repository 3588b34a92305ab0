"""Tests of calibrate_epsilon_local (src/shuffledp/accounting/calibrate.py)."""

import pytest

from shuffledp.accounting import get_accountant
from shuffledp.accounting.calibrate import calibrate_epsilon_local


@pytest.mark.parametrize("accountant,n,k,n_x0,eps,delta", [("biswas-exact", 200, 10, 20, 0.3, 1e-6), ("biswas-printed", 100, 10, 80, 0.1, 1e-20), ("histogram-exact", 30, 4, 10, 0.5, 1e-3)])
def test_largest_eps0_meets_target_and_next_does_not(accountant, n, k, n_x0, eps, delta):
    eps0 = calibrate_epsilon_local(accountant, n_users=n, k=k, n_x0=n_x0, epsilon=eps, delta=delta, tolerance=1e-8)
    assert eps0 >= eps  # eps0 <= eps always gives delta = 0
    at = get_accountant(accountant, epsilon_local=eps0, n_users=n, k=k, n_x0=n_x0).delta_for_epsilon(eps)[0]
    above = get_accountant(accountant, epsilon_local=eps0 * (1 + 1e-6), n_users=n, k=k, n_x0=n_x0).delta_for_epsilon(eps)[0]
    assert at <= delta < above


def test_zero_delta_target_gives_eps0_equal_eps():
    # delta = 0 exactly iff eps >= eps0 (the loss never exceeds eps0)
    eps0 = calibrate_epsilon_local("biswas-exact", n_users=50, k=5, n_x0=10, epsilon=0.7, delta=0.0, tolerance=1e-10)
    assert eps0 == pytest.approx(0.7, abs=1e-8)


def test_errors():
    with pytest.raises(ValueError, match=r"every `epsilon_local` up to `upper` = 0.5 meets"):
        calibrate_epsilon_local("biswas-exact", n_users=50, k=5, n_x0=10, epsilon=0.7, delta=0.1, upper=0.5)
    with pytest.raises(ValueError, match=r"`delta` must be in \[0, 1\); got 1.0"):
        calibrate_epsilon_local("biswas-exact", n_users=50, k=5, n_x0=10, epsilon=0.7, delta=1.0)
    with pytest.raises(ValueError, match=r"`epsilon` must be in \[0, inf\); got -1.0"):
        calibrate_epsilon_local("biswas-exact", n_users=50, k=5, n_x0=10, epsilon=-1.0, delta=0.1)
    with pytest.raises(ValueError, match=r"no `epsilon_local` in \[1e-06, 30.0\] meets \(epsilon, delta\) = \(0.0, 0.0\)"):
        calibrate_epsilon_local("biswas-exact", n_users=50, k=5, n_x0=10, epsilon=0.0, delta=0.0)
