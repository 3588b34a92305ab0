"""Koskela et al.'s *weak adversary* for shuffled k-RR: exact delta of its view, an UPPER bound for all data.

The adversary (Koskela, Heikkila, Honkela 2021, Def. 3 and Thm 4) sees the shuffled reports, the data
of the other n - 1 users and which of them drew their report from the blanket (k-RR as a mixture:
with probability gamma = k / (e^eps0 + k - 1) a user reports a uniform value, otherwise its own). It
does *not* learn whether the differing user drew from the blanket (the strong adversary of
:class:`shuffledp.accounting.blanket.StrongAdversary` does). It sees more than the analyst, so its
delta bounds the histogram's delta for every pair of neighbouring datasets (replace-one) in both
directions. Against brute force over every dataset (483 tiny cases, n = 2..8, k = 2..4) it equals the
true worst case to 12 digits in 280 and exceeds it by up to 41% in the others (tests, reproduction notes).

**The view.** Removing the known truthful reports leaves the b blanket reports of the others and the
differing user's report; by symmetry only the counts (a, c, m) of x0, x1 and of the other k - 2 values
among these b + 1 reports matter (the split of m over the other values has the same law under both
hypotheses). Writing Mult_n for the multinomial law over n trials with probabilities
(q, q, (k - 2) q, 1 - gamma), q = 1 / (e^eps0 + k - 1), and beta = e^eps0 - 1, a direct computation
(trinomial ratios; derivation in docs/reproduction-notes.md) gives

    P(a, c, m) = Mult_n(a, c, m) (a + c + m + beta a) / n,
    Q(a, c, m) = Mult_n(a, c, m) (a + c + m + beta c) / n,

so the privacy loss is log((j + beta a) / (j + beta c)) with j = a + c + m and

    delta(eps) = (1 / n) E[(lambda A - c_S - nu M)_+],
    lambda = beta (1 + e^eps),  c_s = s (e^(eps + eps0) - 1),  nu = e^eps - 1,

with S = A + C ~ Bin(n, 2q), A | S ~ Bin(S, 1/2) and M | S ~ Bin(n - S, rho), rho = (k - 2) / (e^eps0 +
k - 3), A and M independent given S. The loss is at most eps0 (at a = j, c = 0), so delta = 0 for
eps >= eps0 comes out of the sum (lambda a - c_s <= 0 for every a <= s). Both directions are equal (A and
C are exchangeable).

**Evaluation.** For each total s in a window around the mean of S, the sum over a splits into
(i) a *high* range where nu M cannot exceed lambda a - c_s except with negligible probability: there
E_M[(.)_+] = lambda a - c_s - nu E[M] up to a certified remainder, summed over a in closed form;
(ii) a *middle* range summed term by term with the exact expected excess E[(tau - M)_+] of the
binomial M (:mod:`shuffledp.accounting._binomial_excess`); (iii) a *low* range bounded by its largest
term times its probability. Windows reach K^2 / 2 nats below the modes of S, A and M; everything outside
them is bounded above with exact binomial tails. The dropped mass is *added* to the returned delta
(so it stays an upper bound), and K grows until that certified remainder is below 1e-11 of the sum
(or K reaches 40: windows then reach e^-800 below each mode; below that the remainder is capped by
the strong adversary's exact delta, itself an upper bound on the weak one). The totals S outside the
window and the low range of each row are bounded with Chernoff (moment-generating-function) bounds
that fall with delta (:mod:`shuffledp.accounting._chernoff`), so the window stays at K = 8 down to
delta ~ 1e-19 at n = 10^6. The same bound on the whole delta decides "delta <= target" without the
sum when it already meets the target, and is returned as the (certified) value when it is below
e^-700 -- which bounds the work at n = 10^8 for epsilons far in the tail (seconds, not minutes). Windows are defined on
the log-pmf (:func:`_window`), so skewed binomials are covered as far out as Gaussian ones. Work per epsilon: O(K sigma_S x min(K sigma_M / lambda', K sigma_A))
incomplete-beta evaluations, independent of n otherwise; memory O(that) as well.

Accuracy: relative error ~1e-10 for delta >= 1e-300 at n up to a few thousand (checked against mpmath
in the tests); log-gamma rounding adds about 1e-16 n log n absolute error to log delta at larger n.
"""

