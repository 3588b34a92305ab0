"""The weak view's outcomes in boxes of (s, d, m), d = a - c: the blocks of the composed tail at large n
(:mod:`shuffledp.accounting.views.weak.tail`), where even one rectangle of (a, m) per total s is too many
(at n = 10^6 the windows hold 3.8e4 totals s and 3.5e8 (s, a) pairs).

**Coordinates.** With u = s (1 + beta / 2) + m the privacy loss is

    L(s, d, m) = log((u + beta d / 2) / (u - beta d / 2)),     |d| <= s,

a function of d / u: at n = 10^6 it moves by ~1e-3 of itself when s moves by one standard deviation, so the
totals s can be grouped into blocks [s1, s2] as well. The boxes are [s1, s2] x [d1, d2] x [m1, m2]: the s
window of :class:`~shuffledp.accounting.views.weak.outcomes.WeakGrid` cut into blocks, for each block the
whole range d = -s2..s2 cut into runs, and for each run of d the whole range m = 0..n - s1 cut into runs.
Nothing inside the s window is left out; the totals outside it go into the infinity mass (certified
bound :meth:`WeakGrid.log_s_outside`).

**Loss (corner argument).** For d >= 0, L = log1p(beta d / (s (1 + beta / 2) + m - beta d / 2)) is
increasing in d and decreasing in s and m; for d <= 0, L = -log1p(beta |d| / (...)) is increasing in d,
s and m. So over a box the largest loss is L(s1, d2, m1) when d2 >= 0 and L(s2, d2, m2) when d2 < 0, and
the smallest L(s1, d1, m1) when d1 < 0 and L(s2, d1, m2) when d1 >= 0; where the box reaches d = +-s
beyond its smallest s (d2 > s1, or d1 < -s1; only in the outermost runs) the largest (smallest) is
bounded by eps0 (-eps0), the extreme losses of the view.

**Mass (upper bound).** Writing Mult_N for the multinomial law of (a, c, m) over N trials
(probabilities q, q, (k - 2) q, 1 - k q), a m Mult_n(a, c, m) / n = q Mult_(n-1)(a - 1, c, m) and
likewise for c and m, so

    P(a, c, m) = e^eps0 q Mult_(n-1)(a - 1, c, m) + q Mult_(n-1)(a, c - 1, m) + (k - 2) q Mult_(n-1)(a, c, m - 1)

(Q: e^eps0 and 1 exchanged): the P-mass of a box is a positive combination of three box probabilities
Pi(B') = Pr(S in [t1, t2], D in [e1, e2], M in [m1, m2]) of Mult_(n-1), on the box shifted by
(1, 1, 0), (1, -1, 0) and (0, 0, 1) in (s, d, m). Under Mult_(n-1), S ~ Bin(n - 1, 2 q), and given S = t,
D = 2 A - t with A ~ Bin(t, 1/2) and M ~ Bin(n - 1 - t, rho), independent. Hence

    Pi(B') <= sum over pi = 0, 1 of Pr(S in [t1, t2], S = pi mod 2) x max_(t = pi) Pr(D_t in [e1, e2])
              x max_t Pr(M_t in [m1, m2])

(the totals split by parity, since D_t lives on the d of t's parity: a maximum over both parities would
count the larger of the two half-lattices in every run, ~0.8 / sd(D) too much), and each maximum over t
in [t1, t2] is bounded without visiting every t, from unimodality:

* D: for fixed d, Pr(D_(t+2) = d) / Pr(D_t = d) = (t + 2)(t + 1) / ((t + 2)^2 - d^2), which is > 1 iff
  d^2 > t + 2: over the t of one parity the pmf at d rises, then falls, with its largest value at
  t = d^2 - 2 (same parity as d). So for the t of parity pi with smallest t_lo and largest t_hi, the
  d with d^2 <= t_lo + 2 take their largest value at t_lo, those with d^2 >= max(t_hi, t_lo + 3) at
  t_hi, and the few in between (about (t_hi - t_lo) / (2 sqrt(t)) of them) at d^2 - 2. Summing these
  maxima over the run bounds max_t Pr(D_t in run) for that parity (two interval probabilities of
  Bin(t_lo, 1/2) and Bin(t_hi, 1/2) plus a few pmf values); the larger of the two parities is taken.
* M: for fixed m, Pr(Bin(N + 1, rho) = m) / Pr(Bin(N, rho) = m) = (N + 1)(1 - rho) / (N + 1 - m), which
  is > 1 iff m > (N + 1) rho. With N in [N1, N2] (N = n - 1 - t): the m <= (N1 + 1) rho - 1 take their
  largest value at N1, the m >= N2 rho + 1 at N2, and the ~rho (N2 - N1) + 3 in between at the first N
  with m <= (N + 1) rho (the largest of that N and its two neighbours is taken, against rounding of
  the class boundaries). The sum of these maxima over a run overcounts where the peak of M's law moves
  through the run (by ~rho (N2 - N1) / (2.5 sd(M)) for a run holding the peak), so the smaller of it and
  a second bound is taken: the tails of Bin(N, rho) grow with N (N + 1 trials are N trials plus one), so
  Pr(M_N in [m1, m2]) = Pr(M_N >= m1) - Pr(M_N >= m2 + 1) <= Pr(M_N2 >= m1) - Pr(M_N1 >= m2 + 1), which
  overcounts only by the moves of the law at the run's two ends.

Every bound is a sum or product of positive terms formed in log space (interval probabilities as in
:mod:`~shuffledp.accounting.views.weak.tail_blocks`, pmfs by Loader's saddle-point form), never smaller
than the exact mass up to relative rounding ~1e-12 x (sd / run length), which the Chernoff bound's
margin :data:`~shuffledp.accounting.numerics.composed_tail.LOG_MARGIN` covers. The losses and masses
therefore dominate the pair's moment-generating function at every order: sum over boxes of
e^(lam L_max) P(B) >= sum over outcomes of e^(lam L) P. What they give too much is measured by the total
mass (1 for the pair): 1.0002 at n = 10^6 (k = 2), 1.0004 (k = 3, 4), 1.0009 at 10^4 users per round (k = 2)
and 1.012 there at k = 3 (the runs of m are short against the move of M's law across a block); at T rounds
log delta rises by at most T times its log.

**Sizes.** The loss spread ``spread`` allowed in a box (the grid width divided by the largest slope of
the subsampled loss, q e^eps0 / (1 - q + q e^eps0)) is shared: half to the runs of d (dL/dd <=
beta / (u - beta |d| / 2)), a quarter to the blocks of s, a quarter to the runs of m (|dL/du| <=
beta |d| / (u - beta |d| / 2)^2), each sized at the edge of the block's fine range: +- z sd of D and
M, with z = ``K`` for the heaviest block and shrinking with the block's weight (a disc, as the
rectangles'), runs growing by :data:`GROWTH` beyond it. The blocks of s are also at most
:data:`S_BLOCK_SD` standard deviations of S and short enough that the law of M moves by at most
:data:`M_SHIFT_SD` of its sd across a block and the pmf of D at ``Z_REF`` sd moves by at most a factor
e^:data:`D_DRIFT` (the maxima over a block stay close to its average). The runs of m come in levels of
lengths doubling, each run of d taking the coarsest level its spread allows.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import logsumexp

from shuffledp._numerics import log1mexp
from shuffledp.accounting.numerics.binomial import log_binom_pmf_loader, log_sf
from shuffledp.accounting.views.weak.outcomes import WeakGrid, loss
from shuffledp.accounting.views.weak.tail_blocks import LOG_SHRINK, edges, log_between

__all__ = ["boxes", "box_count", "GROWTH", "S_BLOCK_SD", "M_SHIFT_SD", "D_DRIFT", "Z_REF"]

#: growth of the runs outside the fine range
GROWTH = 1.25
#: the blocks of s are at most this many standard deviations of S
S_BLOCK_SD = 1.0
#: ... and the law of M moves by at most this many of its standard deviations across a block
M_SHIFT_SD = 0.5
#: ... and the pmf of D at Z_REF sd moves by at most the factor e^D_DRIFT across a block
D_DRIFT = 0.5
Z_REF = 14.0
_HALF = math.log(0.5)


def _ceil_sqrt(x: int) -> int:
    """Smallest integer r >= 0 with r^2 >= x."""
    return 0 if x <= 0 else math.isqrt(x - 1) + 1


def _assign(part: np.ndarray, cuts: np.ndarray, points: np.ndarray, log_values) -> None:
    """Add (log space) each point's value to the run [cuts[i], cuts[i + 1] - 1] that holds it."""
    if points.size == 0:
        return
    index = np.searchsorted(cuts, points, side="right") - 1
    inside = (index >= 0) & (index < part.size)
    np.logaddexp.at(part, index[inside], log_values[inside])


