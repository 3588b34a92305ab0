"""The validity checks of the validity sweep, shared by tests/accounting/test_validity_sweep.py (Hypothesis)
and benchmarks/sweep_validity.py (the deterministic grid).

Each accountant is checked on what it claims (its class's ``kind`` and ``scope``):

* ``upper>=lower``: every k-RR UPPER bound >= every lower bound on the worst case: ``worst-case-lower``,
  ``girgis-rdp-lower`` (k = 2), and the one-dataset values ``histogram-pair-lower``, ``histogram-exact``
  (both directions, n_x0 = 0) and ``biswas-exact`` (the x0-bin marginal, both directions) -- each of them
  is <= the true worst case by its scope;
* ``<=local``: the tight accountants and every lower/exact one <= the no-amplification delta of one user,
  (p - e^eps q)_+ = (e^eps0 - e^eps)_+ / (e^eps0 + k - 1) (the true worst case is below it: post-processing
  of u's own report). Not the strong adversary, whose view contains u's blanket bit
  (docs/decisions/strong-adversary.md);
* ``monotone``: delta non-increasing on an increasing grid of eps (accountants with
  ``monotone_in_epsilon``);
* ``eps(delta)``: delta(epsilon_for_delta(delta)) <= delta for an UPPER accountant, >= delta for a LOWER one
  (each returns its own safe end of the bracket);
* ``brute-force``: UPPER >= the exact worst case, LOWER / EXACT-for-one-dataset <= it
  (tests/accounting/exact_enumeration.py, small n);
* ``composed<=chernoff``: after T rounds, the optimistic composition of an accountant's pair (losses rounded
  down, mass left out dropped: a lower estimate of the pair's composed delta) <= the certified Chernoff bound
  on the same pair (numerics.composed_tail, from each round's exact moment-generating function) and <= the
  reported composed value (:func:`composed_margins`);
* ``profile>=lower``: after T rounds (T = 1 included), the composed ``worst-case-upper`` (the pair dominating its
  certified profile, :mod:`shuffledp.accounting.views.derived.profile`) >= the composed ``worst-case-lower``
  (explicit datasets' pairs, composed optimistically: a lower bound on the composed worst case)
  (:func:`profile_margins`).

Margins are natural-log differences on the side that must be >= 0 (e.g. log upper - log lower); a check
passes when its margin >= -``TOLERANCE`` (1e-12: rounding to nearest, stated as such; "rounding" rows are
in (-1e-9, -1e-12), anything below is a failure).
"""

from __future__ import annotations

import functools
import math
import time
import warnings

import numpy as np

from shuffledp.accounting import BoundKind, accountant_class, get_accountant, list_accountants
from shuffledp.accounting.numerics.safe_side import DEFAULT_RELATIVE_ROUNDING, widen

TOLERANCE = 1e-12
ROUNDING = 1e-9
#: UPPER bounds about another mechanism (the shuffled Laplace randomizer; k ignored): not compared with k-RR
OTHER_MECHANISM = ("balle-hoeffding-laplace", "balle-bennett-laplace")
#: lower bounds on the worst case, with the keyword arguments that make them so
LOWERS = {
    "worst-case-lower": {},
    "girgis-rdp-lower": {},
    "histogram-pair-lower": {"n_x0": 0, "direction": "both"},
    "histogram-exact": {"n_x0": 0, "direction": "both"},
    "biswas-exact": {"n_x0": 0, "direction": "both"},
}
#: accountants held below one user's own delta
TIGHT = ("weak-adversary", "worst-case-upper", *LOWERS)


def claimed_uppers() -> list[str]:
    """Every registered k-RR accountant whose kind is UPPER."""
    return [
        name
        for name in list_accountants()
        if accountant_class(name).kind is BoundKind.UPPER and name not in OTHER_MECHANISM
    ]


def checked_accountants() -> list[str]:
    """Every accountant that claims a bound (not RATE, not AS_PRINTED)."""
    return [
        name
        for name in list_accountants()
        if accountant_class(name).kind not in (BoundKind.RATE, BoundKind.AS_PRINTED)
    ]


def build(name: str, epsilon_local: float, n: int, k: int):
    """The accountant, with the keywords of :data:`LOWERS`; raises what its constructor raises."""
    extra = dict(LOWERS.get(name, {}))
    if accountant_class(name).needs_n_x0 and "n_x0" not in extra:
        extra["n_x0"] = 0
    return get_accountant(name, epsilon_local=epsilon_local, n_users=n, k=k, **extra)


