"""The weak adversary's view summed row by row (the machinery of :mod:`shuffledp.accounting.accountants.weak_adversary`).

Rows are the totals S of blanket reports on {x0, x1} (with A | S and M | S); each row's window, its
certified remainders (Bernstein / Chernoff / geometric bounds of the left-out mass, all *added*: the
result is an UPPER bound), the per-row tables shared by many epsilons, and the chunked evaluation.
Split from the accountant's module so each stays readable; the formulas and their derivation are in
that module's docstring and in docs/reproduction-notes.md ("Weak vs strong adversary").
"""

from __future__ import annotations
import math
import numpy as np
from shuffledp._numerics import log1mexp, logsumexp
from shuffledp.accounting.numerics.chernoff import ChernoffBound
from shuffledp.accounting.params import KrrParams
from shuffledp.accounting.numerics.binomial import (
    high_part,
    log_excess_above_bound,
    log_excess_below,
    log_excess_below_bound,
    log_pmf,
    log_sf,
    log_sf_bound,
)

_CHUNK = 400_000  # (s, a) pairs evaluated at once (bounds memory)


_LOG_NEGLIGIBLE = math.log(1e-11)


_LOG_PRUNE = 60.0  # rows whose cheap certified bound is this far below the largest are bounded, not summed


_K_ROW_MIN = 4.0  # narrowest M window of a row (in the K of _bernstein_window)


def _window(n, log_p, log_1mp, K):
    """Integer range [lo, hi] (arrays) where log Pr(Bin(n, p) = m) >= its maximum - K^2 / 2.

    For a near-Gaussian binomial this is mean +- K sd; for a skewed one (p near 0 or 1, small n) it
    follows the pmf itself, so a window of K = 40 always reaches e^-800 below the mode. Found by
    bisection on each side of the mode (the pmf is unimodal).
    """
    n = np.atleast_1d(np.asarray(n, dtype=float))
    if log_p == -np.inf:
        return np.zeros_like(n), np.zeros_like(n)
    if log_1mp == -np.inf:
        return n.copy(), n.copy()
    mode = np.clip(np.floor((n + 1.0) * math.exp(log_p)), 0.0, n)
    floor = log_pmf(mode, n, log_p, log_1mp) - 0.5 * K * K
    # left end: smallest m in [0, mode] with pmf(m) >= floor (pmf increasing there)
    lo, hi = np.zeros_like(n), mode.copy()
    while np.any(hi > lo):
        mid = np.floor(0.5 * (lo + hi))
        ok = log_pmf(mid, n, log_p, log_1mp) >= floor
        hi = np.where(ok, mid, hi)
        lo = np.where(ok, lo, mid + 1.0)
    left = lo
    # right end: largest m in [mode, n] with pmf(m) >= floor
    lo, hi = mode.copy(), n.copy()
    while np.any(hi > lo):
        mid = np.ceil(0.5 * (lo + hi))
        ok = log_pmf(mid, n, log_p, log_1mp) >= floor
        lo = np.where(ok, mid, lo)
        hi = np.where(ok, hi, mid - 1.0)
    return left, lo


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
        mass = float(np.logaddexp(log_weight_per_s + float(log_sf(hi, n - 1, l2q, l1m2q)),
                                  lrho + float(log_sf(hi + 1, n, l2q, l1m2q)))) + log_n
        if log_upper_row is not None:
            mass = min(mass, log_upper_row(hi + 1) + float(log_sf(hi + 1, n, l2q, l1m2q)))
        pieces.append(mass)
    if lo > 0:  # S <= lo - 1: Pr(n - S >= n - lo + 1)
        if lo >= 2:
            pieces.append(log_weight_per_s + float(log_sf(n - 1 - (lo - 2), n - 1, l1m2q, l2q)) + log_n)
        pieces.append(lrho + float(log_sf(n - lo + 1, n, l1m2q, l2q)) + log_n)
    return float(logsumexp(np.array(pieces))) if pieces else -np.inf


def _segment_logsumexp(values, starts, size):
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


