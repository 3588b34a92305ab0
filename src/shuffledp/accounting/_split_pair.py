"""Exact hockey-stick divergence of the "binomial split" pair shared by the blanket and clones bounds.

Both the privacy-blanket adversary of Balle et al. (2019, Thm 3.1 proof; Koskela et al. 2021,
eq. (4.3)) and the clones reduction of Feldman, McMillan, Talwar (2021, Thm 3.2) end in the same
pair of distributions on pairs of counts:

    S ~ Bin(N, r),   B | S ~ Bin(S, 1/2),   Delta ~ Bernoulli(alpha),  independent,
    P = (B + Delta, S - B + 1 - Delta),      Q = (B + 1 - Delta, S - B + Delta),

with alpha in [1/2, 1]. The total S + 1 is seen, so ``H_{e^eps}(P || Q) = sum_s Bin(N, r)(s) h_s``
with the per-total divergence, for B_s ~ Bin(s, 1/2) and u = alpha - e^eps (1 - alpha),
v = e^eps alpha - (1 - alpha) (so v - u = e^eps - 1):

    h_s = sum_{x >= x_s} [u Pr(B_s = x - 1) - v Pr(B_s = x)]
        = u Pr(B_s = x_s - 1) - (e^eps - 1) Pr(B_s >= x_s),        x_s = floor(v (s + 1) / (u + v)) + 1,

every summand being positive (x_s is the first x where P > e^eps Q). When u <= 0 (eps >= log
(alpha / (1 - alpha))) nothing exceeds e^eps and the divergence is 0. Swapping the two coordinates
maps P to Q, so the divergence is the same in both directions.

Evaluation (all in log space): h_s is non-increasing in s (one more split count is independent
noise, i.e. post-processing), so totals are scanned in blocks; a block is skipped only when its
largest possible contribution is below e^-46 times a term already found (relative truncation error
below 1e-13 for N <= 1e7). For each kept s, h_s = pmf(x_s - 1) (u - (e^eps - 1) R) with the tail
ratio R = Pr(B_s >= x_s) / Pr(B_s = x_s - 1) taken from the regularised incomplete beta function
(``scipy.special.betainc``) when pmf(x_s - 1) > e^-600, and from a Lentz continued fraction for R
itself in the far tail (no underflow at any n). When the subtraction would keep less than 1e-5 of
u, h_s is instead summed as the series of positive terms ``pmf(x - 1) (u - v (s + 1 - x) / x)``
relative to its first term (no cancellation). Checked against mpmath (60 digits) in the tests, down
to delta ~ 1e-646.
"""

from __future__ import annotations

import numpy as np
from scipy.special import betainc, gammaln

from shuffledp._numerics import log1mexp, log_sub, logsumexp

__all__ = ["log_split_pair_delta", "log_split_pair_delta_direct"]

_LOG2 = float(np.log(2.0))
#: blocks whose best possible contribution is this far (in log) below a known term are skipped
_LOG_SKIP = 46.0
#: use the incomplete-beta path only above this log-pmf (far from double underflow)
_LOG_PMF_FLOOR = -600.0
#: below this fraction of u * pmf, u * pmf - (e^eps - 1) * tail is summed term by term instead
_CANCELLATION_LIMIT = 1e-5
#: relative size of the neglected series remainder
_SERIES_TOLERANCE = 1e-18
_CF_TOLERANCE = 1e-16
_EPS_CLAMP = 700.0
#: log-ratio gaps smaller than this count as ties (P = e^eps Q) in the direct enumeration
_DIRECT_GAP_TOLERANCE = 1e-12
_CF_MAX_ITERATIONS = 100_000
_CF_CHUNK = 8
_SERIES_CHUNK = 64


def _log_half_binom_pmf(x, s):
    """log Pr(Bin(s, 1/2) = x) for integer arrays with 0 <= x <= s."""
    return gammaln(s + 1.0) - gammaln(x + 1.0) - gammaln(s - x + 1.0) - s * _LOG2


def _log_inner(s, log_u, log_v, eps):
    """log h_s (see the module docstring) for an integer array ``s``, one epsilon."""
    s = np.asarray(s, dtype=np.int64)
    u = np.exp(log_u)
    fraction = 1.0 / (1.0 + np.exp(log_u - log_v))  # v / (u + v) >= 1/2
    x = np.floor(fraction * (s + 1.0)).astype(np.int64) + 1
    x = np.clip(x, 1, s + 1)
    sf, xf = s.astype(float), x.astype(float)
    log_pmf = _log_half_binom_pmf(xf - 1.0, sf)
    # tail ratio R = Pr(B_s >= x) / Pr(B_s = x - 1); h_s = pmf(x - 1) * (u - (e^eps - 1) R)
    ratio = np.zeros(s.shape, dtype=float)  # x = s + 1: empty tail
    inside = x <= s
    direct = inside & (log_pmf > _LOG_PMF_FLOOR)  # incomplete beta, no underflow
    if direct.any():
        tail = betainc(xf[direct], sf[direct] - xf[direct] + 1.0, 0.5)
        ratio[direct] = tail * np.exp(-log_pmf[direct])
    deep = inside & ~direct  # far tail: Lentz continued fraction for the ratio itself
    if deep.any():
        a, b = xf[deep], sf[deep] - xf[deep] + 1.0
        # I_{1/2}(a, b) = pmf(x) / 2 * cf and pmf(x) / pmf(x - 1) = b / a
        ratio[deep] = 0.5 * (b / a) * _beta_continued_fraction(a, b)
    relative = u - np.expm1(eps) * ratio  # h_s / pmf(x - 1), a sum of positive terms
    out = np.full(s.shape, -np.inf)
    good = relative >= _CANCELLATION_LIMIT * u
    out[good] = log_pmf[good] + np.log(relative[good])
    todo = np.flatnonzero(~good)  # heavy cancellation: sum the positive terms instead
    if todo.size:
        out[todo] = log_pmf[todo] + np.log(_series(s[todo], x[todo], u, np.exp(log_v)))
    return out


