"""Pieces of the k = 2 pair-sum bounds (:mod:`shuffledp.accounting.views.worst.k2_pair_search`): row sums
in log space, the boundary h0 (:class:`Boundary`), and what its lazy bounds' keys use instead of exact values -- windows whose outside mass is bounded by Bernstein's inequality,
and a geometric lower bound on a binomial tail (each an upper bound on the pair sum's delta once used
there; see that module's "Lazy bounds"), and a Chernoff upper bound on that tail for the keys' lower
values ("Deciding with keys").
"""

from __future__ import annotations

import math

import numpy as np

from shuffledp._numerics import log1mexp
from shuffledp.accounting.numerics.binomial import LogPmfRange, log_pmf, log_sf
from shuffledp.accounting.numerics.search import first_high_integer

__all__ = [
    "Boundary",
    "WindowSums",
    "convolve_positive",
    "log_sum_rows",
    "log_sum_scalars",
    "shared",
    "key_window",
    "window_size",
    "log_tail_below",
    "log_tail_above",
]

#: the half-width of the pair sums' windows in standard deviations (plus 30)
WINDOW_SDS = 20.0
_GUESS_HALF = 24
_NEAR_STEPS = 5  # windows tried around the guessed boundary before the search


def log_sum_rows(x: np.ndarray) -> np.ndarray:
    """log sum exp along axis 1 (rows of -inf give -inf)."""
    top = np.max(x, axis=1)
    safe = np.where(np.isfinite(top), top, 0.0)
    with np.errstate(divide="ignore"):
        return np.log(np.sum(np.exp(x - safe[:, None]), axis=1)) + safe


def convolve_positive(x: np.ndarray, y: np.ndarray, direct_up_to: int, chunk: int = 2048) -> np.ndarray:
    """``np.convolve(x, y)`` of positive arrays; when the shorter is longer than ``direct_up_to``, as the
    sum of its convolutions with chunks of ``chunk`` values of the shorter one (numpy's direct
    convolution slows ~5x once the shorter array leaves the cache). Every value is a sum of positive
    products either way (relative error <= length x 2^-52 in any order), not the same last bits."""
    if y.size > x.size:
        x, y = y, x
    if y.size <= direct_up_to:
        return np.convolve(x, y)
    out = np.zeros(x.size + y.size - 1)
    for k in range(0, y.size, chunk):
        part = np.convolve(x, y[k : k + chunk])
        out[k : k + part.size] += part
    return out


def log_sum_scalars(values: list[float]) -> float:
    """log sum exp of a few floats with ``math`` (for keys: relative error ~1e-15, far inside their cushion;
    scipy's logsumexp costs ~0.3 ms a call)."""
    top = max(values)
    if top == -math.inf:
        return top
    return top + math.log(math.fsum(math.exp(v - top) for v in values))


def key_window(N: int, log_pi: float, log_1mpi: float, sds: float) -> tuple[int, np.ndarray, float]:
    """:func:`~shuffledp.accounting.numerics.windows.log_window`'s window with an upper bound on the mass
    outside it instead of the exact mass: Bernstein, Pr(|X - mean| > t) <= 2 e^(-t^2 / (2 (var + t / 3)))
    (every count outside lies more than t = sds sd + 30 from the mean; a side clipped at 0 or N has none)."""
    sd = math.sqrt(N * math.exp(log_pi + log_1mpi))
    mean, half = N * math.exp(log_pi), sds * sd + 30.0
    lo, hi = max(0, int(math.floor(mean - half))), min(N, int(math.ceil(mean + half)))
    log_w = log_pmf(np.arange(lo, hi + 1, dtype=float), N, log_pi, log_1mpi)
    sides = (lo > 0) + (hi < N)
    log_out = math.log(sides) - half * half / (2.0 * (sd * sd + half / 3.0)) if sides else -np.inf
    return lo, log_w, log_out


def window_size(N: int, log_pi: float, log_1mpi: float, sds: float = WINDOW_SDS) -> int:
    """The number of values of :func:`~shuffledp.accounting.numerics.windows.log_window`'s window."""
    sd = math.sqrt(N * math.exp(log_pi + log_1mpi))
    mean, half = N * math.exp(log_pi), sds * sd + 30.0
    return min(N, int(math.ceil(mean + half))) - max(0, int(math.floor(mean - half))) + 1


