"""The binomial law in log space, vectorised: its pmf, tails and expected excesses, from the bulk to the far
tail (the package's one binomial module).

The pmf: :func:`log_binom` (log C(N, count)), :func:`log_binom_pmf` (from log-gamma differences),
:func:`log_binom_pmf_loader` (Loader's saddle-point form, full relative precision at any N), :func:`log_pmf`
(the latter with the point masses of pi = 0 or 1) and :class:`LogPmfRange` (its values on ranges, cached).
A number of successes is ``count``; ``k`` is never a count here (it is the domain size everywhere).

For X ~ Bin(N, pi) and a real threshold t the accountants of :mod:`shuffledp.accounting.accountants.weak_adversary`
and :mod:`shuffledp.accounting.accountants.worst_case_lower` need

* ``log_sf(x, N)``            log Pr(X >= x) for integers x;
* ``log_excess_above(t, N)``  log E[(X - t)_+];
* ``log_excess_below(t, N)``  log E[(t - X)_+]  (= E[(X' - (N - t))_+] with X' = N - X ~ Bin(N, 1 - pi)).

Every quantity is a sum of positive terms; the routines keep it so. Above the mean (i = floor(t) + 1)
the excess is ``Pr(X = i) [(1 - pi) i - (t - N pi) R]`` with the tail ratio R = Pr(X >= i) / Pr(X = i)
(binomial identity E[(X - N pi); X >= i] = (1 - pi) i Pr(X = i)); centring at the mean limits the
cancellation to about 1/z^2 at z standard deviations out. R comes from the regularised incomplete
beta function (``scipy.special.betainc``) when Pr(X = i) > e^-30 and from its Lentz continued
fraction otherwise, so nothing underflows however far out. Where the difference would keep less than
1e-6 of its first term the positive series ``sum_m (i + m - t) Pr(X = i + m) / Pr(X = i)`` is summed
instead. Below the mean, E[(X - t)_+] = (N pi - t) + E[(t - X)_+] adds two positive numbers.

The number of trials N is the parameter ``n_trials`` of every function (it is the number of users
only when a caller passes it: the views pass n - 1, n - s, s, ...; the user count is ``n_users``).
Probabilities are passed as ``log_pi`` and ``log_1mpi`` (both, so that pi close to 0 or 1 keeps full
precision); ``pi = 0`` or ``1`` (a point mass) is handled exactly.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import betainc, gammaln

from shuffledp._numerics import log1mexp, logsumexp

__all__ = [
    "log_binom",
    "log_binom_pmf",
    "log_binom_pmf_loader",
    "log_pmf",
    "log_sf",
    "log_excess_above",
    "log_excess_below",
    "summed_directly",
    "LogPmfRange",
    "beta_continued_fraction",
]

_LOG_PMF_FLOOR = (
    -30.0
)  # betainc for the tail ratio only above this log-pmf (its far-tail accuracy is ~1e-9); Lentz below
_CANCELLATION_LIMIT = 1e-6  # closed-form excess kept only when the difference keeps this fraction
_CANCELLATION_LIMIT_WITH_GAP = 1e-3  # the same when the caller gives i - t without cancellation
_SERIES_CHUNK = 64
_SERIES_FIRST_CHUNK = 16  # the first round's terms; each later round doubles them, up to _SERIES_CHUNK
_SERIES_LOG_TOLERANCE = -40.0  # stop when the next terms are e^-40 below the partial sum
_CF_TOLERANCE = 1e-16
_SHORT_TAIL = 64  # tails with at most this many terms are summed directly
_CF_CHUNK = 8
#: pi = 1/2 and N at least this: tail ratios within _CENTRAL_TERMS of the centre by symmetry (_central_ratio);
#: below it (every view at n <= 10^6 and the CLI grid) the other forms, bit for bit as before
_SYMMETRIC_MIN = 1 << 24
_CENTRAL_TERMS = 64
_FAST_RATIO = 0.9  # deep tails whose pmf ratio is at most this are summed as a series (see _tail_ratio)
_CF_MAX_ITERATIONS = 1_000_000
_SMALL_THRESHOLD = 64.0  # log_excess_below sums thresholds up to this directly


# ----------------------------------------------------------------------------- the pmf


def log_binom(n_trials, count):
    """log C(n_trials, count) elementwise; -inf where count < 0 or count > n_trials (the coefficient is 0).

    Args:
        n_trials: the number of trials N (array-like).
        count: the number of successes (array-like, broadcast with ``n_trials``).

    Returns:
        log C(N, count) as a float array.
    """
    n = np.asarray(n_trials, dtype=float)
    k = np.asarray(count, dtype=float)
    valid = (k >= 0) & (k <= n)
    ks = np.where(valid, k, 0.0)
    ns = np.where(valid, n, 0.0)
    out = gammaln(ns + 1.0) - gammaln(ks + 1.0) - gammaln(ns - ks + 1.0)
    return np.where(valid, out, -np.inf)


def log_binom_pmf(count, n_trials, log_p, log_q):
    """log of C(N, count) p^count q^(N - count) given log p and log q = log(1-p), elementwise
    (differences of log-gamma values: see :func:`log_binom_pmf_loader` for full precision at large N).

    Passing both logs lets callers keep full precision when p is tiny or close to 1.
    Terms 0 * log 0 are treated as 0 (so p = 0 gives the point mass at count = 0).

    Args:
        count: the number of successes (array-like).
        n_trials: the number of trials N (array-like).
        log_p: log p.
        log_q: log(1 - p).

    Returns:
        The log pmf as a float array.
    """
    k = np.asarray(count, dtype=float)
    n = np.asarray(n_trials, dtype=float)
    with np.errstate(invalid="ignore"):
        term_p = np.where(k == 0, 0.0, k * log_p)
        term_q = np.where(n - k == 0, 0.0, (n - k) * log_q)
    return log_binom(n, k) + term_p + term_q


_STIRLING = (1.0 / 12.0, 1.0 / 360.0, 1.0 / 1260.0, 1.0 / 1680.0, 1.0 / 1188.0)
_LOG_SQRT_2PI = 0.5 * float(np.log(2.0 * np.pi))


def _stirling_error_formula(n):
    """log(n!) - log(sqrt(2 pi n) (n/e)^n) for n >= 1 (Loader 2000): series above 15, gammaln below."""
    n = np.asarray(n, dtype=float)
    s0, s1, s2, s3, s4 = _STIRLING
    nn = n * n
    with np.errstate(divide="ignore", invalid="ignore"):
        value = np.where(
            n > 500,
            (s0 - s1 / nn) / n,
            np.where(
                n > 80,
                (s0 - (s1 - s2 / nn) / nn) / n,
                np.where(
                    n > 35,
                    (s0 - (s1 - (s2 - s3 / nn) / nn) / nn) / n,
                    (s0 - (s1 - (s2 - (s3 - s4 / nn) / nn) / nn) / nn) / n,
                ),
            ),
        )
        direct = gammaln(n + 1.0) - (n + 0.5) * np.log(n) + n - _LOG_SQRT_2PI
    return np.where(n <= 15, direct, value)


_STIRLING_TABLE_SIZE = 4097
_STIRLING_TABLE = np.concatenate(
    [[0.0], _stirling_error_formula(np.arange(1, _STIRLING_TABLE_SIZE, dtype=float))]
)


def _stirling_error(n):
    """Stirling error at integer n >= 1 (table below 4097, two-term series above)."""
    n = np.asarray(n, dtype=float)
    s0, s1 = _STIRLING[0], _STIRLING[1]
    out = np.asarray((s0 - s1 / (n * n)) / n, dtype=float)
    small = n < _STIRLING_TABLE_SIZE
    if small.any():
        out = out.copy() if out.ndim else out.reshape(1).copy()
        out.reshape(-1)[small.reshape(-1)] = _STIRLING_TABLE[n[small].astype(np.int64)]
        out = out.reshape(n.shape)
    return out


#: log_binom_pmf_loader: up to this many values, its Stirling errors and deviances each from one call
_JOINT_VALUES = 2048
_DEVIANCE_BLOCK = 128  # _deviance: the series' first rounds as rows of one array up to this many values
_ODD = np.arange(3.0, 80.0, 2.0)  # 2 j + 1 for j = 1..39


def _deviance(x, n, mean, log_p, difference):
    """bd0(x, M) = x log(x / M) + M - x >= 0 with M = ``mean`` = n p, p = e^log_p, for x >= 1 (Loader 2000).

    ``difference`` is x - M computed by the caller without cancellation; ``mean`` and ``log_p`` are per value
    (arrays, so that one call serves both terms of :func:`log_binom_pmf_loader`). Near x = M the series in
    v = (x - M) / (x + M) is summed; elsewhere bd0 = x log1p((x - M) / M) - (x - M), or with logs when
    M underflows. No log of a large number is ever subtracted. Each form is evaluated on its own values only
    (elementwise: the same values as over the whole array).
    """
    tiny = mean < 1e-280  # p underflows or nearly: logs (x >= 1 is then far from M)
    close = ~tiny & (np.abs(difference) < 0.1 * (x + mean))
    if not close.all():
        general = np.empty(x.shape)
        far = ~close & ~tiny
        if far.any():
            xf, df = x[far], difference[far]
            with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
                general[far] = xf * np.log1p(df / mean[far]) - df
        if tiny.any():
            xt = x[tiny]
            with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
                general[tiny] = xt * (np.log(xt) - np.log(n[tiny]) - log_p[tiny]) - xt
        if not close.any():
            return general
        xc, dc = x[close], difference[close]
    else:
        general, xc, dc = None, x, difference
    v = dc / (2.0 * xc - dc)  # (x - M) / (x + M)
    total = dc * v
    term = 2.0 * xc * v
    v2 = v * v
    # The test below is first made at the term where the largest |v| should pass it (step / total ~
    # v^(2j) / (2j + 1)); the values do not depend on that: once a value's step is below 1e-17 of its
    # total (half an ulp), every later step is 100 times smaller still and leaves it unchanged.
    largest = float(np.max(np.abs(v))) if v.size else 0.0
    first_test = min(39, max(1, int(-39.0 / (2.0 * math.log(largest))))) if 0.0 < largest < 1.0 else 1
    # Rounds j = 1, 2, ...: term *= v2, step = term / (2j + 1), total += step (|v| < 0.1: each term is at least
    # 100 times smaller), to j = 39 at most. For a few values the rounds up to the first test are formed at
    # once, each a row: np.multiply.accumulate and np.add.accumulate along the rounds make the same products
    # and sums in the same order as the loop (one call each instead of first_test of each).
    j, done = 0, False
    if v.size <= _DEVIANCE_BLOCK:
        j = first_test
        factors = np.empty((j, v.size))
        np.multiply(term, v2, out=factors[0])
        factors[1:] = v2
        terms = np.multiply.accumulate(factors, axis=0)
        steps = terms / _ODD[:j, None]
        sums = np.empty((j + 1, v.size))
        sums[0] = total
        sums[1:] = steps
        term, step, total = terms[-1], steps[-1], np.add.accumulate(sums, axis=0)[-1]
        done = not np.any(np.abs(step) > 1e-17 * np.abs(total))
    while not done and j < 39:
        j += 1
        term = term * v2
        step = term / (2 * j + 1)
        total = total + step
        done = j >= first_test and not np.any(np.abs(step) > 1e-17 * np.abs(total))
    if general is None:
        return np.asarray(total, dtype=float).reshape(close.shape)
    general[close] = total
    return general


def _by_parts(function, parts, joint: bool) -> list:
    """``function`` (elementwise) of each part, a tuple of its argument arrays (of one length): one call on the
    parts side by side when ``joint`` (few values, where numpy's cost per call dominates), else one call per
    part (larger temporaries cost more than the calls saved). The values are the same either way."""
    if not joint:
        return [function(*part) for part in parts]
    values = function(*(np.concatenate(columns) for columns in zip(*parts)))
    return np.split(values, np.cumsum([len(part[0]) for part in parts])[:-1])


def log_binom_pmf_loader(count, n_trials, log_p, log_q):
    """log of C(N, count) p^count q^(N - count) to full relative precision for every N (Loader 2000,
    "saddle point").

    ``log_binom_pmf`` subtracts log-gamma values of size N log N, which leaves an absolute error of
    about N log N * 1e-16 in the log (2e-6 at N = 1e9); here the binomial coefficient and the powers
    are combined into Stirling-error and deviance terms that are each small, so the error stays
    ~1e-15 relative. ``log_p`` and ``log_q`` = log(1 - p) are given as logs (p may be e^-1e300);
    ``count`` outside [0, N] gives -inf. Elementwise over arrays ``count`` and ``n_trials``.

    Args:
        count: the number of successes (array-like).
        n_trials: the number of trials N (array-like, broadcast with ``count``).
        log_p: log p.
        log_q: log(1 - p).

    Returns:
        The log pmf as a float array of the broadcast shape.
    """
    k, n = np.broadcast_arrays(np.asarray(count, dtype=float), np.asarray(n_trials, dtype=float))
    inner = (k > 0) & (k < n)
    every = bool(inner.all())  # then no value is set by the edge cases, and no masked copies are needed
    if every:
        out = None
        kk, nn = k.ravel(), n.ravel()  # C order, as the masked copies k[inner], n[inner]
    else:
        out = np.full(k.shape, -np.inf)
        with np.errstate(invalid="ignore", over="ignore"):  # n log q may be below -1.8e308: -inf
            lower = (k == 0) & (n >= 0)
            out[lower] = np.where(n[lower] == 0, 0.0, n[lower] * log_q)
            upper = (k == n) & (n > 0)
            out[upper] = n[upper] * log_p
        if not inner.any():
            return out
        kk, nn = k[inner], n[inner]
    rest = nn - kk  # n - k is exact (integers below 2^53)
    size = kk.size
    means = (nn * np.exp(log_p), nn * np.exp(log_q))
    # k - n p without cancellation: from p when p <= 1/2, from q = 1 - p otherwise
    difference = kk - means[0] if log_p <= log_q else means[1] - rest
    # the three Stirling errors (of n, k and n - k) and the two deviances (of k from n p, of n - k from n q)
    joint = size <= _JOINT_VALUES
    stirling = _by_parts(_stirling_error, [(nn,), (kk,), (rest,)], joint)
    deviance = _by_parts(
        _deviance,
        [
            (kk, nn, means[0], np.full(size, log_p), difference),
            (rest, nn, means[1], np.full(size, log_q), -difference),
        ],
        joint,
    )
    value = stirling[0] - stirling[1] - stirling[2] - deviance[0] - deviance[1]
    # log(2 pi k (n - k) / n)
    value = value - 0.5 * (np.log(2.0 * np.pi) + np.log(kk) + np.log(rest) - np.log(nn))
    if every:
        return value.reshape(k.shape)
    out[inner] = value
    return out


def log_pmf(count, n_trials, log_pi: float, log_1mpi: float):
    """log Pr(Bin(N, pi) = count), elementwise; -inf outside 0..N (Loader's saddle-point form: full relative
    precision at any N, where differences of log-gamma values would lose ~1e-16 N log N).

    Args:
        count: the number of successes (array-like).
        n_trials: the number of trials N (array-like, broadcast with ``count``).
        log_pi: log pi (-inf: the point mass at 0).
        log_1mpi: log(1 - pi) (-inf: the point mass at N).

    Returns:
        The log pmf as a float array of the broadcast shape.
    """
    x, n_trials = np.broadcast_arrays(np.asarray(count, dtype=float), np.asarray(n_trials, dtype=float))
    if log_pi == -np.inf:
        return np.where(x == 0, 0.0, -np.inf)
    if log_1mpi == -np.inf:
        return np.where(x == n_trials, 0.0, -np.inf)
    return log_binom_pmf_loader(x, n_trials, log_pi, log_1mpi)


class LogPmfRange:
    """log Pr(Bin(N, pi) = count) on ranges lo..hi of integers (-inf outside 0..N), cached across calls.

    A request next to the cached range extends it by the missing values only (each value is elementwise,
    so the same as computed alone); one far from it (more than 4 x its own size plus the range's away) is
    computed alone, so memory stays O(window) however the requests wander (e.g. the windows of many
    epsilons).

    Args:
        n_trials: the number of trials N.
        log_pi: log pi.
        log_1mpi: log(1 - pi).
    """

    __slots__ = ("lo", "log_1mpi", "log_pi", "n_trials", "values")

    def __init__(self, n_trials: int, log_pi: float, log_1mpi: float):
        self.n_trials, self.log_pi, self.log_1mpi = n_trials, log_pi, log_1mpi
        self.lo, self.values = 0, np.empty(0)

    def _of(self, lo: int, hi: int) -> np.ndarray:
        return log_pmf(np.arange(lo, hi + 1, dtype=float), self.n_trials, self.log_pi, self.log_1mpi)

    def __call__(self, lo: int, hi: int) -> np.ndarray:
        if hi < lo:
            return np.empty(0)
        c_lo, c_hi = self.lo, self.lo + self.values.size - 1
        if not self.values.size:
            self.lo, self.values = lo, self._of(lo, hi)
            return self.values
        if c_lo <= lo and hi <= c_hi:
            return self.values[lo - c_lo : hi - c_lo + 1]
        new_lo, new_hi = min(lo, c_lo), max(hi, c_hi)
        if new_hi - new_lo + 1 > 4 * (hi - lo + 1) + self.values.size:  # far from the cached range
            return self._of(lo, hi)
        below = [self._of(new_lo, c_lo - 1)] if new_lo < c_lo else []
        above = [self._of(c_hi + 1, new_hi)] if new_hi > c_hi else []
        self.lo, self.values = new_lo, np.concatenate([*below, self.values, *above])
        return self.values[lo - new_lo : hi - new_lo + 1]

    def of(self, s: np.ndarray) -> np.ndarray:
        """The same for a float array of consecutive integers (other integers, e.g. a stride: computed
        alone, not cached; each value is elementwise, so the same).

        Args:
            s: increasing integers, as floats.

        Returns:
            log Pr(Bin(N, pi) = s) at each.
        """
        if s.size and s[-1] - s[0] + 1 != s.size:
            return log_pmf(s, self.n_trials, self.log_pi, self.log_1mpi)
        return self(int(s[0]), int(s[-1])) if s.size else np.empty(0)


def _series(x, n_trials, t, log_odds, first_moment: bool, gap=None):
    """Batched :func:`_series_batch` (memory stays ~ _SERIES_BATCH x _SERIES_CHUNK floats)."""
    if x.size <= _SERIES_BATCH:
        return _series_batch(x, n_trials, t, log_odds, first_moment, gap)
    out = np.empty(x.shape)
    for start in range(0, x.size, _SERIES_BATCH):
        part = slice(start, start + _SERIES_BATCH)
        out[part] = _series_batch(
            x[part], n_trials[part], t[part], log_odds, first_moment, None if gap is None else gap[part]
        )
    return out


_SERIES_BATCH = 2048


def _series_batch(x, n_trials, t, log_odds, first_moment: bool, gap=None):
    """sum_{m >= 0} w_m r_m with r_m = pmf(x + m) / pmf(x) and w_m = (x + m - t) or 1 (vectorised).

    ``gap`` (x - t, computed by the caller without cancellation) replaces x - t in the weights.

    Used above the mean, where the ratios (N - x - m) / (x + m + 1) * odds are below 1 and decreasing.
    Each round adds the next terms of every unfinished row: _SERIES_FIRST_CHUNK in the first round, twice
    as many in each later one, up to _SERIES_CHUNK (half the rows of a types view's evaluation need at most
    ~12 terms, a tenth more than ~40: a fixed round of 64 computed ~5 times the terms needed). The work
    arrays hold one chunk position per row (term j of every row contiguous): the running sum of the log
    ratios is then one vector addition per term of the round, or one ``np.add.accumulate`` along the chunk
    axis for a few rows (the same additions, in the same order, as a cumulative sum along each row, which is
    ~8x slower on rows this short), and each row's terms are summed from a row-major copy, as
    ``terms.sum(axis=1)`` (numpy's pairwise summation of the row). A weight 1 is not multiplied in, and the
    support mask is applied only to rounds that reach beyond N.
    """
    total = np.zeros(x.shape)
    gap = (x - t) if gap is None else gap
    log_r = np.zeros(x.shape)  # log r_m of the current m
    m = np.zeros(x.shape)
    active = np.arange(x.size)
    every_step = np.arange(_SERIES_CHUNK, dtype=float)[:, None]
    work = np.empty(3 * _SERIES_CHUNK * x.size)
    chunk = _SERIES_FIRST_CHUNK
    while active.size:
        steps = every_step[:chunk]
        xa, Na, ga, ma = x[active], n_trials[active], gap[active], m[active]
        mm, log_ratio, log_rs = work[: 3 * chunk * active.size].reshape(3, chunk, active.size)
        np.add(ma, steps, out=mm)  # m values of this round
        # log_ratio = log(max(N - x - m, 0)) - log(x + m + 1) + log odds
        np.subtract(Na - xa, mm, out=log_ratio)
        np.maximum(log_ratio, 0.0, out=log_ratio)
        with np.errstate(divide="ignore"):
            np.log(log_ratio, out=log_ratio)
        np.add(xa, mm, out=log_rs)
        np.add(log_rs, 1.0, out=log_rs)
        np.log(log_rs, out=log_rs)
        np.subtract(log_ratio, log_rs, out=log_ratio)
        np.add(log_ratio, log_odds, out=log_ratio)
        # log_rs[j] = log r_m + sum of the round's log ratios before j (0, ratio 0, ratio 0 + ratio 1, ...),
        # each log_rs[j] = log_rs[j - 1] + log_ratio[j - 1]: for a few rows in one np.add.accumulate along the
        # chunk axis (the same additions in the same order; one call instead of one per term), for many rows
        # in a loop over j (accumulate along the outer axis is the slower there)
        log_rs[0] = 0.0
        # at eps0 near the largest double (log odds ~ -1.7e308) a running sum overflows to -inf: the log of a
        # ratio that is 0 in floating point, which is the value wanted
        with np.errstate(over="ignore"):
            if active.size <= _ACCUMULATE_ROWS:
                np.add.accumulate(log_ratio[:-1], axis=0, out=log_rs[1:])
            else:
                log_rs[1] = log_ratio[0]
                for j in range(2, chunk):
                    np.add(log_rs[j - 1], log_ratio[j - 1], out=log_rs[j])
            np.add(log_r[active], log_rs, out=log_rs)
            last_log = log_rs[-1] + log_ratio[-1]
        terms = np.exp(log_rs, out=log_rs)
        if first_moment:
            np.multiply(np.add(ga, mm, out=mm), terms, out=terms)  # weights x + m - t
        if not np.all(xa + (ma + steps[-1, 0]) <= Na):  # some terms beyond N: they are 0
            terms[~(xa + (ma + steps) <= Na)] = 0.0
        total[active] += np.ascontiguousarray(terms.T).sum(axis=1)
        log_r[active] = last_log
        m[active] += float(chunk)
        chunk = min(2 * chunk, _SERIES_CHUNK)
        with np.errstate(divide="ignore"):
            next_weight = np.log(np.maximum(ga + m[active], 1.0)) if first_moment else 0.0
            done = (
                last_log + next_weight - np.log(np.maximum(total[active], 1e-300)) < _SERIES_LOG_TOLERANCE
            ) & (log_ratio[-1] < 0.0) | (xa + m[active] > Na)
        active = active[~done]
    return total


_ACCUMULATE_ROWS = 128  # _series_batch: running sums by np.add.accumulate up to this many rows


def beta_continued_fraction(a, b, z):
    """Continued fraction of the regularised incomplete beta I_z(a, b) (modified Lentz), vectorised.

    I_z(a, b) = z^a (1 - z)^b / (a B(a, b)) * cf; converges fast when z < (a + 1) / (a + b + 2), i.e.
    above the mean. Converged entries leave the working set every few iterations.
    """
    tiny = 1e-300

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
        out[index[converged]] = h[converged]
        keep = ~converged
        index, a, b, qab, qap, qam, c, d, h = (x[keep] for x in (index, a, b, qab, qap, qam, c, d, h))
        if m > _CF_MAX_ITERATIONS:  # pragma: no cover - not reached above the mean
            raise RuntimeError(
                f"incomplete-beta continued fraction did not converge in {_CF_MAX_ITERATIONS} steps."
            )
    return out


def _central_ratio(x, n_trials, lp):
    """Pr(X >= x) / Pr(X = x) for X ~ Bin(N, 1/2) and N / 2 <= x <= N / 2 + :data:`_CENTRAL_TERMS`, by symmetry.

    Pr(X >= x) = Pr(X <= N - x), so for 2 x > N, Pr(X >= x) = (1 - C) / 2 with C = Pr(N - x < X < x), the
    2 x - N - 1 central terms, summed as Pr(X = x) times products of the pmf ratios
    Pr(X = j - 1) / Pr(X = j) = j / (N - j + 1) (at most 2 u each); for 2 x = N, Pr(X >= x) = (1 + Pr(X = x)) / 2.
    So R = (1 - C) e^-lp / 2 (or (e^-lp + 1) / 2), where C <= 64 Pr(X = N/2) <= 0.02 at N >= 2^24: 1 - C keeps
    all but a few ulp. ``betainc`` at a = b ~ 5e8, x = 1/2 takes ~30 us a value, this ~0.1 us a term. Entries
    with C > 1/2 (not reached at N >= 2^24) come back as nan (the caller keeps its other forms for them).
    """
    excess = 2.0 * x - n_trials  # >= 0 (x at or above the mean), an exact integer
    out = np.full(x.shape, np.nan)
    at_half = excess == 0.0
    out[at_half] = 0.5 * (np.exp(-lp[at_half]) + 1.0)
    above = excess > 0.0
    if above.any():
        xa, na, terms = x[above], n_trials[above], (excess[above] - 1.0).astype(np.int64)
        ratio = np.ones(xa.shape)  # Pr(X = j) / Pr(X = x), j going down from x - 1
        central = np.zeros(xa.shape)
        j = xa.copy()
        for step in range(int(terms.max()) if terms.size else 0):
            live = step < terms
            ratio = np.where(live, ratio * (j / (na - j + 1.0)), ratio)
            central += np.where(live, ratio, 0.0)
            j -= 1.0
        mass = central * np.exp(lp[above])  # C
        values = 0.5 * (1.0 - mass) * np.exp(-lp[above])
        out[above] = np.where(mass <= 0.5, values, np.nan)
    return out


def _tail_ratio(x, n_trials, lp, log_pi, log_1mpi):
    """Pr(X >= x) / Pr(X = x) for mean < x <= N (given lp = log Pr(X = x)), without underflow."""
    ratio = np.empty(x.shape)
    short = (n_trials - x) <= _SHORT_TAIL  # a few terms to the end: sum them (betainc loses ~1e-9 at huge N)
    if short.any():
        ratio[short] = _series(x[short], n_trials[short], x[short], log_pi - log_1mpi, first_moment=False)
    if log_pi == log_1mpi:  # pi = 1/2: at the centre of a huge N, by symmetry (betainc costs ~30 us there)
        central = ~short & (n_trials >= _SYMMETRIC_MIN) & (2.0 * x - n_trials <= 2.0 * _CENTRAL_TERMS)
        if central.any():
            values = _central_ratio(x[central], n_trials[central], lp[central])
            done = np.isfinite(values)
            ratio[np.flatnonzero(central)[done]] = values[done]
            short = short.copy()
            short[np.flatnonzero(central)[done]] = True  # taken: not recomputed below
    direct = (lp > _LOG_PMF_FLOOR) & ~short
    if direct.any():
        ratio[direct] = betainc(x[direct], n_trials[direct] - x[direct] + 1.0, np.exp(log_pi)) * np.exp(
            -lp[direct]
        )
    deep = ~direct & ~short
    if deep.any():
        # where the pmf falls fast (first ratio pmf(x + 1) / pmf(x) <= 0.9: at most ~400 terms to e^-40,
        # the ratios only fall further) the positive series is summed in a few vectorised chunks;
        # elsewhere the continued fraction, I_pi(x, N - x + 1) = pmf(x) (1 - pi) cf
        fast = deep & ((n_trials - x) / (x + 1.0) * np.exp(log_pi - log_1mpi) <= _FAST_RATIO)
        if fast.any():
            ratio[fast] = _series(x[fast], n_trials[fast], x[fast], log_pi - log_1mpi, first_moment=False)
        slow = deep & ~fast
        if slow.any():
            ratio[slow] = np.exp(log_1mpi) * beta_continued_fraction(
                x[slow], n_trials[slow] - x[slow] + 1.0, np.exp(log_pi)
            )
    return ratio


def _log_sf_right(x, n_trials, log_pi, log_1mpi):
    """log Pr(X >= x) for integer arrays x with mean < x <= N (right tail)."""
    lp = log_pmf(x, n_trials, log_pi, log_1mpi)
    return lp + np.log(_tail_ratio(x, n_trials, lp, log_pi, log_1mpi))


def log_sf(x, n_trials, log_pi: float, log_1mpi: float):
    """log Pr(X >= x), X ~ Bin(N, pi), for integer-valued arrays x (broadcast with N)."""
    x, n_trials = np.broadcast_arrays(np.asarray(x, dtype=float), np.asarray(n_trials, dtype=float))
    x, n_trials = np.floor(x).astype(float), n_trials.astype(float)
    out = np.full(x.shape, -np.inf)
    if log_pi == -np.inf:  # X = 0
        return np.where(x <= 0, 0.0, -np.inf)
    if log_1mpi == -np.inf:  # X = N
        return np.where(x <= n_trials, 0.0, -np.inf)
    out[x <= 0] = 0.0
    inside = (x > 0) & (x <= n_trials)
    mean = n_trials * np.exp(log_pi)
    right = inside & (x > mean)
    if right.any():
        out[right] = _log_sf_right(x[right], n_trials[right], log_pi, log_1mpi)
    left = inside & ~right  # 1 - Pr(X <= x - 1) = 1 - Pr(N - X >= N - x + 1), the latter a right tail
    if left.any():
        flipped = _log_sf_right(n_trials[left] - x[left] + 1.0, n_trials[left], log_1mpi, log_pi)
        out[left] = log1mexp(flipped)
    return out


def _log_excess_right(t, n_trials, log_pi, log_1mpi, d=None):
    """log E[(X - t)_+] for mean <= t < N (the excess lives in the right tail).

    With i = floor(t) + 1 and the binomial identity E[(X - N pi); X >= i] = (1 - pi) i Pr(X = i),
    E[(X - t)_+] = Pr(X = i) [(1 - pi) i - (t - N pi) R],  R = Pr(X >= i) / Pr(X = i).
    Centring at the mean limits the cancellation to about 1/z^2 at z standard deviations out (a few
    digits at most); where it would keep less than 1e-4 the positive series is summed instead.
    """
    if d is None:
        d = t - n_trials * np.exp(log_pi)
    return _log_high_part(np.floor(t) + 1.0, t, n_trials, d, log_pi, log_1mpi)


def _log_high_part(i, t, n_trials, d, log_pi, log_1mpi, gap=None):
    """log sum_{x >= i} (x - t) Pr(X = x) = log Pr(X = i) [(1 - pi) i - d R(i)] (d = t - N pi, i <= N),
    from the closed form where the difference keeps at least :data:`_CANCELLATION_LIMIT` of its first
    term, else from the positive series (its weights from ``gap`` = i - t when the caller formed it
    without cancellation)."""
    lp = log_pmf(i, n_trials, log_pi, log_1mpi)
    first = np.exp(log_1mpi) * i
    if gap is None:
        # d = 0 (t at the mean; eps = 0 in the worst-case rows): the value is the first term, (1 - pi) i, and
        # R, whose cost is largest there (incomplete beta at the centre), is not needed
        ratio = np.zeros(i.shape)
        needed = d != 0.0
        if needed.any():
            ratio[needed] = _tail_ratio(i[needed], n_trials[needed], lp[needed], log_pi, log_1mpi)
        value = first - d * ratio
    else:
        # d = (i - N pi) - gap: the sum of E[(X - i); X >= i] / Pr(X = i) = (1 - pi) i - (i - N pi) R >= 0 (exact
        # pieces) and gap R >= 0, so the caller's d, which carries the rounding of its own pieces (a few ulp of
        # d), is not differenced with (1 - pi) i (with d from the weak rows' lambda, 3 digits lost there make
        # 2.2e-12 at eps0 = 25, eps = 7.5, where t* is within 6e-4 of i)
        ratio = _tail_ratio(i, n_trials, lp, log_pi, log_1mpi)
        value = (first - (i - n_trials * np.exp(log_pi)) * ratio) + gap * ratio
    out = np.empty(i.shape)
    # with the caller's exact gap the series is exact wherever the closed form cancels, so the closed form
    # is kept only where it loses at most 3 digits (relative error <~ 1e-13; allowing 6 digits would
    # leave the weak rows 1e-10 below their value at eps ~ 12)
    limit = _CANCELLATION_LIMIT if gap is None else _CANCELLATION_LIMIT_WITH_GAP
    good = value > limit * np.maximum(first, 1e-300)
    out[good] = lp[good] + np.log(value[good])
    todo = ~good
    if todo.any():
        # i - t = (i - N) + N (1 - pi) - d: integers and exact pieces, no difference of large numbers
        gap = (
            (i[todo] - n_trials[todo]) + n_trials[todo] * np.exp(log_1mpi) - d[todo]
            if gap is None
            else gap[todo]
        )
        ratio = _series(i[todo], n_trials[todo], t[todo], log_pi - log_1mpi, first_moment=True, gap=gap)
        with np.errstate(divide="ignore"):
            out[todo] = lp[todo] + np.log(ratio)
    return out


def log_excess_above(t, n_trials, log_pi: float, log_1mpi: float, d=None):
    """log E[(X - t)_+], X ~ Bin(N, pi), for real arrays t (broadcast with N); -inf where it is 0.

    ``d``, if given, is t - N pi computed by the caller without cancellation (t and N pi may agree to
    many digits, e.g. for pi near 1); it then replaces the difference taken here.
    """
    t, n_trials = np.broadcast_arrays(np.asarray(t, dtype=float), np.asarray(n_trials, dtype=float))
    t, n_trials = t.astype(float), n_trials.astype(float)
    if log_pi == -np.inf:  # X = 0
        with np.errstate(divide="ignore"):
            return np.where(t < 0, np.log(np.maximum(-t, 0.0)), -np.inf)
    if log_1mpi == -np.inf:  # X = N
        with np.errstate(divide="ignore"):
            return np.where(t < n_trials, np.log(np.maximum(n_trials - t, 0.0)), -np.inf)
    out = np.full(t.shape, -np.inf)
    mean = n_trials * np.exp(log_pi)
    d = (t - mean) if d is None else np.broadcast_to(np.asarray(d, dtype=float), t.shape)
    right = (d >= 0) & (t < n_trials)
    if right.any():
        out[right] = _log_excess_right(t[right], n_trials[right], log_pi, log_1mpi, d[right])
    left = d < 0  # (mean - t) + E[(t - X)_+], both positive
    if left.any():
        below = np.full(int(left.sum()), -np.inf)
        tl, Nl, dl = t[left], n_trials[left], d[left]
        inside = tl > 0
        if inside.any():
            below[inside] = _log_excess_right(
                Nl[inside] - tl[inside], Nl[inside], log_1mpi, log_pi, -dl[inside]
            )
        out[left] = np.logaddexp(np.log(-dl), below)
    return out


def summed_directly(t, n_trials):
    """Where :func:`log_excess_below` sums E[(t - X)_+] directly over x < t: one sum for all of them, as wide
    as the largest such t, so a caller that reuses some of its values recomputes these rows together."""
    return (t > 0) & (t <= _SMALL_THRESHOLD) & (n_trials >= 1)


def log_excess_below(t, n_trials, log_pi: float, log_1mpi: float, d=None):
    """log E[(t - X)_+], X ~ Bin(N, pi), for real arrays t (broadcast with N); -inf where it is 0.

    ``d`` as in :func:`log_excess_above` (t - N pi, exact if given).
    """
    t, n_trials = np.broadcast_arrays(np.asarray(t, dtype=float), np.asarray(n_trials, dtype=float))
    out = np.array(
        log_excess_above(
            n_trials - t, n_trials, log_1mpi, log_pi, None if d is None else -np.asarray(d, dtype=float)
        ),
        dtype=float,
        ndmin=1,
    ).reshape(t.shape)
    # small t: sum_{x < t} (t - x) Pr(X = x) directly (a few terms); N - t would round to N when t is far
    # below the spacing of doubles near N (e.g. t = 3e-9, N = 1e8), losing the whole excess
    small = summed_directly(t, n_trials)
    if small.any():
        ts, Ns = t[small], n_trials[small]
        x = np.arange(int(math.ceil(float(ts.max()))), dtype=float)[None, :]
        with np.errstate(divide="ignore", invalid="ignore"):
            terms = log_pmf(x, Ns[:, None], log_pi, log_1mpi) + np.log(np.maximum(ts[:, None] - x, 0.0))
        out[small] = logsumexp(terms, axis=1)
    return out


# ----------------------------------------------------------------------------- cheap certified bounds
# Chernoff-type upper bounds, elementary operations only (no special functions); loose by at most a
# polynomial factor. Used to decide what may be left out and to bound what was left out.


def _log_kl_tail(x, n_trials, log_pi, log_1mpi, rest=None):
    """-N KL(x / N || pi) (the Chernoff exponent of Pr(X >= x) above the mean), elementwise; ``rest`` = N - x
    if the caller formed it without cancellation (x may agree with n_trials to every digit)."""
    from scipy.special import xlogy

    x, n_trials = np.broadcast_arrays(np.asarray(x, dtype=float), np.asarray(n_trials, dtype=float))
    rest = n_trials - x if rest is None else np.broadcast_to(np.asarray(rest, dtype=float), x.shape)
    with np.errstate(divide="ignore", invalid="ignore"):
        value = -(xlogy(x, x) - x * log_pi + xlogy(rest, rest) - rest * log_1mpi - xlogy(n_trials, n_trials))
    return np.minimum(value, 0.0)


def log_sf_bound(x, n_trials, log_pi: float, log_1mpi: float):
    """Certified upper bound on log Pr(X >= x): the Chernoff bound above the mean, 0 below it."""
    x, n_trials = np.broadcast_arrays(np.asarray(x, dtype=float), np.asarray(n_trials, dtype=float))
    out = np.zeros(x.shape)
    out[x > n_trials] = -np.inf
    above = (x > n_trials * np.exp(log_pi)) & (x <= n_trials)
    if above.any():
        out[above] = _log_kl_tail(x[above], n_trials[above], log_pi, log_1mpi)
    return out


def log_excess_above_bound(t, n_trials, log_pi: float, log_1mpi: float, rest=None):
    """Certified upper bound on log E[(X - t)_+].

    Below the mean: (N pi - t) + sd / 2 (E[(t - X)_+] <= E[(mu - X)_+] = E|X - mu| / 2 <= sd / 2).
    Above: min(sd / 2, e^(-N KL(t/N || pi)) / (e phi)) with phi = log(t (1 - pi) / ((N - t) pi)),
    from x_+ <= e^(phi x - 1) / phi. ``rest``, if given, is N - t formed by the caller without
    cancellation (t within a few ulps of N: the bound depends on N - t through its logarithm).
    """
    t, n_trials = np.broadcast_arrays(np.asarray(t, dtype=float), np.asarray(n_trials, dtype=float))
    rest = n_trials - t if rest is None else np.broadcast_to(np.asarray(rest, dtype=float), t.shape)
    pi = np.exp(log_pi)
    mean = n_trials * pi
    half_sd = 0.5 * np.sqrt(n_trials * pi * np.exp(log_1mpi))
    out = np.full(t.shape, -np.inf)
    below = t <= mean
    with np.errstate(divide="ignore"):
        out[below] = np.log(mean[below] - t[below] + half_sd[below])
        above = (t > mean) & (rest > 0)  # t < n_trials, read from n_trials - t (t may round to n_trials)
        if above.any():
            ta, Na, ra = t[above], n_trials[above], rest[above]
            phi = np.log(ta) + log_1mpi - np.log(ra) - log_pi
            # phi <= 0 only by rounding just above the mean: the sd / 2 bound applies there
            with np.errstate(invalid="ignore"):
                chernoff = np.where(
                    phi > 0,
                    _log_kl_tail(ta, Na, log_pi, log_1mpi, ra) - 1.0 - np.log(np.where(phi > 0, phi, 1.0)),
                    np.inf,
                )
            out[above] = np.minimum(np.log(half_sd[above]), chernoff)
    return out


def log_excess_below_bound(t, n_trials, log_pi: float, log_1mpi: float):
    """Certified upper bound on log E[(t - X)_+] (the bound above, for N - X ~ Bin(N, 1 - pi))."""
    t, n_trials = np.broadcast_arrays(np.asarray(t, dtype=float), np.asarray(n_trials, dtype=float))
    return log_excess_above_bound(n_trials - t, n_trials, log_1mpi, log_pi)


def high_part(i, t, n_trials, log_pi: float, log_1mpi: float, d=None, gap=None):
    """log sum_{x >= i} (x - t) Pr(X = x) for integers i >= N pi and t <= i (one tail ratio per entry).

    Equals Pr(X = i) [(1 - pi) i - (t - N pi) R(i)] by the identity E[(X - N pi); X >= i] =
    (1 - pi) i Pr(X = i); the terms are positive when t <= N pi and otherwise the difference loses
    about log10(z^2) digits at z standard deviations (the series is used where it would lose more).
    ``gap``, if given, is i - t formed by the caller without cancellation (t may agree with i to every
    digit); the series then weighs its terms with it.
    """
    i, t, n_trials = (
        a.astype(float)
        for a in np.broadcast_arrays(
            np.asarray(i, dtype=float), np.asarray(t, dtype=float), np.asarray(n_trials, dtype=float)
        )
    )
    d = (t - n_trials * np.exp(log_pi)) if d is None else np.broadcast_to(np.asarray(d, dtype=float), t.shape)
    out = np.full(i.shape, -np.inf)
    inside = i <= n_trials
    if not inside.any():
        return out
    gap = None if gap is None else np.broadcast_to(np.asarray(gap, dtype=float), i.shape)[inside]
    out[inside] = _log_high_part(i[inside], t[inside], n_trials[inside], d[inside], log_pi, log_1mpi, gap)
    return out