from __future__ import annotations

import math

import numpy as np

from shuffledp._numerics import log1mexp, log_sub, logsumexp
from shuffledp.accounting._base import Accountant, BoundKind
from shuffledp.accounting._bracketed import BracketedMixin
from shuffledp.accounting._chernoff import ChernoffBound
from shuffledp.accounting.blanket import StrongAdversary
from shuffledp.accounting._binomial_excess import (
    high_part,
    log_excess_above_bound,
    log_excess_below,
    log_excess_below_bound,
    log_pmf,
    log_sf,
    log_sf_bound,
)

__all__ = ["WeakAdversary", "krr_view_logs", "MAX_EPSILON_LOCAL"]

#: e^(eps + eps0) with eps < eps0 must stay finite in double precision (the view is formed from it)
MAX_EPSILON_LOCAL = 350.0
_CHUNK = 400_000  # (s, a) pairs evaluated at once (bounds memory)
_LOG_NEGLIGIBLE = math.log(1e-11)
_LOG_PRUNE = 60.0  # rows whose cheap certified bound is this far below the largest are bounded, not summed
_K_ROW_MIN = 4.0  # narrowest M window of a row (in the K of _bernstein_window)
_LOG_BEYOND_PROMISE = -700.0  # below e^-700 (~1e-304) the Chernoff bound is returned as the value


def krr_view_logs(epsilon_local: float, k: int) -> dict[str, float]:
    """Logs of the quantities of the weak-adversary view (see the module docstring), without cancellation."""
    e0 = float(epsilon_local)
    log_den = float(np.logaddexp(e0, math.log(k - 1.0)))  # log(e^eps0 + k - 1)
    log_beta = float(np.log(np.expm1(e0)))
    if k == 2:
        log_rho, log_1mrho = -np.inf, 0.0
    else:
        log_den3 = e0 if k == 3 else float(np.logaddexp(e0, math.log(k - 3.0)))  # log(e^eps0 + k - 3)
        log_rho, log_1mrho = math.log(k - 2.0) - log_den3, log_beta - log_den3
    return {
        "log_2q": math.log(2.0) - log_den,
        "log_1m2q": (log_beta if k == 2 else float(np.logaddexp(e0, math.log(k - 3.0))) if k > 3 else e0) - log_den,
        "log_rho": log_rho,
        "log_1mrho": log_1mrho,
        "log_beta": log_beta,
    }


def check_epsilon_local_finite(epsilon_local: float, name: str) -> None:
    """Refuse eps0 whose e^eps0 overflows (the view's probabilities would not be representable)."""
    if epsilon_local > MAX_EPSILON_LOCAL:
        raise ValueError(
            f"`epsilon_local` must be in (0, {MAX_EPSILON_LOCAL:g}] for {name!r} (e^(eps + eps0) must be finite); "
            f"got {epsilon_local!r}."
        )


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
    l2q, l1m2q, lrho = logs["log_2q"], logs["log_1m2q"], logs["log_rho"]
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


