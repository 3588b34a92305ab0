"""Where to start the shuffle calibration of a T-round comparison: a central-limit guess of eps0
and a search that starts from it.

**The guess** (:func:`shuffle_guess`; never a guarantee: only where the search starts). For many users per
round the weak adversary's loss is nearly L = beta (A - C) / (S + M + beta S / 2) (first order in A - C,
its exact form in :mod:`shuffledp.accounting.views.weak.view`), with Var(A - C | S) = S, so one round is
close to mu_1-GDP, mu_1^2 = beta^2 E[S] / (E[S] (1 + beta / 2) + E[M])^2, E[S] = 2 m / (e^eps0 + k - 1),
E[M] = (m - E[S]) (k - 2) / (e^eps0 + k - 3) at m users per round. T rounds subsampled at q are then close
to mu-GDP with mu = q sqrt(T (e^(mu_1^2) - 1)) (the central limit theorem of Dong, Roth & Su 2022,
Thm 3.6 / Bu et al. 2020 for subsampling); the guess is the eps0 at which mu-GDP's epsilon(delta) is the
target. At n = 10^5, k = 2, T = 1000 it is 1.62 against the calibrated 1.63.

**The search** (:func:`search_from_guess`). Every step is the caller's real evaluation (the composed
pessimistic PLD), so what it returns met the target whatever the guess was worth: from the guess, secant
steps (first with the guess's own slope) overshooting by a quarter until the target is straddled, then
Illinois (:func:`~shuffledp.accounting.numerics.search.illinois`) to the relative tolerance. A few
evaluations where the calibration from the pure-DP floor took about 20 (each costs a one-round
PLD at m users and a T-fold composition).
"""

from __future__ import annotations

import math

from scipy.optimize import brentq
from scipy.special import log_ndtr

from shuffledp.accounting.numerics.search import Bracket, illinois

__all__ = ["gaussian_epsilon", "shuffle_guess", "search_from_guess"]

_MU_CAP = 100.0  # mu-GDP beyond this is no privacy at all: the approximation stops there
_OVERSHOOT = 1.25  # secant steps aim this much past the predicted crossing (so that it is straddled soon)


def _log_gdp_delta(eps: float, mu: float) -> float:
    """log delta(eps) of mu-GDP: Phi(-eps / mu + mu / 2) - e^eps Phi(-eps / mu - mu / 2), in log space."""
    first, second = log_ndtr(-eps / mu + mu / 2.0), eps + log_ndtr(-eps / mu - mu / 2.0)
    return float(first + math.log1p(-math.exp(second - first))) if second < first else -math.inf


def gaussian_epsilon(mu: float, delta: float) -> float:
    """epsilon(delta) of mu-GDP (0 when mu-GDP already meets delta at epsilon 0)."""
    target = math.log(delta)
    if _log_gdp_delta(0.0, mu) <= target:
        return 0.0
    high = max(1.0, mu * mu)
    while _log_gdp_delta(high, mu) > target:
        high *= 2.0
    return float(brentq(lambda e: _log_gdp_delta(e, mu) - target, 0.0, high, xtol=1e-12))


def _mu(epsilon_local: float, *, per_round: int, k: int, compositions: int, subsample: float) -> float:
    """The T-round GDP parameter of the central-limit approximation (module docstring)."""
    e = math.exp(epsilon_local)
    beta = math.expm1(epsilon_local)
    mean_s = 2.0 * per_round / (e + k - 1.0)
    mean_m = (per_round - mean_s) * (k - 2.0) / (e + k - 3.0)
    one = beta * math.sqrt(mean_s) / (mean_s * (1.0 + beta / 2.0) + mean_m)
    return min(_MU_CAP, subsample * math.sqrt(compositions * math.expm1(min(one * one, 700.0))))


def shuffle_guess(
    *,
    epsilon: float,
    delta: float,
    per_round: int,
    k: int,
    compositions: int,
    subsample: float,
    low: float,
    high: float,
) -> tuple[float, float] | None:
    """(eps0, d epsilon_T / d eps0 there) of the central-limit approximation, eps0 in [``low``, ``high``];
    None where the approximation does not cross the target there."""

    def gap(epsilon_local: float) -> float:
        mu = _mu(epsilon_local, per_round=per_round, k=k, compositions=compositions, subsample=subsample)
        return gaussian_epsilon(mu, delta) - epsilon

    try:
        if not gap(low) < 0.0 < gap(high):
            return None
        guess = float(brentq(gap, low, high, xtol=1e-9 * high))
    except (ValueError, OverflowError, ZeroDivisionError):
        return None
    step = 1e-4 * guess
    slope = (gap(guess + step) - gap(guess - step)) / (2.0 * step)
    return guess, slope


def search_from_guess(
    evaluate,
    guess: float,
    slope: float,
    *,
    floor: float,
    upper: float,
    tolerance: float,
    name: str,
    epsilon: float,
) -> float:
    """Largest x in [``floor``, ``upper``] that meets (``evaluate(x)`` -> (fails, h, value), h rising through the
    target), to ``tolerance`` x low, from ``guess`` (module docstring). ``floor`` meets without evaluation;
    raises when ``upper`` meets too. Returns a point that met (or ``floor``)."""
    meet = (floor, -math.inf, math.nan)  # the largest x known to meet: (x, h, value); the floor meets
    fail: tuple[float, float, float] | None = None  # the smallest x known to fail
    x, previous, overshoot = min(max(guess, floor), upper), None, _OVERSHOOT
    while True:
        fails, h, value = evaluate(x)
        if (
            previous is not None
            and math.isfinite(h)
            and math.isfinite(previous[1])
            and (h - previous[1]) * (x - previous[0]) > 0
        ):
            slope = (h - previous[1]) / (x - previous[0])  # the secant of the last two steps
        if fails:
            fail = (x, h, value) if fail is None or x < fail[0] else fail
        elif x > meet[0]:
            meet = (x, h, value)
        if fail is not None and floor < meet[0] < fail[0]:
            break  # straddled
        if fail is None and x >= upper:
            raise ValueError(
                f"`{name}` must be bounded by the target: every {name} up to {upper!r} meets the "
                f"target epsilon; got epsilon = {epsilon!r}."
            )
        if not math.isfinite(h):  # no finite epsilon (all of delta in the infinity mass): halve the way down
            new = floor + 0.5 * (x - floor)
        else:
            smallest = 2.0 * tolerance * x
            step = -overshoot * h / slope if slope > 0 else -math.copysign(0.5 * x, h)
            new = x + (step if abs(step) >= smallest else -math.copysign(smallest, h))
        new = min(max(new, floor), upper, 2.0 * x)
        if fails and new <= floor:
            break  # the floor meets without being evaluated
        previous, x, overshoot = (x, h), new, 2.0 * overshoot
    low, h_low, _ = meet
    assert fail is not None  # both ways out of the loop have seen a failing x
    high, h_high, value_high = fail
    return illinois(
        evaluate,
        Bracket(low, high, math.nan, value_high),
        h_low,
        h_high,
        tolerance=tolerance * max(low, floor),
    ).low