def log_tail_below(y: int, other: LogPmfRange) -> float:
    """A lower bound on log Pr(L >= y), L ~ Bin(N, pi) (for keys): the pmf at y times the geometric sum
    of the next M - 1 terms (M ~ one sd) at the smallest ratio among them, pmf(k + 1) / pmf(k) =
    (N - k) pi / ((k + 1) (1 - pi)) falling in k, lowered by a relative 1e-9 for rounding."""
    N = other.n_trials
    if y > N:
        return -np.inf
    if y <= 0:
        return 0.0
    M = max(1, min(int(math.sqrt(N * math.exp(other.log_pi + other.log_1mpi))), N - y + 1))
    k = y + M - 2  # the last ratio used
    log_r = math.log(N - k) - math.log(k + 1) + other.log_pi - other.log_1mpi if M > 1 else 0.0
    if M == 1:
        log_sum = 0.0
    elif log_r >= 0.0:
        log_sum = math.log(M)
    else:
        log_sum = float(log1mexp(M * log_r)) - float(log1mexp(log_r))
    return float(other(y, y)[0]) + log_sum - 1e-9


def log_tail_above(y: int, other: LogPmfRange) -> float:
    """An upper bound on log Pr(L >= y), L ~ Bin(N, pi) (for keys' lower values): Chernoff,
    Pr(L >= y) <= e^(-N KL(y / N || pi)) for y >= N pi (else 1), raised by a relative 1e-6 for rounding."""
    N = other.n_trials
    if y > N:
        return -np.inf
    if y <= N * math.exp(other.log_pi):
        return 0.0
    x = y / N
    kl = x * (math.log(x) - other.log_pi) + ((1.0 - x) * (math.log1p(-x) - other.log_1mpi) if y < N else 0.0)
    return min(0.0, -N * kl * (1.0 - 1e-6) + 1e-6)


def shared(memo: dict, key: tuple, make):
    """memo[key], made by ``make()`` the first time (pieces that depend on key alone: the same arrays)."""
    if key not in memo:
        memo[key] = make()
    return memo[key]


class Boundary:
    """The boundary h0 of a pair sum (:class:`~shuffledp.accounting.views.worst.k2_pair_search.PairSum`: its ``log_f``,
    ``total``, ``mean``, ``var``, ``skew`` and ``_last``)."""

    __slots__ = ()

    def boundary(self, log_ratio: float) -> int:
        """Smallest h with log f(h - 1) - log f(h) > log_ratio (h in 1 .. total + 1).

        The gap g(h) = log f(h - 1) - log f(h) is non-decreasing (log-concavity), so the answer is the
        h of a window where g crosses log_ratio. First a window of three values around a guess (the last
        boundary moved by var x the change of log_ratio, or the normal-approximation guess with its
        skewness term) is tried and widened towards the crossing (:meth:`_boundary_near`); if g does not
        cross there, an exponential search from the normal guess brackets the answer, bisection narrows
        the bracket to 2 ``_GUESS_HALF`` values (:func:`~shuffledp.accounting.numerics.search.first_high_integer`),
        and one vectorised window of log f settles it. Either way the answer is the first h whose computed
        gap exceeds
        log_ratio after one that does not, from the same values of log f."""
        total = self.total
        if total < 1:
            return 1
        x = self.var * log_ratio
        if self._last is not None:
            guess = self._last[1] + int(round(self.var * (log_ratio - self._last[0])))
        else:
            guess = int(round(self.mean + 0.5 + x + self.skew * (x * x - self.var) / (2.0 * self.var**2)))
        found = self._boundary_near(min(max(guess, 1), total), log_ratio)
        if found is None:
            found = self._boundary_search(log_ratio)
        self._last = (log_ratio, found)
        return found

    def _boundary_near(self, guess: int, log_ratio: float) -> int | None:
        """The boundary if the gap crosses log_ratio near the guess (else None): a window of three values
        around it, widened (doubling) towards the crossing up to ``_NEAR_STEPS`` times."""
        first, last = guess - 1, guess + 1
        for _ in range(_NEAR_STEPS):
            if first < 2 or last > self.total:
                return None
            lf = self.log_f(np.arange(first - 2, last + 1))  # from h0 - 2 (log_bound reads it)
            with np.errstate(invalid="ignore"):
                above = lf[1:-1] - lf[2:] > log_ratio  # g(h) > log_ratio at h = first .. last
            if not above[0] and above[-1]:
                return first + int(np.flatnonzero(above)[0])
            if above[0]:
                first -= last - first + 1
            else:
                last += last - first + 1
        return None

    def _boundary_search(self, log_ratio: float) -> int:
        """The boundary by exponential search and bisection from the normal guess (see :meth:`boundary`)."""
        total = self.total

        def above(h):  # g(h) > log_ratio, for 1 <= h <= total
            lf = self.log_f(np.array([h - 1, h]))
            with np.errstate(invalid="ignore"):
                return bool(lf[0] - lf[1] > log_ratio)

        guess = min(max(int(round(self.mean + 0.5 + self.var * log_ratio)), 1), total)
        # bracket: g(low) <= log_ratio < g(high), with low = 0 and high = total + 1 as sentinels
        low, high = first_high_integer(
            above, guess, first=1, last=total, step=_GUESS_HALF, width=2 * _GUESS_HALF
        )
        # g(low) <= log_ratio < g(high) (sentinels aside): the answer is in low + 1 .. high
        first, last = max(low, 0), min(high, total)
        if last < first + 1:
            return high
        lf = self.log_f(np.arange(first, last + 1))
        with np.errstate(invalid="ignore"):
            gaps = lf[:-1] - lf[1:]  # g(h) at h = first + 1 .. last
        hits = np.flatnonzero(gaps > log_ratio)
        return first + 1 + int(hits[0]) if hits.size else high


