"""The Renyi moments of a view, derived from its outcomes.

For an order lambda > 1 and a direction (P, Q), M_lambda = sum_o P(o)^lambda Q(o)^(1 - lambda) and
D_lambda(P || Q) = log M_lambda / (lambda - 1). Over the outcomes yielded, log M_lambda is a log-sum-exp of
log P + (lambda - 1)(log P - log Q) (:func:`log_moments`; an outcome with Q = 0 < P gives +inf).

**What is left out.** An outcome left out has P-mass at most the view's certified ``left_out().log_p`` in
total, and privacy loss at most the view's bound ``loss_bounds()`` (the largest log(P / Q) over every outcome
of that direction, yielded or not). Its contribution to M_lambda is then at most
left_p e^((lambda - 1) L_max), which is *added*: the result is an upper bound on M_lambda. A view that leaves
mass out and states no loss bound has no certified moment: :func:`view_log_moments` refuses it (one line).
The view's moment is the larger of its two directions (one, if symmetric).
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["log_moments", "view_log_moments"]


def log_moments(log_p: np.ndarray, log_q: np.ndarray, orders) -> np.ndarray:
    """log M_lambda = log sum_x p^lambda q^(1 - lambda) for each order (atoms with p = 0 add nothing;
    an atom with q = 0 < p gives +inf). Formed as logsumexp over x of log p + (lambda - 1) log(p / q)."""
    log_p, log_q = np.asarray(log_p, dtype=float), np.asarray(log_q, dtype=float)
    keep = log_p > -np.inf
    log_p, log_q = log_p[keep], log_q[keep]
    orders = np.atleast_1d(np.asarray(orders, dtype=float))
    if not log_p.size:
        return np.full(orders.size, -np.inf)
    with np.errstate(invalid="ignore"):
        loss = log_p - log_q  # +inf where q = 0
    out = np.empty(orders.size)
    # one order at a time through two reused buffers of one row each (no large temporary is allocated): each
    # row's values, their maximum and their sum are those the (orders, atoms) table gave, bit for bit
    exponent, scaled = np.empty(log_p.size), np.empty(log_p.size)
    top = np.empty(orders.size)
    sums = np.ones(orders.size)  # 1 (log 0) where the top is not finite: that row's result is its top
    for index, order in enumerate(orders):
        np.multiply(order - 1.0, loss, out=exponent)
        np.add(log_p, exponent, out=exponent)
        top[index] = np.max(exponent)
        if np.isfinite(top[index]):
            np.subtract(exponent, top[index], out=scaled)
            np.exp(scaled, out=scaled)
            sums[index] = np.sum(scaled)
    finite = np.isfinite(top)
    summed = np.where(finite, top, 0.0) + np.log(sums)
    out[:] = np.where(finite, summed, top)
    return out


def view_log_moments(view, orders, *, K: float) -> np.ndarray:
    """Certified upper bound on log M_lambda of ``view`` at each order, the larger of its directions
    (module docstring)."""
    orders = np.atleast_1d(np.asarray(orders, dtype=float))
    if np.any(orders <= 1.0):
        raise ValueError(f"`orders` must all be > 1; got min {float(orders.min())!r}.")
    bounds = view.loss_bounds()
    best = np.full(orders.size, -np.inf)
    for index, (stream, left) in enumerate(view.directions(K)):
        total = np.full(orders.size, -np.inf)
        for chunk in stream:
            total = np.logaddexp(total, log_moments(chunk.log_p, chunk.log_q, orders))
        if left.log_p > -math.inf:
            if bounds is None or not math.isfinite(bounds[index]):
                raise ValueError(
                    f"`orders` cannot be certified for view {view.name!r}: it leaves out P-mass "
                    f"exp({left.log_p:.6g}) and states no finite bound on its privacy loss."
                )
            total = np.logaddexp(total, left.log_p + (orders - 1.0) * bounds[index])
        best = np.maximum(best, total)
    return best
