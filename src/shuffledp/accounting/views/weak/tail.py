"""The weak adversary's certified composed tail: its rounds as :class:`~shuffledp.accounting.numerics.
composed_tail.TailRound` formed from its own outcomes (issue 32's listed fix).

The Chernoff bound of :mod:`~shuffledp.accounting.numerics.composed_tail` needs, per round and direction,
losses l_j and log P-masses whose moment-generating function sum_j p_j e^(lam l_j) is at least the
pair's own, sum_o P(o)^(1 + lam) Q(o)^(-lam), for every lam > 0. Here they come from the outcome blocks
of :func:`shuffledp.accounting.views.weak.outcomes.blocks`:

* windows of +- ``K`` standard deviations (:class:`~shuffledp.accounting.views.weak.outcomes.WeakGrid`);
  the certified bound on the P-mass they leave out goes into the infinity mass (at ``K`` = 38 about
  e^-720: composed deltas down to 1e-300 are untouched by it);
* every (s, a) pair of the windows exactly, and the m window of each s in at most ``m_blocks`` runs of
  consecutive m; a block's loss is its largest end-point loss (the loss is monotone in m), and its mass
  the exact sum of its outcomes' masses, formed in log space from sums of positive terms (no prefix-sum
  differences: the masses are certified to relative rounding, down to any size). With one block per m
  value every loss is the outcome's own: the moment-generating function is the pair's, exactly;
* each loss is then rounded up to the grid ``width`` (the same grid as the other accountants' tails,
  :func:`shuffledp.accounting.composition_tail.tail_interval`), and the masses of a grid point are
  added in log space (fewer points for the bound's search over its order; at T rounds this moves the
  composed epsilon by at most T x width, the safe way).

Subsampling (a round samples a fraction q of the users): REMOVE is (q P + (1 - q) Q, Q) with loss
log(q e^L + 1 - q) (increasing in L, so a block's largest loss bounds it), ADD is (Q, q P + (1 - q) Q)
with loss -log(q e^L + 1 - q), bounded by the block's smallest L. Without subsampling the view is
symmetric (a and c exchange P and Q and negate every block's two end points), so ADD is REMOVE.

**Work.** (s, a) pairs x blocks: at ``K`` = 38 every (s, a) of the whole support up to n ~ 300
(~n^3 / 6 outcomes, one block per m value within :data:`MAX_ENTRIES`), ~3e6 pairs at n = 10^4; the
pair count grows like n (s and a windows of width ~sqrt(n) each). :func:`tail_rounds` refuses a setting
whose pairs exceed :data:`MAX_PAIRS` (returns None: the composition keeps the PLD's floor there).
"""

from __future__ import annotations

import math

import numpy as np

from shuffledp._numerics import logsumexp
from shuffledp.accounting.numerics.composed_tail import TailRound
from shuffledp.accounting.views.weak.outcomes import WeakGrid, blocks

__all__ = ["K_TAIL", "MAX_PAIRS", "MAX_ENTRIES", "tail_rounds"]

#: windows of the tail: +- 38 sd (certified remainder ~e^-720 per side)
K_TAIL = 38.0
#: largest number of (s, a) pairs the tail enumerates (beyond: no tail, the PLD's floor stays)
MAX_PAIRS = 4_000_000
#: (s, a, m block) entries aimed at: the m blocks per s are as many as this allows (at most one per m)
MAX_ENTRIES = 24_000_000


def _binned(losses: np.ndarray, log_mass: np.ndarray, width: float):
    """Losses rounded up to the grid ``width``, the log masses of each grid point added (log space)."""
    keep = np.isfinite(log_mass)
    index = np.ceil(losses[keep] / width).astype(np.int64)
    log_mass = log_mass[keep]
    if index.size == 0:
        return index, log_mass
    order = np.argsort(index, kind="stable")
    index, log_mass = index[order], log_mass[order]
    starts = np.flatnonzero(np.r_[True, index[1:] != index[:-1]])
    peak = np.maximum.reduceat(log_mass, starts)
    sums = np.add.reduceat(np.exp(log_mass - np.repeat(peak, np.diff(np.r_[starts, index.size]))), starts)
    return index[starts], peak + np.log(sums)


def _merge(parts):
    """One (index, log mass) pair from several, the log masses of equal indices added."""
    index = np.concatenate([p[0] for p in parts]) if parts else np.empty(0, dtype=np.int64)
    log_mass = np.concatenate([p[1] for p in parts]) if parts else np.empty(0)
    return _binned(index.astype(float), log_mass, 1.0)


class _Direction:
    """Grid points and log masses of one direction, gathered block by block."""

    def __init__(self, width: float):
        self.width, self.parts = width, []

    def add(self, losses, log_mass):
        self.parts.append(_binned(losses, log_mass, self.width))
        if len(self.parts) >= 64:
            self.parts = [_merge(self.parts)]

    def round(self, log_infinity: float, count: int) -> TailRound:
        index, log_mass = _merge(self.parts)
        return TailRound(index * self.width, log_mass, log_infinity, count)


def tail_rounds(setting, subsample: float, width: float, count: int = 1, *, K: float = K_TAIL,
                max_pairs: int = MAX_PAIRS):
    """(REMOVE, ADD) :class:`TailRound` of ``count`` identical rounds of the weak view of ``setting``
    (module docstring), or None when its windows hold more than ``max_pairs`` (s, a) pairs."""
    beta = math.expm1(setting.epsilon_local)
    grid = WeakGrid(setting.n_users, setting.krr, K)
    pairs = grid.pairs()
    if pairs > max_pairs:
        return None
    m_blocks = max(1, min(grid.m_values(), MAX_ENTRIES // max(pairs, 1)))
    log_left = grid.log_dropped(beta)  # P-mass and Q-mass bound (symmetric windows)
    q = float(subsample)
    log_q, log_1mq = math.log(q), (math.log1p(-q) if q < 1.0 else -math.inf)
    remove, add = _Direction(width), _Direction(width)
    for high, low, log_p, log_qm in blocks(grid, beta, m_blocks):
        if q == 1.0:
            remove.add(high, log_p)
            continue
        remove.add(np.log1p(q * np.expm1(high)), np.logaddexp(log_q + log_p, log_1mq + log_qm))
        add.add(-np.log1p(q * np.expm1(low)), log_qm)
    first = remove.round(log_left, count)
    if q == 1.0:
        return first, first
    return first, add.round(log_left, count)