class WindowSums:
    """log f(h) and log Pr(S >= x) of a pair sum over its summed window
    (:class:`~shuffledp.accounting.views.worst.k2_pair_search.PairSum`: its ``log_w``, ``lo``, ``_other``,
    ``exact_tail``, ``_log_f`` and ``_log_sf``)."""

    __slots__ = ()

    def log_f(self, h: np.ndarray) -> np.ndarray:
        """log Pr(S = h) over the summed window (a lower value by at most the mass outside it).

        Values are kept per h: each is one row's own sum (:func:`log_sum_rows` reduces each row
        separately), so a value read back is the one a new evaluation would give, bit for bit."""
        h = np.asarray(h, dtype=np.int64)
        known = self._log_f
        missing = np.array(sorted({int(v) for v in h if int(v) not in known}), dtype=np.int64)
        if missing.size:
            known.update(zip(missing.tolist(), self._log_f_rows(missing).tolist()))
        return np.array([known[int(v)] for v in h], dtype=float)

    def _log_f_rows(self, h: np.ndarray) -> np.ndarray:
        """log Pr(S = h) for each h, evaluated (one row of window terms per h).

        Term (h, t) is log_w[t] + log Pr(L = h - lo - t): read from the other binomial's log pmf
        reversed, where t runs forwards, as a strided view (no index array; the same sums)."""
        width = self.log_w.size
        lo_all = int(h.min()) - self.lo - width + 1
        hi_all = int(h.max()) - self.lo
        reversed_other = self._other(lo_all, hi_all)[::-1]  # position i: L = hi_all - i
        windows = np.lib.stride_tricks.sliding_window_view(reversed_other, width)
        return log_sum_rows(self.log_w[None, :] + windows[hi_all - (h - self.lo)])

    def log_sf(self, x: int) -> float:
        """log Pr(S >= x) over the summed window (a lower value), kept per x (epsilon-free)."""
        x = int(x)
        if x not in self._log_sf:
            self._log_sf[x] = self._log_sf_of(x)
        return self._log_sf[x]

    def _log_sf_of(self, x: int) -> float:
        """log Pr(S >= x) over the summed window, evaluated.

        The other binomial's tails at x - i (i over the window: consecutive integers y_lo..y_hi) are
        suffix sums of its pmf plus one tail Pr(L > y_hi) from ``log_sf``, summed in linear space relative
        to their largest term (positive terms: relative error <= width x 1e-16; terms below e^-700 of
        the largest underflow to 0, which only lowers the tail, i.e. raises the bound)."""
        width = self.log_w.size
        y_lo, y_hi = x - self.lo - width + 1, x - self.lo
        other = self._other
        if not self.exact_tail:  # a key: a lower value of the tail (the bound only rises)
            top = log_tail_below(y_hi + 1, other)
        else:
            top = float(log_sf(y_hi + 1, other.n_trials, other.log_pi, other.log_1mpi))
        logs = np.concatenate([self._other(max(y_lo, 0), y_hi) if y_hi >= 0 else np.empty(0), [top]])
        ref = float(np.max(logs))
        if ref == -np.inf:
            return -np.inf
        tails = np.cumsum(np.exp(logs - ref)[::-1])[::-1][:-1]  # Pr(L >= y) / e^ref, y = max(y_lo, 0)..y_hi
        with np.errstate(divide="ignore"):
            log_tails = np.log(tails) + ref
        if y_lo < 0:  # Pr(L >= y) = 1 for y <= 0
            log_tails = np.concatenate([np.zeros(min(-y_lo, width)), log_tails])
        # window position t pairs with y = x - lo - t: reverse
        return float(log_sum_rows((self.log_w + log_tails[::-1])[None, :])[0])
