"""The worst-case family's exact sums: the exact delta of explicit datasets (marginals of the real
shuffled histogram) as row sums (:class:`FamilySums`). Each is a LOWER bound on the worst case over
datasets: a marginal (post-processing) of the histogram of one pair of neighbouring datasets. The family
as a view is :class:`~shuffledp.accounting.worst_case.families.family.WorstFamilies`; its members as
views are in :mod:`~shuffledp.accounting.worst_case.families.members` (their fast sums are read here);
the rows of each member are in :mod:`~shuffledp.accounting.worst_case.families.rows`.

Every sum over s is one closed-form expected excess per s (:mod:`shuffledp.accounting.numerics.binomial`),
over a window of s around the mean widened on each side until its edge term is e^-40 below the
largest term (the terms are unimodal in s; each widening step is sized from the slope of the log
terms at that edge, so the window ends a little beyond that point instead of doubling); what lies outside only makes the true value larger, so it
is dropped. A window also stops growing beyond 2^20 terms or once its peak is below e^-700 (outside
the accuracy promise; the partial sum is still a lower bound). delta = 0 for eps >= eps0 comes out of
the sums (t_s >= s there).
"""

from __future__ import annotations

import math

import numpy as np

from shuffledp._numerics import logsumexp
from shuffledp.accounting.numerics.binomial import LogPmfRange, log_pmf
from shuffledp.accounting.params import KrrParams, ShuffleSetting
from shuffledp.accounting.worst_case.families.rows import RowSum, all_x0_rows, none_rows

__all__ = ["FamilySums", "FAMILY"]

#: the datasets (and directions) the lower bound maximises over
FAMILY = ("none", "all-x0 D||D'", "all-x0 D'||D")
_LOG_EDGE = 40.0  # a window is widened while its edge term is within e^40 of the largest
_LOG_BEYOND_PROMISE = -700.0  # below e^-700 (~1e-304) a lower value is returned without widening
_MAX_WINDOW = 1 << 20  # rows summed per family member at most
_SKIP_MIN_ROWS = 64  # blocks of fewer rows are evaluated whole
_LOG_FIRST = 2.0  # rows whose bound is within e^2 of the block's largest bound are evaluated first
#: rows whose bound is this far below an exact row are not evaluated: at most _MAX_WINDOW rows each below e^-50 of the largest term leave out at most
#: 2^20 e^-50 = 2.0e-16 of the sum, half an ulp, and only non-negative terms (the sum stays a lower value)
_LOG_LEFT_OUT = 50.0
_LOG_BOUND_MARGIN = 1e-9  # relative allowance for the rounding of a member's value and of its bound
#: first windows longer than this are summed coarsely where the member allows it (``RowSum.rising``)
_COARSE_MIN_ROWS = 1 << 16
#: the coarse sum evaluates g at about this many points of a first window
_COARSE_POINTS = 1 << 14
#: the chord of log w under a block of weights loses at most this (relative) of the block's weight
_COARSE_WEIGHT_LOSS = 1e-10
#: a coarse window stops growing at this many blocks (the partial sum is a lower value)
_COARSE_MAX_BLOCKS = 1 << 18
#: within the accuracy promise a coarse sum is kept where it is provably within this (log) of the row sum
_COARSE_LOSS = 1e-9
#: ... and otherwise the rows are summed, when the first window has at most this many rows
_COARSE_MAX_ROWS = 1 << 22


def _growth_step(values, peak, width, from_low):
    """Rows to add on one side of a window of log terms so that its edge falls to peak - _LOG_EDGE.

    Extrapolates the slope of the last rows at that edge linearly (the log terms are close to concave,
    so this overshoots rather than undershoots); at least 16, at most the current width (doubling).
    Only the speed depends on this: the window keeps growing until its edges are low enough."""
    if not np.isfinite(peak) or values.size < 3:
        return max(16, width)
    edge, inner = (values[0], values[2]) if from_low else (values[-1], values[-3])
    slope = 0.5 * (inner - edge)  # log-decrease per row outwards
    if not (np.isfinite(edge) and np.isfinite(slope)) or slope <= 0:
        return max(16, width)
    need = (edge - (peak - _LOG_EDGE)) / slope
    return int(min(max(16, width), max(16, math.ceil(1.25 * need) + 16)))