def _bernstein_window(n, log_p, log_1mp, K):
    """Integer range [lo, hi] around the mean of Bin(n, p) outside which Bernstein's inequality leaves
    at most e^(-K^2 / 2) on each side: half-width d = K^2 / 6 + sqrt(K^4 / 36 + K^2 var). Closed form;
    covers skewed binomials (small variance) as far out as Gaussian ones. Any window is valid here (what
    it leaves out is bounded separately); this one only decides how much is summed exactly."""
    n = np.asarray(n, dtype=float)
    p = math.exp(log_p)
    mean = n * p
    var = mean * math.exp(log_1mp)
    half = K * K / 6.0 + np.sqrt(K**4 / 36.0 + K * K * var)
    return np.clip(np.floor(mean - half), 0.0, n), np.clip(np.ceil(mean + half), 0.0, n)


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
        value = (log_pmf(b_, s_, math.log(0.5), math.log(0.5)) - np.maximum(kl, 0.0) - 1.0 - np.log(phi)
                 - log1mexp(np.minimum(log_ratio, -1e-300)))
    out[ok] = np.where(good, value, np.inf)
    return out


def _lower_tables(N, lo, width, log_pi, log_1mpi, excess: bool = True):
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
    scratch = None if excess else np.empty((min(N.size, max(1, _TABLE_BLOCK // max(W, 1))), W))
    rows = max(1, _TABLE_BLOCK // max(W, 1))  # blocks small enough to stay in cache
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


#: the tables are used only where the relative rounding margin 8 W 2^-53 stays below this (W: widest row)
_TABLE_MAX_WIDTH = 8192


_TABLE_CELLS = 1 << 21  # cells per chunk of rows (three float64 tables: ~50 MB)


_TABLE_BLOCK = 1 << 16  # cells per block while a table is formed (kept in cache)


_LOG_UNIT = math.log(2.0 ** -53)


class _WeakRows:
    """The epsilon-independent part of the weak-adversary sum for one (n, k, eps0, K): the window of
    totals s, their weights, the M windows of the rows; :meth:`log_delta` evaluates one epsilon and
    :meth:`log_deltas` many at once (sharing tables of M's cumulative laws between them)."""

    def __init__(self, *, n: int, k: int, epsilon_local: float, K: float, logs: KrrParams):
        self.n, self.k, self.e0, self.K, self.logs = n, k, float(epsilon_local), float(K), logs
        self.s_lo, self.s_hi = (float(v) for v in _bernstein_window(n, logs.log_2q, logs.log_1m2q, K))
        s = np.arange(int(self.s_lo), int(self.s_hi) + 1, dtype=float)
        self.s = s
        self.log_w = log_pmf(s, n, logs.log_2q, logs.log_1m2q)
        self.N_m = n - s
        self.rho = math.exp(logs.log_rho)
        self.mu_m = self.N_m * self.rho
        self.beta = math.expm1(self.e0)
        self.s_kappa = s * (0.5 * self.beta + 1.0)
        lrho, l1mrho = logs.log_rho, logs.log_1mrho
        if self.rho == 0.0:
            self.m_lo = self.m_hi = self.mu_m
            self.log_below_mlo = None
        else:
            # rows far out in S carry little weight, so their M window may be narrower: K_row^2 / 2 = K^2 / 2
            # minus the row's log-weight deficit (a disc instead of a square in the (S, M) plane; what the
            # narrower windows leave out is bounded and counted in the remainder like everything else)
            K_row = np.sqrt(np.maximum(K * K - 2.0 * (float(np.max(self.log_w)) - self.log_w), _K_ROW_MIN ** 2))
            self.m_lo, self.m_hi = _bernstein_window(self.N_m, lrho, l1mrho, K_row)
            self.log_below_mlo = log_sf_bound(self.N_m - self.m_lo + 1.0, self.N_m, l1mrho, lrho)  # Pr(M <= m_lo - 1)
        self.a_bot, _ = _bernstein_window(s, math.log(0.5), math.log(0.5), K)
        self.log_weight_per_s = float(np.logaddexp(logs.log_2q, logs.log_beta + logs.log_2q - math.log(2.0)))

    # ------------------------------------------------------------------ one epsilon, in three steps
    def _prepare(self, eps: float, high: bool = True) -> dict:
        """Everything of one epsilon except the middle ranges' sums (see the module docstring)."""
        logs, s = self.logs, self.s
        log_lam = logs.log_beta + float(np.logaddexp(0.0, eps))  # lambda = beta (1 + e^eps)
        lam, nu, beta = math.exp(log_lam), math.expm1(eps), self.beta
        c_per_s = math.expm1(eps + self.e0)  # e^(eps + eps0) - 1
        lrho, l1mrho = logs.log_rho, logs.log_1mrho
        half = math.log(0.5)
        degenerate = self.rho == 0.0 or nu == 0.0  # M plays no role: E[(.)_+] is exact in closed form
        s_kappa = self.s_kappa

        # a at which tau(a) = m, without cancellation for small eps: (nu m + c_s) / lambda = s / 2 +
        # nu (m + s (beta + 2) / 2) / lambda, since c_s / lambda = s / 2 + nu s (beta + 2) / (2 lambda)
        def a_at(m):
            return s / 2.0 + nu * (m + s_kappa) / lam

        m_lo, m_hi = (self.mu_m, self.mu_m) if degenerate else (self.m_lo, self.m_hi)
        a_hi = np.clip(np.ceil(a_at(m_hi)), 0.0, s + 1.0)
        t_star = a_at(self.mu_m)
        t_gap = nu * (self.mu_m + s_kappa) / lam  # t* - s / 2, without cancellation
        # high range: tau(a) = (lambda a - c_s) / nu >= m_hi <=> a >= a_hi (>= s / 2); there
        # E_M[(lambda a - c_s - nu M)_+] = lambda (a - t*) + nu E[(M - tau)_+], t* = (c_s + nu E[M]) / lambda
        prep = {"eps": eps, "log_lam": log_lam, "lam": lam, "nu": nu, "c_per_s": c_per_s, "a_hi": a_hi,
                "t_gap": t_gap, "degenerate": degenerate,
                "high": log_lam + high_part(a_hi, t_star, s, half, half, t_gap) if high else None}
        if degenerate:
            prep["log_err"] = np.full(s.shape, -np.inf)
            prep["counts"] = np.zeros(s.shape, dtype=np.int64)
            return prep
        N_m = self.N_m
        # remainder of the high range: nu Pr(A >= a_hi) E[(M - m_hi)_+]
        err = math.log(nu) + log_sf_bound(a_hi, s, half, half) + log_excess_above_bound(m_hi, N_m, lrho, l1mrho)
        a_low = np.floor(a_at(m_lo)) + 1.0  # first a with tau > m_lo
        a_start = np.clip(np.maximum(a_low, self.a_bot), 0.0, a_hi)
        # low range a < a_start: each term <= nu E[(tau(a_start - 1) - M)_+] (non-decreasing in a)
        below = a_start - 1.0
        tau_below = beta * (2.0 * below - s) / nu - (beta * (s - below) + s)
        has_low = (below >= 0) & (tau_below > 0)
        if has_low.any():
            tau_b, N_b, s_b, b = tau_below[has_low], N_m[has_low], s[has_low], below[has_low]
            flat = log_excess_below_bound(tau_b, N_b, lrho, l1mrho) + log_sf_bound(s_b - b, s_b, half, half)
            err[has_low] = np.logaddexp(err[has_low], math.log(nu) + np.minimum(flat, _log_low_geometric(
                tau_b, N_b, s_b, b, lrho, l1mrho, log_lam - math.log(nu))))
        # cheap certified row bounds: (tau - M)_+ <= (tau - m_lo)_+ + tau_+ 1{M < m_lo}
        log_upper = log_lam + self.log_w + np.logaddexp(
            log_excess_above_bound(a_at(m_lo), s, half, half),
            self.log_below_mlo + log_excess_above_bound(a_at(0.0), s, half, half),
        )
        prep.update(log_err=err, a_start=a_start, a_hi=a_hi, counts=(a_hi - a_start).astype(np.int64),
                    log_upper=log_upper)
        return prep

    def _tau(self, a, s, nu):
        # tau = (lambda a - c_s) / nu = beta (2a - s) / nu - (beta (s - a) + s), stable for small eps
        return self.beta * (2.0 * a - s) / nu - (self.beta * (s - a) + s)

    def _middle_pairs(self, prep, group):
        """(row of each pair, a, tau, log Bin(s, 1/2)(a), starts of the rows) of the middle ranges of rows
        ``group``: a from a_start to a_hi - 1. log Bin(s, 1/2)(a) along each row: one saddle-point value
        per row, then the exact ratios (s - a + 1) / a (consecutive a; rounding ~1e-16 per step)."""
        half = math.log(0.5)
        cnt = prep["counts"][group]
        a0, sk = prep["a_start"][group], self.s[group]
        seg = np.repeat(np.arange(group.size), cnt)
        offset = np.arange(int(cnt.sum())) - np.repeat(np.cumsum(cnt) - cnt, cnt)
        a = a0[seg] + offset
        sg = sk[seg]
        tau = self._tau(a, sg, prep["nu"])
        starts = np.concatenate([[0], np.cumsum(cnt)[:-1]])
        step = np.where(offset > 0, np.log(sg - a + 1.0) - np.log(np.maximum(a, 1.0)), 0.0)
        running = np.cumsum(step)
        running -= np.repeat(running[starts], cnt)
        anchors = prep.get("log_a_start")
        anchors = log_pmf(a0, sk, half, half) if anchors is None else anchors[group]
        log_a = np.repeat(anchors, cnt) + running
        return seg, tau, log_a, starts

    def _middle_direct(self, prep, rows, mid):
        """Middle ranges of ``rows`` (with a non-empty range) term by term with the exact expected excess."""
        lrho, l1mrho = self.logs.log_rho, self.logs.log_1mrho
        counts = prep["counts"][rows]
        cum = np.cumsum(counts)
        boundaries = np.searchsorted(cum, np.arange(_CHUNK, int(cum[-1]), _CHUNK))
        for group in np.split(rows, boundaries + 1):
            if group.size == 0:
                continue
            seg, tau, log_a, starts = self._middle_pairs(prep, group)
            terms = log_a + log_excess_below(tau, self.N_m[group][seg], lrho, l1mrho)
            mid[group] = math.log(prep["nu"]) + _segment_logsumexp(terms, starts, group.size)

    def _finish(self, prep, mid, chernoff) -> tuple[float, float]:
        """(log summed delta, log certified remainder) from the rows' parts."""
        n, logs = self.n, self.logs
        log_rows = prep["high"] if mid is None else np.logaddexp(prep["high"], mid)
        log_err = prep["log_err"]
        log_main = float(logsumexp(log_rows + self.log_w)) - math.log(n)
        eps, lam, c_per_s, log_lam = prep["eps"], prep["lam"], prep["c_per_s"], prep["log_lam"]
        # Upper tail of S: a row is at most E[(lambda A - c_s)_+] <= lambda E[(A - theta s)_+] with
        # theta = (e^(eps + eps0) - 1) / lambda > 1/2; Chernoff (x_+ <= e^(phi x - 1) / phi) gives
        # row(s) <= lambda e^-1 / phi * exp(-s KL(theta || 1/2)), non-increasing in s.
        theta = c_per_s / lam
        log_upper_row = None
        if 0.5 < theta < 1.0:
            phi = math.log(theta / (1.0 - theta))
            kl = theta * math.log(2.0 * theta) + (1.0 - theta) * math.log(2.0 * (1.0 - theta))
            log_upper_row = lambda s0: log_lam - 1.0 - math.log(phi) - s0 * kl  # noqa: E731
        # totals S outside the window: the MGF bound on E[X_+ 1{S outside}] (it falls with delta, unlike the
        # P-mass bound of _log_s_tail_mass, which is used only where it is smaller)
        log_tails = float(np.logaddexp(*chernoff.log_tails(eps, self.s_lo, self.s_hi)))
        if log_tails - log_main > _LOG_NEGLIGIBLE:
            log_tails = min(log_tails, _log_s_tail_mass(n, int(self.s_lo), int(self.s_hi), logs,
                                                        self.log_weight_per_s, log_upper_row) - math.log(n))
        log_dropped = float(np.logaddexp(float(logsumexp(log_err + self.log_w)) - math.log(n), log_tails))
        return log_main, log_dropped

    def log_delta(self, eps: float, chernoff: ChernoffBound) -> tuple[float, float]:
        """(log of the summed delta, log of the certified bound on everything dropped) at one epsilon.

        Rows are totals s of S; a row is summed exactly when a cheap certified upper bound on it
        (Chernoff bounds only) is within e^60 of the largest such bound, otherwise that bound is added
        to the remainder."""
        prep = self._prepare(eps)
        if prep["degenerate"]:
            return self._finish(prep, None, chernoff)
        mid = np.full(self.s.shape, -np.inf)
        log_upper, counts = prep["log_upper"], prep["counts"]
        # rows are summed exactly in decreasing order of their bound; a row whose bound is e^-60 below the
        # largest exact row found is not summed, its bound goes to the remainder instead
        order = np.argsort(-log_upper)
        first = order[: max(64, order.size // 16)]
        if counts[first].sum():
            self._middle_direct(prep, first[counts[first] > 0], mid)
        exact = np.logaddexp(prep["high"], mid)
        threshold = float(np.max(exact[first] + self.log_w[first])) - _LOG_PRUNE
        rest = order[first.size:]
        second = rest[log_upper[rest] >= threshold]
        if counts[second].sum():
            self._middle_direct(prep, second[counts[second] > 0], mid)
        pruned = rest[log_upper[rest] < threshold]
        prep["log_err"][pruned] = log_upper[pruned] - self.log_w[pruned]
        mid[pruned] = -np.inf
        prep["high"][pruned] = -np.inf
        return self._finish(prep, mid, chernoff)

    def tables_fit(self) -> bool:
        """Whether :meth:`log_deltas` may use tables: M windows narrow enough for the rounding margin and
        for the pmf ratios inside a window to stay far from overflow (K <= 20: within e^200)."""
        return self.K <= 20.0 and self.rho > 0.0 and float(np.max(self.m_hi - self.m_lo)) + 1.0 <= _TABLE_MAX_WIDTH

    def _high_from_tables(self, preps) -> bool:
        """High parts (and log Bin(s, 1/2)(a_start)) of every epsilon from per-row tables of B = s - A ~
        Bin(s, 1/2) over the a the epsilons need: with b = s - a_hi, sum_{a >= a_hi} (a - t*) Pr(A = a) =
        E[(b - B)_+] + (a_hi - t*) Pr(B <= b) (both terms positive: a_hi >= t*). False (nothing done) when
        the a range is wider than the tables allow (then the caller uses incomplete-beta functions)."""
        s = self.s
        a_min = np.min([np.where(p["degenerate"], p["a_hi"], p.get("a_start", p["a_hi"])) for p in preps], axis=0)
        a_max = np.max([p["a_hi"] for p in preps], axis=0)
        a_max = np.minimum(a_max, s)  # a_hi = s + 1: empty high range (handled below)
        sd = np.sqrt(np.maximum(s, 1.0)) / 2.0
        width = a_max - a_min + 1.0
        if float(width.max()) > _TABLE_MAX_WIDTH or float(np.max(np.abs(np.concatenate([a_min, a_max]) - np.tile(s / 2.0, 2))
                                                               / np.tile(sd, 2))) > 20.0:
            return False
        half = math.log(0.5)
        b_lo = s - a_max
        margin = math.log(8.0) + math.log(float(width.max())) + _LOG_UNIT
        for p in preps:
            p["high"] = np.full(s.shape, -np.inf)
            if not p["degenerate"]:
                p["log_a_start"] = np.full(s.shape, -np.inf)
        order = np.arange(s.size)
        per_row = np.cumsum(width)
        bounds = np.searchsorted(per_row, np.arange(_TABLE_CELLS, per_row[-1], _TABLE_CELLS))
        for chunk in np.split(order, bounds + 1):
            if chunk.size == 0:
                continue
            log_anchor, pb, F, H = _lower_tables(s[chunk], b_lo[chunk], width[chunk], half, half)
            W = F.shape[1]
            base = np.arange(chunk.size) * W
            sc = s[chunk]
            for p in preps:
                a_hi = p["a_hi"][chunk]
                inside = a_hi <= sc
                col = np.where(inside, sc - a_hi - b_lo[chunk], 0).astype(np.int64)
                gap = (a_hi - sc / 2.0) - p["t_gap"][chunk]  # a_hi - t* >= 0
                value = H.flat[base + col] + np.maximum(gap, 0.0) * F.flat[base + col]
                with np.errstate(divide="ignore"):
                    high = np.where(inside, np.log(value) + log_anchor, -np.inf)
                p["high"][chunk] = p["log_lam"] + high
                # rounding of the tables (relative, see _lower_tables): added to the remainder
                p["log_err"][chunk] = np.logaddexp(p["log_err"][chunk], p["high"][chunk] + margin)
                if not p["degenerate"]:
                    a0 = p["a_start"][chunk]
                    col0 = np.clip(sc - a0 - b_lo[chunk], 0, W - 1).astype(np.int64)
                    with np.errstate(divide="ignore"):
                        p["log_a_start"][chunk] = np.log(pb.flat[base + col0]) + log_anchor
        return True

    def log_deltas(self, epsilons, chernoff: ChernoffBound):
        """[(log summed delta, log certified remainder)] at each epsilon, the middle ranges of all of them
        evaluated together from per-row tables of M's law (:func:`_lower_tables`), built once per row for
        the union of the thresholds the epsilons need (instead of one incomplete-beta function per
        (epsilon, row, a)). Rows are pruned as in :meth:`log_delta`, with the largest *high part* as the
        reference (a lower value than the exact row: fewer rows are pruned, all valid). The tables'
        rounding (at most 8 W 2^-53 relative for rows of width W) is added to the remainder."""
        if not self.tables_fit():
            return [self.log_delta(float(e), chernoff) for e in epsilons]
        preps = [self._prepare(float(e), high=False) for e in epsilons]
        if not self._high_from_tables(preps):
            half = math.log(0.5)
            for p in preps:
                p["high"] = p["log_lam"] + high_part(p["a_hi"], self.s / 2.0 + p["t_gap"], self.s, half, half, p["t_gap"])
        mids = [None if p["degenerate"] else np.full(self.s.shape, -np.inf) for p in preps]
        active = []
        for p in preps:
            if p["degenerate"]:
                continue
            threshold = float(np.max(p["high"] + self.log_w)) - _LOG_PRUNE
            pruned = p["log_upper"] < threshold
            p["log_err"][pruned] = p["log_upper"][pruned] - self.log_w[pruned]
            p["high"][pruned] = -np.inf
            p["counts"][pruned] = 0
            if p["counts"].sum():
                active.append(p)
        if active:
            lrho, l1mrho = self.logs.log_rho, self.logs.log_1mrho
            # the thresholds tau each row needs, over all epsilons: integer parts i = floor(tau)
            i_min = np.full(self.s.shape, np.inf)
            i_max = np.full(self.s.shape, -np.inf)
            for p in active:
                has = p["counts"] > 0
                lo_tau = self._tau(p["a_start"], self.s, p["nu"])
                hi_tau = self._tau(p["a_hi"] - 1.0, self.s, p["nu"])
                i_min[has] = np.minimum(i_min[has], np.floor(lo_tau[has]))
                i_max[has] = np.maximum(i_max[has], np.floor(hi_tau[has]))
            for p in active:
                p["log_mid_size"] = np.full(self.s.shape, -np.inf)
            need = np.isfinite(i_min)
            i_min = np.clip(i_min, self.m_lo, self.m_hi)
            i_max = np.clip(i_max, i_min, self.m_hi)
            width = np.where(need, i_max - i_min + 1.0, 0.0)
            rows_needed = np.flatnonzero(need)
            # rounding of the tables (8 W 2^-53 relative) and of the two-term sum (a few 2^-53 of its terms)
            log_margin = math.log(8.0 * float(width.max()) + 16.0) + _LOG_UNIT
            per_row = np.cumsum(width[rows_needed])
            bounds = np.searchsorted(per_row, np.arange(_TABLE_CELLS, per_row[-1], _TABLE_CELLS)) if per_row.size else []
            for chunk in np.split(rows_needed, np.asarray(bounds, dtype=int) + 1):
                if chunk.size == 0:
                    continue
                log_anchor, P, F, _ = _lower_tables(self.N_m[chunk], i_min[chunk], width[chunk] + 1.0, lrho, l1mrho,
                                                    excess=False)
                position = np.full(self.s.size, -1, dtype=np.int64)
                position[chunk] = np.arange(chunk.size)
                W = F.shape[1]
                for p, mid in zip(preps, mids):
                    if p["degenerate"]:
                        continue
                    rows = chunk[p["counts"][chunk] > 0]
                    if rows.size == 0:
                        continue
                    seg, tau, log_a, starts = self._middle_pairs(p, rows)
                    r = position[rows][seg]
                    i = np.clip(np.floor(tau), i_min[rows][seg], i_max[rows][seg])
                    col = (i - i_min[rows][seg]).astype(np.int64)
                    flat = r * W + col
                    # E[(tau - M)_+] = (tau - mu) Pr(M <= i) + (1 - rho) (i + 1) Pr(M = i + 1) (binomial identity
                    # E[(N rho - M); M <= i] = (1 - rho) (i + 1) Pr(M = i + 1)); relative to pmf(i_min). Below the
                    # mean the two terms cancel to about 1 / z^2 at z standard deviations (z <= K here): the
                    # margin below bounds the rounding from the sizes of both terms
                    centred = (tau - self.mu_m[rows][seg]) * F.flat[flat]
                    mass = (1.0 - self.rho) * (i + 1.0) * P.flat[flat + 1]
                    excess = np.maximum(centred + mass, 0.0)
                    size = np.abs(centred) + mass
                    with np.errstate(divide="ignore"):
                        terms = log_a + np.log(excess) + log_anchor[r]
                        sizes = log_a + np.log(size) + log_anchor[r]
                    mid[rows] = math.log(p["nu"]) + _segment_logsumexp(terms, starts, rows.size)
                    p["log_mid_size"][rows] = math.log(p["nu"]) + _segment_logsumexp(sizes, starts, rows.size)
            for p in preps:
                finite = np.isfinite(p.get("log_mid_size", np.full(1, -np.inf)))
                if finite.any():
                    p["log_err"][finite] = np.logaddexp(p["log_err"][finite], p["log_mid_size"][finite] + log_margin)
        return [self._finish(p, m, chernoff) for p, m in zip(preps, mids)]


def weak_adversary_log_delta(eps: float, *, n: int, k: int, epsilon_local: float, K: float,
                             logs: KrrParams | None = None, chernoff: ChernoffBound | None = None) -> tuple[float, float]:
    """(log of the summed delta, log of the certified bound on everything dropped) at one epsilon.

    See the module docstring and :class:`_WeakRows` (built here for one call)."""
    logs = logs or KrrParams.of(epsilon_local, k)
    if eps >= epsilon_local:
        return -np.inf, -np.inf
    chernoff = chernoff or ChernoffBound(n=n, k=k, epsilon_local=epsilon_local)
    return _WeakRows(n=n, k=k, epsilon_local=epsilon_local, K=K, logs=logs).log_delta(eps, chernoff)
