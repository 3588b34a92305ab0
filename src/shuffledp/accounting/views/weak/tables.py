"""Per-row tables of the weak adversary's sum, shared by many epsilons (the joint evaluation of
:meth:`shuffledp.accounting.views.weak.rows.RowSums.log_parts_many`).

For each row (total s) one table of a binomial's pmf, lower cumulative law and expected lower excess
over the counts the epsilons need (:func:`lower_tables`) replaces one incomplete-beta evaluation per
(epsilon, row, a): of B = s - A ~ Bin(s, 1/2) for the high ranges (:func:`high_from_tables`) and of
M ~ Bin(n - s, rho) for the middle ranges (:func:`middles_from_tables`). The tables' rounding (at most
8 W 2^-53 relative for rows of width W) is added to each epsilon's certified remainder. Formulas: the
module docstring of :mod:`shuffledp.accounting.views.weak.view`.

The middle ranges read E[(tau - M)_+] = E[(i - M)_+] + (tau - i) Pr(M <= i), i = floor(tau), two
positive table entries (not (tau - mu) Pr(M <= i) + (1 - rho)(i + 1) Pr(M = i + 1), which cancels below
the mean, so that its margin would be relative to the two terms' sizes); and the tables are used wherever
they stay in range (:func:`tables_in_range`, checked from the pmf at the window's ends and mode), not only
for narrow windows, so that the deep-tail epsilons (K ~ 20-30) are evaluated jointly too.
"""

from __future__ import annotations

import math

import numpy as np

from shuffledp._numerics import segment_logsumexp
from shuffledp.accounting.numerics.binomial import log_excess_below, log_pmf, log_sf

__all__ = [
    "lower_tables",
    "high_from_tables",
    "middles_from_tables",
    "table_cells",
    "tables_in_range",
    "TABLE_MAX_WIDTH",
]

#: the tables are used only where the relative rounding margin 8 W 2^-53 stays below this (W: widest row)
TABLE_MAX_WIDTH = 8192
TABLE_CELLS = 1 << 21  # cells per chunk of rows (three float64 tables: ~50 MB)
TABLE_BLOCK = 1 << 16  # cells per block while a table is formed (kept in cache)
LOG_UNIT = math.log(2.0**-53)
#: a table cell (relative to its row's anchor) stays below e^this, and every pmf ratio above e^-this: far
#: from overflow (e^709) and from the subnormal range (below e^-708), where relative rounding is lost
_LOG_CELL_LIMIT = 600.0


