"""The single-bin view's pieces that keep no state of their own: row pmfs by recurrence, the rounding
bound of a cached loss, the recurrence runs used from n = 10^7 on (:func:`evaluate_run`, by
:mod:`shuffledp.accounting.numerics.convolution`; their state is a :class:`RunState`) and the Chernoff tail
behind :meth:`TailSums.log_delta_bound <shuffledp.accounting.views.single_bin.tails.TailSums.log_delta_bound>`.
They read the count law's public values (its window sums, its losses of counts);
:mod:`shuffledp.accounting.accountants.biswas`'s docstring has the context.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from shuffledp.accounting.numerics.convolution import log_pmf_run
from shuffledp.accounting.params import ShuffleSetting

__all__ = [
    "rows_by_recurrence",
    "loss_error",
    "RunState",
    "evaluate_run",
    "chernoff_log_tail",
    "RUN_SPACINGS",
    "EPS",
]

RUN_SPACINGS = (8192, 1024)  # anchors every this many s (the first whose rounding bound holds)
EPS = float(np.finfo(float).eps)


def rows_by_recurrence(log_pmf, size: int, log_odds: float, first: np.ndarray, width: int) -> np.ndarray:
    """log Bin(size, p)(x) for x = first_i + j, j < width, one row per i; -inf outside [0, size].

    One Loader value per row, then log pmf(x) - log pmf(x - 1) = log((size - x + 1) / x) + log(p / q)
    accumulated along the row (rounding grows as the row length times 1e-16). Rows whose sums are not
    finite (eps0 so large that the steps overflow) are evaluated directly instead.
    """
    x = first[:, None] + np.arange(width)[None, :]
    clipped = np.clip(x, 0, size)
    moved = clipped[:, 1:] != clipped[:, :-1]
    upper = clipped[:, 1:].astype(float)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        step = np.where(moved, np.log(size - upper + 1.0) - np.log(upper) + log_odds, 0.0)
        values = np.empty(x.shape)
        values[:, 0] = log_pmf(clipped[:, 0].astype(float))
        values[:, 1:] = values[:, :1] + np.cumsum(step, axis=1)
    # a row is redone directly if a sum overflowed or its first value underflowed (then the
    # recurrence would carry -inf into values that are finite)
    broken = ~np.all(np.isfinite(values) | (values == -np.inf), axis=1) | (values[:, 0] == -np.inf)
    values[(x < 0) | (x > size)] = -np.inf
    if broken.any():
        values[broken] = log_pmf(x[broken].astype(float))
    return values


def loss_error(log_p1: np.ndarray) -> np.ndarray:
    """A generous bound on the rounding of a cached loss: 1000 ulps of |log P1| (a loss is a difference
    of two logs of that size; ~0.5 ulp was seen at |log P1| ~ 1.3e9); inf where P1 underflows."""
    with np.errstate(invalid="ignore"):
        return np.where(np.isfinite(log_p1), 1000.0 * EPS * np.abs(log_p1), np.inf)


@dataclass
class RunState:
    """The recurrence runs' state of one count law: the law with N - 2 users off x0 whose window sums anchor the
    runs (built on first use), and each run's last values by its last count (a run going on from there starts
    from them)."""

    anchor_law: Any = None
    ends: dict[int, tuple] = field(default_factory=dict)


def evaluate_run(law, state: RunState, first: int, last: int):
    """evaluate(first..last) by the recurrence of numerics.convolution, or None (module docstring).

    With m = N - 2 and u_t = log P(Bin(a, p) + Bin(m, q) = t): log P_{N-1}(t) and log P_N(t) =
    log P1(t) follow from u by P_{M+1}(t) = (1 - q) P_M(t) + q P_M(t - 1) (positive terms), and
    sum_r w (s - r) = N q P_{N-1}(s - 1), sum_r w (s - r)^2 = N (N - 1) q^2 P_{N-2}(s - 2) + that.
    """
    if law.n_off < 3:
        return None
    if state.anchor_law is None:  # the same p, q with N - 2 users off x0
        state.anchor_law = type(law)(
            ShuffleSetting(epsilon_local=law.epsilon_local, n_users=law.n_users - 2, k=law.k, n_x0=law.n_x0)
        )
        state.ends = {}
    known: dict[int, float] = {}  # anchors of this call (a retry with shorter stretches reuses them)

    def anchor(t):
        new = np.array(sorted({int(x) for x in t} - known.keys()), dtype=np.int64)
        if new.size:
            known.update(zip(new.tolist(), state.anchor_law.window_sums(new)[0].tolist()))
        return np.array([known[int(x)] for x in t])

    # a run that goes on from an earlier run ending at first - 1 starts from that run's last
    # values (u_{first - 1} and the ratio to u_first, with their error bounds) instead of two
    # window sums; if the accumulated bound is too large, it is anchored afresh
    end = state.ends.get(first - 1)
    run = None
    for spacing in RUN_SPACINGS:  # long stretches (few anchors) first; shorter where they fail
        for lead in [end, None] if end is not None else [None]:
            run = log_pmf_run(
                first if lead else first - 2,
                last,
                a=law.n_x0,
                m=law.n_off - 2,
                log_p=law.log_p,
                log_1mp=law.log_1mp,
                log_q=law.log_q,
                log_1mq=law.log_1mq,
                anchor=anchor,
                spacing=spacing,
                with_errors=True,
                lead=None
                if lead is None
                else (lead[0][-1] + lead[1][-1], lead[1][-1], lead[2] + lead[3], lead[3]),
            )
            if run is not None:
                if lead is not None:  # u and the ratios at first - 2, first - 1 from the earlier run
                    run = (np.concatenate([lead[0], run[0]]), np.concatenate([lead[1], run[1]]), *run[2:])
                break
        if run is not None:
            break
    if run is None:
        return None
    u, ratio, log_error, ratio_error = run
    if np.isfinite(ratio[-1]):
        state.ends[last] = (u[-2:], ratio[-2:], log_error, ratio_error)
    # everything relative to u_{s-2}, from the ratios (far in a tail, differences of the logs
    # would lose the digits the losses need): x1 = log u_{s-1}/u_{s-2}, x2 = log u_s/u_{s-1}
    x1, x2 = ratio[:-2], ratio[1:-1]
    v_before = np.logaddexp(law.log_1mq + x1, law.log_q)  # log P_{N-1}(s - 1) / u_{s-2}
    v_here = np.logaddexp(law.log_1mq + x1 + x2, law.log_q + x1)  # log P_{N-1}(s) / u_{s-2}
    p1 = np.logaddexp(law.log_1mq + v_here, law.log_q + v_before)  # log P_N(s) / u_{s-2}
    log_n = math.log(law.n_off)
    log_m1 = law.log_q + v_before - p1
    log_m2 = (
        np.logaddexp(math.log(law.n_off - 1) - log_n + 2.0 * law.log_q, law.log_q - log_n + v_before) - p1
    )
    log_p1 = u[:-2] + p1
    return law.losses_of_counts(np.arange(first, last + 1, dtype=np.int64), log_p1, log_m1, log_m2)


def chernoff_log_tail(law, x: float) -> float:
    """log of a Chernoff bound on P0(S >= x), S = Bin(a + 1, p) + Bin(N - 1, q) (the x0 count under D(x0)):
    (a + 1) log(1 - p + p e^th) + (N - 1) log(1 - q + q e^th) - th x for any th >= 0 (each th gives a
    valid bound); th near the minimum by bisection on the derivative. Capped at 0."""
    p, q = math.exp(law.log_p), math.exp(law.log_q)
    a, m = law.n_x0 + 1, law.n_off - 1

    def mean(theta):  # E[S] under the tilt e^(theta s): the derivative of the log moment generating function
        return a * p / (p + (1.0 - p) * math.exp(-theta)) + m * q / (q + (1.0 - q) * math.exp(-theta))

    low, high = 0.0, 64.0
    for _ in range(80):
        middle = 0.5 * (low + high)
        low, high = (middle, high) if mean(middle) < x else (low, middle)
    theta = low
    return min(0.0, a * math.log1p(p * math.expm1(theta)) + m * math.log1p(q * math.expm1(theta)) - theta * x)