#: the exponents phi tried by :func:`_mgf_bound` (any phi > 0 gives a valid bound; the grid only makes it tight)
_PHIS = np.exp(np.linspace(-12.0, 5.0, 86))


def _mgf_bound(total, n, log_p):
    """Certified bound on log sum_s Bin(n, p)(s) E[(Y_s)_+] where, for every phi > 0,
    E[e^(phi Y_S)] = e^pre(phi) (1 - p + p g(phi))^n (``total(phi)`` = (pre, log g)): from
    x_+ <= e^(phi x - 1) / phi, the minimum over a grid of phi of pre - 1 - log phi + n log(1 + p (g - 1))."""
    pre, log_g = total(_PHIS)
    with np.errstate(over="ignore", invalid="ignore"):
        value = pre - 1.0 - np.log(_PHIS) + n * np.log1p(math.exp(log_p) * np.expm1(log_g))
    value = value[np.isfinite(value)]
    return float(np.min(value)) if value.size else np.inf


def _log_geometric(lam, length: int):
    """log sum_{m < length} e^(lam m), elementwise (lam = -inf: the first term alone)."""
    lam = np.asarray(lam, dtype=float)
    out = np.full(lam.shape, math.log(length))
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        down = lam < 0.0
        out[down] = np.log(-np.expm1(lam[down] * length)) - np.log(-np.expm1(lam[down]))
        up = lam > 0.0
        out[up] = lam[up] * (length - 1) + np.log(-np.expm1(-lam[up] * length)) - np.log(-np.expm1(-lam[up]))
    out[np.isnan(lam)] = -np.inf
    return out


