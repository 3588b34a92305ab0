"""delta and epsilon of a view, derived from its outcomes (the reference every fast override is held to).

delta(eps) of one direction is the exact log-space sum of (P(o) - e^eps Q(o))_+ over the outcomes yielded
(every term positive: no cancellation, deltas far below 1e-300 are kept), plus the certified left-out P-mass
for an upper bound (or without it: a lower bound); the view's delta is the larger of its directions.
epsilon(delta) is the smallest epsilon whose delta meets the target, by the one bracketing search
(:func:`~shuffledp.accounting.numerics.search.first_not_above`),
the end that meets the target returned.
"""

from __future__ import annotations

import math

import numpy as np

from shuffledp._numerics import log1mexp, logsumexp
from shuffledp.accounting.numerics.search import first_not_above

__all__ = ["log_excess", "log_delta_from_outcomes", "epsilon_for_delta"]


def log_excess(log_p, log_q, eps: np.ndarray) -> np.ndarray:
    """log sum over the outcomes of (P(o) - e^eps Q(o))_+, one value per epsilon (-inf: zero); vectorised."""
    log_p, log_q = np.asarray(log_p, float).ravel(), np.asarray(log_q, float).ravel()
    live = np.isfinite(log_p)
    log_p, log_q = log_p[live], log_q[live]
    if log_p.size == 0:
        return np.full(eps.shape, -np.inf)
    with np.errstate(invalid="ignore"):
        # log(e^eps Q / P); -inf where Q = 0 (an infinite loss counts at every eps, eps = inf included)
        gap = np.where(np.isneginf(log_q)[None, :], -np.inf, eps[:, None] + log_q[None, :] - log_p[None, :])
        positive = gap < 0.0
        terms = np.where(positive, log_p[None, :] + log1mexp(np.where(positive, gap, -1.0)), -np.inf)
    return np.asarray(logsumexp(terms, axis=1), dtype=float).reshape(eps.shape)


def log_delta_from_outcomes(
    view, epsilons, *, K: float, upper: bool = True, chunk_epsilons: int = 64
) -> np.ndarray:
    """Generic log delta of ``view`` at each epsilon, the larger of its directions (module docstring).
    Work O(outcomes x epsilons), in blocks of ``chunk_epsilons``."""
    eps = np.atleast_1d(np.asarray(epsilons, dtype=float))
    best = np.full(eps.shape, -np.inf)
    for stream, left in view.directions(K):
        total = np.full(eps.shape, -np.inf)
        for chunk in stream:
            for start in range(0, eps.size, chunk_epsilons):
                part = slice(start, start + chunk_epsilons)
                total[part] = np.logaddexp(total[part], log_excess(chunk.log_p, chunk.log_q, eps[part]))
        if upper:
            total = np.logaddexp(total, left.log_p)
        best = np.maximum(best, total)
    return np.minimum(best, 0.0)


def epsilon_for_delta(log_delta, delta: float, *, tolerance: float = 1e-10) -> float:
    """Smallest epsilon >= 0 with ``log_delta(epsilon) <= log(delta)`` (a function of one float), the
    upper end of the final bracket (it meets the target); ``inf`` when only epsilon = inf does; a one-line
    error when not even that does."""
    log_target = math.log(delta) if delta > 0 else -math.inf

    def above(epsilon: float) -> bool:
        return bool(log_delta(epsilon) > log_target)

    if not above(0.0):
        return 0.0
    if above(math.inf):
        raise ValueError(
            f"`delta` must be at least the view's delta at epsilon = inf, "
            f"exp({float(log_delta(math.inf)):.6g}); got {delta!r}."
        )
    return first_not_above(above, tolerance=tolerance)