def _log_d_between(t: int, d_cuts: np.ndarray, low: float, high: float) -> np.ndarray:
    """log Pr(D_t in run i, low <= D_t <= high - 1) per run of ``d_cuts``, D_t = 2 A - t, A ~ Bin(t, 1/2)."""
    if high <= low:
        return np.full(d_cuts.size - 1, -np.inf)
    a_cuts = np.ceil(
        (t + np.clip(d_cuts, low, high)) / 2.0
    )  # d in [x, y] <=> a in [ceil((t+x)/2), ceil((t+y+1)/2) - 1]
    return log_between(a_cuts, float(t), _HALF, _HALF)


def log_d_max(t1: int, t2: int, d_cuts: np.ndarray) -> np.ndarray:
    """Per parity pi of the totals (rows 0 and 1): log of an upper bound on max over t in [t1, t2], t = pi
    mod 2, of Pr(D_t in run), per run [d_cuts[i], d_cuts[i + 1] - 1] (module docstring, "Mass": the pmf
    of D is unimodal in t of one parity); -inf for a parity without totals in [t1, t2]."""
    best = np.full((2, d_cuts.size - 1), -np.inf)
    for parity in (0, 1):
        lo, hi = t1 + (parity - t1) % 2, t2 - (t2 - parity) % 2
        if lo < 0:
            lo += 2
        if lo > hi:
            continue
        r_lo = math.isqrt(lo + 2)  # d^2 <= lo + 2: largest at lo
        r_hi = _ceil_sqrt(max(hi, lo + 3))  # d^2 >= max(hi, lo + 3): largest at hi
        part = np.logaddexp(
            _log_d_between(lo, d_cuts, -r_lo, r_lo + 1.0),
            np.logaddexp(
                _log_d_between(hi, d_cuts, -hi - 1.0, 1.0 - r_hi), _log_d_between(hi, d_cuts, r_hi, hi + 1.0)
            ),
        )
        middle = np.array([d for d in range(r_lo + 1, r_hi) if d % 2 == parity], dtype=float)
        if middle.size:
            d = np.concatenate([-middle[::-1], middle])
            t = np.clip(d * d - 2.0, lo, hi)  # the largest pmf at d: t = d^2 - 2 (parity of d)
            _assign(part, d_cuts, d, log_binom_pmf_loader((t + d) / 2.0, t, _HALF, _HALF))
        best[parity] = part
    return best


