"""The weak adversary's binned privacy loss distribution by runs of m, one side mirrored: the body of the
view's override :meth:`WeakView.binned <shuffledp.accounting.views.weak.view.WeakView.binned>`
(:func:`binned_by_runs`).

The view (:mod:`shuffledp.accounting.views.weak.view`; outcomes and windows in
:mod:`shuffledp.accounting.views.weak.outcomes`) has, with s = a + c, d = a - c, the loss
L = sign(d) l, l = log1p(beta |d| / (s + m + beta min(a, c))), which for fixed (s, a) is monotone in m.
So for each (s, a) the m-window splits into the few runs of consecutive m that share a bin, found in
closed form (m >= beta |d| / expm1(t) - s - beta min(a, c) <=> l <= t), and each run's mass is a
difference of the prefix sums of pmf(m) and m pmf(m) of M | s -- computed once per s. Work ~ (#(s, a)
pairs with a > c) x (runs per pair) instead of the 3-D sum: about 0.95e7 pairs and 12 runs each at
n = 10^6, k = 4, eps0 = log 13, Delta = 1e-5. Rows whose loss spans more bins than they have m values
are enumerated m by m. The P-mass (and, the windows being symmetric, the Q-mass) outside the windows is
bounded with exact binomial tails and reported as ``dropped``.

**One side, mirrored.** The view is symmetric: the outcome (s, c, a, m) has the P-mass of
(s, a, c, m) as its Q-mass and the opposite loss. So only the pairs with a > c are binned (and a = c,
loss 0); the side a < c is their mirror image: the P-mass of bin J of the side a > c is the Q-mass of
bin 1 - J (pessimistic; -1 - J optimistic) of the other side, and the other way round. Binned directly,
that side's bin is -floor(l / Delta) (pessimistic: -l rounded up), and 1 - ceil(l / Delta) equals it
except where l is a multiple of Delta to the last bit; there the mirror's bin is the one above, whose
lower edge is -l itself: the REMOVE loss is rounded up by one more bin and the ADD loss (which reads a
bin's lower edge) is exact. So the mirror errs only to the safe side (optimistic: to the low side).

**Runs as 2-D blocks.** The pairs are grouped by their number of run boundaries; each group is a dense
(pairs x boundaries) block in which every per-pair value broadcasts, the runs' masses are differences
along the rows, and the bins are bin_top(pair) - column: one ``np.bincount`` per block and mass.

Masses are accumulated in linear space (as dp_accounting stores them); prefix-sum differences carry an
absolute error of about 1e-16 per run.
"""

from __future__ import annotations

import math

import numpy as np

from shuffledp.accounting.numerics.binomial import log_binom_pmf_loader
from shuffledp.accounting.params import ShuffleSetting
from shuffledp.accounting.views.binned import LOG_HALF, ROWS_PER_CHUNK, BinnedView, Bins, flat_rows
from shuffledp.accounting.views.weak.outcomes import WeakGrid

__all__ = ["binned_by_runs"]

#: elements per block of the elementwise work (pmf rows, pair rows, runs): the temporaries stay in cache.
#: Every value is computed element by element, so the block size does not change a bit.
_BLOCK = 1 << 15
#: prefix-sum cells per chunk of totals (the runs gather from them in an order grouped by run count, so they
#: are kept small enough to stay in cache: 2 x 8 bytes x this)
_PREFIX_CELLS = 1 << 17
#: but at least this many totals per chunk (at n >= 10^7 the M windows are wide: fewer, larger chunks keep the
#: per-chunk Python work small)
_MIN_TOTALS = 8


_ANCHOR = 16  # pmf rows: one Loader value every this many columns, products of exact ratios between


