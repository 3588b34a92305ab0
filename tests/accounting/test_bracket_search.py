"""The bracket's upper-end search started from the lower end (``shuffledp.accounting.bracket``): the lower
end's epsilon is certified below the upper end's answer, so the upper end's search starts there and first
tries the point just within its tolerance above it.

Checked against the plain search (the upper end's own ``epsilon_for_delta``, as before): the epsilon moves
only within the search's tolerance, it is an evaluated point that meets the target by the upper accountant,
and it is never below the lower end; a tight setting closes with one evaluation. The probe plants a lower end
that is not certified (above the answer) and shows the comparison fails."""

from __future__ import annotations

import math

import pytest

from shuffledp.accounting import get_accountant
from shuffledp.accounting.bracket import bracket

TOLERANCE = 1e-9  # the bracketed accountants' default epsilon tolerance (relative to the upper end)

# (eps0, n, k): k = 2 blanket-bit blocks, k = 3 exact, k = 4 blocks + own-value hits, the weak adversary alone
SETTINGS = [(1.0, 30, 2), (2.0, 12, 3), (1.0, 12, 4), (0.5, 1000, 10)]
DELTAS = [1e-6, 1e-9]


def _plain_upper(eps0, n, k, delta):
    return get_accountant("worst-case-upper", epsilon_local=eps0, n_users=n, k=k).epsilon_for_delta(delta)


def _check_against_plain(eps0, n, k, delta, eps_upper, eps_lower):
    """The fast path's rules: within the tolerance of the plain search, meets the target, not below lower."""
    plain = _plain_upper(eps0, n, k, delta)
    assert abs(eps_upper - plain) <= TOLERANCE * max(eps_upper, plain), (eps_upper, plain)
    fresh = get_accountant("worst-case-upper", epsilon_local=eps0, n_users=n, k=k)
    assert fresh.log_delta_for_epsilon([eps_upper])[0] <= math.log(delta)
    assert eps_upper >= eps_lower


@pytest.mark.parametrize("eps0, n, k", SETTINGS)
def test_upper_end_moves_within_the_tolerance_and_meets_the_target(eps0, n, k):
    for row in bracket(epsilon_local=eps0, n_users=n, k=k, deltas=DELTAS):
        _check_against_plain(eps0, n, k, row["delta"], row["eps_upper"], row["eps_lower"])


def test_lower_end_is_that_of_its_own_search():
    for row in bracket(epsilon_local=1.0, n_users=12, k=4, deltas=DELTAS):
        lower = get_accountant("worst-case-lower", epsilon_local=1.0, n_users=12, k=4)
        assert row["eps_lower"] == lower.epsilon_for_delta(row["delta"])


def test_a_tight_setting_closes_with_one_evaluation():
    eps0, n, k, delta = 1.0, 12, 4, 1e-6
    lower = get_accountant("worst-case-lower", epsilon_local=eps0, n_users=n, k=k).epsilon_for_delta(delta)
    upper = get_accountant("worst-case-upper", epsilon_local=eps0, n_users=n, k=k)
    asked = []
    meets = upper._meets
    upper._meets = lambda eps, log_target: (asked.append(eps), meets(eps, log_target))[1]
    eps_upper = upper.epsilon_for_delta(delta, above=lower)
    assert asked == [eps_upper]
    assert lower < eps_upper and eps_upper - lower <= TOLERANCE * eps_upper


def test_a_loose_setting_still_closes_its_bracket():
    """k = 10, n = 1000: the weak adversary's value, well above the lower end: the probe answers no and the
    search goes on from it."""
    eps0, n, k, delta = 0.5, 1000, 10, 1e-6
    lower = get_accountant("worst-case-lower", epsilon_local=eps0, n_users=n, k=k).epsilon_for_delta(delta)
    eps_upper = get_accountant("worst-case-upper", epsilon_local=eps0, n_users=n, k=k).epsilon_for_delta(
        delta, above=lower
    )
    assert eps_upper > lower * (1.0 + 10 * TOLERANCE)
    _check_against_plain(eps0, n, k, delta, eps_upper, lower)


def test_probe_an_uncertified_lower_end_is_caught():
    """Planted: a "lower end" halfway between the answer and eps0. The search trusts it (it is not evaluated), so the
    epsilon returned is far from the plain search's, and the comparison the tests rely on fails."""
    eps0, n, k, delta = 1.0, 12, 4, 1e-6
    plain = _plain_upper(eps0, n, k, delta)
    wrong = get_accountant("worst-case-upper", epsilon_local=eps0, n_users=n, k=k).epsilon_for_delta(
        delta, above=plain + 0.5 * (eps0 - plain)
    )
    with pytest.raises(AssertionError):
        _check_against_plain(eps0, n, k, delta, wrong, 0.0)


def test_above_must_be_a_real_at_least_zero():
    upper = get_accountant("worst-case-upper", epsilon_local=1.0, n_users=12, k=4)
    with pytest.raises(ValueError, match="above"):
        upper.epsilon_for_delta(1e-6, above=-0.1)


def test_an_end_that_is_not_a_bracketed_lower_bound_is_not_used():
    """bracket() starts the upper search from the lower end only for a bracketed LOWER bound: with an upper
    accountant as the "lower" end the plain searches run (values of both ends as called alone)."""
    row = bracket(epsilon_local=1.0, n_users=12, k=4, deltas=[1e-6], lower="weak-adversary")[0]
    assert row["eps_upper"] == _plain_upper(1.0, 12, 4, 1e-6)
