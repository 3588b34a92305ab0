"""The weak view's outcomes in rectangles of (a, m), one row per total s: the blocks of the composed tail
at large n (:mod:`shuffledp.accounting.views.weak.tail`), where every (s, a, m) is far too many.

For each total s of the window (:class:`~shuffledp.accounting.views.weak.outcomes.WeakGrid`, +- K sd)
the whole range a = 0..s and the whole range m = 0..n - s are cut into runs: near the centre (within
``Z_row`` sd, where ``Z_row`` shrinks with the row's weight like a disc in the (s, a) plane) runs short
enough that the loss moves by at most ``spread`` inside a rectangle; outside, runs growing
geometrically (factor :data:`GROWTH`) to the ends of the support. Nothing of a row is left out.

**Loss.** L(a, m) = log((s + m + beta a) / (s + m + beta (s - a))) is increasing in a and monotone in m
for fixed a, so over a rectangle [a1, a2] x [m1, m2] it lies between min(L(a1, m1), L(a1, m2)) and
max(L(a2, m1), L(a2, m2)).

**Mass.** With A ~ Bin(s, 1/2) and M ~ Bin(n - s, rho) independent given s, the rectangle's P-mass is
w(s) / n (s Pr(A in I) Pr(M in J) + Pr(A in I) E[M; M in J] + beta E[A; A in I] Pr(M in J)), a sum of
positive terms, with E[A; A in I] = s / 2 Pr(A' in I - 1), E[s - A; A in I] = s / 2 Pr(A' in I),
A' ~ Bin(s - 1, 1/2), and E[M; M in J] = (n - s) rho Pr(M' in J - 1), M' ~ Bin(n - s - 1, rho). Each
interval probability is formed in log space from the binomial tails of
:func:`~shuffledp.accounting.numerics.binomial.log_sf` on the side of the mean it lies on (a run in the
right tail as Pr(X >= x1) - Pr(X >= x2 + 1), in the left tail from the mirrored tails, a run holding the
mean as 1 minus both tails); the subtracted tail is taken (1 - 1e-12) times, so a relative error of the
tails up to 1e-12 cannot make a mass smaller than its exact value. The runs are never much lighter than
the tail they start (a run is at least one sd long, or the whole tail beyond it), so the subtraction
costs at most a few digits of the 1e-12.
"""

from __future__ import annotations

import math

import numpy as np

from shuffledp._numerics import log1mexp
from shuffledp.accounting.numerics.binomial import log_sf
from shuffledp.accounting.views.weak.outcomes import WeakGrid, loss

__all__ = ["rectangles", "edges", "log_between", "LOG_SHRINK", "GROWTH", "Z_FINE"]

#: growth of the runs outside the central range
GROWTH = 1.6
#: half-width of the central range (sd) of the heaviest row
Z_FINE = 14.0
#: the runs of m are short enough for the a within this many sd of the centre
Z_M = 4.0
LOG_SHRINK = math.log1p(-1e-12)  # the subtracted tail of an interval probability, taken (1 - 1e-12) times


def edges(centre: float, half: float, width: int, top: int, growth: float = GROWTH) -> np.ndarray:
    """Run starts covering 0..top (and top + 1 as the end): runs of ``width`` within ``half`` of
    ``centre``, then growing by ``growth`` out to 0 and to top."""
    lo = max(0, int(math.floor(centre - half)))
    hi = min(top + 1, int(math.ceil(centre + half)) + 1)
    inner = list(range(lo, hi, max(1, width)))
    if not inner or inner[-1] != hi:
        inner.append(hi)
    up, step = [], float(max(1, width))
    at = hi
    while at < top + 1:
        step *= growth
        at = min(top + 1, at + int(math.ceil(step)))
        up.append(at)
    down, step = [], float(max(1, width))
    at = lo
    while at > 0:
        step *= growth
        at = max(0, at - int(math.ceil(step)))
        down.append(at)
    return np.array(sorted(set(down[::-1] + inner + up)), dtype=float)


