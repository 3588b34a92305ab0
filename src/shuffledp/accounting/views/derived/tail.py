"""The certified composed tail of a view, derived from its outcomes: each round's log-space PLD.

The Chernoff bound of :mod:`shuffledp.accounting.numerics.composed_tail` needs, per direction, every finite
loss with its log P-mass and the log infinity mass. :func:`tail_round` forms them from a view binned with
log masses (:func:`shuffledp.accounting.views.derived.pld.binned` with ``log_masses``: a per-bin
log-sum-exp of per-outcome log masses, so no mass underflows and none is formed as a difference), for the
(subsampled) REMOVE direction (q P + (1 - q) Q, Q), loss log(q e^L + 1 - q), or ADD (Q, q P + (1 - q) Q), its
negative; the losses are rounded up (pessimistic) and the left-out mass goes to the infinity mass.

A view's stream certifies this tail when its masses are formed outcome by outcome in log space
(``View.certifies_tail``); a view that forms masses as differences of prefix sums (absolute error ~1e-16)
cannot certify a tail of 1e-300 and says so.
"""

from __future__ import annotations

import math

import numpy as np

from shuffledp.accounting.numerics.composed_tail import TailRound
from shuffledp.accounting.params import Direction
from shuffledp.accounting.views.binned import LogMasses

__all__ = ["tail_round"]


def _rounded_up(loss: np.ndarray, width: float) -> np.ndarray:
    return np.ceil(loss / width) * width


def tail_round(logs: LogMasses, width: float, q: float, direction: Direction, count: int = 1) -> TailRound:
    """One direction (REMOVE or ADD) of one (subsampled) pessimistic round, repeated ``count`` times, for
    the tail bound."""
    direction = Direction.parse(direction)
    if direction is Direction.BOTH:
        raise ValueError("`direction` must be one of 'forward', 'reverse'; got 'both'.")
    k = logs.index.astype(float)
    log_rate, log_1mq = math.log(q), (math.log1p(-q) if q < 1.0 else -math.inf)
    if direction is Direction.REMOVE:
        edge, sign = k * width, 1.0  # upper edge of every bin
        log_mass = np.logaddexp(log_rate + logs.log_p_mass, log_1mq + logs.log_q_mass)
        extra_loss, log_extra = (
            (math.log1p(-q), log_1mq + logs.log_q_infinity) if q < 1.0 else (0.0, -math.inf)
        )
        log_infinity = log_rate + logs.log_p_infinity
    else:
        edge, sign = (k - 1.0) * width, -1.0
        log_mass = logs.log_q_mass
        extra_loss, log_extra = (-math.log1p(-q), logs.log_q_infinity) if q < 1.0 else (0.0, -math.inf)
        log_infinity = logs.log_q_infinity if q == 1.0 else -math.inf
    loss = (
        np.rint(sign * edge / width) * width
        if q == 1.0
        else _rounded_up(sign * np.log1p(q * np.expm1(edge)), width)
    )
    if log_extra > -math.inf:
        loss = np.append(loss, math.ceil(extra_loss / width) * width)
        log_mass = np.append(log_mass, log_extra)
    return TailRound(loss, log_mass, float(np.logaddexp(log_infinity, logs.log_dropped)), count)
