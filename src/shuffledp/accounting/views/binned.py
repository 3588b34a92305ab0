"""Binned privacy-loss views of the accountants whose view is an explicit pair of distributions.

Each builder returns :class:`BinnedView` objects: for a pair (P, Q) on a discrete outcome space, the
P-mass and the Q-mass of the outcomes whose privacy loss L = log(P / Q) falls in each bin of width
``interval``. With ``pessimistic=True`` bin k holds the outcomes with L in ((k - 1) Delta, k Delta]
(every loss rounded *up*); with ``pessimistic=False`` bin k holds L in [k Delta, (k + 1) Delta) (rounded
*down*). Keeping both masses per bin lets :mod:`shuffledp.accounting.composition` form either direction
(P vs Q and Q vs P) and the subsampled pair (q P + (1 - q) Q, Q) without revisiting the outcomes.

Outcomes outside the summation windows are not binned: ``dropped`` is a certified upper bound on the
P-mass *and* on the Q-mass they carry (exact binomial tails, :func:`_binomial_excess.log_sf`, times
bounds on the weights). Upper bounds put it into the infinity mass (Koskela, Heikkila, Honkela 2021,
Lemma 6 does the same with Hoeffding's bound); lower bounds simply drop it.

Views (n users, eps0, k; gamma = k / (e^eps0 + k - 1), q_k = 1 / (e^eps0 + k - 1), beta = e^eps0 - 1):

* ``strong`` (Balle et al. 2019, Thm 3.1 adversary; Koskela et al. eq. (4.3)): with probability gamma
  both views have the same law (loss 0); otherwise P = (A + 1, C), Q = (A, C + 1) with (A, C) trinomial
  over n - 1 users with probabilities (q_k, q_k). L = log((a + 1) / c); c = 0 is an infinite loss
  (P-mass (1 - gamma)(1 - q_k)^(n - 1), the same Q-mass on a + 1 = 0 by symmetry).
* ``clones`` (Feldman, McMillan, Talwar 2021, Thm 3.2): C ~ Bin(n - 1, r), A | C ~ Bin(C, 1/2),
  Delta ~ Bern(alpha), alpha = e^eps0 / (e^eps0 + 1); P = (A + Delta, C + 1 - A - Delta), Q the swap.
  With x the first coordinate, L = log((alpha x + (1 - alpha)(c + 1 - x)) / (alpha (c + 1 - x) +
  (1 - alpha) x)). Generic pair: r = e^-eps0, weight 1; k-RR pair (``clones-krr``): r = 2 q_k, and
  with probability 1 - (e^eps0 + 1) q_k both views are equal (loss 0).
* ``weak`` (Koskela et al. Def. 3, Thm 4; :mod:`shuffledp.accounting.accountants.weak_adversary`):
  P(a, c, m) = Mult_n(a, c, m)(j + beta a) / n, Q with c for a, j = a + c + m. **Reduction**: with
  s = a + c, d = a - c, L = sign(d) log1p(beta |d| / (s + m + beta min(a, c))), which for fixed (s, a)
  is monotone in m. So for each (s, a) the m-window splits into the few runs of consecutive m that share
  a bin, found in closed form (m >= beta |d| / expm1(t) - s - beta min(a, c) <=> |L| <= t), and each
  run's mass is a difference of the prefix sums of pmf(m) and m pmf(m) of M | s ~ Bin(n - s, rho),
  rho = (k - 2) / (e^eps0 + k - 3) -- computed once per s. Work ~ (#(s, a) pairs) x (runs per pair)
  instead of the 3-D sum: about 2e7 pairs and 3 runs each at n = 10^6, k = 4, Delta = 1e-5.
* ``worst-none`` / ``worst-all-x0`` (the datasets of :class:`~shuffledp.accounting.accountants.worst_case.WorstCaseLower`):
  exact (h_x0, h_x1) marginals of the real shuffled histogram for explicit datasets -- lower bounds.
  "none": P(a, c) = Tri_n(a, c)(e^eps0 a + c + rho (n - s)) / n, Q the swap; "all on x0":
  P = Mult_n(a, c) with probabilities (e^eps0 q_k, q_k), Q = P (c e^eps0 + a e^-eps0 + n - s) / n
  (a trinomial-ratio computation), not symmetric.

Masses are accumulated in linear space (as dp_accounting stores them); prefix-sum differences carry an
absolute error of about 1e-16 per run.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from shuffledp._numerics import log_binom_pmf_loader
from shuffledp.accounting.numerics.binomial import log_sf
from shuffledp.accounting.params import KrrParams

__all__ = ["BinnedView", "Bins", "weak_view", "window_half_width", "sd_window", "log_outside", "flat_rows", "bin_index",
           "split_pair_rows", "log_a_outside", "LOG_HALF", "ROWS_PER_CHUNK"]

LOG_HALF = math.log(0.5)
ROWS_PER_CHUNK = 1 << 20  # (s, a) pairs handled at once (bounds memory)
_RUNS_PER_BATCH = 1 << 22  # runs (or single m values) expanded at once


@dataclass(frozen=True)
class BinnedView:
    """P- and Q-masses of a pair's privacy loss, binned on a grid (see the module docstring)."""

    interval: float
    pessimistic: bool
    index: np.ndarray  # integer bin indices, sorted, unique
    p_mass: np.ndarray
    q_mass: np.ndarray
    p_infinity: float  # P-mass where Q = 0 (L = +inf)
    q_infinity: float  # Q-mass where P = 0 (L = -inf)
    dropped: float  # certified bound on the P-mass and on the Q-mass outside the windows
    symmetric: bool  # (Q, P) is (P, Q) relabelled: both directions have the same PLD
    label: str = ""