def weak_adversary_log_delta(eps: float, *, n: int, k: int, epsilon_local: float, K: float,
                             logs: dict | None = None, chernoff: ChernoffBound | None = None) -> tuple[float, float]:
    """(log of the summed delta, log of the certified bound on everything dropped) at one epsilon.

    See the module docstring. Rows are totals s of S; a row is summed exactly when a cheap certified
    upper bound on it (Chernoff bounds only) is within e^60 of the largest such bound, otherwise that
    bound is added to the remainder.
    """
    logs = logs or krr_view_logs(epsilon_local, k)
    if eps >= epsilon_local:
        return -np.inf, -np.inf
    log_beta = logs["log_beta"]
    log_lam = log_beta + float(np.logaddexp(0.0, eps))  # lambda = beta (1 + e^eps)
    lam = math.exp(log_lam)
    nu = math.expm1(eps)
    c_per_s = math.expm1(eps + epsilon_local)  # e^(eps + eps0) - 1
    lrho, l1mrho = logs["log_rho"], logs["log_1mrho"]
    rho = math.exp(lrho)
    half = math.log(0.5)
    log_n = math.log(n)

    s_lo, s_hi = (float(v) for v in _bernstein_window(n, logs["log_2q"], logs["log_1m2q"], K))
    s = np.arange(int(s_lo), int(s_hi) + 1, dtype=float)
    log_w = log_pmf(s, n, logs["log_2q"], logs["log_1m2q"])
    N_m = n - s
    mu_m = N_m * rho
    c_s = s * c_per_s
    degenerate = rho == 0.0 or nu == 0.0  # M plays no role: E[(.)_+] is exact in closed form
    if degenerate:
        m_lo = m_hi = mu_m
    else:
        # rows far out in S carry little weight, so their M window may be narrower: K_row^2 / 2 = K^2 / 2
        # minus the row's log-weight deficit (a disc instead of a square in the (S, M) plane; what the
        # narrower windows leave out is bounded and counted in the remainder like everything else)
        K_row = np.sqrt(np.maximum(K * K - 2.0 * (float(np.max(log_w)) - log_w), _K_ROW_MIN ** 2))
        m_lo, m_hi = _bernstein_window(N_m, lrho, l1mrho, K_row)
    # a at which tau(a) = m, without cancellation for small eps: (nu m + c_s) / lambda = s / 2 +
    # nu (m + s (beta + 2) / 2) / lambda, since c_s / lambda = s / 2 + nu s (beta + 2) / (2 lambda)
    beta = math.expm1(epsilon_local)
    s_kappa = s * (0.5 * beta + 1.0)

    def a_at(m):
        return s / 2.0 + nu * (m + s_kappa) / lam

    a_hi = np.clip(np.ceil(a_at(m_hi)), 0.0, s + 1.0)
    t_star = a_at(mu_m)
    t_gap = nu * (mu_m + s_kappa) / lam  # t* - s / 2, without cancellation
    log_err = np.full(s.shape, -np.inf)
    log_rows = np.full(s.shape, -np.inf)  # log of each row's exact sum (without the weight)

    def evaluate(idx):
        """Exact rows ``idx``: high range in closed form, middle range term by term, remainders bounded."""
        sk, ck, ahk = s[idx], c_s[idx], a_hi[idx]
        # high range: tau(a) = (lambda a - c_s) / nu >= m_hi <=> a >= a_hi (>= s / 2); there
        # E_M[(lambda a - c_s - nu M)_+] = lambda (a - t*) + nu E[(M - tau)_+], t* = (c_s + nu E[M]) / lambda
        high = log_lam + high_part(ahk, t_star[idx], sk, half, half, t_gap[idx])
        if degenerate:
            log_rows[idx] = high
            return
        Nk, mlo, mhi = N_m[idx], m_lo[idx], m_hi[idx]
        # remainder of the high range: nu Pr(A >= a_hi) E[(M - m_hi)_+]
        err = math.log(nu) + log_sf_bound(ahk, sk, half, half) + log_excess_above_bound(mhi, Nk, lrho, l1mrho)
        a_low = np.floor(a_at(m_lo)[idx]) + 1.0  # first a with tau > m_lo
        a_bot, _ = _bernstein_window(sk, half, half, K)
        a_start = np.clip(np.maximum(a_low, a_bot), 0.0, ahk)
        # low range a < a_start: each term <= nu E[(tau(a_start - 1) - M)_+] (non-decreasing in a)
        below = a_start - 1.0
        tau_below = beta * (2.0 * below - sk) / nu - (beta * (sk - below) + sk)
        has_low = (below >= 0) & (tau_below > 0)
        if has_low.any():
            tau_b, N_b, s_b, b = tau_below[has_low], Nk[has_low], sk[has_low], below[has_low]
            flat = log_excess_below_bound(tau_b, N_b, lrho, l1mrho) + log_sf_bound(s_b - b, s_b, half, half)
            err[has_low] = np.logaddexp(err[has_low], math.log(nu) + np.minimum(flat, _log_low_geometric(
                tau_b, N_b, s_b, b, lrho, l1mrho, log_lam - math.log(nu))))
        log_err[idx] = err
        mid = np.full(idx.shape, -np.inf)
        counts = (ahk - a_start).astype(np.int64)
        if counts.sum():
            rows = np.flatnonzero(counts > 0)
            cum = np.cumsum(counts[rows])
            boundaries = np.searchsorted(cum, np.arange(_CHUNK, int(cum[-1]), _CHUNK))
            for group in np.split(rows, boundaries + 1):
                if group.size == 0:
                    continue
                cnt = counts[group]
                seg = np.repeat(np.arange(group.size), cnt)
                offset = np.arange(int(cnt.sum())) - np.repeat(np.cumsum(cnt) - cnt, cnt)
                a = a_start[group][seg] + offset
                sg = sk[group][seg]
                # tau = (lambda a - c_s) / nu = beta (2a - s) / nu - (beta (s - a) + s), stable for small eps
                tau = beta * (2.0 * a - sg) / nu - (beta * (sg - a) + sg)
                starts = np.concatenate([[0], np.cumsum(cnt)[:-1]])
                # log Bin(s, 1/2)(a) along each row: one saddle-point value per row, then the exact
                # ratios (s - a + 1) / a (consecutive a; rounding ~1e-16 per step)
                step = np.where(offset > 0, np.log(sg - a + 1.0) - np.log(np.maximum(a, 1.0)), 0.0)
                running = np.cumsum(step)
                running -= np.repeat(running[starts], cnt)
                log_a = np.repeat(log_pmf(a_start[group], sk[group], half, half), cnt) + running
                terms = log_a + log_excess_below(tau, Nk[group][seg], lrho, l1mrho)
                mid[group] = math.log(nu) + _segment_logsumexp(terms, starts, group.size)
        log_rows[idx] = np.logaddexp(high, mid)

    if degenerate:
        evaluate(np.arange(s.size))
    else:
        # cheap certified row bounds: (tau - M)_+ <= (tau - m_lo)_+ + tau_+ 1{M < m_lo}. Rows are summed
        # exactly in decreasing order of this bound; a row whose bound is e^-60 below the largest exact
        # row found is not summed, its bound goes to the remainder instead.
        log_below_mlo = log_sf_bound(N_m - m_lo + 1.0, N_m, l1mrho, lrho)  # Pr(M <= m_lo - 1)
        log_upper = log_lam + log_w + np.logaddexp(
            log_excess_above_bound(a_at(m_lo), s, half, half),
            log_below_mlo + log_excess_above_bound(a_at(0.0), s, half, half),
        )
        order = np.argsort(-log_upper)
        first = order[: max(64, order.size // 16)]
        evaluate(first)
        threshold = float(np.max(log_rows[first] + log_w[first])) - _LOG_PRUNE
        rest = order[first.size:]
        second = rest[log_upper[rest] >= threshold]
        if second.size:
            evaluate(second)
        pruned = rest[log_upper[rest] < threshold]
        log_err[pruned] = log_upper[pruned] - log_w[pruned]
    log_main = float(logsumexp(log_rows + log_w)) - log_n
    log_weight_per_s = float(np.logaddexp(logs["log_2q"], log_beta + logs["log_2q"] - math.log(2.0)))
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
    chernoff = chernoff or ChernoffBound(n=n, k=k, epsilon_local=epsilon_local)
    log_tails = float(np.logaddexp(*chernoff.log_tails(eps, s_lo, s_hi)))
    if log_tails - log_main > _LOG_NEGLIGIBLE:
        log_tails = min(log_tails, _log_s_tail_mass(n, int(s_lo), int(s_hi), logs, log_weight_per_s,
                                                    log_upper_row) - log_n)
    log_dropped = float(np.logaddexp(float(logsumexp(log_err + log_w)) - log_n, log_tails))
    return log_main, log_dropped


class WeakAdversary(BracketedMixin, Accountant):
    """Exact delta of Koskela et al.'s weak adversary (Def. 3, Thm 4) plus a certified remainder; see module."""

    name = "weak-adversary"
    kind = BoundKind.UPPER
    scope = "all neighbouring datasets (replace-one), both directions"
    reference = (
        "Koskela, Heikkila, Honkela (2021), Def. 3 and Thm 4 (weak adversary: knows the other users' data "
        "and blanket bits, not the differing user's); view reduced to (a, c, m) counts, evaluated exactly"
    )

    def __init__(self, *, epsilon_local: float, n_users: int, k: int, n_x0: int | None = None):
        super().__init__(epsilon_local=epsilon_local, n_users=n_users, k=k, n_x0=n_x0)
        check_epsilon_local_finite(self.setting.epsilon_local, self.name)
        self._logs = krr_view_logs(self.setting.epsilon_local, self.setting.k)
        self._chernoff = ChernoffBound(n=self.setting.n_users, k=self.setting.k, epsilon_local=self.setting.epsilon_local)

    def _log_parts(self, eps: float, K: float) -> tuple[float, float]:
        s = self.setting
        return weak_adversary_log_delta(eps, n=s.n_users, k=s.k, epsilon_local=s.epsilon_local, K=K, logs=self._logs,
                                        chernoff=self._chernoff)

    def _epsilon_hint(self, log_target: float) -> float | None:
        """Where the Chernoff bound meets the target (to 1e-4, rounded up): a certified upper end for the
        search (0.0 when delta(0) is already certified below the target). The bound is non-increasing
        in epsilon (X falls pointwise as epsilon grows)."""
        return self._chernoff_crossing(log_target, 1e-4)

    def _chernoff_crossing(self, log_level: float, relative: float) -> float | None:
        """Smallest epsilon (to ``relative``, rounded up) where the Chernoff bound is <= e^log_level."""
        bound = self._chernoff.log_delta
        low, high = 0.0, float(self.setting.epsilon_local)
        if bound(low) <= log_level:
            return 0.0
        while high - low > relative * high:
            middle = 0.5 * (low + high) if low > 0 else high / 8.0
            if bound(middle) <= log_level:
                high = middle
            else:
                low = middle
        return high

    def _epsilon_refine(self, log_target: float, eps: float, log_value: float) -> float | None:
        """The Chernoff bound exceeds delta by a factor that varies slowly with epsilon: where the bound
        equals the target times that factor at the hint, delta is close to the target (a guess only)."""
        if not np.isfinite(log_value):
            return None
        slack = self._chernoff.log_delta(eps) - log_value
        return self._chernoff_crossing(log_target + max(slack, 0.0), 1e-8)

    def log_delta_parts(self, eps: float, log_target: float | None = None, start_K: float = 8.0) -> tuple[float, float]:
        """As in the mixin, with two shortcuts and a cap.

        Shortcuts (certified, :mod:`shuffledp.accounting._chernoff`): when the Chernoff bound on delta is
        already <= ``log_target`` the question is decided without the exact sum, and when it is below
        e^-700 (outside the accuracy promise) it is returned as the value (sum -inf, remainder = bound).
        Cap: where the certified remainder is not negligible (delta below about e^-800), the remainder
        is capped so that the total does not exceed ``strong-adversary``'s exact delta, which bounds the
        weak adversary's delta from above (it sees less)."""
        bound = self._chernoff.log_delta(float(eps))
        if bound < _LOG_BEYOND_PROMISE or (log_target is not None and bound <= log_target):
            self.last_K = start_K
            return -np.inf, bound
        log_main, log_dropped = super().log_delta_parts(eps, log_target, start_K)
        if log_dropped - log_main > _LOG_NEGLIGIBLE:
            s = self.setting
            strong = float(StrongAdversary(epsilon_local=s.epsilon_local, n_users=s.n_users, k=s.k)
                           .log_delta_for_epsilon(eps)[0])
            total = float(np.logaddexp(log_main, log_dropped))
            if min(strong, bound) < total:
                cap = min(strong, bound)
                log_dropped = float(log_sub(cap, log_main)) if cap > log_main else -np.inf
        return log_main, log_dropped
