"""The weak adversary over output types (TypesView), its count-pair engine and the explicit-dataset lower
bound (types-lower): agreement with k-RR's weak view, the override against its own stream, certification of
the remainder, refusals, and probes."""

from __future__ import annotations

import math

import numpy as np
import pytest
from types_channels import ChannelRandomizer, krr_channel, olh, oue, rappor, types_from_channel

from shuffledp.accounting import get_accountant
from shuffledp.accounting.params import ShuffleSetting
from shuffledp.accounting.randomizers import KRR, LaplaceRandomizer
from shuffledp.accounting.randomizers.types import OutputTypes
from shuffledp.accounting.views.derived.delta import log_delta_from_outcomes
from shuffledp.accounting.views.types import counts as counts_module
from shuffledp.accounting.views.types.counts import dominated
from shuffledp.accounting.views.types.datasets import DatasetTypesView, dataset_pair
from shuffledp.accounting.views.types.view import TypesView, weak_pair
from shuffledp.accounting.views.weak.view import WeakView

KRR_CASES = [(2, 2, 1.0), (50, 4, 1.0), (1000, 16, 1.0), (1000, 3, 4.0), (3000, 192, 2.0), (20000, 408, 4.0)]
FRACTIONS = np.array([0.0, 0.02, 0.05, 0.1, 0.3, 0.6, 0.9, 1.0, 1.5])


@pytest.mark.parametrize(("n_users", "k", "e0"), KRR_CASES)
def test_krr_types_agree_with_the_weak_view(n_users, k, e0):
    """On k-RR's types the type view is Koskela et al.'s weak view: the same delta to ~1e-12 relative wherever
    both sum it (log delta > -690; below, each returns its own certified Chernoff bound)."""
    setting = ShuffleSetting(epsilon_local=e0, n_users=n_users, k=k)
    eps = FRACTIONS * e0
    ours, theirs = TypesView(setting).log_delta(eps), WeakView(setting).log_delta(eps)
    summed = theirs > -690.0
    np.testing.assert_allclose(ours[summed], theirs[summed], rtol=0, atol=5e-12)
    assert np.all((ours == -np.inf) == (theirs == -np.inf))
    assert np.all(ours[~summed] <= 0.0)


def test_weak_adversary_keeps_krr_on_its_own_view_and_asks_the_type_view_otherwise():
    krr = get_accountant("weak-adversary", epsilon_local=1.0, n_users=500, k=4)
    assert type(krr.view()) is WeakView
    toy = oue(1.0)
    accountant = get_accountant("weak-adversary", randomizer=toy, n_users=40)
    assert type(accountant.view()) is TypesView
    eps = np.array([0.05, 0.2, 0.5])
    got = accountant.log_delta_for_epsilon(eps)
    np.testing.assert_allclose(got, TypesView(ShuffleSetting.of(toy, n_users=40)).log_delta(eps), rtol=1e-12)
    target = float(np.exp(got[1]))
    found = accountant.epsilon_for_delta(target)
    assert found == pytest.approx(0.2, rel=1e-6) and found >= 0.2 * (1 - 1e-9)


def test_a_randomizer_without_output_types_is_refused_in_one_line():
    laplace = LaplaceRandomizer(epsilon_local=1.0)
    for name in ("weak-adversary", "types-lower"):
        with pytest.raises(ValueError) as caught:
            get_accountant(name, randomizer=laplace, n_users=100)
        assert str(caught.value) == (
            f"`randomizer` must have finitely many outputs (output types) for accountant {name!r}; got "
            f"{laplace!r}."
        )


@pytest.mark.parametrize("factory", [oue, rappor, olh])
def test_the_override_lies_within_its_own_stream(factory):
    """The exact sum (tilted windows) against the generic derivation from the stream of every count vector:
    between the stream's lower (left-out dropped) and upper (left-out added) values, and equal to 1e-9."""
    setting = ShuffleSetting.of(factory(1.0), n_users=12)
    view = TypesView(setting)
    eps = np.array([0.0, 0.1, 0.3, 0.6, 0.9])
    fast = view.log_delta(eps)
    low = log_delta_from_outcomes(view, eps, K=12.0, upper=False)
    high = log_delta_from_outcomes(view, eps, K=12.0, upper=True)
    finite = fast > -np.inf
    assert np.all(fast[finite] >= low[finite] - 1e-12) and np.all(fast <= high + 1e-12)
    np.testing.assert_allclose(fast[finite], low[finite], rtol=0, atol=1e-9)


def test_the_certified_remainder_covers_what_a_narrow_window_leaves_out():
    """Probe of the certificate: the sum at a narrow window plus its remainder is >= the sum at a wide one,
    and the narrow sum alone falls short (the remainder is not vacuous)."""
    pair = weak_pair(KRR(1.0, 16).output_types(), 20000)
    eps = 0.1
    narrow_sum, narrow_left = pair.log_parts(eps, 2.0)
    wide_sum, wide_left = pair.log_parts(eps, 12.0)
    assert wide_left - wide_sum < math.log(1e-11)
    assert narrow_sum < wide_sum - 1e-6
    assert np.logaddexp(narrow_sum, narrow_left) >= wide_sum