def log_totals(t1: int, t2: int, n_trials: float, log_p: float, log_1mp: float) -> np.ndarray:
    """log Pr(T in [t1, t2], T = pi mod 2), T ~ Bin(n_trials, p), for pi = 0, 1 (sums of pmfs, log space)."""
    t = np.arange(max(t1, 0), t2 + 1, dtype=float)
    log_pmf = log_binom_pmf_loader(t, n_trials, log_p, log_1mp)
    out = np.full(2, -np.inf)
    for parity in (0, 1):
        values = log_pmf[(t % 2) == parity]
        if values.size:
            out[parity] = logsumexp(values)
    return out


def log_m_max(
    n1: int, n2: int, m_cuts: np.ndarray, rho: float, log_rho: float, log_1mrho: float
) -> np.ndarray:
    """log of an upper bound on max over N in [n1, n2] of Pr(Bin(N, rho) in run), per run [m_cuts[i],
    m_cuts[i + 1] - 1] (module docstring, "Mass": the pmf at m is unimodal in N)."""
    g_lo = math.floor((n1 + 1) * rho) - 1  # m <= g_lo: largest at n1
    g_hi = math.ceil(n2 * rho) + 1  # m >= g_hi: largest at n2
    low = log_between(np.minimum(m_cuts, g_lo + 1.0), float(n1), log_rho, log_1mrho)
    high = log_between(np.maximum(m_cuts, float(g_hi)), float(n2), log_rho, log_1mrho)
    part = np.logaddexp(low, high)
    m = np.arange(max(g_lo + 1, 0), g_hi, dtype=float)
    if m.size:
        peak = np.ceil(m / rho) - 1.0
        values = [
            log_binom_pmf_loader(m, np.clip(peak + shift, n1, n2), log_rho, log_1mrho) for shift in (-1, 0, 1)
        ]
        _assign(part, m_cuts, m, np.maximum.reduce(values))
    # the tails are monotone in N (more trials, stochastically larger): Pr(N in run) <= Pr(M_n2 >= first)
    # - Pr(M_n1 >= last + 1), tight for runs whose ends are far from the peaks
    above = log_sf(np.maximum(m_cuts[:-1], 0.0), float(n2), log_rho, log_1mrho)
    beyond = log_sf(m_cuts[1:], float(n1), log_rho, log_1mrho) + LOG_SHRINK
    with np.errstate(divide="ignore", invalid="ignore"):
        monotone = above + log1mexp(np.minimum(beyond - above, 0.0))
    return np.minimum(part, np.where(m_cuts[1:] > m_cuts[:-1], monotone, -np.inf))