def lower_tables(n_trials, lo, width, log_pi, log_1mpi, excess: bool = True):
    """Per-row tables of X ~ Bin(N, pi), N = ``n_trials``, on m = lo .. lo + width - 1, relative to pmf(lo).

    Returns (log pmf(lo), p, F, H) (H is None when ``excess`` is false) with p[j] = pmf(lo + j) / pmf(lo), F[j] = Pr(X <= lo + j) / pmf(lo) and
    H[j] = E[(lo + j - X)_+] / pmf(lo) (cells beyond a row's width are 0). p is a running product of the
    exact ratios pmf(m + 1) / pmf(m); F and H are running sums of positive terms started from the exact
    Pr(X <= lo - 1) and E[(lo - X)_+] (H(m + 1) = H(m) + F(m)), so no difference is ever taken. Relative
    rounding error at most ~8 j 2^-53 at cell j (the caller adds a margin for it). The window must keep
    pmf within e^700 of pmf(lo) (callers use it for windows of at most ~20 standard deviations).
    """
    N, lo, width = (np.asarray(x, dtype=float) for x in (n_trials, lo, width))
    W = int(width.max())
    log_anchor = log_pmf(lo, N, log_pi, log_1mpi)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        below = np.where(lo > 0, np.exp(log_sf(N - lo + 1.0, N, log_1mpi, log_pi) - log_anchor), 0.0)
        h0 = (
            np.where(lo > 0, np.exp(log_excess_below(lo, N, log_pi, log_1mpi) - log_anchor), 0.0)
            if excess
            else None
        )
    p, F = np.empty((N.size, W)), np.empty((N.size, W))
    H = np.empty((N.size, W)) if excess else None
    scratch = None if excess else np.empty((min(N.size, max(1, TABLE_BLOCK // max(W, 1))), W))
    rows = max(1, TABLE_BLOCK // max(W, 1))  # blocks small enough to stay in cache
    odds = math.exp(log_pi - log_1mpi)
    steps = np.arange(W, dtype=float)[None, :]
    for i in range(0, N.size, rows):
        b = slice(i, i + rows)
        pb, Fb = p[b], F[b]
        if H is not None:
            Hb = H[b]
        else:
            assert scratch is not None, "scratch is allocated when H is not"
            Hb = scratch[: pb.shape[0]]
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
            if h0 is None:  # not excess
                continue
            # H[0] = h0, H[j] = h0 + sum_{l < j} F[l]: likewise
            first = Fb[:, 0].copy()
            Fb[:, 0] += h0[b]
            Hb[:, 0] = h0[b]
            np.cumsum(Fb[:, :-1], axis=1, out=Hb[:, 1:])
            Fb[:, 0] = first
    return log_anchor, p, F, H


#: a group of epsilons shares the high parts' tables while they have at most this many cells per row and
#: epsilon (a cell costs ~1/50 of an incomplete-beta function, of which the tables' anchors take two per row)
_HIGH_CELLS_PER_EPSILON = 64


def _high_range(rows, preps):
    """(first B of the tables per row, their widths, whether they are allowed) for the epsilons ``preps``."""
    s = rows.s
    a_min = np.min(
        [np.where(p.degenerate, p.a_hi, (p.a_hi if p.a_start is None else p.a_start)) for p in preps], axis=0
    )
    a_max = np.max([p.a_hi for p in preps], axis=0)
    a_max = np.minimum(a_max, s)  # a_hi = s + 1: empty high range (handled below)
    width = a_max - a_min + 1.0
    b_lo = s - a_max
    half = math.log(0.5)
    fits = float(width.max()) <= TABLE_MAX_WIDTH and tables_in_range(s, b_lo, b_lo + width - 1.0, half, half)
    return b_lo, width, fits


def high_from_tables(rows, preps) -> list:
    """High parts (and log Bin(s, 1/2)(a_start)) of the epsilons ``preps`` from per-row tables
    (:func:`_high_group`), the epsilons taken in groups (in their order) whose a ranges fit in one table
    (with windows centred on each epsilon's tilted law the union of a whole batch's ranges is often too
    wide, and one incomplete-beta function per row and epsilon would take most of the time). Returns
    the epsilons no table allows (the caller uses incomplete-beta functions for them)."""
    left: list = []  # the EpsilonRows of rows.py, which imports this module
    group: list = []
    for p in list(preps) + [None]:
        if p is not None:
            _, width, fits = _high_range(rows, group + [p])
            if fits and float(width.max()) <= _HIGH_CELLS_PER_EPSILON * (len(group) + 1):
                group.append(p)
                continue
        if len(group) > 1:
            _high_group(rows, group)
        else:  # one epsilon alone: its table's two anchors per row cost more than one incomplete beta
            left += group
        group = [] if p is None else [p]
    return left


def _high_group(rows, preps) -> None:
    """High parts (and log Bin(s, 1/2)(a_start)) of every epsilon's ``prep`` (the rows' quantities of one
    epsilon, see :meth:`~shuffledp.accounting.views.weak.rows.RowSums.log_parts_many`) from per-row tables
    of B = s - A ~ Bin(s, 1/2) over the a the epsilons need (:func:`_high_range`: they fit): with
    b = s - a_hi, sum_{a >= a_hi} (a - t*) Pr(A = a) = E[(b - B)_+] + (a_hi - t*) Pr(B <= b) (both terms
    positive: a_hi >= t*)."""
    s = rows.s
    half = math.log(0.5)
    b_lo, width, _ = _high_range(rows, preps)
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
            # a_hi - t* >= 0, from the end t* is near (exact there)
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


#: block sizes tried for the tables of M's law: one table per block of consecutive rows (below)
_BLOCKS = (1, 2, 4, 8, 16, 32, 64, 128)
#: a row-to-row step of a pair (two products and sums) in table cells (measured: ~3 ns against ~13 ns per cell)
_STEP_COST = 0.25


def _blocks(rows, need, i_min, i_max, pairs, G):
    """Blocks of G consecutive totals s among the rows ``need`` (ascending): (reference row of each needed
    row -- the block's first needed row, smallest s, largest n - s --, per block its first needed row and
    its table's first cell and width: every threshold of the block and the cell below); and the work
    estimate (table cells + steps of the row-to-row recurrence, one per pair and row between it and the
    reference)."""
    block = ((rows.s[need] - rows.s[need[0]]) // G).astype(np.int64)
    first = np.flatnonzero(np.r_[True, block[1:] != block[:-1]])
    lo = np.maximum(np.minimum.reduceat(i_min[need], first) - (1.0 if G > 1 else 0.0), 0.0)
    hi = np.maximum.reduceat(i_max[need], first)
    ref = np.repeat(need[first], np.diff(np.r_[first, need.size]))
    steps = float(np.sum(pairs[need] * (rows.s[need] - rows.s[ref])))
    work = float(np.sum(hi - lo + 1.0)) + _STEP_COST * steps
    return ref, need[first], lo, hi - lo + 1.0, work


def _best_blocks(rows, active):
    """(blocks of :func:`_blocks` with the least work, the threshold ranges of :func:`_threshold_range`)."""
    need, i_min, i_max, _ = _threshold_range(rows, active)
    need = np.flatnonzero(need)
    if need.size == 0:
        return None, (need, i_min, i_max)
    pairs = np.sum([p.counts for p in active], axis=0).astype(float)
    lrho, l1mrho = rows.logs.log_rho, rows.logs.log_1mrho
    best = None
    for G in _BLOCKS:
        b = _blocks(rows, need, i_min, i_max, pairs, G)
        # G = 1 reads the rows' own windows (tables_fit); a block's table must stay in range as well
        if (best is None or b[4] < best[4]) and (
            G == 1 or tables_in_range(rows.N_m[b[1]], b[2], b[2] + b[3] - 1.0, lrho, l1mrho)
        ):
            best = b
    return best, (need, i_min, i_max)


def table_cells(rows, active) -> float:
    """Work of :func:`middles_from_tables` for the epsilons ``active``, in table cells (its best blocks)."""
    best, _ = _best_blocks(rows, active)
    return 0.0 if best is None else best[4]


def _walk_down(N, x, t, d, one_m_rho, weights=None):
    """sum_{l=1}^{d} w_l pmf_{N-l}(x) / pmf_N(x) * t (w_l = 1, or d - l + 1 with ``weights``), per pair, from
    pmf_{N-1}(x) = pmf_N(x) (N - x) / (N (1 - rho)): d products of positive ratios, all sums positive
    (relative rounding at most ~(5 d + 2) 2^-53). Pairs sorted by d, descending: step l works on a prefix."""
    out = np.zeros(t.shape)
    term = t.copy()
    steps = int(d[0]) if d.size else 0
    ends = np.searchsorted(-d, -np.arange(1.0, steps + 1.0), side="right")  # pairs with d >= l
    for step in range(1, steps + 1):
        e = int(ends[step - 1])
        Nl = N[:e] - (step - 1.0)
        term[:e] *= (Nl - x[:e]) / (Nl * one_m_rho)
        out[:e] += term[:e] if weights is None else (d[:e] - (step - 1.0)) * term[:e]
    return out


def _middle_from_blocks(rows, p, mid, group, tables, table_of, lo_of, ref_of, i_min, i_max):
    """The middle ranges of one epsilon's rows ``group`` from their blocks' tables of M's law: fills ``mid``.

    A row s = s_ref + d reads the table of its block's reference (n - s_ref users, d more than its own) and
    steps down: F_(N-1)(i) = F_N(i) + rho pmf_(N-1)(i) and H_(N-1)(i) = H_N(i) + rho F_(N-1)(i - 1) (M_N = M_(N-1)
    + a Bernoulli(rho)), so F_(N-d)(i) = F_N(i) + rho sum_l pmf_(N-l)(i) and H_(N-d)(i) = H_N(i) + rho d F_N(i - 1)
    + rho^2 sum_l (d - l + 1) pmf_(N-l)(i - 1): sums of positive terms (no cancellation)."""
    log_anchor, P, F, H = tables
    W = F.shape[1]
    rho, one_m_rho = math.exp(rows.logs.log_rho), math.exp(rows.logs.log_1mrho)
    group = group[np.argsort(rows.s[ref_of[group]] - rows.s[group], kind="stable")]  # rows by d, descending
    seg, tau, log_a, starts = rows.middle_pairs(p, group)
    row = group[seg]
    r = table_of[row]
    i = np.clip(np.floor(tau), i_min[row], i_max[row])
    col = (i - lo_of[row]).astype(np.int64)
    flat = r * W + col
    prev = np.maximum(flat - 1, 0)
    has_prev = col > 0  # i - 1 below the table's first cell only where that is -1 (F, pmf = 0 there)
    f_i, h_i = F.flat[flat], H.flat[flat]
    f_prev, p_prev = np.where(has_prev, F.flat[prev], 0.0), np.where(has_prev, P.flat[prev], 0.0)
    d = rows.s[row] - rows.s[ref_of[row]]  # descending (the rows were sorted)
    if d.size and d[0] > 0:
        N = rows.N_m[ref_of[row]]
        extra_f = _walk_down(N, i, P.flat[flat], d, one_m_rho)
        extra_h = _walk_down(N, i - 1.0, p_prev, d, one_m_rho, weights=True)
        f_i = f_i + rho * extra_f
        h_i = h_i + (rho * d) * f_prev + (rho * rho) * extra_h
    # E[(tau - M)_+] = E[(i - M)_+] + (tau - i) Pr(M <= i), i = floor(tau): two positive terms (no
    # cancellation), relative to the reference's pmf at its table's first cell
    excess = h_i + (tau - i) * f_i
    with np.errstate(divide="ignore"):
        terms = log_a + np.log(excess) + log_anchor[r]
    mid[group] = math.log(p.nu) + segment_logsumexp(terms, starts)


def middles_from_tables(rows, preps, mids, active) -> None:
    """The middle ranges of every epsilon in ``active`` (those with a non-empty one) from tables of M's law
    built once per block of consecutive rows (:func:`_blocks`, the block size with the least work) for the
    union of the thresholds the block's rows need over every epsilon, each row stepping down from its
    block's reference (:func:`_middle_from_blocks`); fills ``mids`` and adds the rounding (8 W 2^-53 of the
    tables, (5 G + 2) 2^-53 of the steps, and a few 2^-53 of the sums) to the remainders."""
    lrho, l1mrho = rows.logs.log_rho, rows.logs.log_1mrho
    best, (need, i_min, i_max) = _best_blocks(rows, active)
    if best is None:
        return
    ref_of_need, refs, lo, width, _ = best
    ref_of = np.full(rows.s.size, -1, dtype=np.int64)
    ref_of[need] = ref_of_need
    G = float(np.max(rows.s[need] - rows.s[ref_of_need])) + 1.0
    log_margin = math.log(8.0 * float(width.max()) + 6.0 * G + 32.0) + LOG_UNIT
    per_ref = np.cumsum(width)
    bounds = np.searchsorted(per_ref, np.arange(TABLE_CELLS, per_ref[-1], TABLE_CELLS))
    for chunk in np.split(np.arange(refs.size), np.asarray(bounds, dtype=int) + 1):
        if chunk.size == 0:
            continue
        tables = lower_tables(rows.N_m[refs[chunk]], lo[chunk], width[chunk], lrho, l1mrho)
        table_of = np.full(rows.s.size, -1, dtype=np.int64)
        lo_of = np.zeros(rows.s.size)
        members = need[np.isin(ref_of_need, refs[chunk])]
        position = np.full(rows.s.size, -1, dtype=np.int64)
        position[refs[chunk]] = np.arange(chunk.size)
        table_of[members] = position[ref_of[members]]
        lo_of[members] = lo[chunk][table_of[members]]
        for p, mid in zip(preps, mids):
            if p.degenerate:
                continue
            group = members[p.counts[members] > 0]
            if group.size:
                _middle_from_blocks(rows, p, mid, group, tables, table_of, lo_of, ref_of, i_min, i_max)
    for p, mid in zip(preps, mids):
        if mid is None:
            continue
        finite = np.isfinite(mid)
        if finite.any():
            p.log_err[finite] = np.logaddexp(p.log_err[finite], mid[finite] + log_margin)


def tables_in_range(n_trials, lo, hi, log_pi, log_1mpi) -> bool:
    """Whether :func:`lower_tables` of X ~ Bin(N, pi), N = ``n_trials``, anchored anywhere in [lo, hi] and not reaching beyond
    hi stays in range: every cell (pmf ratios to the anchor's pmf; the cumulative law and the expected
    excess over it) far from overflow, and every pmf ratio far from the subnormal range (its relative
    rounding is then the 8 W 2^-53 the callers add). The pmf is unimodal: its largest value on [lo, hi] is
    at the mode (clipped) and its smallest at an end. Bounds used: p <= pmf(mode) / pmf(anchor);
    F <= Pr(X < anchor) / pmf(anchor) + sum p <= 1 / pmf(anchor) + W max p; H <= (N + W) F."""
    N, lo, hi = (np.asarray(x, dtype=float) for x in (n_trials, lo, hi))
    hi = np.maximum(hi, lo)
    mode = np.clip(np.floor((N + 1.0) * math.exp(log_pi)), lo, hi)
    at_lo, at_hi, at_mode = (log_pmf(x, N, log_pi, log_1mpi) for x in (lo, hi, mode))
    low = np.minimum(at_lo, at_hi)
    spread = at_mode - low
    top = np.maximum(spread + np.log(hi - lo + 2.0), -low) + math.log(2.0) + np.log(N + hi - lo + 2.0)
    return bool(np.all(top <= _LOG_CELL_LIMIT) and np.all(spread <= _LOG_CELL_LIMIT))