def test_the_chernoff_bound_is_above_the_exact_delta():
    pair = weak_pair(oue(2.0).output_types(), 300)
    for eps in (0.05, 0.3, 1.0):
        log_sum, _ = pair.log_delta_parts(eps)
        assert pair.chernoff(eps)[0] >= log_sum


def test_merging_equal_types_changes_nothing():
    """Splitting a type into two of equal ratios (half the mass each) leaves the delta as it was."""
    types = KRR(1.0, 5).output_types()
    split = OutputTypes(
        types.epsilon_local,
        types.log_gamma,
        np.append(types.log_blanket_mass[:-1], [types.log_blanket_mass[-1] - math.log(2)] * 2),
        np.hstack([types.log_ratios, types.log_ratios[:, -1:]]),
    )
    a, b = weak_pair(types, 200), weak_pair(split, 200)
    assert b.n_cells == a.n_cells == 3
    np.testing.assert_array_equal(a.log_p, b.log_p)


def test_too_many_count_vectors_are_refused_in_one_line(monkeypatch):
    monkeypatch.setattr(counts_module, "MAX_CELLS", 10)
    pair = weak_pair(oue(1.0).output_types(), 1000)
    with pytest.raises(
        ValueError, match=r"^`n_users` must be small enough for the type view's windows .*; got 1000\.$"
    ):
        pair.log_parts(0.1, 8.0)


@pytest.mark.parametrize(("n_users", "k", "e0"), [(200, 4, 1.0), (2000, 16, 2.0), (10**5, 408, 4.0)])
def test_types_lower_brackets_with_the_weak_adversary_on_krr(n_users, k, e0):
    """types-lower <= the k-RR weak adversary, and it equals worst-case-lower's "all on x0" member where the
    type counts (x0, x1, rest) are the histogram's sufficient statistic (others on x0)."""
    eps = np.array([0.01, 0.05, 0.2, 0.5]) * e0
    lower = get_accountant("types-lower", epsilon_local=e0, n_users=n_users, k=k).log_delta_for_epsilon(eps)
    upper = get_accountant("weak-adversary", epsilon_local=e0, n_users=n_users, k=k).log_delta_for_epsilon(
        eps
    )
    assert np.all(lower <= upper)
    assert np.all(lower[0:2] > upper[0:2] - 3.0)  # not vacuous where delta is large


def test_coarsened_type_counts_give_less():
    """Probe of the coarsening: the three coarse cells are a post-processing, so their delta is <= the exact
    cells' (others on x_2 of OUE over 3 values has 4 cells after merging on (x0, x1, x2))."""
    toy = oue(1.0)
    types = toy.output_types(3)
    exact, coarse = dataset_pair(types, 2, 10, coarse=False), dataset_pair(types, 2, 10, coarse=True)
    assert exact.n_cells > 3 and coarse.n_cells == 3
    setting = ShuffleSetting.of(toy, n_users=10)
    eps = np.array([0.0, 0.1, 0.3, 0.6])
    full = DatasetTypesView(setting, 2, coarse=False).log_delta(eps, upper=False)
    less = DatasetTypesView(setting, 2, coarse=True).log_delta(eps, upper=False)
    assert np.all(less <= full + 1e-12) and np.any(less < full - 1e-6)


def test_brute_force_types_of_krr_are_krrs_own():
    ours = types_from_channel(krr_channel(1.5, 5), 1.5, (0, 1, 2))
    theirs = KRR(1.5, 5).output_types(3)
    np.testing.assert_allclose(ours.log_ratios, theirs.log_ratios, atol=1e-12)
    np.testing.assert_allclose(ours.log_blanket_mass, theirs.log_blanket_mass, atol=1e-12)
    assert ours.log_gamma == pytest.approx(theirs.log_gamma, abs=1e-12)
    assert isinstance(oue(1.0), ChannelRandomizer)


def test_types_lower_epsilon_errs_low():
    """The lower bound's epsilon for a delta is one where its delta is still above the target (the true
    epsilon is at least it), and within the tolerance of the crossing."""
    accountant = get_accountant("types-lower", epsilon_local=1.0, n_users=1000, k=16)
    found = accountant.epsilon_for_delta(1e-6, tolerance=1e-4)
    assert accountant.delta_for_epsilon(found)[0] > 1e-6
    assert accountant.delta_for_epsilon(found * (1 + 3e-4))[0] <= 1e-6
    upper = get_accountant("weak-adversary", epsilon_local=1.0, n_users=1000, k=16).epsilon_for_delta(1e-6)
    assert found <= upper


