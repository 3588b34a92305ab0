"""Every accountant labelled UPPER bound must dominate the exact full-histogram delta.

Parametrised over the registry, so an upper bound added later is held to its label without a new
test. Exact values: brute-force enumeration over all k^n report vectors (tiny n) and
``histogram-exact`` (moderate n, including the paper's n = 100, k = 10, n_x0 = 80), both directions.
"""

from __future__ import annotations

import numpy as np
import pytest
from exact_cases import (
    CASES,
    EPSILONS,
    MODERATE_CASES,
    MODERATE_EPSILONS,
    exact_histogram_deltas,
    histogram_exact_deltas,
)

from shuffledp.accounting import BoundKind, accountant_class, get_accountant, list_accountants

UPPER_NAMES = [name for name in list_accountants() if accountant_class(name).kind is BoundKind.UPPER]


def test_registry_has_the_published_upper_bounds():
    assert {"strong-adversary", "balle-blanket", "feldman-closed", "feldman-numerical", "erlingsson"} <= set(
        UPPER_NAMES
    )


@pytest.mark.parametrize("case", CASES, ids=lambda c: "n{}-k{}-nx0{}-{}-e0{}".format(*c))
@pytest.mark.parametrize("name", UPPER_NAMES)
def test_upper_bound_dominates_brute_force_full_histogram(name, case):
    """Upper bound >= exact full-histogram delta (brute-force enumeration), both directions."""
    n, k, _, _, eps0 = case
    exact = np.array(exact_histogram_deltas(*case))
    bound = get_accountant(name, epsilon_local=eps0, n_users=n, k=k).delta_for_epsilon(EPSILONS)
    assert np.all(bound >= exact * (1 - 1e-9) - 1e-15), (bound, exact)


@pytest.mark.parametrize("case", MODERATE_CASES, ids=lambda c: "n{}-k{}-nx0{}-e0{}".format(*c))
@pytest.mark.parametrize("name", UPPER_NAMES)
def test_upper_bound_dominates_histogram_exact(name, case):
    """Upper bound >= the exact full-histogram delta (``histogram-exact``, both directions) at moderate n."""
    n, k, _, eps0 = case
    exact = np.array(histogram_exact_deltas(*case))
    bound = get_accountant(name, epsilon_local=eps0, n_users=n, k=k).delta_for_epsilon(MODERATE_EPSILONS)
    assert np.all(bound >= exact * (1 - 1e-9)), (bound, exact)
