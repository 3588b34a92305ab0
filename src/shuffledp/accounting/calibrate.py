"""Calibration: the largest local epsilon_0 that meets a target (epsilon, delta).

For given n, k (and n_x0 for dataset-dependent accountants) find the largest eps0 with
delta(epsilon; eps0) <= delta_target. The search assumes delta is non-decreasing in eps0 (less local
noise never helps privacy; true for every accountant tested in this package) and keeps a bracket
[low, high] with low meeting the target and high not; it returns ``low``, so the answer always meets
the target (it errs towards privacy), and stops once high - low <= ``tolerance`` (absolute), so
eps0 + ``tolerance`` does not meet it.

Steps are Illinois (a regula falsi that halves the retained end's value when the same end is kept
twice; superlinear, never leaves the bracket) on

    h(eps0) = log(-log delta_target) - log(-log delta(epsilon; eps0)),

which is increasing in eps0 and close to linear over the hundreds of nats that log delta spans between
eps0 = epsilon (delta = 0, h = -inf) and large eps0 (h -> +inf as delta -> 1); an end where h is not
finite is handled by bisection. Once the bracket is small, each step is kept at least tolerance / 2
inside it, so the last two evaluations straddle the root and close the bracket: about 8-12 accountant
evaluations instead of the ~25 of a bisection to 1e-6. ``meets`` is decided on log delta itself, never
on the interpolant.

Shuffled k-RR with eps0 <= epsilon is (epsilon, 0)-DP (post-processing of eps0-LDP reports), so the
answer is never below the target epsilon: eps0 = epsilon meets every target even when a loose
accountant's bound says otherwise, and the search starts there.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from shuffledp._validation import check_choice, check_probability, check_real
from shuffledp.accounting import get_accountant

__all__ = ["calibrate_epsilon_local", "calibrate_epsilon_local_traced", "EpsilonLocalCalibration"]

#: search methods of :func:`calibrate_epsilon_local_traced`
METHODS = ("illinois", "bisection")
_SMALLEST = 1e-6  # smallest epsilon_0 tried
_MAX_EVALUATIONS = 200  # safety net: Illinois plus bisection never need this many on a monotone curve


@dataclass(frozen=True)
class EpsilonLocalCalibration:
    """Result of a calibration: the answer ``epsilon_local`` (meets the target), the first value
    known not to (``epsilon_local_fails``; at most ``tolerance`` above), log delta at both, and the
    number of accountant evaluations."""

    epsilon_local: float
    epsilon_local_fails: float
    log_delta: float
    log_delta_fails: float
    evaluations: int


def _log_delta(accountant: str, epsilon_local: float, epsilon: float, parameters: dict) -> float:
    return float(get_accountant(accountant, epsilon_local=epsilon_local, **parameters).log_delta_for_epsilon(epsilon)[0])


def _transformed(log_delta: float, log_log_target: float) -> float:
    """h = log(-log target) - log(-log delta): -inf at delta = 0, +inf at delta >= 1, increasing in delta."""
    if log_delta >= 0.0:
        return math.inf
    if log_delta == -math.inf:
        return -math.inf
    return log_log_target - math.log(-log_delta)


def calibrate_epsilon_local_traced(
    accountant: str,
    *,
    n_users: int,
    k: int,
    epsilon: float,
    delta: float,
    n_x0: int | None = None,
    upper: float = 30.0,
    tolerance: float = 1e-6,
    method: str = "illinois",
    **options,
) -> EpsilonLocalCalibration:
    """:func:`calibrate_epsilon_local` with the final bracket and the evaluation count.

    ``method``: ``"illinois"`` (default) or ``"bisection"`` (the former method, for comparison and
    benchmarks); both return a bracket of width at most ``tolerance`` around the same crossing.
    """
    check_choice(method, "method", METHODS)
    epsilon = check_real(epsilon, "epsilon", low=0.0)
    delta = check_probability(delta, "delta", allow_zero=True)
    upper = check_real(upper, "upper", low=_SMALLEST, low_open=True)
    tolerance = check_real(tolerance, "tolerance", low=0.0, low_open=True)
    parameters = dict(n_users=n_users, k=k, **options)
    if n_x0 is not None:
        parameters["n_x0"] = n_x0
    log_target = math.log(delta) if delta > 0 else -math.inf
    evaluations = 0

    def log_delta_at(epsilon_local: float) -> float:
        nonlocal evaluations
        evaluations += 1
        return _log_delta(accountant, epsilon_local, epsilon, parameters)

    log_high = log_delta_at(upper)
    if log_high <= log_target:
        raise ValueError(
            f"every `epsilon_local` up to `upper` = {upper!r} meets (epsilon, delta) = ({epsilon!r}, {delta!r}) "
            f"for {accountant!r}; raise `upper` to search further."
        )
    if epsilon <= 0 and not log_delta_at(_SMALLEST) <= log_target:
        raise ValueError(
            f"no `epsilon_local` in [{_SMALLEST:g}, {upper!r}] meets (epsilon, delta) = ({epsilon!r}, {delta!r}) "
            f"for {accountant!r}; got delta > target even at epsilon_local = {_SMALLEST:g}."
        )
    # eps0 = epsilon is (epsilon, 0)-DP whatever the accountant says: never return less
    low, high = min(max(epsilon, _SMALLEST), upper), upper
    log_low = -math.inf  # delta = 0 at eps0 <= epsilon (not evaluated)
    if delta == 0 or delta >= 1 or method == "bisection":  # no finite transform: plain bisection
        log_log_target = None
    else:
        log_log_target = math.log(-log_target)
    h_low = -math.inf
    h_high = _transformed(log_high, log_log_target) if log_log_target is not None else math.inf
    kept = 0  # +1: high kept on the last step, -1: low kept
    while high - low > tolerance:
        if evaluations >= _MAX_EVALUATIONS:  # pragma: no cover - a non-monotone accountant
            raise RuntimeError(
                f"calibration of {accountant!r} did not converge in {_MAX_EVALUATIONS} evaluations "
                f"(bracket [{low!r}, {high!r}]); is delta non-decreasing in epsilon_local?"
            )
        if math.isfinite(h_low) and math.isfinite(h_high) and h_high > h_low:
            middle = (low * h_high - high * h_low) / (h_high - h_low)
        else:
            middle = 0.5 * (low + high)
        # keep the step tolerance / 2 inside the bracket: near the root the next two steps straddle it
        middle = min(max(middle, low + 0.5 * tolerance), high - 0.5 * tolerance)
        log_middle = log_delta_at(middle)
        h_middle = _transformed(log_middle, log_log_target) if log_log_target is not None else (
            -math.inf if log_middle <= log_target else math.inf)
        if log_middle <= log_target:
            low, log_low, h_low = middle, log_middle, h_middle
            if kept == +1 and math.isfinite(h_high):
                h_high *= 0.5  # Illinois: high kept twice, halve its value
            kept = +1
        else:
            high, log_high, h_high = middle, log_middle, h_middle
            if kept == -1 and math.isfinite(h_low):
                h_low *= 0.5
            kept = -1
    return EpsilonLocalCalibration(
        epsilon_local=low, epsilon_local_fails=high, log_delta=log_low, log_delta_fails=log_high, evaluations=evaluations
    )


def calibrate_epsilon_local(
    accountant: str,
    *,
    n_users: int,
    k: int,
    epsilon: float,
    delta: float,
    n_x0: int | None = None,
    upper: float = 30.0,
    tolerance: float = 1e-6,
    **options,
) -> float:
    """Largest eps0 in [epsilon, ``upper``] with delta(``epsilon``; eps0) <= ``delta`` for ``accountant``,
    to within ``tolerance`` (absolute): the returned eps0 meets the target and eps0 + ``tolerance`` does not.

    ``options`` go to the accountant (e.g. ``direction="both"``). Never returns less than ``epsilon``
    (eps0 <= epsilon is (epsilon, 0)-DP). Raises ``ValueError`` when no eps0 >= 1e-6 meets the target
    (only possible for epsilon = 0), or when even ``upper`` meets it (then no largest value exists
    below ``upper``; raise ``upper``).
    """
    return calibrate_epsilon_local_traced(
        accountant, n_users=n_users, k=k, epsilon=epsilon, delta=delta, n_x0=n_x0, upper=upper, tolerance=tolerance,
        **options,
    ).epsilon_local
