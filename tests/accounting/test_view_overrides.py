"""Every fast override of a view is held to the generic value of the view's own stream.

A view yields its outcomes (:mod:`shuffledp.accounting.views.base`); delta, the PLD and the Renyi moments are
derived from them (:mod:`shuffledp.accounting.views.derived`). Where a view keeps a faster exact evaluation
(the split-pair sums, the 2023 pair's own sum, the single-bin view's tail sums, the histogram views' sorted
cells, the own report's closed form, the clones pair's Renyi rows) that evaluation is an *override*, and this module holds it to the stream on a grid
of small settings (n <= 60, k in {2, 3, 5}, eps0 up to 9.5).

**How to add a view.** Append an :class:`Override` to :data:`OVERRIDES`: a name, a factory from a
:class:`~shuffledp.accounting.params.ShuffleSetting` to the view, which quantity is overridden ("delta",
"binned" or "moments"), the override itself as a function of (view, argument), and optionally which settings
apply. The parametrisation below picks it up.

**Why it can fail.** At the grid's sizes the windows of K = 40 standard deviations hold every outcome (the
2023 pair's fixed windows leave ~1e-49 out), so the stream's upper and lower values coincide and an override
must lie between them to 1e-9 relative (delta, moments) or equal them bin for bin (binned PLD); :func:`test_a_perturbed_override_is_caught` perturbs each override by
1e-6 relative and checks that the comparison fails.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import pytest

from shuffledp.accounting.params import ShuffleSetting
from shuffledp.accounting.views.base import log_delta_from_outcomes
from shuffledp.accounting.views.clones import rdp as clones_rdp
from shuffledp.accounting.views.clones.pair import GenericClonesView, KrrClonesView
from shuffledp.accounting.views.clones.stronger_2023 import Clones2023View
from shuffledp.accounting.views.derived.pld import binned as derived_binned
from shuffledp.accounting.views.derived.rdp import view_log_moments
from shuffledp.accounting.views.histogram.view import HistogramView, PairCountsView
from shuffledp.accounting.views.own_report import OwnReportView
from shuffledp.accounting.views.single_bin.view import SingleBinView
from shuffledp.accounting.views.strong.view import StrongView

#: windows wide enough to hold every outcome at the grid's sizes
K_ALL = 40.0
RELATIVE = 1e-9
ORDERS = np.array([1.5, 2.0, 3.0, 8.0, 32.0, 128.0])


@dataclass(frozen=True)
class Override:
    name: str
    view: Callable  # ShuffleSetting -> View
    quantity: (
        str  # "delta" (epsilons -> log delta), "moments" (orders -> log M), "binned" (interval -> BinnedView)
    )
    evaluate: Callable  # (view, argument) -> the override's value
    applies: Callable = field(default=lambda setting: True)


def _log_delta(view, epsilons):
    return view.log_delta(epsilons, K=K_ALL)


def _with_n_x0(setting: ShuffleSetting) -> ShuffleSetting:
    """The setting with about half of the other users on x0 (the views of one dataset need n_x0)."""
    return ShuffleSetting(
        epsilon_local=setting.epsilon_local,
        n_users=setting.n_users,
        k=setting.k,
        n_x0=(setting.n_users - 1) // 2,
    )


def _clones_moments(view, orders):
    return clones_rdp.clones_log_moments(view.setting, view.generic, orders)


OVERRIDES = [
    Override("strong: split-pair sum", StrongView, "delta", _log_delta, lambda s: s.epsilon_local <= 14.0),
    Override("clones generic: split-pair sum", GenericClonesView, "delta", _log_delta),
    Override("clones k-RR: split-pair sum", KrrClonesView, "delta", _log_delta),
    Override("clones 2023: outcome sum", Clones2023View, "delta", _log_delta),
    Override("own report: closed form", OwnReportView, "delta", _log_delta),
    Override(
        "single bin: the tail sums",
        lambda s: SingleBinView(_with_n_x0(s)),
        "delta",
        _log_delta,
        lambda s: s.n_users >= 2,
    ),
    Override(
        "histogram: sorted cells",
        lambda s: HistogramView(_with_n_x0(s)),
        "delta",
        _log_delta,
        lambda s: s.k >= 3 and s.n_users >= 2,
    ),
    Override(
        "pair counts: sorted cells",
        lambda s: PairCountsView(_with_n_x0(s)),
        "delta",
        _log_delta,
        lambda s: s.n_users >= 2,
    ),
    Override("clones generic: Renyi rows", GenericClonesView, "moments", _clones_moments),
    Override("clones k-RR: Renyi rows", KrrClonesView, "moments", _clones_moments),
]

SETTINGS = [
    ShuffleSetting(epsilon_local=e0, n_users=n, k=k)
    for e0 in (0.3, 1.0, 3.0, 9.5)
    for n in (1, 2, 7, 30, 60)
    for k in (2, 3, 5)
    if not (n == 1 and k == 5)
]


def _epsilons(setting: ShuffleSetting) -> np.ndarray:
    e0 = setting.epsilon_local
    return np.unique(np.concatenate([[0.0, e0, 1.5 * e0], np.geomspace(1e-3, e0, 12)]))


def _delta_gap(override: Override, view, epsilons) -> float:
    """Largest relative gap between the override and the stream (inf: they disagree on a zero)."""
    ours = np.exp(override.evaluate(view, epsilons))
    upper = np.exp(log_delta_from_outcomes(view, epsilons, K=K_ALL, upper=True))
    lower = np.exp(log_delta_from_outcomes(view, epsilons, K=K_ALL, upper=False))
    # the override must lie between the stream's lower value (left-out mass dropped) and its upper value (added);
    # at the grid's sizes the two coincide except for views with fixed windows (the 2023 pair: ~1e-49 apart)
    outside = np.maximum(np.maximum(lower - ours, ours - upper), 0.0)
    # where the override is 0 (eps >= the largest loss) an outcome of loss eps0 rounded to eps0 + 1e-16 adds
    # ~1e-16 x its mass to the stream's sum: accepted up to 1e-15 (reported as a gap of 1e-9)
    relative = outside / np.where(ours == 0.0, 1e-15 / RELATIVE, np.maximum(ours, 1e-300))
    return float(np.max(relative))


def _moments_gap(override: Override, view, orders) -> float:
    ours = override.evaluate(view, orders)
    stream = view_log_moments(view, orders, K=K_ALL)
    return float(np.max(np.abs(ours - stream)))  # log M >= 0: an absolute gap in logs is a relative one in M


def _binned_gap(override: Override, view, interval) -> float:
    ours = override.evaluate(view, interval)
    stream = derived_binned(view, interval=interval, pessimistic=ours.pessimistic, K=K_ALL)
    if not np.array_equal(ours.index, stream.index):
        return math.inf
    masses = np.concatenate([ours.p_mass - stream.p_mass, ours.q_mass - stream.q_mass])
    infinities = [ours.p_infinity - stream.p_infinity, ours.q_infinity - stream.q_infinity]
    return float(
        np.max(np.abs(np.concatenate([masses, infinities]))) / max(1e-300, float(np.max(stream.p_mass)))
    )


def _gap(override: Override, setting: ShuffleSetting) -> float:
    view = override.view(setting)
    if override.quantity == "delta":
        return _delta_gap(override, view, _epsilons(setting))
    if override.quantity == "moments":
        return _moments_gap(override, view, ORDERS)
    return _binned_gap(override, view, 1e-3)


CASES = [(o, s) for o in OVERRIDES for s in SETTINGS if o.applies(s)]


@pytest.mark.parametrize(
    "override, setting", CASES, ids=[f"{o.name}-e{s.epsilon_local}-n{s.n_users}-k{s.k}" for o, s in CASES]
)
def test_override_equals_its_own_stream(override, setting):
    assert _gap(override, setting) <= RELATIVE


@pytest.mark.parametrize("override", OVERRIDES, ids=[o.name for o in OVERRIDES])
def test_a_perturbed_override_is_caught(override):
    setting = next(s for s in SETTINGS if s.n_users == 30 and s.k == 3 and s.epsilon_local == 1.0)
    if override.quantity == "binned":

        def shifted(view, argument):
            value = override.evaluate(view, argument)
            return type(value)(**{**value.__dict__, "p_mass": value.p_mass * (1 + 1e-6)})
    else:

        def shifted(view, argument):
            return override.evaluate(view, argument) + 1e-6  # x (1 + 1e-6) in linear scale

    perturbed = Override(override.name, override.view, override.quantity, shifted)
    assert _gap(override, setting) <= RELATIVE
    assert _gap(perturbed, setting) > RELATIVE


@pytest.mark.parametrize("view_class", [StrongView, KrrClonesView, GenericClonesView, Clones2023View])
def test_default_windows_bracket_the_override(view_class):
    """At the default K (left-out mass > 0 at n = 10^4) the stream's lower value <= override <= upper value."""
    setting = ShuffleSetting(epsilon_local=1.0, n_users=10_000, k=3)
    view = view_class(setting)
    eps = np.array([0.05, 0.2, 0.5])
    ours = view.log_delta(eps)
    upper = log_delta_from_outcomes(view, eps, upper=True)
    lower = log_delta_from_outcomes(view, eps, upper=False)
    assert view.left_out().log_p > -math.inf
    assert np.all(lower <= ours + 1e-9) and np.all(ours <= upper + 1e-9)