class Bins:
    """Accumulates (bin index, P-mass, Q-mass) triples into dense arrays that grow as needed."""

    def __init__(self):
        self.offset = None
        self.p = np.zeros(0)
        self.q = np.zeros(0)

    def add(self, index, p_mass, q_mass):
        index = np.asarray(index, dtype=np.int64)
        if index.size == 0:
            return
        lo, hi = int(index.min()), int(index.max())
        if self.offset is None:
            self.offset, self.p, self.q = lo, np.zeros(hi - lo + 1), np.zeros(hi - lo + 1)
        new_lo, new_hi = min(lo, self.offset), max(hi, self.offset + self.p.size - 1)
        if new_lo < self.offset or new_hi > self.offset + self.p.size - 1:
            p, q = np.zeros(new_hi - new_lo + 1), np.zeros(new_hi - new_lo + 1)
            start = self.offset - new_lo
            p[start:start + self.p.size], q[start:start + self.q.size] = self.p, self.q
            self.offset, self.p, self.q = new_lo, p, q
        shifted = index - self.offset
        self.p += np.bincount(shifted, weights=p_mass, minlength=self.p.size)
        self.q += np.bincount(shifted, weights=q_mass, minlength=self.q.size)

    def view(self, interval, pessimistic, p_infinity, q_infinity, dropped, symmetric, label) -> BinnedView:
        if self.offset is None:
            index = np.zeros(0, dtype=np.int64)
            p = q = np.zeros(0)
        else:
            keep = (self.p > 0) | (self.q > 0)
            index = np.flatnonzero(keep).astype(np.int64) + self.offset
            p, q = self.p[keep], self.q[keep]
        return BinnedView(interval, pessimistic, index, p, q, float(p_infinity), float(q_infinity),
                          float(dropped), symmetric, label)


def window_half_width(sd, K):
    """Half-width around the mean outside which Bernstein's inequality leaves <= e^(-K^2/2) per side."""
    return K * K / 6.0 + np.sqrt(K**4 / 36.0 + K * K * np.asarray(sd, dtype=float) ** 2)


def sd_window(n, p, K):
    """Integer window [lo, hi] of Bin(n, p) (arrays), clipped to [0, n]."""
    n = np.asarray(n, dtype=float)
    mean, half = n * p, window_half_width(np.sqrt(n * p * (1.0 - p)), K)
    return np.clip(np.floor(mean - half), 0.0, n), np.clip(np.ceil(mean + half), 0.0, n)


def log_outside(lo, hi, n, log_p, log_1mp):
    """log Pr(X < lo or X > hi), X ~ Bin(n, p), exact (elementwise)."""
    lo, hi, n = np.broadcast_arrays(*(np.asarray(v, dtype=float) for v in (lo, hi, n)))
    upper = np.where(hi < n, log_sf(hi + 1.0, n, log_p, log_1mp), -np.inf)
    lower = np.where(lo > 0, log_sf(n - lo + 1.0, n, log_1mp, log_p), -np.inf)  # Pr(n - X >= n - lo + 1)
    return np.logaddexp(upper, lower)


