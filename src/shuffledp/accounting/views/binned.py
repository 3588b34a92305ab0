"""Binned privacy-loss views of the accountants whose view is an explicit pair of distributions, and the
window helpers their streams share.

The strong, clones and 2023 views are binned by one builder, from their outcomes
(:func:`shuffledp.accounting.views.derived.pld.binned`); the weak view and the lower bound's datasets still
bin their own (their modules). Each builder returns :class:`BinnedView` objects: for a pair (P, Q) on a discrete outcome space, the
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
* ``weak`` (Koskela et al. Def. 3, Thm 4): the run reduction over (s, a, m) of
  :mod:`shuffledp.accounting.views.weak.view`.
* ``worst-none`` / ``worst-all-x0`` (the datasets of :class:`~shuffledp.accounting.accountants.worst_case_lower.WorstCaseLower`):
  exact (h_x0, h_x1) marginals of the real shuffled histogram for explicit datasets -- lower bounds.
  "none": P(a, c) = Tri_n(a, c)(e^eps0 a + c + rho (n - s)) / n, Q the swap; "all on x0":
  P = Mult_n(a, c) with probabilities (e^eps0 q_k, q_k), Q = P (c e^eps0 + a e^-eps0 + n - s) / n
  (a trinomial-ratio computation), not symmetric.

Masses are accumulated in linear space (as dp_accounting stores them); prefix-sum differences carry an
absolute error of about 1e-16 per run. ``Bins(log_space=True)`` (strong and clones views, for the
composed Chernoff tail of :mod:`shuffledp.accounting.numerics.composed_tail`) also keeps every bin's
masses as logs (:class:`LogMasses`: a per-bin log-sum-exp, relative error ~1e-16 times the number of
terms), so masses far below the smallest float (e^-745) are kept.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from shuffledp._numerics import binned_logsumexp
from shuffledp.accounting.numerics.binomial import log_binom_pmf_loader
from shuffledp.accounting.numerics.windows import bernstein_half_width, log_outside, sd_window

__all__ = [
    "BinnedView",
    "LogMasses",
    "Bins",
    "flat_rows",
    "bin_index",
    "split_pair_rows",
    "log_a_outside",
    "LOG_HALF",
    "ROWS_PER_CHUNK",
    "RUNS_PER_BATCH",
]

LOG_HALF = math.log(0.5)
ROWS_PER_CHUNK = 1 << 20  # (s, a) pairs handled at once (bounds memory)
RUNS_PER_BATCH = 1 << 22  # runs (or single m values) expanded at once


@dataclass(frozen=True)
class LogMasses:
    """The same bins in log space (own ``index``: bins whose linear masses underflow are kept here)."""

    index: np.ndarray
    log_p_mass: np.ndarray
    log_q_mass: np.ndarray
    log_p_infinity: float
    log_q_infinity: float
    log_dropped: float


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
    logs: LogMasses | None = None  # only from Bins(log_space=True)


def _log_bin_sums(shifted: np.ndarray, log_mass: np.ndarray, size: int) -> np.ndarray:
    """Per-bin log-sum-exp of ``log_mass`` over bins ``shifted`` (0 .. size - 1): -inf where empty."""
    out = np.full(size, -np.inf)
    bins, sums = binned_logsumexp(shifted, log_mass)
    out[bins] = sums
    return out


class Bins:
    """Accumulates (bin index, P-mass, Q-mass) triples into dense arrays that grow as needed; with
    ``log_space`` also their logs (``add``'s ``log_p`` / ``log_q``, else the logs of the masses)."""

    def __init__(self, log_space: bool = False):
        self.offset: int | None = None  # index of the first entry, set by the first _grow
        self.log_space = log_space
        self.p = np.zeros(0)
        self.q = np.zeros(0)
        self.lp = np.zeros(0)
        self.lq = np.zeros(0)

    def _grow(self, lo: int, hi: int) -> None:
        if self.offset is None:
            self.offset, self.p, self.q = lo, np.zeros(hi - lo + 1), np.zeros(hi - lo + 1)
            self.lp, self.lq = np.full(hi - lo + 1, -np.inf), np.full(hi - lo + 1, -np.inf)
        new_lo, new_hi = min(lo, self.offset), max(hi, self.offset + self.p.size - 1)
        if new_lo < self.offset or new_hi > self.offset + self.p.size - 1:
            start, size = self.offset - new_lo, new_hi - new_lo + 1
            arrays = []
            for old, fill in ((self.p, 0.0), (self.q, 0.0), (self.lp, -np.inf), (self.lq, -np.inf)):
                new = np.full(size, fill)
                new[start : start + old.size] = old
                arrays.append(new)
            self.offset, (self.p, self.q, self.lp, self.lq) = new_lo, arrays

    def add(self, index, p_mass, q_mass, log_p=None, log_q=None):
        index = np.asarray(index, dtype=np.int64)
        if index.size == 0:
            return
        self._grow(int(index.min()), int(index.max()))
        shifted = index - self.offset
        self.p += np.bincount(shifted, weights=p_mass, minlength=self.p.size)
        self.q += np.bincount(shifted, weights=q_mass, minlength=self.q.size)
        if self.log_space:
            with np.errstate(divide="ignore"):
                log_p = np.log(p_mass) if log_p is None else np.broadcast_to(log_p, index.shape)
                log_q = np.log(q_mass) if log_q is None else np.broadcast_to(log_q, index.shape)
            self.lp = np.logaddexp(self.lp, _log_bin_sums(shifted, np.asarray(log_p, float), self.lp.size))
            self.lq = np.logaddexp(self.lq, _log_bin_sums(shifted, np.asarray(log_q, float), self.lq.size))

    def view(
        self, interval, pessimistic, p_infinity, q_infinity, dropped, symmetric, label, log_extra=None
    ) -> BinnedView:
        """The BinnedView; ``log_extra``: (log p_infinity, log q_infinity, log dropped) for the log
        masses (default: the logs of the linear values)."""
        if self.offset is None:
            index = np.zeros(0, dtype=np.int64)
            p = q = np.zeros(0)
        else:
            keep = (self.p > 0) | (self.q > 0)
            index = np.flatnonzero(keep).astype(np.int64) + self.offset
            p, q = self.p[keep], self.q[keep]
        logs = None
        if self.log_space:
            with np.errstate(divide="ignore"):
                extra = log_extra or tuple(
                    math.log(v) if v > 0 else -math.inf for v in (p_infinity, q_infinity, dropped)
                )
            keep = np.isfinite(self.lp) | np.isfinite(self.lq)
            log_index = np.flatnonzero(keep).astype(np.int64) + (self.offset or 0)
            logs = LogMasses(log_index, self.lp[keep], self.lq[keep], *(float(v) for v in extra))
        return BinnedView(
            interval,
            pessimistic,
            index,
            p,
            q,
            float(p_infinity),
            float(q_infinity),
            float(dropped),
            symmetric,
            label,
            logs,
        )


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
    half = bernstein_half_width(np.sqrt(s) / 2.0, K)
    a_lo = np.clip(np.floor(s / 2.0 - half), 0.0, s)
    a_hi = s - a_lo  # symmetric about s / 2
    return s, log_w, a_lo, a_hi, float(log_outside(s_lo, s_hi, float(n_trials), log_r, log_1mr))


def log_a_outside(s, log_w, lo, hi, log_s_out):
    """log of Pr(S outside) + sum_s w(s) Pr(Bin(s, 1/2) outside [lo(s), hi(s)]), exact."""
    per_s = log_w + log_outside(lo, hi, s, LOG_HALF, LOG_HALF)
    return float(np.logaddexp(log_s_out, np.logaddexp.reduce(per_s)))
