"""The weak adversary's certified composed tail: its rounds as :class:`~shuffledp.accounting.numerics.
composed_tail.TailRound` formed from its own outcomes.

The Chernoff bound of :mod:`~shuffledp.accounting.numerics.composed_tail` needs, per round and direction,
losses l_j and log P-masses whose moment-generating function sum_j p_j e^(lam l_j) is at least the
pair's own, sum_o P(o)^(1 + lam) Q(o)^(-lam), for every lam > 0. Here they come from the view's own outcomes, on the windows of
:class:`~shuffledp.accounting.views.weak.outcomes.WeakGrid` at +- ``K`` standard deviations:

* **small settings** (every (s, a, m) of the windows at most :data:`MAX_ENTRIES`: n up to ~300 at
  ``K`` = 38, where the windows are the whole support): every outcome is its own entry
  (:func:`~shuffledp.accounting.views.weak.outcomes.blocks` with one block per m), its loss and mass
  the pair's own, so the moment-generating function is the pair's exactly; the certified bound on
  the P-mass the windows leave out goes into the infinity mass (at ``K`` = 38 about e^-720);
* **larger settings** (up to :data:`MAX_PAIRS` (s, a) pairs in the windows: n up to ~10^4): each total
  s of the window is cut into rectangles of (a, m) that cover its whole range
  (:func:`~shuffledp.accounting.views.weak.tail_blocks.rectangles`): a rectangle's loss is its largest
  corner loss, its mass the exact sum of its outcomes' masses formed in log space from binomial tails
  (rounded up); only the totals outside the s window go into the infinity mass;
* **large settings** (beyond :data:`MAX_PAIRS`: n = 10^6 and beyond, and 10^4 users per round when
  subsampled): boxes of (s, d, m), d = a - c, that group the totals s too
  (:func:`~shuffledp.accounting.views.weak.tail_boxes.boxes`): a box's loss is its largest corner loss,
  its mass an upper bound formed in log space from the three shifted multinomial box probabilities that
  make up P, each bounded through the unimodality of the pmfs of D and M in the total (the argument in
  that module's docstring); the loss spread allowed in a box is ``width`` over the subsampled loss's
  largest slope (:func:`box_spread`); only the totals outside the s window go into the infinity mass.
  Where even the boxes are too many (their work above :data:`MAX_BOXES`, e.g. 10^4 users per round
  without subsampling at k >= 3) :func:`tail_rounds` returns None and the PLD's floor stays.

In both, each loss is then rounded up to the grid ``width`` (the same grid as the other accountants'
tails, :func:`shuffledp.accounting.composition_tail.tail_interval`), and the masses of a grid point are
added in log space (fewer points for the bound's search over its order). Rounding every loss up keeps
the bound an upper bound; at T rounds it moves the composed epsilon by at most T x width (and, for the
rectangles, T x the loss spread inside a rectangle, at most ``width`` near the centre).

Subsampling (a round samples a fraction q of the users): REMOVE is (q P + (1 - q) Q, Q) with loss
log(q e^L + 1 - q) (increasing in L, so a block's largest loss bounds it), ADD is (Q, q P + (1 - q) Q)
with loss -log(q e^L + 1 - q), bounded by the block's smallest L. Without subsampling the view is
symmetric (a and c exchange P and Q and negate every block's two end points), so ADD is REMOVE.

**Work** (measured on the shared 2-core machine): n = 100, every outcome: 0.3 s; n = 10^4 by rectangles:
~55 s of CPU (T = 1000, k = 10, eps0 = 2); by boxes (eps0 = 1, grid 1e-4): n = 10^6 without subsampling
0.8 s (k = 2), 10-14 s (k = 3, 4); 10^4 users per round at q = 0.01: 4 s (k = 2), 11 s (k = 3).
"""

from __future__ import annotations

import math

import numpy as np

from shuffledp._numerics import binned_logsumexp
from shuffledp.accounting.numerics.composed_tail import TailRound
from shuffledp.accounting.views.weak.outcomes import WeakGrid, blocks
from shuffledp.accounting.views.weak.tail_blocks import rectangles
from shuffledp.accounting.views.weak.tail_boxes import box_count, boxes

__all__ = [
    "K_TAIL",
    "MAX_PAIRS",
    "MAX_ENTRIES",
    "MAX_BOXES",
    "FINEST_WIDTH",
    "box_spread",
    "has_boxes",
    "tail_rounds",
]

#: windows of the tail: +- 38 sd (certified remainder ~e^-720 per side)
K_TAIL = 38.0
#: largest number of (s, a) pairs the tail enumerates (beyond: no tail, the PLD's floor stays)
MAX_PAIRS = 4_000_000
#: (s, a, m block) entries aimed at: the m blocks per s are as many as this allows (at most one per m)
MAX_ENTRIES = 24_000_000
#: largest work (boxes of (s, d, m), plus 2000 per block of totals) formed beyond MAX_PAIRS (about a
#: microsecond each: ~20 s; beyond: no tail, the PLD's floor stays)
MAX_BOXES = 20_000_000
#: the finest grid the composed tails are formed on (composition_tail.TAIL_GRID): :func:`has_boxes` of
#: the views asks at it, the most boxes
FINEST_WIDTH = 1e-4


