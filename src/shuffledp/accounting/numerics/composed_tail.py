"""A certified log-space upper bound on delta after T-fold composition: a Chernoff bound from
the exact moment-generating function of each round's privacy loss, minimised over its order.

**The bound.** For one direction of a round with privacy loss L under P (finite values l_j with
P-masses p_j, and an infinity mass a), write M(lam) = sum_j p_j e^(lam l_j). After rounds i = 1..T the
loss is S = L_1 + ... + L_T under the product of the P_i, and the hockey-stick divergence is

    delta_T(eps) = Pr(some L_i = inf) + E[(1 - e^(eps - S))_+ ; all finite]
                <= A + c(lam) e^(-lam eps) prod_i M_i(lam),       A = 1 - prod_i (1 - a_i),

for every lam > 0, because (1 - e^(-x))_+ <= c(lam) e^(lam x) for all real x with
c(lam) = lam^lam / (lam + 1)^(lam + 1) (the maximum of (1 - e^(-x)) e^(-lam x), at x = log(1 + 1/lam);
c(lam) < 1 / (e lam), so this is tighter than the plain tail bound Pr(S > eps) <= e^(-lam eps) prod M by
at least a factor e lam), and the rounds are independent. **Direction:** an upper bound on delta_T(eps)
of the pair given, for every eps >= 0 and every lam > 0; a minimum over any set of orders is an upper
bound, so the search over lam affects only its tightness. Given pessimistic pairs (losses rounded up,
left-out mass in the infinity mass) it is an upper bound on the true composed delta for every
dataset pair the views dominate.

**Numerics.** Everything is in logs (log masses from ``BinnedView.logs``), so deltas down to 1e-300
(and far below) are represented. Each round's log M carries a margin :data:`LOG_MARGIN` for the
rounding of the log masses (relative ~1e-16 x terms) and of lam l_j, so floating point never makes the
bound smaller than its exact value.

**Inverse.** For a target delta > A, eps(lam) = (log c(lam) + sum log M_i(lam) - log(delta - A)) / lam
is an epsilon at which the bound is <= delta; its minimum over lam is returned (an upper bound on the
composed epsilon(delta)).

**Orders.** log M is evaluated once per round on the log-spaced grid :data:`ORDERS` (cached); each
query takes the best grid point and refines by golden section between its neighbours
(:func:`~shuffledp.accounting.numerics.search.golden_minimum`). The grid's log-sum-exps are scipy's to the
bit, formed in place row by row (:func:`~shuffledp._numerics.row_logsumexp`).
"""

from __future__ import annotations

import math

import numpy as np

from shuffledp._numerics import logsumexp, row_logsumexp
from shuffledp.accounting.numerics.search import golden_minimum

__all__ = ["TailRound", "log_c", "log_delta_bound", "epsilon_bound", "ORDERS", "LOG_MARGIN"]

#: grid of orders lam searched before refinement (ratio 1.047 between neighbours)
ORDERS = np.geomspace(1e-3, 1e5, 401)
#: added to each round's log M(lam): covers the rounding of log masses and of lam l_j (~1e-10 at most)
LOG_MARGIN = 1e-6
_REFINE_STEPS = 30  # golden-section steps: the bracket between grid neighbours shrinks by 0.618^30
_CHUNK = 1 << 22  # grid points x bins evaluated at once


