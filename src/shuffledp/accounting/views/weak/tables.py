"""Per-row tables of the weak adversary's sum, shared by many epsilons (the joint evaluation of
:meth:`shuffledp.accounting.views.weak.rows.WeakRows.log_deltas`).

For each row (total s) one table of a binomial's pmf, lower cumulative law and expected lower excess
over the counts the epsilons need (:func:`lower_tables`) replaces one incomplete-beta evaluation per
(epsilon, row, a): of B = s - A ~ Bin(s, 1/2) for the high ranges (:func:`high_from_tables`) and of
M ~ Bin(n - s, rho) for the middle ranges (:func:`middles_from_tables`). The tables' rounding (at most
8 W 2^-53 relative for rows of width W) is added to each epsilon's certified remainder. Formulas: the
module docstring of :mod:`shuffledp.accounting.views.weak.view`.
"""

from __future__ import annotations

import math

import numpy as np

from shuffledp.accounting.numerics.binomial import log_excess_below, log_pmf, log_sf

__all__ = ["lower_tables", "segment_logsumexp", "high_from_tables", "middles_from_tables", "TABLE_MAX_WIDTH"]

#: the tables are used only where the relative rounding margin 8 W 2^-53 stays below this (W: widest row)
TABLE_MAX_WIDTH = 8192
TABLE_CELLS = 1 << 21  # cells per chunk of rows (three float64 tables: ~50 MB)
TABLE_BLOCK = 1 << 16  # cells per block while a table is formed (kept in cache)
LOG_UNIT = math.log(2.0 ** -53)


def segment_logsumexp(values, starts, size):
    """logsumexp of consecutive segments of ``values`` beginning at ``starts`` (sorted), one per segment."""
    out = np.full(size, -np.inf)
    if values.size == 0:
        return out
    peak = np.maximum.reduceat(values, starts)
    finite_peak = np.where(np.isfinite(peak), peak, 0.0)
    seg = np.repeat(np.arange(starts.size), np.diff(np.append(starts, values.size)))
    sums = np.add.reduceat(np.exp(values - finite_peak[seg]), starts)
    with np.errstate(divide="ignore"):
        return np.log(sums) + finite_peak