def log_between(cuts: np.ndarray, n_trials: float, log_p: float, log_1mp: float) -> np.ndarray:
    """log Pr(cuts[i] <= X <= cuts[i + 1] - 1), X ~ Bin(n_trials, p), for sorted integer ``cuts`` (clipped to
    0..n_trials + 1), rounded up (a run right of the mean as a difference of right tails, left of it of left tails,
    holding it as 1 minus both; the subtracted tail taken (1 - 1e-12) times), one tail per cut."""
    cuts = np.clip(cuts, 0.0, n_trials + 1.0)
    points, where = np.unique(cuts, return_inverse=True)
    mean = n_trials * math.exp(log_p)
    right = np.full(points.shape, np.nan)
    left = np.full(points.shape, np.nan)
    upper, lower = points > mean, points < mean + 1.0
    right[upper] = log_sf(points[upper], n_trials, log_p, log_1mp)  # Pr(X >= x)
    left[lower] = log_sf(n_trials - points[lower] + 1.0, n_trials, log_1mp, log_p)  # Pr(X <= x - 1)
    right, left = right[where], left[where]
    x1, x2 = cuts[:-1], cuts[1:] - 1.0
    with np.errstate(divide="ignore", invalid="ignore"):
        beyond, before = right[1:] + LOG_SHRINK, left[:-1] + LOG_SHRINK
        in_right = right[:-1] + log1mexp(np.minimum(beyond - right[:-1], 0.0))
        in_left = left[1:] + log1mexp(np.minimum(before - left[1:], 0.0))
        in_middle = log1mexp(np.minimum(np.logaddexp(beyond, before), 0.0))
        out = np.where(x1 > mean, in_right, np.where(x2 < mean, in_left, in_middle))
    return np.where(x1 > x2, -np.inf, out)


def _runs(edges, N, log_p, log_1mp):
    """(first, last, log Pr(in run), log Pr(X' in run - 1) with X' ~ Bin(N - 1, p)) of the runs."""
    first, last = edges[:-1], edges[1:] - 1.0
    log_in = log_between(edges, N, log_p, log_1mp)
    if N >= 1:
        log_shift = log_between(edges - 1.0, N - 1.0, log_p, log_1mp)
    else:
        log_shift = np.full(first.shape, -np.inf)
    return first, last, log_in, log_shift


def rectangles(grid: WeakGrid, beta: float, spread: float, z_fine: float = Z_FINE):
    """Per total s of the window: (largest loss, smallest loss, log P-mass, log Q-mass) of each rectangle
    of (a, m) (module docstring), arrays."""
    n, krr, half = grid.n_users, grid.krr, math.log(0.5)
    deficit = float(np.max(grid.log_w)) - grid.log_w
    for i, s in enumerate(grid.s):
        z_row = math.sqrt(max(z_fine * z_fine - 2.0 * deficit[i], 1.0))
        N = n - s
        sd_m = math.sqrt(N * grid.rho * (1.0 - grid.rho))
        m_centre = N * grid.rho
        m_first = max(0.0, m_centre - z_row * sd_m)
        half_a = z_row * math.sqrt(s) / 2.0
        inner = s + m_first + beta * max(0.0, s / 2.0 - half_a)  # smallest s + m + beta min(a, c) inside
        width_a = int(spread * max(inner, 1.0) / (2.0 * beta)) if beta > 0 else int(s) + 1
        a_edges = edges(s / 2.0, half_a, max(1, width_a), int(s))
        a1, a2, log_pa, log_ea_shift = _runs(a_edges, s, half, half)
        log_ea = math.log(s / 2.0) + log_ea_shift if s > 0 else np.full(a1.shape, -np.inf)
        log_ec = (math.log(s / 2.0) + log_between(a_edges, s - 1.0, half, half)) if s > 0 else log_ea
        if grid.rho > 0:
            # runs of m sized for the a within Z_M sd of the centre (wider a: the same runs, looser bounds)
            top_loss = float(
                abs(loss(s, min(s, s / 2.0 + min(half_a, Z_M * math.sqrt(s) / 2.0)), m_first, beta))
            )
            slope = top_loss / max(s + m_first, 1.0)  # |dL/dm| <= |L| / (s + m) inside the central range
            width_m = int(spread / slope) if slope > 0 else int(N) + 1
            m_edges = edges(m_centre, z_row * sd_m, max(1, width_m), int(N))
            m1, m2, log_pm, log_em_shift = _runs(m_edges, N, krr.log_rho, krr.log_1mrho)
            log_em = math.log(N * grid.rho) + log_em_shift if N > 0 else np.full(m1.shape, -np.inf)
        else:
            m1 = m2 = np.zeros(1)
            log_pm, log_em = np.zeros(1), np.full(1, -np.inf)
        corners = [loss(s, a[:, None], m[None, :], beta) for a in (a1, a2) for m in (m1, m2)]
        high = np.maximum(corners[2], corners[3])
        low = np.minimum(corners[0], corners[1])
        with np.errstate(divide="ignore"):
            log_s = math.log(s) if s > 0 else -np.inf
        common = np.logaddexp(log_s + log_pa[:, None] + log_pm[None, :], log_pa[:, None] + log_em[None, :])
        log_row = grid.log_w[i] - math.log(n)
        log_p = log_row + np.logaddexp(common, math.log(beta) + log_ea[:, None] + log_pm[None, :])
        log_q = log_row + np.logaddexp(common, math.log(beta) + log_ec[:, None] + log_pm[None, :])
        yield high.ravel(), low.ravel(), log_p.ravel(), log_q.ravel()