def test_grouped_types_bound_the_exact_delta_from_above(monkeypatch):
    """dominated (three groups, each with its largest coefficient) is >= the exact delta, and the
    view uses it beyond EXACT_CELLS (probe: with a tiny cap the view's value moves up, never down)."""
    from shuffledp.accounting.views.types import view as view_module

    pair = weak_pair(oue(1.0).output_types(), 200)
    assert pair.n_cells == 4
    for eps in (0.05, 0.2, 0.5):
        exact = np.logaddexp(*pair.log_delta_parts(eps))
        grouped = dominated(pair, eps)
        assert grouped.n_cells == 3
        assert np.logaddexp(*grouped.log_delta_parts(eps)) >= exact
    krr = weak_pair(KRR(1.0, 8).output_types(), 200)
    assert dominated(krr, 0.1) is krr  # three cells: nothing to group
    setting = ShuffleSetting.of(oue(1.0), n_users=200)
    eps = np.array([0.05, 0.2])
    exact_view = TypesView(setting).log_delta(eps)
    monkeypatch.setattr(view_module, "EXACT_CELLS", 1)
    grouped_view = TypesView(setting).log_delta(eps)
    assert np.all(grouped_view >= exact_view) and np.any(grouped_view > exact_view + 1e-3)


def test_a_stream_too_large_is_refused_in_one_line(monkeypatch):
    from shuffledp.accounting.views.types.counts import stream

    monkeypatch.setattr(counts_module, "MAX_CELLS", 10)
    pair = weak_pair(KRR(1.0, 8).output_types(), 1000)
    with pytest.raises(
        ValueError, match=r"^`n_users` must be small enough for the type view's stream .*; got 1000\.$"
    ):
        next(stream(pair, 9.0))


def test_the_type_view_composes():
    """weak-adversary composes for a randomizer that is not k-RR (its PLD derived from the type view's
    stream): more rounds cost more, and never more than basic composition of the single-round bound."""
    from shuffledp.accounting.composition import compose

    setting = ShuffleSetting.of(oue(1.0), n_users=40)
    single = get_accountant("weak-adversary", randomizer=oue(1.0), n_users=40).epsilon_for_delta(1e-6)
    twice = compose("weak-adversary", setting, compositions=2).epsilon_for_delta(2e-6)
    assert single < twice <= 2 * single + 1e-3


# -- each epsilon's Chernoff minimisation done once per pair


def _oue_weak_pair(epsilon_local: float, n_users: int):
    from shuffledp.accounting.randomizers import OUE

    return weak_pair(OUE.from_parameters(epsilon_local=epsilon_local, k=15).output_types(2), n_users)


def test_the_chernoff_minimisation_is_done_once_per_epsilon_and_gives_the_fresh_value(monkeypatch):
    """A pair answers chernoff(eps) again from what it found (the same two floats as a fresh pair's), and one
    evaluation of the weak adversary's delta minimises once per direction and epsilon (it asked up to five
    times: the Chernoff cap, the size of the windows, each window's plan)."""
    import scipy.optimize  # the types view imports minimize_scalar from it where it minimises

    calls = []
    minimise = scipy.optimize.minimize_scalar

    def counted(*args, **kwargs):
        calls.append(1)
        return minimise(*args, **kwargs)

    monkeypatch.setattr(scipy.optimize, "minimize_scalar", counted)
    pair = _oue_weak_pair(1.5, 1000)
    first = pair.chernoff(0.3)
    assert pair.chernoff(0.3) == first and len(calls) == 1
    assert _oue_weak_pair(1.5, 1000).chernoff(0.3) == first  # a fresh pair: the same floats
    assert pair.chernoff(0.4) != first and len(calls) == 3
    calls.clear()
    from shuffledp.accounting.randomizers import OUE

    built = OUE.from_parameters(epsilon_local=0.98, k=15)
    value = get_accountant("weak-adversary", randomizer=built, n_users=1000).log_delta_for_epsilon(0.1)
    assert len(calls) == 1  # symmetric pair: one direction
    assert math.isfinite(float(value[0]))


def test_probe_the_remembered_chernoff_value_is_the_one_the_evaluation_reads():
    """Planting another value in the pair's memory moves log_delta (the Chernoff branch reads it), so the
    test above, which holds the remembered value to the fresh one, guards what the evaluation uses."""
    from shuffledp.accounting.views.types.view import _log_delta_at

    pair = _oue_weak_pair(2.0, 1000)
    honest = _log_delta_at(pair, 0.5, True)
    planted = _oue_weak_pair(2.0, 1000)
    _, theta = planted.chernoff(0.5)
    planted._chernoff_at[0.5] = (-800.0, theta)  # below e^-700 the Chernoff bound itself is returned
    assert honest > -700.0 and _log_delta_at(planted, 0.5, True) == -800.0