class _Sizes:
    """Runs and blocks of one setting (module docstring, "Sizes")."""

    def __init__(self, grid: WeakGrid, beta: float, spread: float, K: float):
        n, rho = grid.n_users, grid.rho
        self.grid, self.beta, self.spread, self.K = grid, beta, spread, K
        s_mid = max(float(grid.s[int(np.argmax(grid.log_w))]), 1.0)
        sd_s = math.sqrt(n * math.exp(grid.krr.log_2q) * math.exp(grid.krr.log_1m2q))
        u = self.u_low(s_mid, K)
        reach = beta * Z_REF * math.sqrt(s_mid)  # beta |d| at Z_REF sd (the central boxes)
        by_spread = 0.25 * spread * (u - reach / 2.0) ** 2 / ((1.0 + beta / 2.0) * reach)
        by_drift = D_DRIFT * 2.0 * s_mid / (Z_REF * Z_REF)
        limits = [by_spread, by_drift, S_BLOCK_SD * sd_s]
        if rho > 0:
            limits.append(M_SHIFT_SD * math.sqrt((n - s_mid) * rho * (1.0 - rho)) / rho)
        self.block = max(1, int(min(limits)))

    def u_low(self, s: float, z: float) -> float:
        """Smallest u = s (1 + beta / 2) + m in the fine range of M (z sd) at total s."""
        grid = self.grid
        m_low = (grid.n_users - s) * grid.rho - z * math.sqrt(
            (grid.n_users - s) * grid.rho * (1.0 - grid.rho)
        )
        return s * (1.0 + self.beta / 2.0) + max(m_low, 0.0)


def box_count(grid: WeakGrid, beta: float, spread: float, K: float) -> int:
    """The work of :func:`boxes`: about how many boxes it forms, plus 2000 per block of totals (a block's
    binomial tails), each about a microsecond."""
    sizes = _Sizes(grid, beta, spread, K)
    s_mid = float(grid.s[int(np.argmax(grid.log_w))])
    u = sizes.u_low(s_mid, K)
    half = K * math.sqrt(s_mid)
    run_d = max(1.0, 0.5 * spread * (u - beta * half / 2.0) / beta)
    blocks = grid.s.size / sizes.block
    return int(blocks * ((2.0 * half / run_d + 50.0) * (4.0 if grid.rho > 0 else 1.0) + 2000.0))