def log_deltas(name: str, epsilon_local: float, n: int, k: int, epsilons) -> tuple[np.ndarray | None, str]:
    """(log delta at each eps, "") or (None, the refusal's message). Warnings are turned into refusals'
    notes only when no value comes back; a value with a RuntimeWarning is returned with the warning."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            values = np.asarray(
                build(name, epsilon_local, n, k).log_delta_for_epsilon(np.asarray(epsilons, float))
            )
        except ValueError as error:
            return None, f"refused: {str(error).splitlines()[0]}"
    note = "; ".join(sorted({f"{w.category.__name__}: {w.message}" for w in caught}))
    return values, note


def local_log_delta(epsilon_local: float, k: int, epsilons) -> np.ndarray:
    """log (p - e^eps q)_+ = eps0 + log(-expm1(eps - eps0)) - log(e^eps0 + k - 1), -inf for eps >= eps0, on its safe
    side as an upper bound (the accountants' rule, numerics.safe_side: every upper bound compared is widened the
    same way, so a tight upper equal to it is not flagged for the widening alone)."""
    eps = np.asarray(epsilons, float)
    log_norm = epsilon_local + math.log1p((k - 1) * math.exp(-epsilon_local))
    with np.errstate(divide="ignore", invalid="ignore"):
        inner = np.where(eps < epsilon_local, -np.expm1(np.minimum(eps - epsilon_local, 0.0)), 0.0)
        value = np.where(eps < epsilon_local, epsilon_local + np.log(inner) - log_norm, -np.inf)
    return widen(BoundKind.UPPER, value, DEFAULT_RELATIVE_ROUNDING)


def margin_above(upper: np.ndarray, lower: np.ndarray) -> float:
    """min over eps of log upper - log lower (inf where lower = 0; -inf where upper = 0 < lower)."""
    upper, lower = np.asarray(upper, float), np.asarray(lower, float)
    with np.errstate(invalid="ignore"):
        diff = np.where(np.isneginf(lower), np.inf, upper - lower)
    return float(np.min(diff))


def status(margin: float) -> str:
    if margin >= -TOLERANCE:
        return "pass"
    return "rounding" if margin >= -ROUNDING else "FAIL"


def monotone_margin(values: np.ndarray) -> float:
    """-(largest rise of log delta between consecutive increasing eps, beyond the representation error of the
    logs themselves, 64 ulp of |log delta|: a log delta of -2.7e7 is known to ~4e-7 at best) (0 when none)."""
    values = np.asarray(values, float)
    finite = np.where(np.isneginf(values), -1e308, values)
    rises = np.diff(finite) - 64.0 * 2.0**-52 * np.abs(finite[1:])
    return float(-max(0.0, rises.max())) if rises.size else 0.0


def composed_margins(name: str, epsilon_local: float, n: int, k: int, compositions: int, epsilons):
    """(min log Chernoff - log optimistic, min log reported - log optimistic) of ``name`` composed over
    ``compositions`` identical rounds, at ``epsilons`` where the optimistic composed delta is resolved (>=
    PLD_FLOOR = 1e-13: below it the PLD's own truncation, 1e-15 per composition, dominates); None when the
    accountant's view does not certify a tail (no Chernoff bound on its pair)."""
    from shuffledp.accounting.composition import PLD_FLOOR, compose, optimistic_privacy_loss_distribution
    from shuffledp.accounting.composition_tail import tail_rounds
    from shuffledp.accounting.numerics.composed_tail import log_delta_bound

    composed = compose(name, epsilon_local=epsilon_local, n_users=n, k=k, compositions=compositions)
    if not composed.has_tail_bound:
        return None
    pld = optimistic_privacy_loss_distribution(name, epsilon_local, n, k)
    pld = pld.self_compose(compositions)
    eps = np.asarray(epsilons, float)
    optimistic = np.array([float(pld.get_delta_for_epsilon(float(e))) for e in eps])
    with np.errstate(divide="ignore"):
        log_opt = np.log(optimistic)
    # the pair's tail rounds formed once for every epsilon (each caches its moment-generating function's grid)
    directions = tail_rounds(name, composed.rounds, composed.interval)
    chernoff = np.array([max(log_delta_bound(d, float(e)) for d in directions) for e in eps])
    reported = np.asarray(composed.log_delta_for_epsilon(eps), float)
    keep = optimistic >= PLD_FLOOR
    if not keep.any():
        return math.inf, math.inf
    return float(np.min(chernoff[keep] - log_opt[keep])), float(np.min(reported[keep] - log_opt[keep]))


def profile_margins(
    epsilon_local: float, n: int, k: int, compositions: int, epsilons, upper=None, interval: float = 1e-4
):
    """(min log profile - log lower, min log weak - log profile) after ``compositions`` rounds, at ``epsilons``
    where the composed lower bound is resolved (>= PLD_FLOOR). The first is the validity margin (the pair
    dominating worst-case-upper's profile, composed, against the composed explicit datasets of worst-case-lower);
    the second says how much tighter the profile's pair is than the weak adversary (not a validity check).

    ``upper``: the accountant whose profile is composed (default worst-case-upper of the setting; a planted
    one in the probe)."""
    from shuffledp.accounting.composition import PLD_FLOOR, Round, compose
    from shuffledp.accounting.views.derived import pld as derived_pld
    from shuffledp.accounting.views.derived.profile import profile_view

    if upper is None:
        view = _worst_case_upper_profile(epsilon_local, n, k, interval)
    else:
        view = profile_view(upper, interval=interval)
    profile = derived_pld.pld(view)
    if compositions > 1:
        profile = profile.self_compose(compositions, tail_mass_truncation=1e-15)
    eps = np.asarray(epsilons, float)
    from shuffledp.accounting.numerics.pld_epsilon import delta_for_epsilon

    with np.errstate(divide="ignore"):
        log_profile = np.log(np.asarray(delta_for_epsilon(profile, eps), float))
    options = dict(compositions=compositions, value_discretization_interval=interval)
    rounds = [Round(epsilon_local, n, k)] * compositions
    lower = compose("worst-case-lower", rounds=rounds, value_discretization_interval=interval)
    weak = compose("weak-adversary", epsilon_local=epsilon_local, n_users=n, k=k, **options)
    log_lower = np.asarray(lower.log_delta_for_epsilon(eps), float)
    log_weak = np.asarray(weak.log_delta_for_epsilon(eps), float)
    keep = np.exp(log_lower) >= PLD_FLOOR
    if not keep.any():
        return math.inf, math.inf
    return (
        float(np.min(log_profile[keep] - log_lower[keep])),
        float(np.min(log_weak[keep] - log_profile[keep])),
    )


@functools.lru_cache(maxsize=8)
def _worst_case_upper_profile(epsilon_local: float, n: int, k: int, interval: float):
    """The view of the pair dominating worst-case-upper's profile in the setting, formed once for every number of
    rounds it is composed over (a function of its arguments alone; the view is not changed by its users)."""
    from shuffledp.accounting.views.derived.profile import profile_view

    upper = get_accountant("worst-case-upper", epsilon_local=epsilon_local, n_users=n, k=k)
    return profile_view(upper, interval=interval)


def epsilon_for_delta_margin(
    name: str, epsilon_local: float, n: int, k: int, delta: float
) -> tuple[float, str]:
    """(margin, note) of epsilon_for_delta's safe side; (nan, message) when it refuses.

    An UPPER accountant returns an epsilon that meets the target: margin = log delta - log delta(eps) >= 0.
    A LOWER one returns the lower end of its bracket (the epsilon never exceeds the true one, see
    shuffledp.accounting.numerics.remainder): there delta(eps) >= delta, margin = log delta(eps) - log delta,
    unless eps = 0 (delta(0) <= delta already: margin 0)."""
    accountant = build(name, epsilon_local, n, k)
    try:
        eps = accountant.epsilon_for_delta(delta)
    except ValueError as error:
        return math.nan, f"refused: {str(error).splitlines()[0]}"
    value = float(accountant.log_delta_for_epsilon(eps)[0])
    if accountant.kind is BoundKind.LOWER:
        return (0.0 if eps == 0.0 else value - math.log(delta)), f"eps = {eps!r} (lower end)"
    return math.log(delta) - value, f"eps = {eps!r}"


def timed(function, *args):
    start = time.perf_counter()
    out = function(*args)
    return out, time.perf_counter() - start