def _log_block_weights(law: LogPmfRange, starts: np.ndarray, block: int, chord: int) -> np.ndarray:
    """A lower value of log sum_{s in [a, a + block)} w(s) for each start a (s <= N), w = ``law``'s pmf.

    ``chord`` = 1: the rows' weights summed. ``chord`` > 1 (a divisor of ``block``): on each piece
    [c, c + chord) log w lies above its chord from c to c + chord (the binomial pmf is log-concave), and the
    chord's terms are a geometric sum; the chord is below log w by at most kappa chord^2 / 8, kappa the
    largest -(second difference of log w) on the piece, at most 1 / (s + 1) + 1 / (N - s - 1)."""
    n = law.n_trials
    pieces = block // chord
    offsets = np.arange(pieces + 1, dtype=float) * chord
    out = np.empty(starts.size)
    per = max(1, (1 << 20) // (pieces + 1))
    for first in range(0, starts.size, per):
        a = starts[first : first + per].astype(float)[:, None]
        if chord == 1:
            s = a + offsets[None, :-1]
            values = log_pmf(s, float(n), law.log_pi, law.log_1mpi)
            out[first : first + per] = logsumexp(values, axis=1)
            continue
        points = a + offsets[None, :]
        lw = log_pmf(points, float(n), law.log_pi, law.log_1mpi)
        with np.errstate(invalid="ignore"):
            lam = (lw[:, 1:] - lw[:, :-1]) / chord
        lam = np.where(np.isneginf(lw[:, 1:]) & np.isfinite(lw[:, :-1]), -np.inf, lam)
        terms = lw[:, :-1] + _log_geometric(lam, chord)
        out[first : first + per] = logsumexp(np.where(np.isnan(terms), -np.inf, terms), axis=1)
    return out


def _window(n_max, mean, var, s_min):
    """The first window (lo, hi) of :meth:`FamilySums._sum_rows` (None: empty sum)."""
    s_min = max(0, int(math.floor(s_min)))
    if s_min > n_max:
        return None
    centre = min(max(mean, s_min), n_max)
    half = 8.0 * math.sqrt(var) + 32.0
    return max(s_min, int(centre - half)), min(n_max, int(math.ceil(centre + half)))


def _coarse(member, window) -> bool:
    """Whether ``member`` is summed by blocks (:meth:`CoarseSums.coarse_sum`): its g is known non-decreasing
    and its first window is longer than :data:`_COARSE_MIN_ROWS` (n of order 10^8 and more; never on the CLI
    grid)."""
    return member.rising is not None and window[1] - window[0] + 1 > _COARSE_MIN_ROWS


class CoarseSums:
    """The family sums' coarse sums at huge windows (first windows over :data:`_COARSE_MIN_ROWS` rows), with
    the block weights cached across epsilons (they depend on the law of s alone): :meth:`sum` for a member
    whose g is non-decreasing in s (blocks, refined within the accuracy promise), :meth:`strided` for another
    member beyond the promise (the rows at one stride)."""

    def __init__(self):
        self._cache: dict[tuple, dict[int, float]] = {}

    def sum(self, member, lo: int, hi: int, n_max: int) -> float | None:
        """The coarse value of ``member`` over its first window [lo, hi] and beyond (:meth:`coarse_sum`);
        within the promise the blocks are made 4 times shorter until they are within :data:`_COARSE_LOSS` of
        the row sum, and None where they cannot be and the rows are few enough to be summed instead.

        Args:
            member: a :class:`RowSum` with ``rising`` and ``weight``.
            lo: the first window's first row.
            hi: its last row.
            n_max: the largest s.

        Returns:
            The log of a lower value of the member's (unfinished) sum over s, or None (sum the rows).
        """
        block, chord = self.strides(member)
        while True:
            value, close = self.coarse_sum(member, lo, hi, n_max, block, chord)
            if close or block == chord:
                break
            block = max(chord, block // 4 // chord * chord)
        return value if close or hi - lo + 1 > _COARSE_MAX_ROWS else None

    @staticmethod
    def strided(member, lo: int, hi: int, s_min: int) -> float:
        """A sum of fewer of the same non-negative terms: the rows of [max(lo, s_min), hi] at multiples of one
        stride (from the law alone, as the blocks), NaN rows taken as 0 (a lower value, for a member beyond the
        promise whose g is not known monotone).

        Args:
            member: a :class:`RowSum`.
            lo: the first window's first row.
            hi: its last row.
            s_min: the smallest row with a non-zero term.

        Returns:
            The log of that partial sum.
        """
        stride = math.ceil((16.0 * math.sqrt(member.var) + 65.0) / _COARSE_POINTS)
        rows = np.arange(-(-max(lo, s_min) // stride) * stride, hi + 1, stride, dtype=float)
        values = member.rows(rows) if rows.size else np.full(1, -np.inf)
        return float(logsumexp(np.where(np.isnan(values), -np.inf, values)))

    @staticmethod
    def strides(member) -> tuple[int, int]:
        """(block, chord) of the coarse sum of ``member``: from its law alone, not from epsilon, so that every
        epsilon sums the same blocks (the coarse value is then non-increasing in epsilon, as g is).

        Args:
            member: a :class:`RowSum` with ``weight``.

        Returns:
            (block, chord): ~:data:`_COARSE_POINTS` blocks over +-8 standard deviations of s, and the chord's
            piece length (its loss kappa chord^2 / 8 at most :data:`_COARSE_WEIGHT_LOSS`), block a multiple of it.
        """
        n, sd = member.weight.n_trials, math.sqrt(member.var)
        low, high = max(member.mean - 10.0 * sd, 0.0), min(member.mean + 10.0 * sd, n - 1.0)
        kappa = 1.0 / (low + 1.0) + 1.0 / max(n - high - 1.0, 1.0)
        chord = max(1, int(math.sqrt(8.0 * _COARSE_WEIGHT_LOSS / kappa)))
        rows = 16.0 * sd + 65.0
        return chord * max(1, math.ceil(rows / _COARSE_POINTS / chord)), chord

    def block_weights(self, member, blocks: np.ndarray, block: int, chord: int) -> np.ndarray:
        """Lower values of the log weight of each block (index j: rows [j block, (j + 1) block)), cached.

        Args:
            member: a :class:`RowSum` with ``weight``.
            blocks: the block indices.
            block: the block length.
            chord: the chord's piece length (1: the rows summed).

        Returns:
            One log weight per block.
        """
        law = member.weight
        cache = self._cache.setdefault((law.n_trials, law.log_pi, law.log_1mpi, block, chord), {})
        missing = np.array([j for j in blocks.tolist() if j not in cache], dtype=np.int64)
        if missing.size:
            for j, value in zip(missing.tolist(), _log_block_weights(law, missing * block, block, chord)):
                cache[j] = float(value)
        return np.array([cache[j] for j in blocks.tolist()])

    def coarse_sum(self, member, lo: int, hi: int, n_max: int, block: int, chord: int) -> tuple[float, bool]:
        """A lower value of the sum over s of w(s) g(s) for a member whose g is non-decreasing in s
        (``RowSum.rising``): each block [a, a + block) contributes (a lower value of its weight) x g(a) (g is
        not below g(a) in the block), g asked at one row a block; blocks are added on each side while the edge
        block's term is within e^40 of the largest (as the rows' window), up to :data:`_COARSE_MAX_BLOCKS`, and
        not beyond a peak below e^-700 (beyond the accuracy promise). Within the promise the same blocks with g
        at each block's end bound the row sum from above (up to the chord's 1e-10); where the two are more than
        :data:`_COARSE_LOSS` apart, the value is returned with False (the caller refines the blocks or sums
        the rows).

        Args:
            member: a :class:`RowSum` with ``rising`` and ``weight``.
            lo: the first window's first row.
            hi: its last row.
            n_max: the largest s.
            block: the block length.
            chord: the chord's piece length.

        Returns:
            (log of the lower value, whether it is within :data:`_COARSE_LOSS` of the row sum or beyond the
            promise).
        """
        s_min = max(0, int(math.floor(member.s_min)))
        last = n_max // block

        def parts(j_lo: int, j_hi: int) -> tuple[np.ndarray, np.ndarray]:
            blocks = np.arange(j_lo, j_hi + 1, dtype=np.int64)
            weights = self.block_weights(member, blocks, block, chord)
            starts = (blocks * block).astype(float)
            # g = 0 below s_min; a NaN of the excess (its series at s ~ 10^14 deep in the weights' tail) is
            # taken as 0, which only lowers the sum
            rising = np.where(starts >= s_min, member.rising(np.maximum(starts, float(s_min))), -np.inf)
            return weights, np.where(np.isnan(rising), -np.inf, rising)

        j_lo, j_hi = lo // block, hi // block
        log_w, log_g = parts(j_lo, j_hi)
        while True:
            values = log_w + log_g
            peak = float(np.max(values))
            grow_lo = j_lo * block > s_min and (peak == -np.inf or values[0] > peak - _LOG_EDGE)
            grow_hi = j_hi < last and (peak == -np.inf or values[-1] > peak - _LOG_EDGE)
            if (
                not (grow_lo or grow_hi)
                or (np.isfinite(peak) and peak < _LOG_BEYOND_PROMISE)
                or j_hi - j_lo + 1 >= _COARSE_MAX_BLOCKS
            ):
                value = float(logsumexp(values))
                if not np.isfinite(peak) or peak < _LOG_BEYOND_PROMISE:
                    return value, True
                end = member.rising(np.array([float(min((j_hi + 1) * block, n_max))]))
                above = float(logsumexp(log_w + np.concatenate([log_g[1:], end])))
                return value, bool(above - value <= _COARSE_LOSS)
            step = max(16, j_hi - j_lo + 1)
            if grow_lo:
                new_lo = max(0, j_lo - step)
                w, g = parts(new_lo, j_lo - 1)
                log_w, log_g, j_lo = np.concatenate([w, log_w]), np.concatenate([g, log_g]), new_lo
            if grow_hi:
                new_hi = min(last, j_hi + step)
                w, g = parts(j_hi + 1, new_hi)
                log_w, log_g, j_hi = np.concatenate([log_w, w]), np.concatenate([log_g, g]), new_hi


class FamilySums:
    """The exact log delta of each member of the family (module docstring) for one setting, as row sums;
    the weights of the sums over s do not depend on epsilon and are cached across epsilons. These are the
    fast evaluations of the member views of :mod:`shuffledp.accounting.worst_case.families.members`
    ("none", "all on x0" in both directions); :meth:`log_delta_max` is their maximum (the family's value,
    :class:`~shuffledp.accounting.worst_case.families.family.WorstFamilies`).

    Work that cannot move the value by more than half an ulp, and only downwards, is skipped: (i) a row
    whose certified upper bound lies more than :data:`_LOG_LEFT_OUT` (50 nats) below an exact row of its
    block is not evaluated (-inf in its place: at most 2^20 such rows, each below e^-50 of the sum, leave
    out at most 2.0e-16 of it, all non-negative, so the value stays a lower one; the rows near the largest
    bound (within e^2) are evaluated first to find the peak, and the three rows at each block edge, read
    by the widening, always); (ii) :meth:`log_delta_max` skips a member whose certified upper bound on its
    *computed* value lies below another member's value."""

    def __init__(self, setting: ShuffleSetting):
        self.setting = setting
        self._logs = KrrParams.of(setting.epsilon_local, setting.required_k)
        self._weights: dict[str, LogPmfRange] = {}
        self.coarse = CoarseSums()

    def _weight(self, name: str, log_pi: float, log_1mpi: float) -> LogPmfRange:
        if name not in self._weights:
            self._weights[name] = LogPmfRange(self.setting.n_users, log_pi, log_1mpi)
        return self._weights[name]

    @staticmethod
    def _block(member, s):
        """Log terms of the rows ``s`` (exact, or -inf where the term provably underflows, see the class doc)."""
        if member.bound is None or s.size < _SKIP_MIN_ROWS:
            return member.rows(s)
        with np.errstate(invalid="ignore"):
            bound = member.bound(s)
            first = np.ones(s.shape, dtype=bool)
            top = float(np.max(bound))
            if np.isfinite(top):  # the rows near the largest bound, and the block's edges, first
                first = ~(bound < top - _LOG_FIRST)
                first[:3] = first[-3:] = True
            values = member.rows(s, first)
            peak = float(np.max(values[first]))
            rest = ~first & ~(bound < peak - _LOG_LEFT_OUT)  # NaN bounds: evaluated
        if rest.any():
            values[rest] = member.rows(s, rest)[rest]
        return values

    def _sum_rows(self, member, n_max):
        """log sum over s in [0, n_max] of ``member.rows(s)`` (log values of a unimodal sequence, zero for s
        below ``member.s_min``): a window around the mean (moved into s >= s_min) widened on each side
        until its edge row is e^-40 below the largest row or the range ends. Memory stays O(width of the
        window)."""
        s_min = max(0, int(math.floor(member.s_min)))
        window = _window(n_max, member.mean, member.var, member.s_min)
        if window is None:
            return -np.inf
        lo, hi = window
        if _coarse(member, window):
            coarse = self.coarse.sum(member, lo, hi, n_max)
            if coarse is not None:
                return coarse
        elif hi - lo + 1 > _COARSE_MIN_ROWS and self._beyond_promise(member):
            return self.coarse.strided(member, lo, hi, s_min)
        values = self._block(member, np.arange(lo, hi + 1, dtype=float))
        while True:
            peak = float(np.max(values))
            if peak == -np.inf and lo == s_min and hi == n_max:
                return -np.inf
            # an all-zero window (every term 0) is widened on both sides until a term appears
            grow_lo = lo > s_min and (peak == -np.inf or values[0] > peak - _LOG_EDGE)
            grow_hi = hi < n_max and (peak == -np.inf or values[-1] > peak - _LOG_EDGE)
            # a lower bound may stop anywhere: beyond the accuracy promise (peak below e^-700) or at
            # _MAX_WINDOW rows (memory and time bounded) the partial sum is returned as it is
            if (
                not (grow_lo or grow_hi)
                or (np.isfinite(peak) and peak < _LOG_BEYOND_PROMISE)
                or hi - lo + 1 >= _MAX_WINDOW
            ):
                return float(logsumexp(values))
            if grow_lo:
                new_lo = max(s_min, lo - _growth_step(values, peak, hi - lo + 1, from_low=True))
                values = np.concatenate([self._block(member, np.arange(new_lo, lo, dtype=float)), values])
                lo = new_lo
            if grow_hi:
                new_hi = min(n_max, hi + _growth_step(values, peak, hi - lo + 1, from_low=False))
                values = np.concatenate(
                    [values, self._block(member, np.arange(hi + 1, new_hi + 1, dtype=float))]
                )
                hi = new_hi

    def _beyond_promise(self, member) -> bool:
        """Whether the moment bound on the member's whole (unfinished) sum is below e^-700."""
        if member.total is None or self.setting.required_k <= 2:
            return False
        return _mgf_bound(member.total, self.setting.n_users, self._log_p(member)) < _LOG_BEYOND_PROMISE

    def _value(self, member) -> float:
        return member.finish(self._sum_rows(member, self.setting.n_users))

    def _value_bound(self, member, rows: bool = True) -> float:
        """Certified upper bound on the member's computed value, +inf where none is cheap: the closed-form
        bound on the whole sum over s, and (``rows``) when every row bound of the first window is below
        e^-700, the window is not widened (the peak is beyond the promise) and its logsumexp is at most
        that of the bounds."""
        n = self.setting.n_users
        window = _window(n, member.mean, member.var, member.s_min)
        if window is None:
            return -np.inf
        value = np.inf
        if member.total is not None and self.setting.required_k > 2:  # the whole sum over s (any window)
            value = member.finish(_mgf_bound(member.total, n, self._log_p(member)))
        rows = rows and not _coarse(member, window)  # a coarse sum's blocks reach beyond the first window
        with np.errstate(invalid="ignore"):
            bound = (
                member.bound(np.arange(window[0], window[1] + 1, dtype=float)) if rows else np.full(1, np.inf)
            )
        top = float(np.max(bound))
        if np.isfinite(top) and top < _LOG_BEYOND_PROMISE - 1.0 and not np.isnan(bound).any():
            value = min(value, member.finish(float(logsumexp(bound))))
        return value + _LOG_BOUND_MARGIN * (1.0 + abs(value)) if np.isfinite(value) else value

    def _log_p(self, member) -> float:
        """log of the success probability of S in the member's weights (mean / n)."""
        return math.log(member.mean / self.setting.n_users)

    def _members(self, eps: float) -> dict[str, RowSum]:
        krr = self._logs
        weight = self._weight("all-x0", krr.log_ppq, krr.log_rest) if self.setting.required_k > 2 else None
        forward, reverse = all_x0_rows(self.setting, krr, weight, float(eps))
        members = {"all-x0 D||D'": forward, "all-x0 D'||D": reverse}
        if self.setting.required_k > 2:
            weight = self._weight("none", krr.log_2q, krr.log_1m2q)
            members["none"] = none_rows(self.setting, krr, weight, float(eps))
        return members

    def member_log_deltas(self, eps: float) -> dict[str, float]:
        """log delta of each family member at ``eps`` (the accountant returns their maximum)."""
        if eps >= self.setting.epsilon_local:
            return {name: -np.inf for name in FAMILY}
        members = self._members(eps)
        forward, reverse = self._value(members["all-x0 D||D'"]), self._value(members["all-x0 D'||D"])
        none = self._value(members["none"]) if "none" in members else -np.inf
        return {"none": none, "all-x0 D||D'": forward, "all-x0 D'||D": reverse}

    def log_delta_max(self, eps: float) -> float:
        """max(:meth:`member_log_deltas`), the same value to the last bit; members are evaluated in
        decreasing order of their closed-form bounds, and one whose bound (closed form, then the rows')
        is below the largest value found is skipped (its computed value is below that bound, so it
        cannot be the maximum)."""
        if eps >= self.setting.epsilon_local:
            return -np.inf
        members = self._members(eps)
        quick = {name: self._value_bound(member, rows=False) for name, member in members.items()}
        best = -np.inf
        for name in sorted(members, key=lambda key: -quick[key]):
            if quick[name] < best or (best > -np.inf and self._value_bound(members[name]) < best):
                continue
            best = max(best, self._value(members[name]))
        return best