def flat_rows(s_values, lo, hi):
    """Flatten (s, a) pairs with a in [lo(s), hi(s)]: returns (s, a, position of s)."""
    counts = (hi - lo + 1).astype(np.int64)
    counts[counts < 0] = 0
    position = np.repeat(np.arange(s_values.size), counts)
    a = lo[position] + (np.arange(int(counts.sum())) - np.repeat(np.cumsum(counts) - counts, counts))
    return s_values[position], a, position


def bin_index(loss, interval, pessimistic):
    scaled = loss / interval
    return (np.ceil(scaled) if pessimistic else np.floor(scaled)).astype(np.int64)


def split_pair_rows(n_trials, log_r, log_1mr, K):
    """Window of S ~ Bin(n_trials, r) with log weights, symmetric per-s windows [lo, hi] of
    A | S ~ Bin(S, 1/2), and the exact log Pr(S outside its window)."""
    r = math.exp(log_r)
    s_lo, s_hi = (float(v) for v in sd_window(n_trials, r, K))
    s = np.arange(s_lo, s_hi + 1.0)
    log_w = log_binom_pmf_loader(s, float(n_trials), log_r, log_1mr)
    half = window_half_width(np.sqrt(s) / 2.0, K)
    a_lo = np.clip(np.floor(s / 2.0 - half), 0.0, s)
    a_hi = s - a_lo  # symmetric about s / 2
    return s, log_w, a_lo, a_hi, float(log_outside(s_lo, s_hi, float(n_trials), log_r, log_1mr))


def log_a_outside(s, log_w, lo, hi, log_s_out):
    """log of Pr(S outside) + sum_s w(s) Pr(Bin(s, 1/2) outside [lo(s), hi(s)]), exact."""
    per_s = log_w + log_outside(lo, hi, s, LOG_HALF, LOG_HALF)
    return float(np.logaddexp(log_s_out, np.logaddexp.reduce(per_s)))


def _weak_runs(a, s, m_lo, m_hi, beta, interval, ceil_mode):
    """Runs of consecutive m in [m_lo, m_hi] sharing the bin of l(m) = log1p(beta |d| / (s + m + beta
    min(a, c))) (d = a - c != 0), rounded up (``ceil_mode``) or down. l falls as m grows, so the bin
    does too. Returns (row, bin of l, run start, run end), ends exclusive; the runs of a row tile
    [m_lo, m_hi + 1) exactly (a float tie at a run boundary can only move one m to a neighbouring bin)."""
    c = s - a
    x = beta * np.abs(a - c)
    base = s + beta * np.minimum(a, c)
    rounding = np.ceil if ceil_mode else np.floor
    j_top = rounding(np.log1p(x / (base + m_lo)) / interval)
    j_bottom = rounding(np.log1p(x / (base + m_hi)) / interval)
    counts = (j_top - j_bottom + 1.0).astype(np.int64)
    row = np.repeat(np.arange(a.size), counts)
    step = np.arange(int(counts.sum())) - np.repeat(np.cumsum(counts) - counts, counts)
    j = j_top[row] - step
    x_r, base_r, lo_r, hi_r = x[row], base[row], m_lo[row], m_hi[row] + 1.0

    def first_m_with_bin_at_most(jj):
        with np.errstate(divide="ignore", over="ignore"):
            if ceil_mode:  # l(m) <= jj Delta  <=>  m >= x / expm1(jj Delta) - base  (jj >= 1 here)
                value = np.ceil(x_r / np.expm1(np.maximum(jj, 1.0) * interval) - base_r)
            else:  # l(m) < (jj + 1) Delta  <=>  m > x / expm1((jj + 1) Delta) - base
                value = np.floor(x_r / np.expm1((np.maximum(jj, 0.0) + 1.0) * interval) - base_r) + 1.0
        return np.clip(value, lo_r, hi_r)

    start = np.where(step == 0, lo_r, first_m_with_bin_at_most(j))
    end = np.where(step == counts[row] - 1, hi_r, first_m_with_bin_at_most(j - 1.0))
    end = np.maximum(end, start)
    return row, j.astype(np.int64), start, end


