"""The pmf of a sum of two binomials over a run of counts, by its three-term recurrence.

S = R + T with R ~ Bin(a, p), T ~ Bin(m, q) independent has the probability generating function
G(z) = (1 - p + p z)^a (1 - q + q z)^m, so (1 - p + p z)(1 - q + q z) G'(z) = (a p (1 - q + q z) +
m q (1 - p + p z)) G(z). Reading off the coefficient of z^t gives, for c_t = P(S = t),

    A (t + 1) c_{t+1} = B_t c_t + C_t c_{t-1},
    A = (1 - p)(1 - q),  B_t = a p (1 - q) + m q (1 - p) - ((1 - p) q + p (1 - q)) t,
    C_t = p q (a + m - t + 1),

and for the ratios rho_t = c_{t+1} / c_t:  rho_t = (B_t + C_t / rho_{t-1}) / (A (t + 1)).

Where B_t >= 0 (and C_t > 0: t <= a + m) both terms are positive: no cancellation, and a relative
error in rho_{t-1} reaches rho_t multiplied by f_t = (C_t / rho_{t-1}) / (B_t + C_t / rho_{t-1}) < 1,
so rounding does not grow along the run (the j-th ratio of a stretch carries at most
min(j, 1 / (1 - max f)) steps' rounding). :func:`log_pmf_run` starts every ``spacing`` counts from
two exact values (the caller's ``anchor``, e.g. a window sum) and accumulates log rho_t: O(1) work
per count instead of an O(sqrt n) window each. It bounds its own rounding (``_ULPS_PER_STEP`` ulps
per step plus the rounding of B_t's subtraction) and returns ``None`` when the bound exceeds
``max_log_error`` (or, far in a tail, ``_LOG_ULPS`` ulps of |log P|), or when B_t < 0 somewhere, i.e.
t > (a p (1 - q) + m q (1 - p)) / ((1 - p) q + p (1 - q)) (near the mean already for large eps0),
where the two terms would cancel: the caller then sums windows as before. The error is two-sided
(rounding), as is the anchors' own. The ratios rho_t are returned with the logs: the privacy
losses are functions of nearby ratios, which keep their digits far in a tail where differences of
two large log P would not.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["log_pmf_run"]

_ULPS_PER_STEP = 8.0  # rounding of one step: two products, a sum, a division, a log (generous)
_EPS = float(np.finfo(float).eps)
#: far in a tail, where |log P| is large, the tolerance is this many ulps of |log P| (the rounding
#: any log-space value of that size carries, Loader's formula included), if larger than max_log_error
_LOG_ULPS = 64.0


def _coefficients(a: int, m: int, log_p, log_1mp, log_q, log_1mq):
    """A, alpha = a p (1 - q) + m q (1 - p), beta = (1 - p) q + p (1 - q), gamma = p q."""
    p_1mq, q_1mp = math.exp(log_p + log_1mq), math.exp(log_q + log_1mp)
    return math.exp(log_1mp + log_1mq), a * p_1mq + m * q_1mp, q_1mp + p_1mq, math.exp(log_p + log_q)


def _steps(inverse, b, c, d):
    """rho_t and C_t / rho_{t-1} along each stretch (row), one IEEE step at a time.

    Python floats (the same correctly rounded operations as numpy's, without numpy's per-call cost
    on one-element slices); None if a ratio is 0 (then 1 / rho is undefined).
    """
    rho, carried = np.empty(b.shape), np.empty(b.shape)
    for row in range(b.shape[0]):
        step_inverse = float(inverse[row])
        out_rho, out_carried = [], []
        for b_t, c_t, d_t in zip(b[row].tolist(), c[row].tolist(), d[row].tolist()):
            carry = c_t * step_inverse
            value = (b_t + carry) / d_t
            if value == 0.0:
                return None, None
            out_carried.append(carry)
            out_rho.append(value)
            step_inverse = 1.0 / value
        rho[row], carried[row] = out_rho, out_carried
    return rho, carried


def _stretch_starts(starts, anchor, lead):
    """(log c_{start - 1}, log c_start) of every stretch, from ``anchor`` or, for the first stretch, from
    ``lead`` (log_pmf_run's docstring), and the lead's two error bounds (0 without a lead)."""
    anchored = starts if lead is None else starts[1:]
    ends = anchor(np.concatenate([anchored - 1, anchored])) if anchored.size else np.empty(0)
    before, log_start = ends[: anchored.size], ends[anchored.size :]
    if lead is None:
        return before, log_start, 0.0, 0.0
    # c_{first - 1} / c_first = e^(-log rho_{first - 1})
    before = np.concatenate([[lead[0] - lead[1]], before])
    log_start = np.concatenate([[lead[0]], log_start])
    return before, log_start, float(lead[2]), float(lead[3])


def log_pmf_run(
    first: int,
    last: int,
    *,
    a: int,
    m: int,
    log_p: float,
    log_1mp: float,
    log_q: float,
    log_1mq: float,
    anchor,
    spacing: int = 1024,
    max_log_error: float = 1e-10,
    lead=None,
    with_errors: bool = False,
):
    """(log P(R + T = t), log rho_t) for t = first..last, or None where the recurrence is not certified.

    The ratios too: far in a tail differences of log P lose digits the ratios keep. The last ratio may be inf/nan.

    ``anchor(t)`` must return the exact log pmf at an integer array t (called once, on two counts
    per stretch of ``spacing``). Needs 1 <= first <= last <= a + m - 1; returns None otherwise, when
    B_t < 0 inside the run, when an anchor or a step is not finite, or when the rounding bound (module
    docstring) exceeds ``max_log_error`` (absolute, in log P).

    ``lead`` = (log c_first, log rho_{first - 1}, error of the first, error of the second): values
    already known with those absolute error bounds (e.g. the end of an earlier run, continued here)
    start the first stretch instead of two anchors. Their errors are added to the bound: the first
    as an offset of the stretch's logs, the second carried along it (shrunk by f at every step, at
    most min(length, 1 / (1 - max f)) times over the stretch). ``with_errors``: also return the bound
    on the logs and on the last ratio (what a ``lead`` taken from this run's end carries on).
    """
    if not 1 <= first <= last <= a + m - 1:
        return None
    big_a, alpha, beta, gamma = _coefficients(a, m, log_p, log_1mp, log_q, log_1mq)
    if not (big_a > 0 and alpha - beta * last >= 0 and gamma > 0):
        return None
    spacing = min(spacing, last - first + 1)
    starts = np.arange(first, last + 1, spacing, dtype=np.int64)
    t = starts[:, None] + np.arange(spacing, dtype=np.int64)[None, :]  # counts of each stretch
    inside = t <= last
    tf = np.where(inside, t, first).astype(float)  # beyond `last`: harmless stand-in values
    b = alpha - beta * tf
    c = gamma * ((a + m + 1) - tf)
    d = big_a * (tf + 1.0)
    before, log_start, lead_log_error, lead_ratio_error = _stretch_starts(starts, anchor, lead)
    if not (np.all(np.isfinite(before)) and np.all(np.isfinite(log_start))):
        return None
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        inverse = np.exp(before - log_start)
        if lead is not None:  # the lead's ratio as given, not as a difference of two logs
            inverse[0] = math.exp(-lead[1])
        rho, carried = _steps(inverse, b, c, d)  # from 1 / rho_{start - 1}
        if rho is None:
            return None
        log_rho = np.log(rho)
        ratios = log_rho[inside]  # log rho_t = log c_{t+1} - log c_t, t = first..last
        log_rho[:, 1:] = log_rho[:, :-1].copy()  # log c_t = log c_start + sum of log rho_start..t-1
        log_rho[:, 0] = 0.0
        partial = np.cumsum(log_rho, axis=1)  # small numbers: the sum's rounding follows them, not log c
        values = log_start[:, None] + partial
        total = (b + carried)[inside]
        fraction = carried[inside] / total
        # relative rounding of one step: its own operations, plus b's absolute rounding (alpha and
        # beta t are subtracted) relative to the step's sum
        step = _EPS * (_ULPS_PER_STEP + (alpha + beta * tf[inside]) / total)
    if not (
        np.all(np.isfinite(values[inside]))
        and np.all(np.isfinite(step))
        and np.all(fraction < 1.0)
        and np.all(np.isfinite(ratios[:-1]))
    ):
        return None
    bound, ratio_bound = _rounding_bound(
        step, fraction, partial[inside], spacing, lead_log_error, lead_ratio_error
    )
    if not bound <= max(max_log_error, _LOG_ULPS * _EPS * float(np.abs(values[inside]).max())):
        return None
    return (values[inside], ratios, bound, ratio_bound) if with_errors else (values[inside], ratios)


def _rounding_bound(step, fraction, partial, spacing: int, lead_log_error: float, lead_ratio_error: float):
    """(bound on the error of the run's logs, bound on the error of its last ratio).

    The j-th ratio of a stretch is off by at most min(j, 1 / (1 - max f)) steps' rounding (each step
    adds its own and shrinks the carried error by f < 1); log c_t adds up the ratios before it, and
    the cumsum its own rounding (the last addition of log c_start rounds like any log-space value, as
    a window sum's logs do; log_pmf_run's tolerance allows for it). A lead's errors are added.
    """
    carry = np.minimum(np.arange(1, spacing + 1), 1.0 / (1.0 - float(fraction.max())))
    bound = float(step.max()) * float(carry.sum()) + spacing * _EPS * float(np.abs(partial).max())
    bound += lead_log_error + lead_ratio_error * float(carry[-1])
    return bound, float(step.max()) * float(carry[-1]) + lead_ratio_error
