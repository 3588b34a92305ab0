"""Checked, not assumed, for the randomizers users run: each registered finite-output randomizer (OUE, SUE,
OLH, Hadamard response, subset selection), its bounds computed from its own ``output_types``, against the
exact worst-case delta of its full channel (written from the definition alone in test_support_randomizers)
over every dataset at tiny n. Upper bounds must be >= the truth, ``types-lower`` <= it."""

from __future__ import annotations

import numpy as np
import pytest
from test_support_randomizers import _channel
from types_channels import exact_worst_case

from shuffledp.accounting import get_accountant
from shuffledp.accounting.randomizers.hadamard import HadamardResponse
from shuffledp.accounting.randomizers.olh import OLH
from shuffledp.accounting.randomizers.oue import OUE
from shuffledp.accounting.randomizers.subset import SubsetSelection
from shuffledp.accounting.randomizers.sue import SUE

FRACTIONS = np.array([0.0, 0.1, 0.25, 0.5, 0.75, 0.9])
SLACK = 1e-9  # relative: rounding of the enumeration's float sums
FLOOR = 1e-14  # absolute: the same

CASES = [
    (OUE(1.0, 3), 5),
    (SUE(1.5, 3), 5),
    (OLH(1.0, 3, 2), 4),
    (HadamardResponse(1.0, 3), 5),
    (HadamardResponse(2.5, 3), 5),
    (SubsetSelection(1.0, 4, 2), 4),
]


@pytest.mark.parametrize(("randomizer", "largest_n"), CASES, ids=[repr(r) for r, _ in CASES])
def test_registered_randomizers_bounds_hold_against_exact_enumeration(randomizer, largest_n):
    channel, _ = _channel(randomizer)
    eps = FRACTIONS * randomizer.epsilon_local
    for n_users in range(2, largest_n + 1):
        truth = exact_worst_case(channel, n_users, eps)
        upper = get_accountant("weak-adversary", randomizer=randomizer, n_users=n_users).delta_for_epsilon(
            eps
        )
        lower = get_accountant("types-lower", randomizer=randomizer, n_users=n_users).delta_for_epsilon(eps)
        assert np.all(upper >= truth * (1 - SLACK) - FLOOR), (n_users, upper, truth)
        assert np.all(lower <= truth * (1 + SLACK) + FLOOR), (n_users, lower, truth)
        assert upper[0] > 0.0 and truth[0] > 0.0  # not vacuous: delta at eps = 0 is positive