def boxes(grid: WeakGrid, beta: float, spread: float, K: float, log_coefficients):
    """Per block of totals s: (largest loss, smallest loss, log P-mass, log Q-mass) of each box (module
    docstring), arrays. ``log_coefficients``: log of (e^eps0 q, q, (k - 2) q)."""
    sizes = _Sizes(grid, beta, spread, K)
    width = sizes.block
    deficit = float(np.max(grid.log_w)) - grid.log_w
    s_lo, s_hi = int(grid.s[0]), int(grid.s[-1])
    for s1 in range(s_lo, s_hi + 1, width):
        s2 = min(s1 + width - 1, s_hi)
        worst = float(np.min(deficit[s1 - s_lo : s2 - s_lo + 1]))
        z = math.sqrt(max(K * K - 2.0 * worst, 1.0))
        yield _block(grid, sizes, s1, s2, z, log_coefficients)


def _d_cuts(sizes: _Sizes, s1: int, s2: int, z: float):
    """Runs of d covering -s2..s2, symmetric about 0 (run i mirrors run R - 1 - i): length sized by the
    spread within z sd, growing beyond. Returns (cuts, fine half-width, smallest u)."""
    beta = sizes.beta
    half = z * math.sqrt(s2)
    u = sizes.u_low(s1, z)
    run = max(1, int(0.5 * sizes.spread * max(u - beta * half / 2.0, 1.0) / beta))
    if run > 1:  # even: a run holds as many d of each parity (the larger parity's bound is taken)
        run -= run % 2
    cuts = [max(1, (run + 1) // 2)]  # the central run is -cuts[0] + 1 .. cuts[0] - 1
    while cuts[-1] < half and cuts[-1] <= s2:
        cuts.append(cuts[-1] + run)
    step = float(run)
    while cuts[-1] <= s2:
        step *= GROWTH
        cuts.append(cuts[-1] + int(math.ceil(step)))
    cuts[-1] = s2 + 1
    positive = np.array(cuts, dtype=float)
    return np.concatenate([1.0 - positive[::-1], positive]), half, u


def _m_levels(sizes: _Sizes, s1: int, s2: int, z: float, d_cuts, half_d: float, u: float):
    """Per run of d the level of its runs of m, and per level the cuts of the runs of m covering 0..n - s1
    (lengths doubling from level to level)."""
    grid, beta = sizes.grid, sizes.beta
    n, rho = grid.n_users, grid.rho
    runs = d_cuts.size - 1
    if rho == 0:
        return np.zeros(runs, dtype=np.int64), [np.array([0.0, 1.0])]
    top = int(n - s1)
    sd_m = math.sqrt((n - s1) * rho * (1.0 - rho))
    centre = (n - (s1 + s2) / 2.0) * rho
    half_m = z * sd_m + rho * (s2 - s1)
    reach = beta * np.minimum(np.maximum(np.abs(d_cuts[:-1]), np.abs(d_cuts[1:] - 1.0)), half_d)
    with np.errstate(divide="ignore"):
        allowed = np.minimum(0.25 * sizes.spread * np.maximum(u - reach / 2.0, 1.0) ** 2 / reach, top + 1.0)
    shortest = max(1, int(np.min(allowed)))
    levels, length = [], shortest
    while True:
        levels.append(edges(centre, half_m, length, top, GROWTH))
        if length >= 2.0 * half_m:
            break
        length *= 2
    level = np.minimum(np.floor(np.log2(np.maximum(allowed / shortest, 1.0))), len(levels) - 1)
    return level.astype(np.int64), levels


def _block(grid: WeakGrid, sizes: _Sizes, s1: int, s2: int, z: float, log_coefficients):
    beta, n = sizes.beta, int(grid.n_users)
    krr, rho = grid.krr, grid.rho
    d_cuts, half_d, u = _d_cuts(sizes, s1, s2, z)
    level, levels = _m_levels(sizes, s1, s2, z, d_cuts, half_d, u)
    log_a, log_c, log_m = log_coefficients
    # the three shifted boxes of Mult_(n-1): totals t = s - 1 (a and c terms), t = s (m term)
    # per parity of the total: sum_t w(t) Pr(D_t in run) <= sum_pi W_pi max_(t = pi) Pr(D_t in run)
    w_ac = log_totals(s1 - 1, s2 - 1, n - 1.0, krr.log_2q, krr.log_1m2q)
    w_m = log_totals(s1, s2, n - 1.0, krr.log_2q, krr.log_1m2q)
    by_parity = log_d_max(s1 - 1, s2 - 1, d_cuts - 1.0)  # d - 1 in the run
    d_a = np.logaddexp(w_ac[0] + by_parity[0], w_ac[1] + by_parity[1])
    d_c = d_a[::-1]  # d + 1 in the run: the mirror run's d - 1 (D_t is symmetric, the runs too)
    if rho > 0:
        by_parity = log_d_max(s1, s2, d_cuts)
        d_m = np.logaddexp(w_m[0] + by_parity[0], w_m[1] + by_parity[1])
    else:
        d_m = None
    d_first, d_last = d_cuts[:-1], d_cuts[1:] - 1.0
    out: tuple[list, list, list, list] = ([], [], [], [])
    for i, m_cuts in enumerate(levels):
        rows = np.flatnonzero(level == i)
        if rows.size == 0:
            continue
        if rho > 0:
            m_ac = log_m_max(n - s2, n - s1, m_cuts, rho, krr.log_rho, krr.log_1mrho)
            m_m = log_m_max(n - 1 - s2, n - 1 - s1, m_cuts - 1.0, rho, krr.log_rho, krr.log_1mrho)
        else:
            m_ac = m_m = np.zeros(1)
        pa = d_a[rows, None] + m_ac[None, :]
        pc = d_c[rows, None] + m_ac[None, :]
        terms_p = [log_a + pa, log_c + pc]
        terms_q = [log_c + pa, log_a + pc]
        if d_m is not None:
            pm = log_m + d_m[rows, None] + m_m[None, :]
            terms_p.append(pm)
            terms_q.append(pm)
        m_first, m_last = m_cuts[:-1], m_cuts[1:] - 1.0
        high, low = _corners(
            beta, s1, s2, d_first[rows, None], d_last[rows, None], m_first[None, :], m_last[None, :]
        )
        out[0].append(high.ravel())
        out[1].append(low.ravel())
        out[2].append(np.logaddexp.reduce(terms_p).ravel())
        out[3].append(np.logaddexp.reduce(terms_q).ravel())
    return tuple(np.concatenate(parts) for parts in out)


def _corners(beta: float, s1: int, s2: int, d1, d2, m1, m2):
    """(largest, smallest) loss over the boxes [s1, s2] x [d1, d2] x [m1, m2] (module docstring, "Loss")."""
    eps0 = math.log1p(beta)
    d1, d2, m1, m2 = np.broadcast_arrays(d1, d2, m1, m2)
    top = np.minimum(d2, s2)
    high = np.where(
        top >= 0, loss(s1, (s1 + np.minimum(top, s1)) / 2.0, m1, beta), loss(s2, (s2 + top) / 2.0, m2, beta)
    )
    high = np.where(top > s1, eps0, high)
    bottom = np.maximum(d1, -s2)
    low = np.where(
        bottom < 0,
        loss(s1, (s1 + np.maximum(bottom, -s1)) / 2.0, m1, beta),
        loss(s2, (s2 + bottom) / 2.0, m2, beta),
    )
    low = np.where(bottom < -s1, -eps0, low)
    return high, low
