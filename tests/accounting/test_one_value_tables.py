"""The one-value member's shared tables against its adaptive sum, and its Chernoff bound.

``OneValueTables.log_delta`` is held to the adaptive rectangle of
:mod:`shuffledp.accounting.worst_case.families.third_value` (an independent summation order: closed-form expected
excesses per (s, h0) with windows widened per epsilon) to 1e-11 in log, including deep tails (log delta
down to -600); ``log_bound`` must lie above both; and ``worst-case-lower``, which skips the member where
that bound is below the family's maximum (or below e^-700), must return the maximum of its members.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import validity_checks as vc

from shuffledp.accounting import get_accountant
from shuffledp.accounting.numerics.safe_side import widen
from shuffledp.accounting.worst_case.families.one_value_tables import OneValueTables
from shuffledp.accounting.worst_case.families.third_value import OneValueView

CASES = [(300, 4, 2.0), (1000, 10, 0.5), (1000, 10, 4.0), (3000, 5, 8.0), (10000, 10, 1.0)]
FRACTIONS = (0.02, 0.1, 0.2, 0.3, 0.5, 0.8)


def _adaptive(n, k, e0, eps):
    view = OneValueView(n_users=n, k=k, epsilon_local=e0)
    view.tables.log_delta = lambda eps: None  # the adaptive rectangle only
    return view.log_delta(eps)


@pytest.mark.parametrize("n, k, epsilon_local", CASES)
def test_tables_equal_adaptive_sum(n, k, epsilon_local):
    tables = OneValueTables(n_users=n, k=k, epsilon_local=epsilon_local)
    used = 0
    for f in FRACTIONS:
        eps = f * epsilon_local
        fast = tables.log_delta(eps)
        slow = _adaptive(n, k, epsilon_local, eps)
        assert tables.log_bound(eps) >= slow
        if fast is None or slow < -650.0:  # windows not certified (deep tail): the adaptive sum is used
            continue
        used += 1
        assert fast <= tables.log_bound(eps)
        assert abs(fast - slow) <= 1e-11 * max(1.0, abs(slow)), (eps, fast, slow)
    assert used >= 2


def test_tables_reach_deep_tails_at_n_1e4():
    """Every epsilon of the speed benchmark whose delta is inside the promise (>= e^-700) is served by the tables."""
    tables = OneValueTables(n_users=10_000, k=10, epsilon_local=1.0)
    for eps in np.arange(1, 50) * 0.02:
        if tables.log_bound(float(eps)) >= -700.0:
            assert tables.log_delta(float(eps)) is not None, eps


@pytest.mark.parametrize("n, k, epsilon_local", [(1000, 10, 0.5), (5000, 4, 2.0)])
def test_skipping_keeps_the_maximum(n, k, epsilon_local):
    accountant = get_accountant("worst-case-lower", epsilon_local=epsilon_local, n_users=n, k=k)
    epsilons = [f * epsilon_local for f in FRACTIONS]
    values = accountant.delta_for_epsilon(epsilons)
    for eps, value in zip(epsilons, values):
        best = max(accountant.member_log_deltas(eps).values())
        if best > -700.0:
            # the members' maximum, moved to the lower bound's safe side as every accountant's value is
            # (numerics.safe_side.widen): the skip must not change which member wins, nor its value
            expected = float(widen(accountant.kind, [best], accountant.relative_rounding)[0])
            assert math.log(value) == pytest.approx(expected, rel=0.0, abs=1e-15)


def test_tables_decline_where_e_eps_minus_1_underflows():
    """At eps = 5e-324 (test_extremes' grid) theta is not finite: the tables decline and the adaptive sum answers."""
    tables = OneValueTables(n_users=300, k=10, epsilon_local=1e-12)
    assert tables.log_delta(5e-324) is None
    value = get_accountant("worst-case-lower", epsilon_local=1e-12, n_users=300, k=10).log_delta_for_epsilon(
        [5e-324]
    )
    assert np.all(value <= 0.0)


@pytest.mark.parametrize(
    "n,k,e0,eps", [(10000, 15, 2.368318, 0.1), (1000, 10, 4.0, 1.0), (3000, 5, 8.0, 2.0)]
)
def test_a_lone_epsilon_is_summed_without_building_the_tables_and_agrees_with_them(n, k, e0, eps):
    """A calibration asks each eps0's fresh accountant for one epsilon; ``worst-case-lower``
    then sums "one value" adaptively (building the tables costs several single sums). The value agrees with
    the tables' path to 1e-12 in log; several epsilons in one call, and later calls, use the tables as before
    (bit for bit the value of an accountant that was never asked for a lone epsilon)."""
    lone = get_accountant("worst-case-lower", epsilon_local=e0, n_users=n, k=k)
    value = float(lone.log_delta_for_epsilon(eps)[0])
    assert not lone.widened.one_value.tables._built
    swept = get_accountant("worst-case-lower", epsilon_local=e0, n_users=n, k=k)
    both = swept.log_delta_for_epsilon([eps, eps / 2])
    assert swept.widened.one_value.tables._built
    assert value == pytest.approx(float(both[0]), rel=1e-12, abs=0.0)
    # a later call on the first accountant uses the tables: the sweep's value to the bit
    assert float(lone.log_delta_for_epsilon(eps)[0]) == float(both[0])
    assert lone.widened.one_value.tables._built


#: (n, k, eps0, eps) where the one-value sum's mass lies far above the mean of s (large k, tiny delta: at
#: n = 2512, k = 501 the mean of s is 10, its largest term at s = 72, 19 standard deviations out): the adaptive
#: rectangle's first window holds only the terms' rising edge, its peak below e^-700
FAR_OUT = [(2512, 501, 1.0, 0.05), (600, 50, 0.3, 0.06), (10_000, 5000, 1.0, 0.01)]


@pytest.mark.parametrize("n, k, e0, eps", FAR_OUT)
def test_the_adaptive_sum_widens_to_mass_beyond_its_first_rectangle(n, k, e0, eps):
    """The adaptive sum stopped on its first rectangle because that rectangle's largest term was below e^-700,
    while the terms still rose towards its edge: e^-1224 for a sum of e^-150.03 at n = 2512, k = 501. It now
    stops early only where the member's certified bound is below e^-700, and agrees with the tables; so does a
    lone epsilon asked of a fresh accountant (which sums adaptively) with a sweep (which uses the tables)."""
    fast = OneValueTables(n_users=n, k=k, epsilon_local=e0).log_delta(eps)
    slow = _adaptive(n, k, e0, eps)
    assert fast is not None and fast > -200.0
    assert abs(fast - slow) <= 1e-11 * abs(slow), (fast, slow)
    lone = get_accountant("worst-case-lower", epsilon_local=e0, n_users=n, k=k)
    value = float(lone.log_delta_for_epsilon(eps)[0])
    swept = get_accountant("worst-case-lower", epsilon_local=e0, n_users=n, k=k)
    assert value == pytest.approx(float(swept.log_delta_for_epsilon([eps, eps / 2])[0]), rel=1e-12, abs=0.0)


@pytest.mark.parametrize(
    "epsilon_local, n, k, delta",
    [(1.0, 2512, 501, 1e-62), (0.3, 600, 50, 1e-72), (0.5, 1000, 100, 1e-70), (2.0, 10_000, 2000, 1e-70)],
)
def test_epsilon_for_delta_lower_end_where_the_mass_lies_far_out(epsilon_local, n, k, delta):
    """The lower end of the epsilon search meets delta(eps) >= delta as the accountant then reports it.

    The search decides with the tables (an accountant already searching is not asked for a lone epsilon);
    the check then asks the fresh accountant for that one epsilon, summed adaptively. Before the adaptive sum
    widened to the mass (test above), that value was the "none" member's alone: at eps0 = 1, n = 2512, k = 501,
    delta = 1e-62 the returned eps = 0.0481817 had log delta 0.042 below log delta (the validity sweep's
    finding); the tables' 1.15e-9 above it is what is reported now."""
    margin, note = vc.epsilon_for_delta_margin("worst-case-lower", epsilon_local, n, k, delta)
    assert margin >= -vc.TOLERANCE, (note, margin)
