"""k = 2 worst case at large n: certified bounds from pairs of binomials, O(sqrt(n)) work each.

For k = 2 the delta of the dataset "j of the other n - 1 users hold x0" is F(j) = G(j, n - 1 - j), with

    G(a, l) = H_{e^eps}(S + Bern(p) || S + Bern(q)),   S = Bin(a, p) + Bin(l, q)

(see :mod:`shuffledp.accounting.accountants.worst_case_upper`). Adding an independent user to S is post-processing,
so G is non-increasing in a and in l, and for every j in a block [a, b]

    F(j) = G(j, n - 1 - j) <= G(a, n - 1 - b)

(the users a + 1 .. b, whose value differs inside the block, are removed: their reports are independent
noise added to S). Keeping part of that noise is tighter: with each block user's blanket bit known
(reports uniform on {x0, x1} with probability gamma = 2q, else truthful and then known from the data),
the block adds Bin(beta, 1/2) with beta ~ Bin(w, gamma) whatever j is, and more of it only lowers the
delta, so for any beta_min

    F(j) <= Pr(beta < beta_min) + G_beta_min(a, n - 1 - b),   G_c: S + Bin(c, 1/2) in place of S

(``accountants.worst_case_upper`` sums over every beta; here one beta_min, z standard deviations below its mean
with e^(-z^2 / 2) about 1e-4 of the largest single-dataset delta, keeps each bound at O(sqrt(n)) work).
:func:`large_forward_delta` runs a branch and bound over blocks with this bound. A block of w users
costs about w (p - 1/2) / (2 n p) relative in epsilon, but each bound is a sum over one binomial window
instead of a convolution of two (O(n)), which is what makes n = 10^6 .. 10^8 reachable.

**One G, exactly.** S is a sum of independent Bernoulli variables, so its pmf f is log-concave and
f(h - 1) / f(h) is non-decreasing: P - e^eps Q = alpha f(h - 1) - beta f(h) (alpha = p - e^eps q,
beta = e^eps p - q) is positive exactly for h >= h0, and

    G = sum_{h >= h0} (alpha f(h - 1) - beta f(h)) = alpha f(h0 - 1) - (e^eps - 1) Pr(S >= h0)

(a difference of two positive numbers that keeps about 1 / z^2 of the first at z standard deviations
out). Both pieces are sums over a window (i) of the narrower binomial's pmf (convolved with
Bin(c, 1/2), positive terms) times the other binomial's pmf at h0 - 1 - i or its tail at h0 - i (suffix
sums of its pmf plus one ``log_sf`` tail: incomplete beta / continued fraction), in log space. h0 is
found from a vectorised window of log f around a guess (:meth:`PairSum.boundary`).
Margins *added* to the value: the mass outside the window, times 2 alpha + beta (alpha for the first
piece; alpha + beta for terms whose sign the truncation flips, which moves h0 — the truncated f falls
short by at most that mass summed over every h; the tail piece only loses mass, which raises the
value), a rounding allowance of 1e-13 + 4 x
(window + 64) x 2^-52 relative on both pieces of the difference, and the same of alpha f(h0 - 2) for
a boundary term misclassified by rounding. alpha <= 0 (eps >= eps0) gives 0.

**Reuse across epsilons.** An epsilon search evaluates the branch and bound at ~7 epsilons,
mostly over the same blocks. Everything but the two scalars alpha, beta is epsilon-free and kept: each
log f(h) and log Pr(S >= x) (per pair sum), the last boundary (the next guess is it moved by
var x the change of log(beta / alpha), checked on a window of three values of the gap), and, shared
by the pair sums of one search (``memo``), the windows of the narrow binomials and of the blanket
reports, the other binomial's pmf ranges and Pr(beta < beta_min) (every value is elementwise, so the
same whoever asks). The numbers are those computed without the reuse, bit for bit (tested).

**Lazy bounds.** Most blocks a search makes are never split: only the one on top of the queue
is. A new block therefore enters the queue with a *key*, a cheaper certified bound above its own: the
same pair sum with windows of at most ``_KEY_SDS`` = 10 standard deviations instead of 20 (fewer, down to
z with e^(-z^2 / 2) ~ 1e-8 of the largest single-dataset delta, where that is large), the mass outside each
window bounded by Bernstein's inequality instead of computed exactly (an upper bound: the key only
rises), the other binomial's tail beyond the window by a geometric lower bound (a lower tail raises the
value, as above), the rounding allowance of the full-width bound, and a relative 1e-9 on top. Each piece
is an upper bound, so the key is a certified bound on every dataset of the block (the search may stop
with keys in the queue: its answer is still valid); and it is above the block's bound, by ~1e-9 relative
where delta is well above the windows' truncation (~e^-45; far below, keys loosen and more blocks are
resolved: slower, the same result). Tested on every block of grids of n, against the block bound and
against brute force. When a key comes to the top of the queue the block's bound replaces it. As keys are
above the bounds they stand for, blocks come off the queue in the order of the eager search, which
returns the same (top, best, best j) bit for bit (tested against a copy of the eager search); the count
of evaluations counts keys as the eager search counted bounds. The dataset at a split block's middle
needs its bound only when its key is above the best single-dataset value.

**Deciding with keys.** A key on top of the queue needs the block's bound only if it cannot
tell that the block is the one the eager search splits next. The key's pair sum also gives a certified
*lower* value of G (:meth:`PairSum.log_bounds`): G >= alpha f(h0 - 1) - (e^eps - 1) Pr(S >= h0) for
every h0, with the window's f(h0 - 1) (below the true one) less the rounding allowance, and
Pr(S >= h0) raised by the allowance, the mass outside the windows and a Chernoff bound on the other
binomial's tail beyond them, then a relative 1e-9 below. Any valid upper bound is above G, so the
block's bound is above that value; when it is above the best single-dataset value plus the stopping
margin and above every other entry of the queue (keys or bounds), the eager search would split this
block now, and it is split without its bound. Otherwise the key is first *refined* (its other tail
beyond the window from ``log_sf``, exact, instead of the geometric / Chernoff bounds: both values
tighten; :meth:`PairSum.refine`), and only then replaced by the block's bound. The bound is still
computed for the block the search ends on (its value is returned) and for single datasets.

**Stale keys.** beta_min moves with the largest single-dataset value, so the second step of
an epsilon search (the first at the smaller epsilon) meets every block with a new beta_min, one half
standard deviation higher. Fewer blanket reports can only raise G (the rest is added noise:
post-processing), so the key's pair sum of an earlier step with a larger ``blanket_sds`` (a smaller
beta_min), evaluated at the new epsilon, plus this step's Pr(beta < beta_min) and the keys' cushion,
is a key of the block (*stale*: no lower value; ~8e-5 above the fresh key at n = 10^6); it is made
fresh when it reaches the top. Blocks that never do need no new convolution.

Cost (n = 10^6, eps0 = 0.5, the epsilon at delta = 1e-6): ~0.5 CPU s (full bounds: 7 + 2 per search;
keys 199 + 47 of the first two steps), against ~7 s and ~100 full bounds when every block's bound is
computed up front; at n = 10^8 ~8 s (the keys' convolutions, ~60,000 x 9,800 products each).
Blanket windows longer than ``_DIRECT_UP_TO`` (n above ~5 x 10^7; keys: ``_DIRECT_UP_TO_KEY``) are
convolved in chunks of 2048 (:func:`~shuffledp.accounting.worst_case.k2.log_sums.convolve_positive`: numpy's
direct convolution is ~5x slower once the shorter array leaves the cache); the sums are of positive
terms in another order, covered by the same rounding allowance, so values there move in their last bits.
Keys with more than ``k2_tilted.FFT_FROM`` products (n above ~10^7) are convolved by a certified tilted
FFT instead (:mod:`shuffledp.accounting.worst_case.k2.tilted`: the FFT's error bound is added to
the key's upper value and taken off its lower value): n = 10^8 from ~8 s to ~4 s, the returned values
unchanged (full bounds stay direct).
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass, field

import numpy as np

from shuffledp._numerics import log1mexp, log_expm1
from shuffledp.accounting.numerics.binomial import log_sf
from shuffledp.accounting.params import KrrParams, ShuffleSetting
from shuffledp.accounting.worst_case.k2.binomial_pieces import WINDOW_SDS
from shuffledp.accounting.worst_case.k2.pair_sum import KEY_CUSHION, PairSum, shared
from shuffledp.accounting.worst_case.search import Search, SearchResult, Status

__all__ = ["K2PairSearch", "PairCache", "large_forward_delta"]

_FIRST_BLOCKS = 64
_BLANKET_SDS = 14.0  # at most this far below the mean (Pr(fewer blanket users in a block) ~ e^-98)
_LOG_BLANKET_SHARE = math.log(1e4)
_KEY_SDS = 10.0  # windows of the keys of lazy bounds (module doc), at most
_LOG_KEY_SHARE = math.log(1e8)  # keys' windows: e^(-z^2 / 2) about 1e-8 of the largest single-dataset delta
_CACHE_DOUBLES = 100_000_000  # pair sums kept across epsilons: 4 x window per pair sum (an overcount)
_RELATIVE_STOP = 1e-3


@dataclass
class PairCache:
    """What one search keeps across its steps (module doc, "Reuse"): the pair sums by name (a, l, beta_min
    [, key window sds]) as [pair sum, log Pr(beta < beta_min), the step that used it last], the
    epsilon-free pieces they share (windows, pmf ranges, tails: :func:`~shuffledp.accounting.worst_case.k2.pair_sum.shared`),
    the doubles the pair sums hold, the current step, and the (blanket sds, key sds) of the steps so far
    (for stale keys)."""

    pairs: dict[tuple, list] = field(default_factory=dict)
    pieces: dict[tuple, object] = field(default_factory=dict)
    doubles: int = 0
    step: int = 0
    blanket_sds: set[tuple[float, float]] = field(default_factory=set)


class _BlockBounds:
    """bound(a, b): certified log upper bound on F(j) for every j in the block [a, b] (module doc), with
    the pair sums cached across epsilons in ``cache``; ``evaluations`` counts the calls."""

    def __init__(self, eps: float, *, n_users: int, epsilon_local: float, cache: PairCache):
        n = n_users
        krr = KrrParams.of(epsilon_local, 2)
        self.eps, self.n, self.cache = eps, n, cache
        self.log_p, self.log_q = krr.log_p, krr.log_q
        self.log_gamma = krr.log_2q  # a user's report is uniform on {x0, x1} w.p. 2q
        self.log_1mgamma = krr.log_p_minus_q  # p - q
        self.blanket_sds, self.key_sds = _BLANKET_SDS, _KEY_SDS
        self.evaluations = 0

    def choose_blanket(self, best: float) -> None:
        """beta_min sits z standard deviations below the mean, z such that Pr(beta < beta_min) ~ e^-z^2/2
        is about 1e-4 of the largest single-dataset delta ``best`` (rounded up to half-units so that
        blocks are reused across epsilons); its exact probability is what is added."""
        if np.isfinite(best):
            self.blanket_sds = min(
                _BLANKET_SDS, math.ceil(2.0 * math.sqrt(2.0 * (_LOG_BLANKET_SHARE - best))) / 2.0
            )
            # keys' windows (their bits do not matter): narrower while the outside mass stays ~1e-8 of delta
            self.key_sds = min(_KEY_SDS, math.ceil(2.0 * math.sqrt(2.0 * (_LOG_KEY_SHARE - best))) / 2.0)

    def __call__(self, a: int, b: int) -> float:
        """The block's bound (one evaluation)."""
        self.evaluations += 1
        return self.exact(a, b)

    def exact(self, a: int, b: int) -> float:
        """The block's bound: Pr(beta < beta_min) + G_beta_min(a, n - 1 - b) (module doc), not counted."""
        pair, fewer = self._pair(a, b, WINDOW_SDS)
        return float(np.logaddexp(pair.log_bound(self.eps), fewer))

    def key(self, a: int, b: int) -> tuple[float, int, float]:
        """(a certified log bound for the block, its stage, a log value below :meth:`exact`'s), one
        evaluation: :meth:`fresh_key` when its pair sum is cached, else a stale key when there is one (stage
        -1: an earlier search step's pair sum with fewer blanket reports, module doc "Stale keys"), else
        :meth:`fresh_key`."""
        self.evaluations += 1
        cached = self._key(a, b, WINDOW_SDS) in self.cache.pairs or self._key_name(a, b) in self.cache.pairs
        if a < b and not cached:
            stale = self._stale(a, b)
            if stale is not None:
                return stale, -1, -np.inf
        return self.fresh_key(a, b)

    def fresh_key(self, a: int, b: int) -> tuple[float, int, float]:
        """(bound, stage, value below): the exact bound (stage 2, twice) when its pair sum is cached, else the
        cheaper key of the module doc (stage 0, "Lazy bounds") and a lower bound from the same pair sum
        ("Deciding with keys"); not counted."""
        if self._key(a, b, WINDOW_SDS) in self.cache.pairs:  # the bound itself costs less than a key
            value = self.exact(a, b)
            return value, 2, value
        pair, fewer = self._pair(a, b, self._key_name(a, b)[3], key=True)
        upper, lower = pair.log_bounds(self.eps)
        return float(np.logaddexp(upper + KEY_CUSHION, fewer)), 0, float(np.logaddexp(lower, fewer))

    def _stale(self, a: int, b: int) -> float | None:
        """A key from the pair sum of an earlier step whose beta_min was smaller (a larger ``blanket_sds``):
        less blanket noise, so its certified bound is above this step's G (module doc, "Stale keys"); with
        this step's Pr(beta < beta_min) and the keys' cushion. None when no such pair sum is cached."""
        own = self.blanket_sds
        for sds, key_sds in sorted(z for z in self.cache.blanket_sds if z[0] > own):
            self.blanket_sds = sds
            name = self._key(a, b, key_sds, key=True)  # keys' pair sums only (their bits do not matter)
            self.blanket_sds = own
            if name in self.cache.pairs:
                fewer = self._fewer(b - a, self._key(a, b, key_sds, key=True)[2])
                return float(np.logaddexp(self.cache.pairs[name][0].log_bound(self.eps) + KEY_CUSHION, fewer))
        return None

    def _fewer(self, w: int, beta: int) -> float:
        """log Pr(beta < beta_min) for a block of w users (shared by the pair sums of a search)."""
        return shared(
            self.cache.pieces,
            ("fewer", w, beta),
            lambda: float(log_sf(w - beta + 1, w, self.log_1mgamma, self.log_gamma)) if beta > 0 else -np.inf,
        )

    def refine(self, a: int, b: int) -> tuple[float, float]:
        """(key, lower value) of the block again, its key's pair sum refined (:meth:`PairSum.refine`), not
        counted."""
        pair, fewer = self._pair(a, b, self._key_name(a, b)[3], key=True)
        pair.refine()
        upper, lower = pair.log_bounds(self.eps)
        return float(np.logaddexp(upper + KEY_CUSHION, fewer)), float(np.logaddexp(lower, fewer))

    def _key_name(self, a: int, b: int) -> tuple:
        """The name of the block's key pair sum: one of this beta_min cached at an earlier step's keys' width
        (each is a key), else at ``key_sds``."""
        own = self._key(a, b, self.key_sds, key=True)
        if own not in self.cache.pairs:
            for sds in sorted({z[1] for z in self.cache.blanket_sds}):
                if own[:3] + (sds,) in self.cache.pairs:
                    return own[:3] + (sds,)
        return own

    def _log_ratio(self) -> float | None:
        """log(beta / alpha) at this epsilon (a key's FFT tilt, k2_tilted); None for eps >= eps0."""
        e0 = self.log_p - self.log_q
        if self.eps >= e0:
            return None
        return float(log_expm1(self.eps + e0)) - e0 - float(log1mexp(self.eps - e0))

    def _key(self, a: int, b: int, sds: float, key: bool = False) -> tuple:
        w, beta = b - a, 0
        if w > 0:  # the block users' blanket reports: at least beta_min of them except with small probability
            sd = math.sqrt(w * math.exp(self.log_gamma + self.log_1mgamma))
            beta = max(0, int(math.floor(w * math.exp(self.log_gamma) - self.blanket_sds * sd)))
        return (a, self.n - 1 - b, beta, sds) if key else (a, self.n - 1 - b, beta)

    def _pair(self, a: int, b: int, sds: float, key: bool = False) -> tuple[PairSum, float]:
        """(the pair sum of the block with windows of ``sds`` standard deviations, a key's if ``key``,
        log Pr(beta < beta_min))."""
        cache, name = self.cache, self._key(a, b, sds, key)
        if name not in cache.pairs:
            if cache.doubles > _CACHE_DOUBLES:  # memory bound (only time is lost)
                _evict(cache)
            fewer, beta = self._fewer(b - a, name[2]), name[2]
            memo = cache.pieces  # pieces shared by pair sums (windows, pmf ranges, tails)
            pair = PairSum(
                a,
                self.n - 1 - b,
                self.log_p,
                self.log_q,
                blanket=beta,
                memo=memo,
                sds=sds,
                key=key,
                tilt=self._log_ratio() if key else None,
            )
            cache.pairs[name] = [pair, fewer, 0]
            # the window and (about three windows of) the other binomial's cached pmf
            cache.doubles += 4 * pair.log_w.size
        entry = cache.pairs[name]
        entry[2] = cache.step  # the search step that used it last
        return entry[0], entry[1]


