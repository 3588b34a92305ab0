"""The weak adversary's exact sum, row by row (used by :class:`shuffledp.accounting.views.weak.view.WeakView`).

Rows are the totals S of blanket reports on {x0, x1} (with A | S and M | S); each row's window, its
certified remainders (Bernstein / Chernoff / geometric bounds of the left-out mass, all *added*: the
result is an UPPER bound) and the chunked evaluation of one epsilon (:meth:`RowSums.log_parts`) or of
many sharing per-row tables (:meth:`RowSums.log_parts_many`, tables in
:mod:`shuffledp.accounting.views.weak.tables`). The formulas and their derivation are in the module
docstring of :mod:`shuffledp.accounting.views.weak.view` and in docs/decisions/weak-adversary.md.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from shuffledp._numerics import log1mexp, logsumexp, segment_logsumexp
from shuffledp.accounting.numerics.binomial import (
    high_part,
    log_excess_above_bound,
    log_excess_below,
    log_excess_below_bound,
    log_pmf,
    log_sf,
    log_sf_bound,
    summed_directly,
)
from shuffledp.accounting.numerics.chernoff import ChernoffBound, log_low_range
from shuffledp.accounting.numerics.windows import bernstein_window
from shuffledp.accounting.params import KrrParams
from shuffledp.accounting.views.weak.tables import (
    TABLE_MAX_WIDTH,
    high_from_tables,
    middles_from_tables,
    table_cells,
    tables_in_range,
)

__all__ = ["WeakRows", "RowSums", "LOG_NEGLIGIBLE"]

_CHUNK = 400_000  # (s, a) pairs evaluated at once (bounds memory)
LOG_NEGLIGIBLE = math.log(1e-11)  # a certified remainder below this fraction of the sum is negligible
_LOG_PRUNE = 60.0  # rows whose cheap certified bound is this far below the largest are bounded, not summed
_K_ROW_MIN = 4.0  # narrowest M window of a row (in the K of bernstein_window)
#: the middle ranges are summed from tables when these have at most this many cells per (s, a) pair, else
#: pair by pair (measured on Wang et al.'s grid: a table cell costs ~20-30 ns, a pair's
#: incomplete-beta function ~1 us); only the speed depends on it
_CELLS_PER_PAIR = 40


def _log_s_tail_mass(n, lo, hi, logs, log_weight_per_s, log_upper_row=None):
    """Certified bound on n delta restricted to totals S outside [lo, hi] (summed over both tails).

    The summand never exceeds P, and the P-mass at s is Bin(n, 2q)(s) (s (1 + beta / 2) + (n - s) rho) / n
    <= Bin(s) (s (1 + beta / 2) / n + rho); with E[S; S >= x] = n 2q Pr(Bin(n - 1, 2q) >= x - 1) both
    tails are exact binomial tails (returned multiplied by n, like the rows). ``log_weight_per_s`` =
    log(2q (1 + beta / 2)). ``log_upper_row(s)``, if given, is a certified bound on the rows that is
    non-increasing in s; for the upper tail the smaller of the two bounds is used.
    """
    l2q, l1m2q, lrho = logs.log_2q, logs.log_1m2q, logs.log_rho
    log_n = math.log(n)
    pieces = []
    if hi < n:  # S >= hi + 1
        mass = (
            float(
                np.logaddexp(
                    log_weight_per_s + float(log_sf(hi, n - 1, l2q, l1m2q)),
                    lrho + float(log_sf(hi + 1, n, l2q, l1m2q)),
                )
            )
            + log_n
        )
        if log_upper_row is not None:
            mass = min(mass, log_upper_row(hi + 1) + float(log_sf(hi + 1, n, l2q, l1m2q)))
        pieces.append(mass)
    if lo > 0:  # S <= lo - 1: Pr(n - S >= n - lo + 1)
        if lo >= 2:
            pieces.append(log_weight_per_s + float(log_sf(n - 1 - (lo - 2), n - 1, l1m2q, l2q)) + log_n)
        pieces.append(lrho + float(log_sf(n - lo + 1, n, l1m2q, l2q)) + log_n)
    return float(logsumexp(np.array(pieces))) if pieces else -np.inf


def _log_low_geometric(tau, N, s, b, log_rho, log_1mrho, log_spacing):
    """Certified bound on log sum_{a <= b} Pr(Bin(s, 1/2) = a) E[(tau - (b - a) L - M)_+], M ~ Bin(N, rho),
    L = e^log_spacing (the low range of a row; tau = tau(b) below the mean of M), +inf where it does not apply.

    With phi = log((N - tau) rho / (tau (1 - rho))) > 0, E[(t - M)_+] <= e^(phi t - 1) E[e^(-phi M)] / phi,
    which at t = tau is e^(-N KL(tau / N || rho) - 1) / phi and falls by e^(-phi L) per step of a; the
    binomial pmf rises by at most r0 = b / (s - b + 1) per step down from b. So the sum is at most the
    first bound times pmf(b) / (1 - r0 e^(-phi L)) when r0 e^(-phi L) < 1.
    """
    from scipy.special import xlogy

    out = np.full(tau.shape, np.inf)
    ok = (tau > 0) & (tau < N * math.exp(log_rho))
    if not ok.any():
        return out
    t, n_, s_, b_ = tau[ok], N[ok], s[ok], b[ok]
    rest = n_ - t
    phi = np.log(rest) + log_rho - np.log(t) - log_1mrho
    kl = xlogy(t, t) - t * log_rho + xlogy(rest, rest) - rest * log_1mrho - xlogy(n_, n_)  # N KL >= 0
    log_ratio = np.log(b_) - np.log(s_ - b_ + 1.0) - phi * math.exp(log_spacing)
    good = (phi > 0) & (log_ratio < 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        value = (
            log_pmf(b_, s_, math.log(0.5), math.log(0.5))
            - np.maximum(kl, 0.0)
            - 1.0
            - np.log(phi)
            - log1mexp(np.minimum(log_ratio, -1e-300))
        )
    out[ok] = np.where(good, value, np.inf)
    return out


class ExcessMemo:
    """The expected excesses log E[(tau - M)_+] of the middle ranges' pairs (s, a) computed at the most
    recent epsilon, kept so that the next window K of the widening loop (same epsilon) reads back the pairs
    it shares with the previous one instead of computing them again (incomplete beta functions, most of an
    evaluation's time). One memo per setting: the weak view hands its own to the rows of every K. The
    state is one tuple, replaced whole, so a reader never pairs one epsilon with another's values."""

    def __init__(self):
        self._known = (None, np.empty(0, dtype=np.int64), np.empty(0))

    def find(self, eps, keys):
        """(found, values): which pair ``keys`` are known at ``eps``, and their values (garbage elsewhere)."""
        known_eps, known, values = self._known
        if eps != known_eps or known.size == 0:
            return np.zeros(keys.shape, dtype=bool), np.empty(keys.shape)
        at = np.minimum(np.searchsorted(known, keys), known.size - 1)
        return known[at] == keys, values[at]

    def add(self, eps, new):
        """Keep the pairs computed at ``eps`` (``new``: (keys, values) arrays), with those already known there."""
        if not new:
            return
        keys, values = np.concatenate([k for k, _ in new]), np.concatenate([v for _, v in new])
        known_eps, known, known_values = self._known
        if eps == known_eps:
            keys, values = np.concatenate([known, keys]), np.concatenate([known_values, values])
        order = np.argsort(keys, kind="stable")
        self._known = (eps, keys[order], values[order])


@dataclass
class EpsilonRows:
    """The rows' quantities at one epsilon (:meth:`WeakRows.prepare`), filled in as the evaluation goes:
    lambda, nu, c_s per s and their logs; per row the high range's start ``a_hi``, its sum ``high``, the
    middle range's start ``a_start`` and size ``counts``, the certified remainder ``log_err``, a cheap
    upper bound ``log_upper``; the table path adds ``log_a_start`` and ``log_mid_size``."""

    eps: float
    log_lam: float
    lam: float
    nu: float
    c_per_s: float
    a_hi: np.ndarray
    t_gap: np.ndarray  # t* - s / 2, exact where t* is near s / 2
    s_gap: np.ndarray  # s - t*, exact where t* is near s
    g: float  # e^eps0 - e^eps, formed without the difference
    degenerate: bool
    high: np.ndarray | None = None
    log_err: np.ndarray | None = None
    counts: np.ndarray | None = None
    a_start: np.ndarray | None = None
    log_upper: np.ndarray | None = None
    log_a_start: np.ndarray | None = None
    log_mid_size: np.ndarray | None = None


class WeakRows:
    """The epsilon-independent part of the weak-adversary sum for one (n, k, eps0, K): the window of
    totals s, their weights, the M windows of the rows, and each epsilon's preparation (:meth:`prepare`);
    their sums are :attr:`sums` (:class:`RowSums`: one epsilon, or many at once sharing tables of M's
    cumulative laws between them)."""

    def __init__(
        self,
        *,
        n_users: int,
        k: int,
        epsilon_local: float,
        K: float,
        logs: KrrParams,
        memo: ExcessMemo | None = None,
        tilts: tuple = (),
    ):
        n = n_users
        self.n_users, self.k, self.epsilon_local, self.K, self.logs = (
            n,
            k,
            float(epsilon_local),
            float(K),
            logs,
        )
        self.memo = ExcessMemo() if memo is None else memo  # shared by the rows of every K of one setting
        self.tilts = tuple(tilts)
        # the windows of S: around its own law, or the union of the windows around the tilted laws of
        # ``tilts`` (:meth:`ChernoffBound.tilt`: where the summand's mass is); any window is certified (what it
        # leaves out is bounded and added), centring it only makes that remainder small at a smaller K
        laws = [(t[0], t[1]) for t in self.tilts] or [(logs.log_2q, logs.log_1m2q)]
        ends = np.array([bernstein_window(n, lp, l1mp, K) for lp, l1mp in laws], dtype=float)
        self.s_lo, self.s_hi = float(ends[:, 0].min()), float(ends[:, 1].max())
        s = np.arange(int(self.s_lo), int(self.s_hi) + 1, dtype=float)
        self.s = s
        self.log_w = log_pmf(s, n, logs.log_2q, logs.log_1m2q)
        # the rows' weight under the (most favourable) tilted law sets the M windows' narrowing below; a window
        # only decides what is summed, so its Gaussian form serves (minus the smallest squared z-score)
        if self.tilts:
            means, sds = (
                np.array([n * math.exp(lp) for lp, _ in laws]),
                np.array([max(0.5, math.sqrt(n * math.exp(lp + l1mp))) for lp, l1mp in laws]),
            )
            log_w_tilted = -np.min(0.5 * ((s[:, None] - means[None, :]) / sds[None, :]) ** 2, axis=1)
        else:
            log_w_tilted = self.log_w
        self.N_m = n - s
        self.rho = math.exp(logs.log_rho)
        self.mu_m = self.N_m * self.rho
        self.beta = math.expm1(self.epsilon_local)
        self.s_kappa = s * (0.5 * self.beta + 1.0)
        lrho, l1mrho = logs.log_rho, logs.log_1mrho
        if self.rho == 0.0:
            self.m_lo = self.m_hi = self.mu_m
            self.log_below_mlo = None
        else:
            # rows far out in S carry little weight, so their M window may be narrower: K_row^2 / 2 = K^2 / 2
            # minus the row's log-weight deficit (a disc instead of a square in the (S, M) plane; what the
            # narrower windows leave out is bounded and counted in the remainder like everything else)
            K_row = np.sqrt(
                np.maximum(K * K - 2.0 * (float(np.max(log_w_tilted)) - log_w_tilted), _K_ROW_MIN**2)
            )
            self.m_lo, self.m_hi = bernstein_window(self.N_m, lrho, l1mrho, K_row)
            for t in self.tilts:
                # the tilt lowers M's law (r < rho); the window reaches down to cover it. Its top stays at
                # least M's own window's top: the high range needs m_hi >= E[M] (a_hi >= t*)
                if t[2] > -np.inf:
                    self.m_lo = np.minimum(self.m_lo, bernstein_window(self.N_m, t[2], t[3], K_row)[0])
            self.log_below_mlo = log_sf_bound(
                self.N_m - self.m_lo + 1.0, self.N_m, l1mrho, lrho
            )  # Pr(M <= m_lo - 1)
        self.a_bot, _ = bernstein_window(s, math.log(0.5), math.log(0.5), K)
        self.log_weight_per_s = float(np.logaddexp(logs.log_2q, logs.log_beta + logs.log_2q - math.log(2.0)))
        self._fit: bool | None = None  # tables_fit, once computed
        self.sums = RowSums(self)

    # ------------------------------------------------------------------ one epsilon, in three steps
    def prepare(self, eps: float, high: bool = True, theta: float = 0.0) -> EpsilonRows:
        """Everything of one epsilon except the middle ranges' sums (see the module docstring)."""
        logs, s = self.logs, self.s
        log_lam = logs.log_beta + float(np.logaddexp(0.0, eps))  # lambda = beta (1 + e^eps)
        lam, nu = math.exp(log_lam), math.expm1(eps)
        c_per_s = math.expm1(eps + self.epsilon_local)  # e^(eps + eps0) - 1
        lrho, l1mrho = logs.log_rho, logs.log_1mrho
        half = math.log(0.5)
        degenerate = self.rho == 0.0 or nu == 0.0  # M plays no role: E[(.)_+] is exact in closed form

        # a at which tau(a) = m, a_at(m) = (nu m + c_s) / lambda, in two forms: from s / 2 up,
        # s / 2 + nu (m + s (beta + 2) / 2) / lambda (c_s / lambda = s / 2 + nu s (beta + 2) / (2 lambda)),
        # exact where a_at is near s / 2 (small eps); and from s down, s - (s g - nu m) / lambda with
        # g = e^eps0 - e^eps (lambda s - c_s = s g), exact where a_at is near s (large eps: s - a_at ~ s e^-eps,
        # which the first form loses once e^-eps nears 2^-52)
        g = (
            math.exp(self.epsilon_local) * -math.expm1(eps - self.epsilon_local)
            if eps < self.epsilon_local
            else 0.0
        )
        m_lo, m_hi = (self.mu_m, self.mu_m) if degenerate else (self.m_lo, self.m_hi)
        up_hi, down_hi = self._from_half(m_hi, nu, lam), self._from_top(m_hi, g, nu, lam)
        top = up_hi > down_hi  # a_at(m_hi) in the upper half of [s/2, s]: the second form
        a_hi = np.clip(np.where(top, s - np.floor(down_hi), np.ceil(s / 2.0 + up_hi)), 0.0, s + 1.0)
        t_gap = self._from_half(self.mu_m, nu, lam)  # t* - s / 2
        s_gap = self._from_top(self.mu_m, g, nu, lam)  # s - t*
        t_star = s / 2.0 + t_gap
        # a_hi - t*, in the form that is exact at each row (it feeds the series when the closed form cancels)
        gap = np.where(t_gap > s_gap, s_gap - (s - a_hi), (a_hi - s) + s * 0.5 - t_gap)
        # high range: tau(a) = (lambda a - c_s) / nu >= m_hi <=> a >= a_hi (>= s / 2); there
        # E_M[(lambda a - c_s - nu M)_+] = lambda (a - t*) + nu E[(M - tau)_+], t* = (c_s + nu E[M]) / lambda
        prep = EpsilonRows(
            eps=eps,
            log_lam=log_lam,
            lam=lam,
            nu=nu,
            c_per_s=c_per_s,
            a_hi=a_hi,
            t_gap=t_gap,
            s_gap=s_gap,
            g=g,
            degenerate=degenerate,
            high=log_lam + high_part(a_hi, t_star, s, half, half, t_gap, gap) if high else None,
        )
        if degenerate:
            prep.log_err = np.full(s.shape, -np.inf)
            prep.counts = np.zeros(s.shape, dtype=np.int64)
            return prep
        N_m = self.N_m
        # remainder of the high range: nu Pr(A >= a_hi) E[(M - m_hi)_+]
        err = (
            math.log(nu) + log_sf_bound(a_hi, s, half, half) + log_excess_above_bound(m_hi, N_m, lrho, l1mrho)
        )
        up_lo, down_lo = self._from_half(m_lo, nu, lam), self._from_top(m_lo, g, nu, lam)
        a_low = (
            np.where(up_lo > down_lo, s - np.ceil(down_lo), np.floor(s / 2.0 + up_lo)) + 1.0
        )  # first a with tau > m_lo
        a_start = np.clip(np.maximum(a_low, self.a_bot), 0.0, a_hi)
        self._add_low_range(err, a_start, nu, lam, log_lam, c_per_s, theta)
        # cheap certified row bounds: (tau - M)_+ <= (tau - m_lo)_+ + tau_+ 1{M < m_lo}
        t_lo, rest_lo = self._a_at(up_lo, down_lo)
        t_0, rest_0 = self._a_at(self._from_half(0.0, nu, lam), self._from_top(0.0, g, nu, lam))
        log_upper = (
            log_lam
            + self.log_w
            + np.logaddexp(
                log_excess_above_bound(t_lo, s, half, half, rest_lo),
                self.log_below_mlo + log_excess_above_bound(t_0, s, half, half, rest_0),
            )
        )
        prep.log_err, prep.a_start, prep.a_hi = err, a_start, a_hi
        prep.counts, prep.log_upper = (a_hi - a_start).astype(np.int64), log_upper
        return prep

    def _add_low_range(self, err, a_start, nu, lam, log_lam, c_per_s, theta) -> None:
        """Add to ``err`` (per row) the certified bound on the low range a < a_start: each term is at most
        nu E[(tau(a_start - 1) - M)_+] (non-decreasing in a), times Pr(A < a_start) or summed as a geometric
        series; with windows centred on a tilted law, where the low ranges lie in A's tail, also the row's
        tilted Chernoff bound (:func:`~shuffledp.accounting.numerics.chernoff.log_low_range`), the smallest."""
        s, half, beta = self.s, math.log(0.5), self.beta
        lrho, l1mrho = self.logs.log_rho, self.logs.log_1mrho
        below = a_start - 1.0
        with np.errstate(over="ignore"):  # nu ~ eps0 -> 0: tau overflows to +-inf, which the masks below read
            tau_below = beta * (2.0 * below - s) / nu - (beta * (s - below) + s)
        has_low = (below >= 0) & (tau_below > 0)
        if not has_low.any():
            return
        tau_b, N_b, s_b, b = tau_below[has_low], self.N_m[has_low], s[has_low], below[has_low]
        flat = log_excess_below_bound(tau_b, N_b, lrho, l1mrho) + log_sf_bound(s_b - b, s_b, half, half)
        low = math.log(nu) + np.minimum(
            flat, _log_low_geometric(tau_b, N_b, s_b, b, lrho, l1mrho, log_lam - math.log(nu))
        )
        if self.tilts:
            low = np.minimum(low, log_low_range(s_b, b, self.n_users, theta, lam, c_per_s, nu, lrho, l1mrho))
        err[has_low] = np.logaddexp(err[has_low], low)

    def _from_half(self, m, nu, lam):
        """a_at(m) - s / 2 (see :meth:`prepare`)."""
        return nu * (m + self.s_kappa) / lam

    def _from_top(self, m, g, nu, lam):
        """s - a_at(m) (see :meth:`prepare`)."""
        return (self.s * g - nu * m) / lam

    def _a_at(self, up, down):
        """(a_at, s - a_at), each from the form that is exact at each row (see :meth:`prepare`)."""
        s = self.s
        top = up > down
        a_at = np.where(top, s - down, s / 2.0 + up)
        return a_at, np.where(top, down, s - a_at)

    def tau(self, a, s, nu):
        # tau = (lambda a - c_s) / nu = beta (2a - s) / nu - (beta (s - a) + s), stable for small eps
        return self.beta * (2.0 * a - s) / nu - (self.beta * (s - a) + s)

    def middle_pairs(self, prep, group):
        """(row of each pair, a, tau, log Bin(s, 1/2)(a), starts of the rows) of the middle ranges of rows
        ``group``: a from a_start to a_hi - 1. log Bin(s, 1/2)(a) along each row: one saddle-point value
        per row, then the exact ratios (s - a + 1) / a (consecutive a; rounding ~1e-16 per step)."""
        half = math.log(0.5)
        cnt = prep.counts[group]
        a0, sk = prep.a_start[group], self.s[group]
        seg = np.repeat(np.arange(group.size), cnt)
        offset = np.arange(int(cnt.sum())) - np.repeat(np.cumsum(cnt) - cnt, cnt)
        a = a0[seg] + offset
        sg = sk[seg]
        tau = self.tau(a, sg, prep.nu)
        starts = np.concatenate([[0], np.cumsum(cnt)[:-1]])
        step = np.where(offset > 0, np.log(sg - a + 1.0) - np.log(np.maximum(a, 1.0)), 0.0)
        running = np.cumsum(step)
        running -= np.repeat(running[starts], cnt)
        anchors = prep.log_a_start
        anchors = log_pmf(a0, sk, half, half) if anchors is None else anchors[group]
        log_a = np.repeat(anchors, cnt) + running
        return seg, tau, log_a, starts

    def tables_fit(self) -> bool:
        """Whether :meth:`RowSums.log_parts_many` may use tables: M windows narrow enough for the rounding margin, and
        tables anchored anywhere in them in range (:func:`~shuffledp.accounting.views.weak.tables.tables_in_range`:
        pmf ratios within e^600, which a Gaussian-like window reaches near K = 34)."""
        if self.rho == 0.0 or float(np.max(self.m_hi - self.m_lo)) + 1.0 > TABLE_MAX_WIDTH:
            return False
        if self._fit is None:
            self._fit = tables_in_range(
                self.N_m, self.m_lo, self.m_hi, self.logs.log_rho, self.logs.log_1mrho
            )
        return self._fit


class RowSums:
    """The sums of the rows of one :class:`WeakRows` at one epsilon (:meth:`log_parts`) or at many at once
    (:meth:`log_parts_many`), each as (log of the summed delta, log of the certified bound on what was
    dropped): the middle ranges term by term or from tables, the pruning of negligible rows, the tails of S."""

    def __init__(self, rows: WeakRows):
        """The sums of ``rows``.

        Args:
            rows: the rows (their windows and per-epsilon preparation).
        """
        self.rows = rows

    def _middle_direct(self, prep, rows, mid):
        """Middle ranges of ``rows`` (with a non-empty range) term by term with the exact expected excess."""
        counts = prep.counts[rows]
        cum = np.cumsum(counts)
        boundaries = np.searchsorted(cum, np.arange(_CHUNK, int(cum[-1]), _CHUNK))
        new: list = []
        for group in np.split(rows, boundaries + 1):
            if group.size == 0:
                continue
            seg, tau, log_a, starts = self.rows.middle_pairs(prep, group)
            terms = log_a + self._excess(prep, group, seg, tau, new)
            mid[group] = math.log(prep.nu) + segment_logsumexp(terms, starts)
        self.rows.memo.add(prep.eps, new)

    def _excess(self, prep, group, seg, tau, new):
        """log E[(tau - M)_+] of the pairs (s, a) of ``group`` (``seg``: their rows), read back from
        :attr:`memo` where an earlier window K of the same epsilon computed them (the same
        function of the same tau and N: the same bits); the pairs computed here are appended to ``new``.
        Thresholds log_excess_below sums directly (tau <= its small limit) are always recomputed
        together, so that they are summed over the same width as before."""
        lrho, l1mrho = self.rows.logs.log_rho, self.rows.logs.log_1mrho
        N = self.rows.N_m[group][seg]
        cnt = prep.counts[group]
        a = prep.a_start[group][seg] + (np.arange(seg.size) - np.repeat(np.cumsum(cnt) - cnt, cnt))
        keys = self.rows.s[group][seg].astype(np.int64) * np.int64(self.rows.n_users + 1) + a.astype(np.int64)
        hit, values = self.rows.memo.find(prep.eps, keys)
        hit &= ~summed_directly(tau, N)
        out = np.empty(tau.shape)
        out[hit] = values[hit]
        todo = ~hit
        if todo.any():
            out[todo] = log_excess_below(tau[todo], N[todo], lrho, l1mrho)
            new.append((keys[todo], out[todo]))
        return out

    def _finish(self, prep, mid, chernoff) -> tuple[float, float]:
        """(log summed delta, log certified remainder) from the rows' parts."""
        n, logs = self.rows.n_users, self.rows.logs
        log_rows = prep.high if mid is None else np.logaddexp(prep.high, mid)
        log_err = prep.log_err
        log_main = float(logsumexp(log_rows + self.rows.log_w)) - math.log(n)
        eps, lam, c_per_s, log_lam = prep.eps, prep.lam, prep.c_per_s, prep.log_lam
        # Upper tail of S: a row is at most E[(lambda A - c_s)_+] <= lambda E[(A - theta s)_+] with
        # theta = (e^(eps + eps0) - 1) / lambda > 1/2; Chernoff (x_+ <= e^(phi x - 1) / phi) gives
        # row(s) <= lambda e^-1 / phi * exp(-s KL(theta || 1/2)), non-increasing in s.
        theta = c_per_s / lam
        one_m_theta = prep.g / lam  # 1 - theta = (e^eps0 - e^eps) / lambda, without the difference
        log_upper_row = None
        phi = math.log(theta) - math.log(one_m_theta) if theta > 0.5 and one_m_theta > 0.0 else 0.0
        if (
            phi > 0.0
        ):  # theta > 1/2 read from both forms (each rounded on its own: at eps0 ~ 1e-12 they may disagree)
            kl = theta * math.log(2.0 * theta) + one_m_theta * math.log(2.0 * one_m_theta)
            log_upper_row = lambda s0: log_lam - 1.0 - math.log(phi) - s0 * kl
        # totals S outside the window: the MGF bound on E[X_+ 1{S outside}] (it falls with delta, unlike the
        # P-mass bound of _log_s_tail_mass, which is used only where it is smaller)
        log_tails = float(np.logaddexp(*chernoff.log_tails(eps, self.rows.s_lo, self.rows.s_hi)))
        if log_tails - log_main > LOG_NEGLIGIBLE:
            log_tails = min(
                log_tails,
                _log_s_tail_mass(
                    n,
                    int(self.rows.s_lo),
                    int(self.rows.s_hi),
                    logs,
                    self.rows.log_weight_per_s,
                    log_upper_row,
                )
                - math.log(n),
            )
        log_dropped = float(
            np.logaddexp(float(logsumexp(log_err + self.rows.log_w)) - math.log(n), log_tails)
        )
        return log_main, log_dropped

    def log_parts(self, eps: float, chernoff: ChernoffBound) -> tuple[float, float]:
        """(log of the summed delta, log of the certified bound on everything dropped) at one epsilon.

        Rows are totals s of S; a row is summed exactly when a cheap certified upper bound on it
        (Chernoff bounds only) is within e^60 of the largest such bound, otherwise that bound is added
        to the remainder."""
        prep = self.rows.prepare(eps, theta=chernoff.theta(eps) if self.rows.tilts else 0.0)
        if prep.degenerate:
            return self._finish(prep, None, chernoff)
        mid = np.full(self.rows.s.shape, -np.inf)
        log_upper, counts = prep.log_upper, prep.counts
        # prepare() sets these at a non-degenerate epsilon
        assert log_upper is not None and counts is not None, "set by prepare()"
        assert prep.high is not None and prep.log_err is not None, "set by prepare()"
        # rows are summed exactly in decreasing order of their bound; a row whose bound is e^-60 below the
        # largest exact row found is not summed, its bound goes to the remainder instead
        order = np.argsort(-log_upper)
        first = order[: max(64, order.size // 16)]
        if counts[first].sum():
            self._middle_direct(prep, first[counts[first] > 0], mid)
        exact = np.logaddexp(prep.high, mid)
        threshold = float(np.max(exact[first] + self.rows.log_w[first])) - _LOG_PRUNE
        rest = order[first.size :]
        second = rest[log_upper[rest] >= threshold]
        if counts[second].sum():
            self._middle_direct(prep, second[counts[second] > 0], mid)
        pruned = rest[log_upper[rest] < threshold]
        prep.log_err[pruned] = log_upper[pruned] - self.rows.log_w[pruned]
        mid[pruned] = -np.inf
        prep.high[pruned] = -np.inf
        return self._finish(prep, mid, chernoff)

    def _prune_joint(self, preps) -> list:
        """Rows pruned as in :meth:`log_parts`, with the largest *high part* as the reference (a lower
        value than the exact row: fewer rows are pruned, all valid); the epsilons that still have a
        middle range to sum."""
        active = []
        for p in preps:
            if p.degenerate:
                continue
            threshold = float(np.max(p.high + self.rows.log_w)) - _LOG_PRUNE
            pruned = p.log_upper < threshold
            p.log_err[pruned] = p.log_upper[pruned] - self.rows.log_w[pruned]
            p.high[pruned] = -np.inf
            p.counts[pruned] = 0
            if p.counts.sum():
                active.append(p)
        return active

    def log_parts_many(self, epsilons, chernoff: ChernoffBound):
        """[(log summed delta, log certified remainder)] at each epsilon, the high and middle ranges of all
        of them evaluated together from per-row tables (:mod:`shuffledp.accounting.views.weak.tables`)
        built once per row for the union of what the epsilons need (instead of one incomplete-beta
        function per (epsilon, row, a)). The tables' rounding is added to the remainder."""
        if not self.rows.tables_fit():
            return [self.log_parts(float(e), chernoff) for e in epsilons]
        preps = [
            self.rows.prepare(
                float(e), high=False, theta=chernoff.theta(float(e)) if self.rows.tilts else 0.0
            )
            for e in epsilons
        ]
        left = high_from_tables(self.rows, preps)
        if left:
            half = math.log(0.5)
            for p in left:
                gap = np.where(
                    p.t_gap > p.s_gap,
                    p.s_gap - (self.rows.s - p.a_hi),
                    (p.a_hi - self.rows.s) + self.rows.s * 0.5 - p.t_gap,
                )
                p.high = p.log_lam + high_part(
                    p.a_hi, self.rows.s / 2.0 + p.t_gap, self.rows.s, half, half, p.t_gap, gap
                )
        mids = [None if p.degenerate else np.full(self.rows.s.shape, -np.inf) for p in preps]
        active = self._prune_joint(preps)
        if active and table_cells(self.rows, active) <= _CELLS_PER_PAIR * sum(
            int(p.counts.sum()) for p in active
        ):
            middles_from_tables(self.rows, preps, mids, active)
        elif active:  # fewer pairs than the tables have cells: one incomplete-beta function per pair instead
            chosen = {id(p) for p in active}
            for p, mid in zip(preps, mids):
                if id(p) in chosen:
                    assert p.counts is not None, "an active epsilon is not degenerate (_prune_joint)"
                    self._middle_direct(p, np.flatnonzero(p.counts > 0), mid)
        return [self._finish(p, m, chernoff) for p, m in zip(preps, mids)]
