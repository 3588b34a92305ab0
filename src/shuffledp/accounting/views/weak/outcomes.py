"""The weak adversary's outcomes: the (a, c, m) counts of its view and their windows, written once.

The view (module docstring of :mod:`shuffledp.accounting.views.weak.view`) is the pair

    P(a, c, m) = Mult_n(a, c, m) (a + c + m + beta a) / n,   Q(a, c, m) = Mult_n(a, c, m) (a + c + m + beta c) / n,

over the counts of x0 (a), x1 (c) and the other k - 2 values (m) among the blanket reports and the
differing user's report, with s = a + c ~ Bin(n, 2q), a | s ~ Bin(s, 1/2), m | s ~ Bin(n - s, rho). Its
privacy loss is L = log((s + m + beta a) / (s + m + beta c)): increasing in a, and moving towards 0 as
m grows.

:class:`WeakGrid` holds the windows (totals s with their log weights, symmetric a windows, m windows)
and the certified bound on the P-mass (and, the windows being symmetric, the Q-mass) they leave out.
Everything that enumerates the view reads it: the outcome stream (:func:`outcome_chunks`, the
reference of every derived quantity), the binned PLD's run reduction (:func:`~shuffledp.accounting.
views.weak.view.binned`) and the certified composed tail (:func:`blocks`, used by
:mod:`shuffledp.accounting.views.weak.tail`). The exact delta (:class:`~shuffledp.accounting.views.weak.
rows.WeakRows`) is an override with Bernstein windows of its own (it bounds what they leave out per
epsilon, with remainders that fall with delta); it is held to this stream by a test.
"""

from __future__ import annotations

import math

import numpy as np

from shuffledp._numerics import segment_logsumexp
from shuffledp.accounting.numerics.binomial import log_binom_pmf_loader, log_sf
from shuffledp.accounting.numerics.windows import bernstein_half_width, log_outside, sd_window
from shuffledp.accounting.params import KrrParams
from shuffledp.accounting.views.binned import LOG_HALF

__all__ = ["WeakGrid", "outcome_chunks", "blocks", "loss"]


class WeakGrid:
    """The windows of the weak view: totals s with log weights, symmetric a windows, M windows."""

    def __init__(self, n_users: float, krr: KrrParams, K: float):
        self.n_users, self.krr, self.rho = float(n_users), krr, krr.rho
        n = self.n_users
        two_q = math.exp(krr.log_2q)
        self.s_lo, self.s_hi = (float(v) for v in sd_window(n, two_q, K))
        self.s = np.arange(self.s_lo, self.s_hi + 1.0)
        self.log_w = log_binom_pmf_loader(self.s, n, krr.log_2q, krr.log_1m2q)
        half = bernstein_half_width(np.sqrt(self.s) / 2.0, K)
        self.a_lo = np.clip(np.floor(self.s / 2.0 - half), 0.0, self.s)
        self.a_hi = self.s - self.a_lo
        if self.rho > 0:
            self.m_lo, self.m_hi = sd_window(n - self.s, self.rho, K)
        else:
            self.m_lo = self.m_hi = np.zeros_like(self.s)

    def log_dropped(self, beta: float) -> float:
        """Certified bound on the P-mass (and, the windows being symmetric, the Q-mass) outside the windows."""
        n, krr, s, log_w = self.n_users, self.krr, self.s, self.log_w
        log_rho, rho = krr.log_rho, self.rho
        log_s_out = self.log_s_outside(beta)
        # A outside (s inside): <= w(s) Pr(A outside) (s + rho (n - s) + beta s) / n
        with np.errstate(divide="ignore"):  # s = 0 with rho = 0 (k = 2): no mass, log 0
            log_scale = np.log((s * (1.0 + beta) + rho * (n - s)) / n)
        log_a_out = log_w + log_outside(self.a_lo, self.a_hi, s, LOG_HALF, LOG_HALF) + log_scale
        # M outside (s, a inside): <= w(s) Pr(M outside) (1 + beta s / n)
        if rho > 0:
            log_m_out = (
                log_w
                + log_outside(self.m_lo, self.m_hi, n - s, log_rho, krr.log_1mrho)
                + np.log1p(beta * s / n)
            )
        else:
            log_m_out = np.full(s.shape, -np.inf)
        return float(np.logaddexp.reduce(np.concatenate([[log_s_out], log_a_out, log_m_out])))

    def log_s_outside(self, beta: float) -> float:
        """Certified bound on the P-mass (and the Q-mass) of the totals S outside the s window."""
        n, krr, s_lo, s_hi = self.n_users, self.krr, self.s_lo, self.s_hi
        log_2q, log_1m2q, log_rho, rho = krr.log_2q, krr.log_1m2q, krr.log_rho, self.rho
        # S outside: E[((1 + beta/2) S + rho (n - S)) / n; S outside] with E[S; S >= x] = n 2q Pr(Bin(n-1, 2q) >= x - 1)
        upper_tail = float(log_sf(s_hi, n - 1.0, log_2q, log_1m2q)) + log_2q if s_hi < n else -np.inf
        lower_tail = (
            math.log(max(s_lo - 1.0, 1.0) / n) + float(log_sf(n - s_lo + 1.0, n, log_1m2q, log_2q))
            if s_lo > 0
            else -np.inf
        )
        return float(
            np.logaddexp(
                math.log1p(beta / 2.0) + np.logaddexp(upper_tail, lower_tail),
                (log_rho if rho > 0 else -np.inf) + float(log_outside(s_lo, s_hi, n, log_2q, log_1m2q)),
            )
        )

    def pairs(self) -> int:
        """Number of (s, a) pairs inside the windows."""
        return int(np.sum(self.a_hi - self.a_lo + 1.0))

    def m_values(self) -> int:
        """Number of m values of the widest M window."""
        return int(np.max(self.m_hi - self.m_lo)) + 1

    def log_m_pmf(self, i: int) -> tuple[np.ndarray, np.ndarray]:
        """(m values, log Pr(M = m | s)) over the M window of the i-th total s."""
        s, krr = self.s[i], self.krr
        m = np.arange(self.m_lo[i], self.m_hi[i] + 1.0)
        if self.rho > 0:
            return m, log_binom_pmf_loader(m, self.n_users - s, krr.log_rho, krr.log_1mrho)
        return m, np.zeros(m.shape)

    def log_a_pmf(self, i: int) -> tuple[np.ndarray, np.ndarray]:
        """(a values, log w(s) + log Bin(s, 1/2)(a) - log n) over the a window of the i-th total s."""
        s = self.s[i]
        a = np.arange(self.a_lo[i], self.a_hi[i] + 1.0)
        return a, self.log_w[i] + log_binom_pmf_loader(a, s, LOG_HALF, LOG_HALF) - math.log(self.n_users)