def _beta_continued_fraction(a, b):
    """Continued fraction of the regularised incomplete beta at z = 1/2 (modified Lentz).

    I_z(a, b) = z^a (1 - z)^b / (a B(a, b)) * cf; converges fast for z < (a + 1) / (a + b + 2),
    which holds here (a > (a + b) / 2). Vectorised; converged entries leave the working set every
    few iterations, so the cost follows the slowest entries only.
    """
    z, tiny = 0.5, 1e-300

    def guard(x):
        return np.where(np.abs(x) < tiny, tiny, x)

    out = np.empty(a.shape, dtype=float)
    index = np.arange(a.size)
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c = np.ones_like(a)
    d = 1.0 / guard(1.0 - qab * z / qap)
    h = d.copy()
    m = 0
    while index.size:
        converged = np.zeros(index.shape, dtype=bool)
        for _ in range(_CF_CHUNK):
            m += 1
            m2 = 2.0 * m
            coefficient = m * (b - m) * z / ((qam + m2) * (a + m2))
            d = 1.0 / guard(1.0 + coefficient * d)
            c = 1.0 + coefficient / guard(c)
            h = h * d * c
            coefficient = -(a + m) * (qab + m) * z / ((a + m2) * (qap + m2))
            d = 1.0 / guard(1.0 + coefficient * d)
            c = 1.0 + coefficient / guard(c)
            step = d * c
            h = h * step
            converged |= np.abs(step - 1.0) < _CF_TOLERANCE
        # once |step - 1| < tolerance the remaining factors are 1 to double precision
        out[index[converged]] = h[converged]
        keep = ~converged
        index, a, b, qab, qap, qam, c, d, h = (x[keep] for x in (index, a, b, qab, qap, qam, c, d, h))
        if m > _CF_MAX_ITERATIONS:  # pragma: no cover - not reached for z = 1/2 above the mean
            raise RuntimeError(
                f"incomplete-beta continued fraction did not converge in {_CF_MAX_ITERATIONS} iterations."
            )
    return out


def _series(s, x, u, v):
    """sum_{j >= 0} [pmf(x - 1 + j) / pmf(x - 1)] (u - v (s - m_j) / (m_j + 1)), m_j = x - 1 + j."""
    s = s.astype(float)
    m = (x - 1).astype(float)
    ratio = np.ones_like(s)  # pmf(m) / pmf(x - 1)
    total = np.zeros_like(s)
    active = np.ones(s.shape, dtype=bool)
    while active.any():
        idx = np.flatnonzero(active)
        sa, ma, ra, ta = s[idx], m[idx], ratio[idx], total[idx]
        for _ in range(_SERIES_CHUNK):
            valid = ma <= sa  # pmf(m) > 0
            factor = np.maximum(u - v * (sa - ma) / (ma + 1.0), 0.0)
            ta = ta + np.where(valid, ra * factor, 0.0)
            ra = np.where(valid, ra * (sa - ma) / (ma + 1.0), 0.0)
            ma = ma + 1.0
        # remainder <= ra * u / (1 - rho) with rho = (s - m) / (m + 1) the (decreasing) next ratio
        rho = np.clip((sa - ma) / (ma + 1.0), 0.0, 1.0)
        with np.errstate(divide="ignore"):
            remainder = np.where(rho < 1.0, ra * u / (1.0 - rho), np.inf)
        finished = (ra == 0.0) | (remainder <= _SERIES_TOLERANCE * ta)
        m[idx], ratio[idx], total[idx] = ma, ra, ta
        active[idx[finished]] = False
    return total


def _log_weights(s, n_trials, log_r, log_1mr):
    s = np.asarray(s, dtype=float)
    with np.errstate(invalid="ignore"):
        term_r = np.where(s == 0, 0.0, s * log_r)
        term_q = np.where(n_trials - s == 0, 0.0, (n_trials - s) * log_1mr)
    return gammaln(n_trials + 1.0) - gammaln(s + 1.0) - gammaln(n_trials - s + 1.0) + term_r + term_q