def lower_tables(N, lo, width, log_pi, log_1mpi, excess: bool = True):
    """Per-row tables of X ~ Bin(N, pi) on m = lo .. lo + width - 1, relative to pmf(lo).

    Returns (log pmf(lo), p, F, H) (H is None when ``excess`` is false) with p[j] = pmf(lo + j) / pmf(lo), F[j] = Pr(X <= lo + j) / pmf(lo) and
    H[j] = E[(lo + j - X)_+] / pmf(lo) (cells beyond a row's width are 0). p is a running product of the
    exact ratios pmf(m + 1) / pmf(m); F and H are running sums of positive terms started from the exact
    Pr(X <= lo - 1) and E[(lo - X)_+] (H(m + 1) = H(m) + F(m)), so no difference is ever taken. Relative
    rounding error at most ~8 j 2^-53 at cell j (the caller adds a margin for it). The window must keep
    pmf within e^700 of pmf(lo) (callers use it for windows of at most ~20 standard deviations).
    """
    N, lo, width = (np.asarray(x, dtype=float) for x in (N, lo, width))
    W = int(width.max())
    log_anchor = log_pmf(lo, N, log_pi, log_1mpi)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        below = np.where(lo > 0, np.exp(log_sf(N - lo + 1.0, N, log_1mpi, log_pi) - log_anchor), 0.0)
        h0 = np.where(lo > 0, np.exp(log_excess_below(lo, N, log_pi, log_1mpi) - log_anchor), 0.0) if excess else None
    p, F = np.empty((N.size, W)), np.empty((N.size, W))
    H = np.empty((N.size, W)) if excess else None
    scratch = None if excess else np.empty((min(N.size, max(1, TABLE_BLOCK // max(W, 1))), W))
    rows = max(1, TABLE_BLOCK // max(W, 1))  # blocks small enough to stay in cache
    odds = math.exp(log_pi - log_1mpi)
    steps = np.arange(W, dtype=float)[None, :]
    for i in range(0, N.size, rows):
        b = slice(i, i + rows)
        pb, Fb = p[b], F[b]
        Hb = H[b] if excess else scratch[: pb.shape[0]]
        # ratio pmf(m + 1) / pmf(m) at m = lo + j: (N - m) / (m + 1) * odds, 0 past a row's end (in H's memory)
        m1 = steps + (lo[b] + 1.0)[:, None]
        ratio = Hb
        np.subtract((N[b] + 1.0)[:, None], m1, out=ratio)
        ratio /= m1
        ratio *= odds
        pb[:, 0] = 1.0
        # cells past a row's width are never read (they may overflow or change sign: no warnings)
        with np.errstate(over="ignore", invalid="ignore"):
            np.cumprod(ratio[:, :-1], axis=1, out=pb[:, 1:])
        # F[j] = below + sum_{l <= j} p[l]: the constant rides in the first cell of the running sum
        with np.errstate(over="ignore", invalid="ignore"):
            pb[:, 0] += below[b]
            np.cumsum(pb, axis=1, out=Fb)
            pb[:, 0] = 1.0
            if not excess:
                continue
            # H[0] = h0, H[j] = h0 + sum_{l < j} F[l]: likewise
            first = Fb[:, 0].copy()
            Fb[:, 0] += h0[b]
            Hb[:, 0] = h0[b]
            np.cumsum(Fb[:, :-1], axis=1, out=Hb[:, 1:])
            Fb[:, 0] = first
    return log_anchor, p, F, H


def high_from_tables(rows, preps) -> bool:
    """High parts (and log Bin(s, 1/2)(a_start)) of every epsilon's ``prep`` (the rows' quantities of one
    epsilon, see :meth:`~shuffledp.accounting.views.weak.rows.WeakRows.log_deltas`) from per-row tables
    of B = s - A ~ Bin(s, 1/2) over the a the epsilons need: with b = s - a_hi, sum_{a >= a_hi} (a - t*) Pr(A = a) =
    E[(b - B)_+] + (a_hi - t*) Pr(B <= b) (both terms positive: a_hi >= t*). False (nothing done) when
    the a range is wider than the tables allow (then the caller uses incomplete-beta functions)."""
    s = rows.s
    a_min = np.min([np.where(p.degenerate, p.a_hi, (p.a_hi if p.a_start is None else p.a_start)) for p in preps], axis=0)
    a_max = np.max([p.a_hi for p in preps], axis=0)
    a_max = np.minimum(a_max, s)  # a_hi = s + 1: empty high range (handled below)
    sd = np.sqrt(np.maximum(s, 1.0)) / 2.0
    width = a_max - a_min + 1.0
    if float(width.max()) > TABLE_MAX_WIDTH or float(np.max(np.abs(np.concatenate([a_min, a_max]) - np.tile(s / 2.0, 2))
                                                            / np.tile(sd, 2))) > 20.0:
        return False
    half = math.log(0.5)
    b_lo = s - a_max
    margin = math.log(8.0) + math.log(float(width.max())) + LOG_UNIT
    for p in preps:
        p.high = np.full(s.shape, -np.inf)
        if not p.degenerate:
            p.log_a_start = np.full(s.shape, -np.inf)
    order = np.arange(s.size)
    per_row = np.cumsum(width)
    bounds = np.searchsorted(per_row, np.arange(TABLE_CELLS, per_row[-1], TABLE_CELLS))
    for chunk in np.split(order, bounds + 1):
        if chunk.size == 0:
            continue
        log_anchor, pb, F, H = lower_tables(s[chunk], b_lo[chunk], width[chunk], half, half)
        W = F.shape[1]
        base = np.arange(chunk.size) * W
        sc = s[chunk]
        for p in preps:
            a_hi = p.a_hi[chunk]
            inside = a_hi <= sc
            col = np.where(inside, sc - a_hi - b_lo[chunk], 0).astype(np.int64)
            # a_hi - t* >= 0, from the end t* is near (exact there; issue 34)
            t_gap, s_gap = p.t_gap[chunk], p.s_gap[chunk]
            gap = np.where(t_gap > s_gap, s_gap - (sc - a_hi), (a_hi - sc / 2.0) - t_gap)
            value = H.flat[base + col] + np.maximum(gap, 0.0) * F.flat[base + col]
            with np.errstate(divide="ignore"):
                high = np.where(inside, np.log(value) + log_anchor, -np.inf)
            p.high[chunk] = p.log_lam + high
            # rounding of the tables (relative, see lower_tables): added to the remainder
            p.log_err[chunk] = np.logaddexp(p.log_err[chunk], p.high[chunk] + margin)
            if not p.degenerate:
                a0 = p.a_start[chunk]
                col0 = np.clip(sc - a0 - b_lo[chunk], 0, W - 1).astype(np.int64)
                with np.errstate(divide="ignore"):
                    p.log_a_start[chunk] = np.log(pb.flat[base + col0]) + log_anchor
    return True


def _threshold_range(rows, active):
    """The thresholds tau each row needs, over all epsilons: integer parts i = floor(tau) in [i_min,
    i_max] (clipped to the row's M window); (rows needing any, i_min, i_max, width)."""
    i_min = np.full(rows.s.shape, np.inf)
    i_max = np.full(rows.s.shape, -np.inf)
    for p in active:
        has = p.counts > 0
        lo_tau = rows.tau(p.a_start, rows.s, p.nu)
        hi_tau = rows.tau(p.a_hi - 1.0, rows.s, p.nu)
        i_min[has] = np.minimum(i_min[has], np.floor(lo_tau[has]))
        i_max[has] = np.maximum(i_max[has], np.floor(hi_tau[has]))
    need = np.isfinite(i_min)
    i_min = np.clip(i_min, rows.m_lo, rows.m_hi)
    i_max = np.clip(i_max, i_min, rows.m_hi)
    return need, i_min, i_max, np.where(need, i_max - i_min + 1.0, 0.0)


def _middle_from_table(rows, p, mid, in_chunk, position, tables, i_min, i_max):
    """The middle ranges of one epsilon's rows ``in_chunk`` from the chunk's tables of M's law: fills
    ``mid`` and ``p.log_mid_size`` (the sizes of the two terms, for the rounding margin)."""
    log_anchor, P, F, _ = tables
    W = F.shape[1]
    seg, tau, log_a, starts = rows.middle_pairs(p, in_chunk)
    r = position[in_chunk][seg]
    i = np.clip(np.floor(tau), i_min[in_chunk][seg], i_max[in_chunk][seg])
    col = (i - i_min[in_chunk][seg]).astype(np.int64)
    flat = r * W + col
    # E[(tau - M)_+] = (tau - mu) Pr(M <= i) + (1 - rho) (i + 1) Pr(M = i + 1) (binomial identity
    # E[(N rho - M); M <= i] = (1 - rho) (i + 1) Pr(M = i + 1)); relative to pmf(i_min). Below the
    # mean the two terms cancel to about 1 / z^2 at z standard deviations (z <= K here): the
    # margin bounds the rounding from the sizes of both terms
    centred = (tau - rows.mu_m[in_chunk][seg]) * F.flat[flat]
    mass = math.exp(rows.logs.log_1mrho) * (i + 1.0) * P.flat[flat + 1]  # 1 - rho from its log (issue 34)
    excess = np.maximum(centred + mass, 0.0)
    size = np.abs(centred) + mass
    with np.errstate(divide="ignore"):
        terms = log_a + np.log(excess) + log_anchor[r]
        sizes = log_a + np.log(size) + log_anchor[r]
    mid[in_chunk] = math.log(p.nu) + segment_logsumexp(terms, starts, in_chunk.size)
    p.log_mid_size[in_chunk] = math.log(p.nu) + segment_logsumexp(sizes, starts, in_chunk.size)


def middles_from_tables(rows, preps, mids, active) -> None:
    """The middle ranges of every epsilon in ``active`` (those with a non-empty one) from per-row tables
    of M's law, built once per row for the union of the thresholds the epsilons need; fills ``mids``
    and adds the rounding (8 W 2^-53 relative, and a few 2^-53 of the two-term sum) to the remainders."""
    lrho, l1mrho = rows.logs.log_rho, rows.logs.log_1mrho
    need, i_min, i_max, width = _threshold_range(rows, active)
    for p in active:
        p.log_mid_size = np.full(rows.s.shape, -np.inf)
    rows_needed = np.flatnonzero(need)
    log_margin = math.log(8.0 * float(width.max()) + 16.0) + LOG_UNIT
    per_row = np.cumsum(width[rows_needed])
    bounds = np.searchsorted(per_row, np.arange(TABLE_CELLS, per_row[-1], TABLE_CELLS)) if per_row.size else []
    for chunk in np.split(rows_needed, np.asarray(bounds, dtype=int) + 1):
        if chunk.size == 0:
            continue
        tables = lower_tables(rows.N_m[chunk], i_min[chunk], width[chunk] + 1.0, lrho, l1mrho, excess=False)
        position = np.full(rows.s.size, -1, dtype=np.int64)
        position[chunk] = np.arange(chunk.size)
        for p, mid in zip(preps, mids):
            if p.degenerate:
                continue
            in_chunk = chunk[p.counts[chunk] > 0]
            if in_chunk.size:
                _middle_from_table(rows, p, mid, in_chunk, position, tables, i_min, i_max)
    for p in preps:
        finite = np.isfinite((np.full(1, -np.inf) if p.log_mid_size is None else p.log_mid_size))
        if finite.any():
            p.log_err[finite] = np.logaddexp(p.log_err[finite], p.log_mid_size[finite] + log_margin)
