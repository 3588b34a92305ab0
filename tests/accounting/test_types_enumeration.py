"""Checked, not assumed: at tiny n, the exact worst-case delta of the shuffled reports over every dataset
(every multiset of the others' inputs, every ordered pair of the differing user's values, the full output
histogram) against every bound that accepts a randomizer with finitely many outputs: upper bounds must be
>= it, ``types-lower`` <= it. Channels written from first principles (tests/accounting/types_channels.py)."""

from __future__ import annotations

import numpy as np
import pytest
from types_channels import (
    ChannelRandomizer,
    exact_worst_case,
    krr_channel,
    olh,
    oue,
    rappor,
    subset_selection,
)

from shuffledp.accounting import get_accountant

UPPER = (
    "weak-adversary",
    "feldman-numerical",
    "feldman-closed",
    "balle-hoeffding-generic",
    "balle-bennett-generic",
    "erlingsson",
    "erlingsson-rdp",
    "girgis-rdp",
    "girgis-rdp-simple",
)
LOWER = ("types-lower",)
FRACTIONS = np.array([0.0, 0.05, 0.1, 0.2, 0.35, 0.5, 0.7, 0.85, 1.0])
SLACK = 1e-9  # relative: rounding of the enumeration's float sums
FLOOR = 1e-14  # absolute: the same (a zero delta sums to ~1e-17)


def _krr(e0: float) -> ChannelRandomizer:
    return ChannelRandomizer("k-RR", e0, krr_channel(e0, 3))


CASES = [
    (_krr, 0.5, 6),
    (_krr, 2.0, 6),
    (oue, 1.0, 5),
    (oue, 3.0, 4),
    (rappor, 1.0, 5),
    (rappor, 2.0, 4),
    (olh, 1.0, 4),
    (olh, 2.0, 3),
    (subset_selection, 1.0, 5),
    (subset_selection, 2.5, 4),
]


@pytest.mark.parametrize(("factory", "e0", "largest_n"), CASES)
def test_every_bound_holds_against_the_exact_worst_case(factory, e0, largest_n):
    randomizer = factory(e0)
    eps = FRACTIONS * e0
    for n_users in range(2, largest_n + 1):
        truth = exact_worst_case(randomizer.channel, n_users, eps)
        for name in UPPER + LOWER:
            got = get_accountant(name, randomizer=randomizer, n_users=n_users).delta_for_epsilon(eps)
            if name in UPPER:
                assert np.all(got >= truth * (1 - SLACK) - FLOOR), (name, n_users, got, truth)
            else:
                assert np.all(got <= truth * (1 + SLACK) + FLOOR), (name, n_users, got, truth)


def test_the_weak_adversary_is_close_and_the_lower_bound_is_tight_somewhere():
    """Not vacuous: at n = 5, OUE(eps0 = 1), the type view is within a factor 2 of the truth where delta >=
    1e-2, and types-lower meets the truth at eps = 0 (the worst dataset is among its members there)."""
    randomizer = oue(1.0)
    eps = FRACTIONS * 1.0
    truth = exact_worst_case(randomizer.channel, 5, eps)
    upper = get_accountant("weak-adversary", randomizer=randomizer, n_users=5).delta_for_epsilon(eps)
    lower = get_accountant("types-lower", randomizer=randomizer, n_users=5).delta_for_epsilon(eps)
    big = truth >= 1e-2
    assert np.all(upper[big] <= 2.0 * truth[big])
    assert lower[0] >= 0.9 * truth[0]


def test_the_enumeration_sees_a_planted_violation():
    """Probe: a bound scaled below the truth by 1% fails the check (the comparison is not vacuous)."""
    randomizer = rappor(2.0)
    eps = FRACTIONS * 2.0
    truth = exact_worst_case(randomizer.channel, 4, eps)
    planted = 0.99 * get_accountant("types-lower", randomizer=randomizer, n_users=4).delta_for_epsilon(eps)
    planted_upper = 0.99 * truth
    assert np.all(planted <= truth * (1 + SLACK))
    assert not np.all(planted_upper >= truth * (1 - SLACK))