def _log_u_v(eps, log_alpha, log_1malpha):
    log_u = log_sub(log_alpha, eps + log_1malpha) if eps + log_1malpha < log_alpha else -np.inf
    log_v = float(log_sub(eps + log_alpha, log_1malpha))
    return float(log_u), log_v


def log_split_pair_delta(epsilons, *, n_trials: int, log_r: float, log_1mr: float,
                         log_alpha: float = 0.0, log_1malpha: float = -np.inf) -> np.ndarray:
    """log H_{e^eps}(P || Q) of the split pair (module docstring) for each epsilon >= 0.

    ``n_trials`` is N, ``log_r``/``log_1mr`` are log r and log(1 - r) (both given, for precision),
    ``log_alpha``/``log_1malpha`` log alpha and log(1 - alpha) (defaults: alpha = 1, Delta = 1).
    Exact up to floating point (relative error ~1e-12, tested against mpmath); O(min(N, 4096) + kept
    block sizes) work per epsilon.
    """
    epsilons = np.atleast_1d(np.asarray(epsilons, dtype=float))
    n_trials = int(n_trials)
    n_blocks_target = 4096
    block = max(32, -(-(n_trials + 1) // n_blocks_target))
    lows = np.arange(0, n_trials + 1, block, dtype=np.int64)
    highs = np.minimum(lows + block - 1, n_trials)
    if log_r == -np.inf:
        mode = 0
    elif log_1mr == -np.inf:
        mode = n_trials
    else:
        mode = int(min(n_trials, np.floor((n_trials + 1) * np.exp(log_r))))
    log_w_lows = _log_weights(lows, n_trials, log_r, log_1mr)
    best_in_block = _log_weights(np.clip(mode, lows, highs), n_trials, log_r, log_1mr)
    out = np.empty(epsilons.shape, dtype=float)
    for i, eps in enumerate(epsilons):
        # Likelihood ratios of finite privacy loss are at most (s + 1) e^eps0-type factors < e^700
        # for N <= 1e300, so the divergence is constant beyond eps = 700 (or already 0 when
        # alpha < 1); clamping keeps e^eps finite without changing the result.
        eps = min(float(eps), _EPS_CLAMP)
        log_u, log_v = _log_u_v(eps, log_alpha, log_1malpha)
        if log_u == -np.inf:
            out[i] = -np.inf
            continue
        inner_lows = _log_inner(lows, log_u, log_v, eps)
        inner_mode = _log_inner(np.array([mode]), log_u, log_v, eps)[0]
        known = max(np.max(log_w_lows + inner_lows),
                    _log_weights(mode, n_trials, log_r, log_1mr) + inner_mode)
        keep = np.flatnonzero(best_in_block + inner_lows >= known - _LOG_SKIP)
        s = np.concatenate([np.arange(lows[b], highs[b] + 1) for b in keep])
        terms = _log_weights(s, n_trials, log_r, log_1mr) + _log_inner(s, log_u, log_v, eps)
        out[i] = min(0.0, float(logsumexp(terms)))
    return out


def log_split_pair_delta_direct(epsilons, *, n_trials: int, log_r: float, log_1mr: float,
                                log_alpha: float = 0.0, log_1malpha: float = -np.inf) -> np.ndarray:
    """Straightforward O(N^2) evaluation of the same divergence, for tests and benchmarks.

    Enumerates every outcome (x, y) with x + y = s + 1, s = 0..N, builds log P and log Q from the
    mixture definition and sums max(P - e^eps Q, 0) in log space. No tail identities, no pruning.
    """
    epsilons = np.atleast_1d(np.asarray(epsilons, dtype=float))[:, None]
    pieces = [[] for _ in range(epsilons.shape[0])]
    for s in range(int(n_trials) + 1):
        x = np.arange(s + 2, dtype=float)
        log_w = _log_weights(s, n_trials, log_r, log_1mr)
        with np.errstate(divide="ignore", invalid="ignore"):
            lb_minus = np.where((x >= 1) & (x - 1 <= s), _log_half_binom_pmf(np.clip(x - 1, 0, s), float(s)), -np.inf)
            lb_same = np.where(x <= s, _log_half_binom_pmf(np.clip(x, 0, s), float(s)), -np.inf)
        log_p = log_w + np.logaddexp(log_alpha + lb_minus, log_1malpha + lb_same)
        log_q = log_w + np.logaddexp(log_1malpha + lb_minus, log_alpha + lb_same)
        gap = epsilons + log_q[None, :] - log_p[None, :]
        with np.errstate(invalid="ignore"):
            # a gap within rounding of 0 is an outcome with P = e^eps Q exactly (e.g. eps = eps0)
            positive = (gap < -_DIRECT_GAP_TOLERANCE) & np.isfinite(log_p)[None, :]
            terms = np.where(positive, log_p[None, :] + log1mexp(np.where(positive, gap, -1.0)), -np.inf)
        for i in range(epsilons.shape[0]):
            pieces[i].append(terms[i])
    return np.array([min(0.0, float(logsumexp(np.concatenate(p)))) for p in pieces])