def loss(s, a, m, beta: float):
    """Privacy loss log((s + m + beta a) / (s + m + beta c)), c = s - a, without cancellation (0 where
    both masses vanish: s = m = 0)."""
    s, a, m = np.broadcast_arrays(*(np.asarray(v, dtype=float) for v in (s, a, m)))
    d = 2.0 * a - s
    base = s + m + beta * np.minimum(a, s - a)
    with np.errstate(divide="ignore", invalid="ignore"):
        value = np.sign(d) * np.log1p(beta * np.abs(d) / base)
    return np.where(d == 0, 0.0, value)


def _log_linear(log_mass_a, weight, log_m_part):
    """log(weight x e^log_mass_a + e^log_m_part) elementwise, weight >= 0 (0 gives log_m_part)."""
    with np.errstate(divide="ignore"):
        return np.logaddexp(np.log(weight) + log_mass_a, log_m_part)


def outcome_chunks(grid: WeakGrid, beta: float):
    """The REMOVE direction's outcomes (s, a, m) inside the windows, one chunk per total s:
    (log P, log Q) of each outcome, in log space (masses never underflow)."""
    for i, s in enumerate(grid.s):
        a, log_a = grid.log_a_pmf(i)
        m, log_m = grid.log_m_pmf(i)
        base = log_a[:, None] + log_m[None, :]
        with np.errstate(divide="ignore"):
            log_p = base + np.log(s + m[None, :] + beta * a[:, None])
            log_q = base + np.log(s + m[None, :] + beta * (s - a)[:, None])
        yield log_p.ravel(), log_q.ravel()


def _m_blocks(m: np.ndarray, log_m: np.ndarray, count: int):
    """The M window cut into at most ``count`` blocks of consecutive m: (first m, last m, log sum of pmf,
    log sum of m pmf) per block, each sum of positive terms formed in log space (no differences)."""
    edges = np.unique(np.linspace(0, m.size, min(count, m.size) + 1).astype(np.int64))
    starts = edges[:-1]
    with np.errstate(divide="ignore"):
        log_mm = log_m + np.log(m)
    if starts.size == m.size:  # one block per m value
        return m, m, log_m, log_mm
    return m[starts], m[edges[1:] - 1], segment_logsumexp(log_m, starts), segment_logsumexp(log_mm, starts)


def blocks(grid: WeakGrid, beta: float, m_blocks: int):
    """The outcomes grouped into blocks {(s, a)} x {a run of consecutive m}, per total s: yields
    (largest loss, smallest loss, log P-mass, log Q-mass) of each block (arrays). The losses are the
    block's end points (the loss is monotone in m for fixed s, a); the masses are exact sums of positive
    terms in log space: P = w(s) Bin(s, 1/2)(a) / n x ((s + beta a) sum pmf(m) + sum m pmf(m)).
    ``m_blocks`` >= the window's m values gives one block per outcome (every loss exact)."""
    for i, s in enumerate(grid.s):
        a, log_a = grid.log_a_pmf(i)
        m, log_m = grid.log_m_pmf(i)
        first, last, s0, s1 = _m_blocks(m, log_m, m_blocks)
        ends = np.stack([loss(s, a[:, None], first[None, :], beta), loss(s, a[:, None], last[None, :], beta)])
        log_p = log_a[:, None] + _log_linear(s0[None, :], (s + beta * a)[:, None], s1[None, :])
        log_q = log_a[:, None] + _log_linear(s0[None, :], (s + beta * (s - a))[:, None], s1[None, :])
        yield ends.max(axis=0).ravel(), ends.min(axis=0).ravel(), log_p.ravel(), log_q.ravel()