class TailRound:
    """One direction of one round: finite losses, their log P-masses, the log infinity mass, a count."""

    def __init__(self, loss: np.ndarray, log_mass: np.ndarray, log_infinity: float, count: int = 1):
        keep = np.isfinite(log_mass)
        self.loss = np.asarray(loss, dtype=float)[keep]
        self.log_mass = np.asarray(log_mass, dtype=float)[keep]
        self.log_infinity = float(log_infinity)
        self.count = int(count)
        self._grid: np.ndarray | None = None

    def log_mgf(self, lam: float) -> float:
        """log M(lam) = log sum_j p_j e^(lam l_j), plus :data:`LOG_MARGIN`."""
        if self.loss.size == 0:
            return -math.inf
        return float(logsumexp(self.log_mass + lam * self.loss)) + LOG_MARGIN

    def grid_log_mgf(self) -> np.ndarray:
        """log M on :data:`ORDERS` (computed once)."""
        if self._grid is None:
            if self.loss.size == 0:
                self._grid = np.full(ORDERS.size, -np.inf)
            else:
                step = max(1, _CHUNK // self.loss.size)
                parts = []
                for i in range(0, ORDERS.size, step):
                    # log_mass + lam loss, formed in place (the same sum: addition commutes exactly)
                    rows = np.multiply(ORDERS[i : i + step, None], self.loss[None, :])
                    rows += self.log_mass[None, :]
                    parts.append(row_logsumexp(rows, overwrite=True))
                self._grid = np.concatenate(parts) + LOG_MARGIN
        return self._grid


def log_c(lam):
    """log of lam^lam / (lam + 1)^(lam + 1) (lam > 0; scalar or array)."""
    return lam * np.log(lam) - (lam + 1.0) * np.log1p(lam)


def _log_infinity_total(rounds) -> float:
    """log(1 - prod_i (1 - a_i)^count_i), or an upper bound: the union bound sum_i count_i a_i when every
    a_i is below 1e-10 (then within 1e-9 relative), else formed without cancellation from log1p."""
    present = [r for r in rounds if r.log_infinity > -math.inf]
    if not present:
        return -math.inf
    if max(r.log_infinity for r in present) < math.log(1e-10):
        return float(logsumexp(np.array([math.log(r.count) + r.log_infinity for r in present])))
    if max(r.log_infinity for r in present) >= 0.0:
        return 0.0
    log_survive = sum(r.count * math.log1p(-math.exp(r.log_infinity)) for r in present)
    return math.log(-math.expm1(log_survive))


def _exponent(rounds, lam: float) -> float:
    """log c(lam) + sum_i count_i log M_i(lam) (the Chernoff term without e^(-lam eps))."""
    return float(log_c(lam)) + sum(r.count * r.log_mgf(lam) for r in rounds)


def _minimise(rounds, objective) -> float:
    """Smallest ``objective(lam, exponent)`` over :data:`ORDERS`, refined between the best point's
    neighbours. Every lam gives a valid bound, so the result is valid however the search ends."""
    grid = log_c(ORDERS) + sum(r.count * r.grid_log_mgf() for r in rounds)
    values = objective(ORDERS, grid)
    best = int(np.argmin(values))
    low, high = ORDERS[max(best - 1, 0)], ORDERS[min(best + 1, ORDERS.size - 1)]
    refined = golden_minimum(
        lambda lam: float(objective(lam, _exponent(rounds, lam))),
        float(low),
        float(high),
        steps=_REFINE_STEPS,
    )
    return min(float(values[best]), refined)


def log_delta_bound(rounds, epsilon: float) -> float:
    """log of the Chernoff upper bound on delta_T(epsilon) (module docstring)."""
    rounds = list(rounds)
    chernoff = _minimise(rounds, lambda lam, exponent: exponent - lam * epsilon)
    return float(min(0.0, np.logaddexp(_log_infinity_total(rounds), chernoff)))


def epsilon_bound(rounds, log_delta: float) -> float:
    """An epsilon >= 0 at which the Chernoff bound is <= e^log_delta (``inf`` when the infinity mass is at
    least that): an upper bound on the composed epsilon(delta)."""
    rounds = list(rounds)
    log_a = _log_infinity_total(rounds)
    if log_a >= log_delta:
        return math.inf
    log_room = log_delta + math.log(-math.expm1(log_a - log_delta)) if log_a > -math.inf else log_delta
    value = _minimise(rounds, lambda lam, exponent: (exponent - log_room) / lam)
    return max(0.0, value)