def weak_view(*, epsilon_local, n_users, k, interval, pessimistic, K=9.0) -> BinnedView:
    """Binned view of Koskela et al.'s weak adversary by the run reduction of the module docstring."""
    n = float(n_users)
    e0 = float(epsilon_local)
    beta = math.expm1(e0)
    krr = KrrParams.of(e0, k)
    log_2q, log_1m2q, log_rho, log_1mrho, rho = krr.log_2q, krr.log_1m2q, krr.log_rho, krr.log_1mrho, krr.rho
    two_q = math.exp(log_2q)
    s_lo, s_hi = (float(v) for v in sd_window(n, two_q, K))
    s_all = np.arange(s_lo, s_hi + 1.0)
    log_w_all = log_binom_pmf_loader(s_all, n, log_2q, log_1m2q)
    half = window_half_width(np.sqrt(s_all) / 2.0, K)
    a_lo_all = np.clip(np.floor(s_all / 2.0 - half), 0.0, s_all)
    a_hi_all = s_all - a_lo_all
    if rho > 0:
        m_lo_all, m_hi_all = sd_window(n - s_all, rho, K)
    else:
        m_lo_all = m_hi_all = np.zeros_like(s_all)
    # certified bound on the P-mass (and, symmetric windows, the Q-mass) outside the windows:
    # S outside: E[((1 + beta/2) S + rho (n - S)) / n; S outside] with E[S; S >= x] = n 2q Pr(Bin(n-1, 2q) >= x - 1)
    upper_tail = float(log_sf(s_hi, n - 1.0, log_2q, log_1m2q)) + log_2q if s_hi < n else -np.inf
    lower_tail = (math.log(max(s_lo - 1.0, 1.0) / n) + float(log_sf(n - s_lo + 1.0, n, log_1m2q, log_2q))
                  if s_lo > 0 else -np.inf)
    log_s_out = float(np.logaddexp(math.log1p(beta / 2.0) + np.logaddexp(upper_tail, lower_tail),
                                   (log_rho if rho > 0 else -np.inf)
                                   + float(log_outside(s_lo, s_hi, n, log_2q, log_1m2q))))
    # A outside (s inside): <= w(s) Pr(A outside) (s + rho (n - s) + beta s) / n
    log_scale = np.log((s_all * (1.0 + beta) + rho * (n - s_all)) / n)
    log_a_out = log_w_all + log_outside(a_lo_all, a_hi_all, s_all, LOG_HALF, LOG_HALF) + log_scale
    # M outside (s, a inside): <= w(s) Pr(M outside) (1 + beta s / n)
    if rho > 0:
        log_m_out = (log_w_all + log_outside(m_lo_all, m_hi_all, n - s_all, log_rho, log_1mrho)
                     + np.log1p(beta * s_all / n))
    else:
        log_m_out = np.full(s_all.shape, -np.inf)
    log_dropped = float(np.logaddexp.reduce(np.concatenate([[log_s_out], log_a_out, log_m_out])))

    bins = Bins()
    m_width = int(np.max(m_hi_all - m_lo_all)) + 2
    a_width = int(np.max(a_hi_all - a_lo_all)) + 1
    step = max(1, min(ROWS_PER_CHUNK // a_width, (1 << 25) // m_width))
    for start in range(0, s_all.size, step):
        stop = min(s_all.size, start + step)
        s_c, log_w = s_all[start:stop], log_w_all[start:stop]
        m_lo, m_hi = m_lo_all[start:stop], m_hi_all[start:stop]
        # prefix sums over the m-window of pmf(m) and m pmf(m), one row per s (padded)
        offsets = np.arange(m_width - 1, dtype=float)
        m_grid = m_lo[:, None] + offsets[None, :]
        inside = m_grid <= m_hi[:, None]
        if rho > 0:
            pmf = np.where(inside, np.exp(log_binom_pmf_loader(m_grid, (n - s_c)[:, None], log_rho, log_1mrho)), 0.0)
        else:
            pmf = np.where(offsets[None, :] == 0, 1.0, 0.0) * np.ones((s_c.size, 1))
        f0 = np.zeros((s_c.size, m_width))
        f1 = np.zeros((s_c.size, m_width))
        np.cumsum(pmf, axis=1, out=f0[:, 1:])
        np.cumsum(pmf * m_grid, axis=1, out=f1[:, 1:])
        ss, a, pos = flat_rows(s_c, a_lo_all[start:stop], a_hi_all[start:stop])
        log_row = log_w[pos] + log_binom_pmf_loader(a, ss, LOG_HALF, LOG_HALF) - math.log(n)
        row_mass = np.exp(log_row)
        c = ss - a
        flat_base = pos * m_width

        def masses(rows, run_start, run_end, pos_r):
            lo_idx = flat_base[rows] + (run_start - m_lo[pos_r]).astype(np.int64)
            hi_idx = flat_base[rows] + (run_end - m_lo[pos_r]).astype(np.int64)
            d0 = np.maximum(f0.ravel()[hi_idx] - f0.ravel()[lo_idx], 0.0)
            d1 = np.maximum(f1.ravel()[hi_idx] - f1.ravel()[lo_idx], 0.0)
            sr, ar, cr = ss[rows], a[rows], c[rows]
            return (row_mass[rows] * ((sr + beta * ar) * d0 + d1),
                    row_mass[rows] * ((sr + beta * cr) * d0 + d1))

        tie = a == c  # d = 0: loss 0 for every m
        if tie.any():
            rows = np.flatnonzero(tie)
            p, q = masses(rows, m_lo[pos[rows]], m_hi[pos[rows]] + 1.0, pos[rows])
            bins.add(np.zeros(rows.size, dtype=np.int64), p, q)
        for sign in (1, -1):
            rows_all = np.flatnonzero((a - c) * sign > 0)
            # pessimistic: L = +l rounded up (ceil of l), L = -l rounded up (-floor of l); optimistic swaps
            ceil_mode = pessimistic if sign > 0 else not pessimistic
            # a row whose loss spans more bins than it has m values is enumerated m by m instead
            n_m = m_hi[pos[rows_all]] - m_lo[pos[rows_all]] + 1.0
            spread = (np.log1p(beta * np.abs(a - c)[rows_all] / (ss[rows_all] + beta * np.minimum(a, c)[rows_all]
                                                                  + m_lo[pos[rows_all]]))
                      - np.log1p(beta * np.abs(a - c)[rows_all] / (ss[rows_all] + beta * np.minimum(a, c)[rows_all]
                                                                    + m_hi[pos[rows_all]]))) / interval + 2.0
            direct = spread > n_m
            work = np.where(direct, n_m, spread)
            batches = np.searchsorted(np.cumsum(work), np.arange(_RUNS_PER_BATCH, work.sum(), _RUNS_PER_BATCH))
            for rows, is_direct in zip(np.split(rows_all, batches), np.split(direct, batches)):
                if rows.size == 0:
                    continue
                runs = rows[~is_direct]
                if runs.size:
                    r, j, run_start, run_end = _weak_runs(a[runs], ss[runs], m_lo[pos[runs]], m_hi[pos[runs]],
                                                          beta, interval, ceil_mode)
                    p, q = masses(runs[r], run_start, run_end, pos[runs[r]])
                    bins.add(sign * j, p, q)
                each = rows[is_direct]
                if each.size:
                    mm_rows, m_values, _ = flat_rows(each.astype(float), m_lo[pos[each]], m_hi[pos[each]])
                    mm_rows = mm_rows.astype(np.int64)
                    flat = pos[mm_rows] * (m_width - 1) + (m_values - m_lo[pos[mm_rows]]).astype(np.int64)
                    g = pmf.ravel()[flat]
                    sr, ar, cr = ss[mm_rows], a[mm_rows], c[mm_rows]
                    loss = np.log1p(beta * np.abs(ar - cr) / (sr + m_values + beta * np.minimum(ar, cr)))
                    j = (np.ceil(loss / interval) if ceil_mode else np.floor(loss / interval)).astype(np.int64)
                    bins.add(sign * j, row_mass[mm_rows] * g * (sr + m_values + beta * ar),
                             row_mass[mm_rows] * g * (sr + m_values + beta * cr))
    return bins.view(interval, pessimistic, 0.0, 0.0, math.exp(log_dropped), True, "weak")
