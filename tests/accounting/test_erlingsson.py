"""Tests of the Erlingsson et al. (SODA 2019) accountant."""

from __future__ import annotations

import math

import numpy as np
import pytest
from exact_cases import CASES, EPSILONS, exact_histogram_deltas

from shuffledp.accounting import BoundKind, get_accountant


def test_label():
    accountant = get_accountant("erlingsson", epsilon_local=0.4, n_users=1000, k=3)
    assert accountant.kind is BoundKind.UPPER


def test_hand_evaluated_inside_conditions():
    """eps = 12 eps0 sqrt(log(1/delta) / n) (Erlingsson et al. 2019) at n = 1000, eps0 = 0.5, eps = 0.45."""
    n, eps0, eps = 1000, 0.5, 0.45
    expected = math.exp(-n * eps**2 / (144 * eps0**2))  # = 3.6e-3 <= 1/100
    assert expected <= 0.01
    ours = get_accountant("erlingsson", epsilon_local=eps0, n_users=n, k=10).delta_for_epsilon(eps)[0]
    assert ours == pytest.approx(expected, rel=1e-12)
    assert 12 * eps0 * math.sqrt(math.log(1 / ours) / n) == pytest.approx(eps, rel=1e-12)


@pytest.mark.parametrize(
    "eps0, n, eps, expected",
    [
        (0.49, 100, 0.4, 1.0),  # n < 1000 (the paper's n = 100 block)
        (0.6, 5000, 0.3, 1.0),  # eps0 > 1/2
        (0.5, 1000, 0.4, 1.0),  # formula gives 0.0117 > 1/100
        (0.5, 1000, 0.5, 0.0),  # eps >= eps0: the shuffle is eps0-DP
        (0.49, 100, 0.6, 0.0),
    ],
)
def test_outside_conditions(eps0, n, eps, expected):
    assert (
        get_accountant("erlingsson", epsilon_local=eps0, n_users=n, k=10).delta_for_epsilon(eps)[0]
        == expected
    )


@pytest.mark.parametrize("case", CASES, ids=lambda c: "n{}-k{}-nx0{}-{}-e0{}".format(*c))
def test_upper_bound_dominates_brute_force_full_histogram(case):
    """Tiny n is outside the theorem (n < 1000): the trivial 1 or the eps0-DP 0, both upper bounds."""
    n, k, _, _, eps0 = case
    exact = np.array(exact_histogram_deltas(*case))
    bound = get_accountant("erlingsson", epsilon_local=eps0, n_users=n, k=k).delta_for_epsilon(EPSILONS)
    assert np.all(bound >= exact * (1 - 1e-9) - 1e-15)


def test_delta_in_unit_interval_and_non_increasing():
    """Theorems here: delta in [0, 1] and non-increasing in eps (checked on a grid)."""
    accountant = get_accountant("erlingsson", epsilon_local=0.45, n_users=20_000, k=10)
    delta = accountant.delta_for_epsilon(np.linspace(0, 0.6, 121))
    assert np.all((delta >= 0) & (delta <= 1))
    assert np.all(np.diff(delta) <= 0)