def _binomial_rows(first, width: int, trials, log_p: float, log_q: float, last):
    """Bin(trials_i, p)(x) for x = first_i + j, j < ``width``, one row per i, 0 where x > ``last``_i (last_i <=
    trials_i).

    One Loader value (:func:`log_binom_pmf_loader`) every :data:`_ANCHOR` columns; from it the next values
    by pmf(x + 1) = pmf(x) (trials - x) / (x + 1) x p / q, a running product of at most _ANCHOR - 1 ratios, at
    a sixteenth of the work of a Loader value per element. Accuracy, from the documented accuracy of exp and log
    (docs/decisions/numerics.md: at most 1 ulp documented, budgeted 4 ulp a call, on every CPU): relative to its
    anchor a value is off by at most 15 steps of 4 roundings of half an ulp and of the ratio p / q =
    exp(log p - log q) (4 ulp, and one ulp of |log p - log q| from the difference), below 2e-14 +
    3.3e-15 |log(p / q)|; the anchor, like a Loader value per element, carries about 9 ulp of the magnitude of
    the terms Loader sums (its deviances reach x |log(x / (trials p))|, well above |log pmf| in the tails) and
    4 ulp from exp. So rows and per-element values agree to twice the Loader part plus that chain
    (tests/accounting/test_weak_pld.py holds it on both numpy paths). Rows whose anchor underflows (log below
    -700) or whose products do not stay finite are evaluated by Loader per element."""
    rows = first.size
    segments = -(-width // _ANCHOR)
    x = first[:, None] + np.arange(segments * _ANCHOR, dtype=float)[None, :]
    trials = np.broadcast_to(np.asarray(trials, dtype=float).reshape(-1, 1), (rows, 1))
    inside = x <= np.asarray(last, dtype=float).reshape(-1, 1)
    log_anchor = log_binom_pmf_loader(np.minimum(x[:, ::_ANCHOR], trials), trials, log_p, log_q)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        ratio = (trials - x) / (x + 1.0)
        ratio *= math.exp(log_p - log_q)
        values = np.empty((rows, segments, _ANCHOR))
        values[:, :, 0] = np.exp(log_anchor)
        ratio = ratio.reshape(rows, segments, _ANCHOR)
        np.multiply(values[:, :, :1], np.cumprod(ratio[:, :, :-1], axis=2), out=values[:, :, 1:])
    values = values.reshape(rows, -1)
    np.copyto(values, 0.0, where=~inside)
    low = np.where(inside[:, ::_ANCHOR], log_anchor, 0.0).min(axis=1) < -700.0
    redo = np.flatnonzero(low | ~np.isfinite(values).all(axis=1))
    if redo.size:
        direct = np.exp(log_binom_pmf_loader(x[redo], trials[redo], log_p, log_q))
        values[redo] = np.where(inside[redo], direct, 0.0)
    return values[:, :width]


class _Chunk:
    """The (s, a) pairs with a >= c of a chunk of totals, with the prefix sums over each M window of
    pmf(m) and m pmf(m) (one padded row per s)."""

    def __init__(self, grid: WeakGrid, start: int, stop: int, m_width: int, beta: float, prefix=None):
        n, krr, self.beta, self.m_width = grid.n_users, grid.krr, beta, m_width
        s_c, log_w = grid.s[start:stop], grid.log_w[start:stop]
        self.m_lo, self.m_hi = m_lo, m_hi = grid.m_lo[start:stop], grid.m_hi[start:stop]
        offsets = np.arange(m_width - 1, dtype=float)
        m_grid = m_lo[:, None] + offsets[None, :]
        if grid.rho > 0:
            pmf = np.empty(m_grid.shape)
            per_block = max(1, _BLOCK // max(1, m_width - 1))
            for i in range(0, s_c.size, per_block):
                block = slice(i, i + per_block)
                pmf[block] = _binomial_rows(
                    m_lo[block], m_width - 1, n - s_c[block], krr.log_rho, krr.log_1mrho, m_hi[block]
                )
        else:
            pmf = np.where(offsets[None, :] == 0, 1.0, 0.0) * np.ones((s_c.size, 1))
        self.pmf = pmf
        if prefix is None or prefix.shape[0] < s_c.size or prefix.shape[1] != m_width:
            prefix = np.empty((s_c.size, m_width, 2))
        # f[..., 0], f[..., 1]: the prefix sums of pmf(m) and m pmf(m), side by side (one gather reads both:
        # ``self.f`` views each pair as one complex number); ``prefix``: the array of an earlier chunk, reused
        f = prefix[: s_c.size]
        f[:, 0, :] = 0.0
        np.cumsum(pmf, axis=1, out=f[:, 1:, 0])
        np.cumsum(pmf * m_grid, axis=1, out=f[:, 1:, 1])
        self.prefix = prefix
        self.f = f.reshape(-1).view(np.complex128)
        # the pairs with a >= c (a >= s / 2): the a window is symmetric about s / 2
        a_first, a_last = np.ceil(s_c / 2.0), grid.a_hi[start:stop]
        self.ss, self.a, self.pos = flat_rows(s_c, a_first, a_last)
        a_width = int(np.max(a_last - a_first)) + 1
        a_pmf = _binomial_rows(a_first, a_width, s_c, LOG_HALF, LOG_HALF, a_last)
        a_mass = a_pmf.ravel()[self.pos * a_width + (self.a - a_first[self.pos]).astype(np.int64)]
        self.row_mass = np.exp(log_w - math.log(n))[self.pos] * a_mass
        self.c = self.ss - self.a
        self.flat_base = self.pos * m_width

    def masses(self, rows):
        """(P-mass, Q-mass) of the whole m window of the pairs ``rows``."""
        pos_r = self.pos[rows]
        lo_idx = self.flat_base[rows]
        hi_idx = self.flat_base[rows] + (self.m_hi[pos_r] + 1.0 - self.m_lo[pos_r]).astype(np.int64)
        difference = (self.f[hi_idx] - self.f[lo_idx]).view(np.float64).reshape(-1, 2)
        np.maximum(difference, 0.0, out=difference)
        d0, d1 = difference[:, 0], difference[:, 1]
        sr, ar, cr = self.ss[rows], self.a[rows], self.c[rows]
        beta = self.beta
        return (
            self.row_mass[rows] * ((sr + beta * ar) * d0 + d1),
            self.row_mass[rows] * ((sr + beta * cr) * d0 + d1),
        )


class _Side:
    """Dense P- and Q-masses of the bins J >= 0 of the side a > c (grown as needed)."""

    def __init__(self):
        self.p = np.zeros(0)
        self.q = np.zeros(0)

    def add(self, j: np.ndarray, p: np.ndarray, q: np.ndarray, top: int) -> None:
        """Add masses ``p``, ``q`` at bins ``j`` (0 <= j <= ``top``).

        Only the bins from min(j) to ``top`` are touched: each bin's sum of this call is the one a full-width
        ``np.bincount`` gives (same order), and the bins outside would only get + 0.0, so every bit is as
        with a full-width update, at the cost of the call's span instead of every bin so far."""
        if top + 1 > self.p.size:
            self.p = np.concatenate([self.p, np.zeros(top + 1 - self.p.size)])
            self.q = np.concatenate([self.q, np.zeros(top + 1 - self.q.size)])
        if j.size == 0:
            return
        low = int(j.min())
        shifted = j - low
        span = top + 1 - low
        self.p[low : top + 1] += np.bincount(shifted, weights=p, minlength=span)
        self.q[low : top + 1] += np.bincount(shifted, weights=q, minlength=span)


def _bin_tables(top: int, interval: float):
    """expm1 of the bin edges, per bin jj in 0..top: (ceil mode: l <= jj Delta, floor mode: l < (jj + 1) Delta)."""
    bins = np.arange(0, top + 1, dtype=float)
    with np.errstate(over="ignore"):
        return np.expm1(np.maximum(bins, 1.0) * interval), np.expm1((bins + 1.0) * interval)


def _run_block(side: _Side, ch: _Chunk, r, P: int, x, base, j_top, table, ceil_mode: bool) -> None:
    """The runs of the pairs ``r`` (positions in the chunk), each with ``P`` boundary points m_lo = b_0 <=
    b_1 <= ... <= b_(P-1) = m_hi + 1, b_i the first m of bin j_top - i (l falls as m grows): the run
    [b_i, b_(i+1)) goes to bin j_top - i with the masses of prefix-sum differences (clipped at 0: where
    b_(i+1) = b_i the run is empty)."""
    pos = ch.pos[r]
    lo = ch.m_lo[pos]
    hi_end = ch.m_hi[pos] + 1.0
    J = j_top[:, None] - np.arange(P - 1)[None, :]  # the bin of each run (run i: [b_i, b_(i+1)))
    point = np.empty((J.shape[0], P))
    point[:, 0] = lo
    point[:, -1] = hi_end
    if P > 2:
        with np.errstate(divide="ignore", over="ignore"):
            value = x[:, None] / table[J[:, 1:]]  # b_i for i = 1 .. P - 2: the first m of bin j_top - i
        value -= base[:, None]
        if ceil_mode:  # l(m) <= jj Delta  <=>  m >= x / expm1(jj Delta) - base
            np.ceil(value, out=value)
        else:  # l(m) < (jj + 1) Delta  <=>  m > x / expm1((jj + 1) Delta) - base
            np.floor(value, out=value)
            value += 1.0
        np.maximum(value, lo[:, None], out=value)
        np.minimum(value, hi_end[:, None], out=point[:, 1:-1])
    index = point.astype(np.int64)
    index += (ch.flat_base[r] - lo.astype(np.int64))[:, None]  # flat_base + (point - lo): exact integers
    values = np.take(ch.f, index)  # (prefix of pmf, prefix of m pmf) at every point, as complex pairs
    difference = np.subtract(values[:, 1:], values[:, :-1]).view(np.float64)  # componentwise: the same bits
    np.maximum(difference, 0.0, out=difference)
    d0, d1 = difference[:, 0::2], difference[:, 1::2]
    ss, beta, mass = ch.ss[r], ch.beta, ch.row_mass[r][:, None]
    out = []
    for weight in (ss + beta * ch.a[r]), (ss + beta * ch.c[r]):
        w = weight[:, None] * d0
        w += d1
        out.append(np.multiply(mass, w, out=w).ravel())
    side.add(J.ravel(), out[0], out[1], int(j_top.max()))


def _direct_tiles(ch: _Chunk, rows, interval: float, ceil_mode: bool):
    """(bin, P-mass, Q-mass) of every outcome (pair, m) of the pairs ``rows`` (a > c, several m each), as dense
    (pairs x m) tiles of about :data:`_BLOCK` elements (the temporaries stay in cache), pair by pair and m
    ascending within a pair (the order of :func:`~shuffledp.accounting.views.binned.flat_rows`); yields
    (bins, P-masses, Q-masses, inside), ``inside`` marking the outcomes (the rest pads a pair's window to the
    tile's width: m above m_hi, where the pmf of M is 0, so its masses are exactly 0).

    Each per-pair factor is computed once per pair; every element is the same expression, in the same order of
    operations, as m by m on flat arrays, so every value is the same to the bit."""
    pos, beta = ch.pos[rows], ch.beta
    counts = (ch.m_hi[pos] - ch.m_lo[pos] + 1.0).astype(np.int64)
    counts[counts < 0] = 0
    columns = np.arange(ch.m_width - 1)
    per_tile = max(1, _BLOCK // max(1, ch.m_width - 1))
    for first in range(0, rows.size, per_tile):
        tile = slice(first, first + per_tile)
        r, p, count = rows[tile], pos[tile], counts[tile]
        width = int(count.max())
        if width == 0:
            continue
        m = ch.m_lo[p][:, None] + columns[None, :width]
        sr, ar, cr = ch.ss[r][:, None], ch.a[r][:, None], ch.c[r][:, None]
        base = sr + m
        denominator = base + beta * cr
        scaled = np.log1p(beta * (ar - cr) / denominator)
        scaled /= interval
        j = (np.ceil(scaled) if ceil_mode else np.floor(scaled)).astype(np.int64)
        mass = ch.row_mass[r][:, None] * ch.pmf[p, :width]
        yield (
            j,
            mass * (base + beta * ar),
            np.multiply(mass, denominator, out=denominator),
            columns[None, :width] < count[:, None],
        )


def _add_direct(side: _Side, ch: _Chunk, each, interval: float, ceil_mode: bool) -> None:
    """Bin the pairs ``each`` (a > c) m by m (their loss spans more bins than they have m values), as one
    :meth:`_Side.add` per :data:`_BLOCK` pairs would.

    Several m per pair: the tiles of :func:`_direct_tiles` are summed into per-bin accumulators by
    ``np.add.at`` (one addition per element, in element order, from 0 -- what ``np.bincount`` does over the
    whole block), then added to the side once per block over the bins up to the block's largest: the same bits
    as :meth:`_Side.add` of the block's flat arrays, without them. A pad element adds an exact 0 to a bin at
    most its pair's last (non-negative loss), and a bin the block does not reach gets + 0."""
    m_lo, pos, beta = ch.m_lo, ch.pos, ch.beta
    for first in range(0, each.size, _BLOCK):
        rows = each[first : first + _BLOCK]
        if not np.all(ch.m_hi[pos[rows]] == m_lo[pos[rows]]):
            p_sum, q_sum, top = np.zeros(0), np.zeros(0), -1
            for j, p_mass, q_mass, inside in _direct_tiles(ch, rows, interval, ceil_mode):
                top = max(top, int(np.max(j, where=inside, initial=-1)))
                if int(j.max()) + 1 > p_sum.size:
                    grown = max(int(j.max()) + 1, 2 * p_sum.size)
                    p_sum = np.concatenate([p_sum, np.zeros(grown - p_sum.size)])
                    q_sum = np.concatenate([q_sum, np.zeros(grown - q_sum.size)])
                np.add.at(p_sum, j.ravel(), p_mass.ravel())
                np.add.at(q_sum, j.ravel(), q_mass.ravel())
            if top >= 0:
                side.add(np.zeros(0, dtype=np.int64), p_sum, q_sum, top)  # grows the side to the block's top
                side.p[: top + 1] += p_sum[: top + 1]
                side.q[: top + 1] += q_sum[: top + 1]
            continue
        # one m per pair (k = 2: m = 0)
        m_values = m_lo[pos[rows]]
        g = ch.pmf.ravel()[pos[rows] * (ch.m_width - 1)]
        sr, ar, cr = ch.ss[rows], ch.a[rows], ch.c[rows]
        loss = np.log1p(beta * (ar - cr) / (sr + m_values + beta * cr))
        j = (np.ceil(loss / interval) if ceil_mode else np.floor(loss / interval)).astype(np.int64)
        mass = ch.row_mass[rows] * g
        side.add(j, mass * (sr + m_values + beta * ar), mass * (sr + m_values + beta * cr), int(j.max()))


def _add_positive(side: _Side, ch: _Chunk, interval: float, ceil_mode: bool) -> None:
    """Bin the pairs with a > c: by runs of m (grouped by their number of boundary points), or m by m
    where that is less work."""
    rows = np.flatnonzero(ch.a > ch.c)
    if rows.size == 0:
        return
    if ch.m_width == 2:  # one m per pair (k = 2: m = 0): every pair is one outcome
        _add_direct(side, ch, rows, interval, ceil_mode)
        return
    pos, beta = ch.pos[rows], ch.beta
    lo, hi = ch.m_lo[pos], ch.m_hi[pos]
    x = beta * (ch.a - ch.c)[rows]
    base = ch.ss[rows] + beta * ch.c[rows]
    l_top = np.log1p(x / (base + lo))  # l(m_lo) and l(m_hi) of each pair
    l_bottom = np.log1p(x / (base + hi))
    direct = (l_top - l_bottom) / interval + 2.0 > hi - lo + 1.0
    if direct.any():
        _add_direct(side, ch, rows[direct], interval, ceil_mode)
    runs = ~direct
    if not runs.any():
        return
    rounding = np.ceil if ceil_mode else np.floor
    j_top = rounding(l_top[runs] / interval)
    points = (j_top - rounding(l_bottom[runs] / interval) + 2.0).astype(np.int64)
    j_top = j_top.astype(np.int64)
    table = _bin_tables(int(j_top.max()), interval)[0 if ceil_mode else 1]
    rows, x, base = rows[runs], x[runs], base[runs]
    order = np.argsort(points, kind="stable")
    sizes = np.bincount(points)
    at = 0
    for P in np.flatnonzero(sizes):
        group = order[at : at + sizes[P]]
        at += sizes[P]
        step = max(1, _BLOCK // int(P))
        for first in range(0, group.size, step):
            g = group[first : first + step]
            _run_block(side, ch, rows[g], int(P), x[g], base[g], j_top[g], table, ceil_mode)


def binned_by_runs(setting: ShuffleSetting, *, interval: float, pessimistic: bool, K: float) -> BinnedView:
    """Binned privacy loss distribution of the weak adversary's view by the run reduction of the module
    docstring, the side a < c mirrored from the side a > c (the body of the override
    :meth:`WeakView.binned <shuffledp.accounting.views.weak.view.WeakView.binned>`, which callers use).

    Args:
        setting: the setting (k-RR).
        interval: the width of the loss grid, > 0.
        pessimistic: losses rounded up and the left-out mass reported as ``dropped`` (True), or rounded down.
        K: half-width of the windows, in standard deviations.

    Returns:
        the binned view (symmetric: one direction).
    """
    n = float(setting.n_users)
    krr = setting.krr
    beta = math.expm1(krr.epsilon_local)
    grid = WeakGrid(n, krr, K)
    log_dropped = grid.log_dropped(beta)
    bins = Bins()
    side = _Side()
    prefix = None
    m_width = int(np.max(grid.m_hi - grid.m_lo)) + 2
    a_width = int(np.max(grid.a_hi - grid.a_lo)) // 2 + 1
    step = max(_MIN_TOTALS, min(ROWS_PER_CHUNK // a_width, _PREFIX_CELLS // m_width))
    for start in range(0, grid.s.size, step):
        ch = _Chunk(grid, start, min(grid.s.size, start + step), m_width, beta, prefix)
        prefix = ch.prefix
        tie = np.flatnonzero(ch.a == ch.c)  # d = 0: loss 0 for every m
        if tie.size:
            p, q = ch.masses(tie)
            bins.add(np.zeros(tie.size, dtype=np.int64), p, q)
        # pessimistic: L = +l rounded up (ceil of l); optimistic: rounded down
        _add_positive(side, ch, float(interval), bool(pessimistic))
    J = np.arange(side.p.size, dtype=np.int64)
    bins.add(J, side.p, side.q)
    bins.add((1 - J) if pessimistic else (-1 - J), side.q, side.p)  # the side a < c (module docstring)
    return bins.view(interval, pessimistic, 0.0, 0.0, math.exp(log_dropped), True, "weak")