def box_spread(width: float, subsample: float, epsilon_local: float) -> float:
    """The loss spread allowed inside a box: the grid ``width`` over the largest slope of the subsampled
    loss log(q e^L + 1 - q) in L (q e^eps0 / (1 - q + q e^eps0); 1 without subsampling)."""
    q = float(subsample)
    slope = q * math.exp(epsilon_local) / (1.0 - q + q * math.exp(epsilon_local))
    return width / slope


def has_boxes(setting, subsample: float, width: float, K: float = K_TAIL) -> bool:
    """Whether the windows of ``setting`` hold at most :data:`MAX_PAIRS` (s, a) pairs or (beyond) at most
    :data:`MAX_BOXES` boxes: whether :func:`tail_rounds` forms a tail."""
    grid = WeakGrid(setting.n_users, setting.krr, K)
    if grid.pairs() <= MAX_PAIRS:
        return True
    beta = math.expm1(setting.epsilon_local)
    return box_count(grid, beta, box_spread(width, subsample, setting.epsilon_local), K) <= MAX_BOXES


def _binned(losses: np.ndarray, log_mass: np.ndarray, width: float):
    """Losses rounded up to the grid ``width``, the log masses of each grid point added (log space)."""
    keep = np.isfinite(log_mass)  # first: a loss beside a mass of 0 may not be finite
    return binned_logsumexp(np.ceil(losses[keep] / width).astype(np.int64), log_mass[keep])


def _merge(parts):
    """One (index, log mass) pair from several, the log masses of equal indices added."""
    index = np.concatenate([p[0] for p in parts]) if parts else np.empty(0, dtype=np.int64)
    log_mass = np.concatenate([p[1] for p in parts]) if parts else np.empty(0)
    return _binned(index.astype(float), log_mass, 1.0)


class _Direction:
    """Grid points and log masses of one direction, gathered block by block."""

    def __init__(self, width: float):
        self.width = width
        self.parts: list[tuple[np.ndarray, np.ndarray]] = []

    def add(self, losses, log_mass):
        self.parts.append(_binned(losses, log_mass, self.width))
        if len(self.parts) >= 64:
            self.parts = [_merge(self.parts)]

    def round(self, log_infinity: float, count: int) -> TailRound:
        index, log_mass = _merge(self.parts)
        return TailRound(index * self.width, log_mass, log_infinity, count)


def tail_rounds(
    setting,
    subsample: float,
    width: float,
    count: int = 1,
    *,
    K: float = K_TAIL,
    max_pairs: int | None = None,
):
    """(REMOVE, ADD) :class:`TailRound` of ``count`` identical rounds of the weak view of ``setting``
    (module docstring), or None when its windows hold more than ``max_pairs`` (s, a) pairs."""
    beta = math.expm1(setting.epsilon_local)
    grid = WeakGrid(setting.n_users, setting.krr, K)
    pairs = grid.pairs()
    q = float(subsample)
    if pairs > (
        MAX_PAIRS if max_pairs is None else max_pairs
    ):  # boxes of (s, d, m): only the totals outside the window are left out
        spread = box_spread(width, q, setting.epsilon_local)
        if box_count(grid, beta, spread, K) > MAX_BOXES:
            return None
        krr = setting.krr  # P = p Mult(a - 1, c, m) + q Mult(a, c - 1, m) + (k - 2) q Mult(a, c, m - 1)
        coefficients = (krr.log_p, krr.log_q, krr.log_rest)
        source, log_left = boxes(grid, beta, spread, K, coefficients), grid.log_s_outside(beta)
    elif pairs * grid.m_values() <= MAX_ENTRIES:  # every outcome its own block: the pair's own MGF
        source, log_left = blocks(grid, beta, grid.m_values()), grid.log_dropped(beta)
    else:  # rectangles of (a, m) covering each row whole: only the totals outside the window are left out
        source, log_left = rectangles(grid, beta, width), grid.log_s_outside(beta)
    log_q, log_1mq = math.log(q), (math.log1p(-q) if q < 1.0 else -math.inf)
    remove, add = _Direction(width), _Direction(width)
    for high, low, log_p, log_qm in source:
        if q == 1.0:
            remove.add(high, log_p)
            continue
        remove.add(np.log1p(q * np.expm1(high)), np.logaddexp(log_q + log_p, log_1mq + log_qm))
        add.add(-np.log1p(q * np.expm1(low)), log_qm)
    first = remove.round(log_left, count)
    if q == 1.0:
        return first, first
    return first, add.round(log_left, count)