def _evict(cache: PairCache) -> None:
    """Make room: drop the pair sums not used by the current search step (and the shared pieces, which
    the pair sums kept hold on to, and the earlier steps' blanket widths), or every pair sum when the
    current step alone fills the cache."""
    kept = {k: v for k, v in cache.pairs.items() if v[2] == cache.step}
    doubles = sum(4 * v[0].log_w.size for v in kept.values())
    small = doubles <= _CACHE_DOUBLES // 2
    cache.pairs, cache.pieces, cache.blanket_sds = (kept if small else {}), {}, set()
    cache.doubles = doubles if small else 0


def large_forward_delta(
    eps: float,
    *,
    n_users: int,
    epsilon_local: float,
    cache: PairCache | None = None,
    relative_stop: float = _RELATIVE_STOP,
    max_evaluations: int = 200,
) -> tuple[float, float, int]:
    """(certified log upper bound on max_j F(j), the largest single-dataset bound log F(j) met, its j), k = 2.

    Branch and bound over blocks [a, b] of datasets with the bound of the module doc: the
    block with the largest bound is split until that bound is within ``relative_stop`` of the largest
    single-dataset value or ``max_evaluations`` bounds were computed; the largest bound over the blocks
    then covering 0 .. n - 1 is returned (valid whenever the search stops). ``cache`` keeps the pair sums
    across steps (a fresh one if None)."""
    n = n_users
    cache = PairCache() if cache is None else cache
    cache.step += 1  # one search step (module doc, "Reuse")
    bound = _BlockBounds(eps, n_users=n, epsilon_local=epsilon_local, cache=cache)
    best, best_j = -np.inf, -1
    for j in (0, n - 1):
        value = bound(j, j)
        if value > best:
            best, best_j = value, j
    bound.choose_blanket(best)
    cache.blanket_sds.add((bound.blanket_sds, bound.key_sds))  # for later steps' stale keys
    size = max(1, -(-n // _FIRST_BLOCKS))
    heap: list[
        tuple
    ] = []  # (-value, a, b, stage: -1 stale key, 0 key, 1 refined key, 2 the block's bound; a value below it)
    for a in range(0, n, size):
        b = min(n - 1, a + size - 1)
        value, stage, lower = bound.key(a, b)
        heapq.heappush(heap, (-value, a, b, stage, lower))
    return _branch_and_bound(bound, heap, best, best_j, math.log1p(relative_stop), max_evaluations)


def _branch_and_bound(
    bound: _BlockBounds, heap: list, best: float, best_j: int, log_stop: float, max_evaluations: int
) -> tuple[float, float, int]:
    """Split the block with the largest bound (and bound the dataset at its middle) until the stopping
    rule of :func:`large_forward_delta` holds; returns (largest block bound, best, best_j).

    A key on top is made fresh if stale, refined, then replaced by the block's bound, unless its lower
    value already shows that the block is the one the eager search splits next (module doc)."""
    while True:
        negative, a, b, stage, lower = heapq.heappop(heap)  # stage -1 stale, 0 key, 1 refined, 2 the bound
        if stage < 2:  # a key on top (not an evaluation: counted with the key)
            if (
                a == b
                or bound.evaluations >= max_evaluations
                or not lower > best + log_stop
                or (heap and not lower > -heap[0][0])
            ):
                if stage == -1:
                    value, stage, lower = bound.fresh_key(a, b)
                elif stage == 0 and a != b:
                    (value, lower), stage = bound.refine(a, b), 1
                else:  # the block's bound replaces the key
                    value = lower = bound.exact(a, b)
                    stage = 2
                heapq.heappush(heap, (-value, a, b, stage, lower))
                continue
        elif (
            a == b
            or -negative <= best + log_stop
            or negative == np.inf
            or bound.evaluations >= max_evaluations
        ):
            return -negative, best, best_j
        middle = (a + b) // 2
        # the two halves, then the dataset at the middle (it only keeps the lower end current)
        for lo, hi, half in ((a, middle, True), (middle + 1, b, True), (middle, middle, False)):
            value, stage, lower = bound.key(lo, hi)
            if lo == hi and value > best and stage < 2:  # a single dataset above the lower end: its value
                value = lower = bound.exact(lo, hi)
                stage = 2
            if lo == hi and value > best:
                best, best_j = value, lo
            if half:
                heapq.heappush(heap, (-value, lo, hi, stage, lower))


class K2PairSearch(Search):
    """The k = 2 search for 10^4 < n <= 10^8 behind the search interface: :func:`large_forward_delta` with
    its pair sums kept across epsilons. Its value is a certified upper bound wherever it stops; the
    largest single-dataset value it met is an upper value too, so it certifies no lower value."""

    name = "k2-pair-sums"

    def __init__(self, setting: ShuffleSetting):
        super().__init__(setting)
        self.cache = PairCache()

    def result(self, eps: float) -> SearchResult:
        """The branch and bound over blocks of datasets at ``eps`` (module doc).

        Args:
            eps: the central epsilon.

        Returns:
            upper: the largest block bound left; dataset: the single dataset with the largest bound met;
            no lower value (-inf); closed when the bound is within 1e-3 relative of that dataset's.
        """
        top, best, best_j = large_forward_delta(
            float(eps), n_users=self.n_users, epsilon_local=self.epsilon_local, cache=self.cache
        )
        closed = top <= best + math.log1p(_RELATIVE_STOP)
        return SearchResult(top, -np.inf, (best_j,), Status.CLOSED if closed else Status.OPEN)
