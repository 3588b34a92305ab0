"""The k = 2 worst case over datasets by branch and bound over blocks of datasets, n <= 10^4 (the method,
its certification and its cost: docs/decisions/worst-case.md, "k = 2").

A block of datasets j in [a, b] (j of the other n - 1 users hold x0, the rest x1) is bounded by the view
that also reveals the blanket bits of the b - a users whose value differs within the block
(:class:`Block`: the laws of Y_beta for the likely blanket counts beta, with the mass left out);
:func:`binary_forward_delta` keeps the blocks in a priority queue by their bound and splits the largest.
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass, field

import numpy as np

from shuffledp.accounting.numerics.windows import pmf_window, pmf_windows
from shuffledp.accounting.params import KrrParams, ShuffleSetting
from shuffledp.accounting.views.own_report import OwnReportView
from shuffledp.accounting.worst_case.search import Search, SearchResult, Status, log_or_minus_inf

__all__ = ["Block", "BlockCache", "K2BlockSearch", "binary_forward_delta"]

_WINDOW_SDS = 12.0
#: widest window tried (standard deviations): beyond it every binomial tail underflows at n <= 10^4
_MAX_WINDOW_SDS = 80.0
_RELATIVE_STOP = 1e-9
_ROUNDING = 1e-12
_LOG_ROUNDING = 256.0 * 2.0**-52  # per unit of |log value| (Block.upper)
_FIRST_BLOCKS = 32
_CACHE_LIMIT = 20_000_000  # doubles kept across epsilons (160 MB)


def _hockey_rows(g: np.ndarray, p: float, q: float, eps: float) -> np.ndarray:
    """H_{e^eps}(Y + Bern(p) || Y + Bern(q)) for each row g (pmf of Y on consecutive integers)."""
    e = math.exp(eps)
    alpha, beta = p - e * q, e * p - q
    # terms[h] = alpha f(h - 1) - beta f(h), f = 0 outside the row: the first column is -beta f(0) and the
    # last alpha f(last) (x - 0 = x, 0 - x = -x exactly), written in place of two padded copies of g; the
    # positive parts in place too (every term not > 0 set to +0.0, as np.where(terms > 0, terms, 0.0))
    terms = np.empty((g.shape[0], g.shape[1] + 1))
    np.multiply(g[:, :1], -beta, out=terms[:, :1])
    inner = np.multiply(g[:, :-1], alpha, out=terms[:, 1:-1])
    np.subtract(inner, beta * g[:, 1:], out=inner)
    np.multiply(g[:, -1:], alpha, out=terms[:, -1:])
    np.putmask(terms, ~(terms > 0), 0.0)
    return terms.sum(axis=1)


def _window_memo(windows: dict, sds: float = _WINDOW_SDS):
    """:func:`pmf_window` at ``sds`` standard deviations, kept in ``windows`` (blocks of one width share their
    blanket-count windows, blocks with one end share that binomial's): the same arrays, computed once."""

    def window(trials: int, log_p: float, log_q: float):
        key = (trials, log_p, log_q, sds)
        if key not in windows:
            windows[key] = pmf_window(trials, log_p, log_q, sds)
        return windows[key]

    return window


def _gamma_logs(log_q: float) -> tuple[float, float]:
    """(log gamma, log(1 - gamma)) with gamma = 2 q: the law of a blanket bit (Bin(b - a, gamma) in a block)."""
    return math.log(2.0) + log_q, float(np.log1p(-2.0 * math.exp(log_q)))


@dataclass
class BlockCache:
    """What one search keeps across epsilons: the blocks by (a, b, window sds), the binomial windows they
    share (by trials, log p, log q, sds), and the doubles the blocks hold (bounded by ``_CACHE_LIMIT``)."""

    blocks: dict[tuple, Block] = field(default_factory=dict)
    windows: dict[tuple, tuple] = field(default_factory=dict)
    size: int = 0

    def clear(self) -> None:
        """Drop everything (only time is lost)."""
        self.blocks, self.windows, self.size = {}, {}, 0


class Block:
    """Datasets j in [a, b]: the laws of Y_beta for the likely beta, with the mass left out."""

    __slots__ = ("a", "b", "dropped", "rows", "weights")

    def __init__(
        self,
        a: int,
        b: int,
        n_users: int,
        log_p: float,
        log_q: float,
        windows: dict | None = None,
        sds: float = _WINDOW_SDS,
    ):
        n = n_users
        self.a, self.b = a, b
        w = b - a
        window = _window_memo({} if windows is None else windows, sds)
        _, _, pa, out_a = window(a, log_p, log_q)
        _, _, pm, out_m = window(n - 1 - b, log_q, log_p)
        base = np.convolve(pa, pm)
        log_gamma, log_1mgamma = _gamma_logs(log_q)
        b_lo, b_hi, weights, out_w = window(w, log_gamma, log_1mgamma)
        half = math.log(0.5)
        _, _, start, out_start = window(b_lo, half, half) if b_lo > 0 else (0, 0, np.ones(1), 0.0)
        g = np.convolve(base, start)
        out_beta = out_start
        # row i: the pmf of Y_beta, beta = b_lo + i (g convolved i times with Bern(1/2)), zero-padded;
        # each row is 0.5 (previous + previous shifted by one), the same operations as on growing arrays:
        # entry h > 0 is 0.5 (f(h) + f(h - 1)), formed in place in the row, and entry 0 is 0.5 (f(0) + 0.0),
        # where f(0) + 0.0 is f(0) (no entry is -0.0: sums, products and halves of exponentials)
        rows = np.zeros((b_hi - b_lo + 1, g.size + (b_hi - b_lo)))
        rows[0, : g.size] = g
        for i in range(1, rows.shape[0]):
            size = g.size + i
            previous, row = rows[i - 1], rows[i, :size]
            np.add(previous[1:size], previous[: size - 1], out=row[1:])
            row[0] = previous[0]
            np.multiply(row, 0.5, out=row)
        self.weights = weights
        self.rows = rows
        # mass left out of each law Y_beta (at most): windows of the two binomials and of Bin(b_lo, 1/2);
        # beta outside its window: weight out_w, each delta_beta <= 1
        self.dropped = (out_a + out_m + out_beta, out_w)

    def upper(self, p: float, q: float, eps: float) -> tuple[float, float]:
        """(certified upper bound U on F(j) for j in the block, the summed value without margins)."""
        value = float(np.dot(self.weights, _hockey_rows(self.rows, p, q, eps)))
        laws, beta_out = self.dropped
        # rounding: the pmfs are exponentiated log-pmfs, each off by ~|log pmf| ulp, so the allowance grows with
        # |log value| (5.3e-12 low at log delta = -220, n = 1000, eps0 = 0.5, eps = 0.35, against a
        # 50-digit sum, with a flat 1e-12)
        rounding = _ROUNDING + _LOG_ROUNDING * abs(math.log(value)) if value > 0 else _ROUNDING
        margin = (1.0 + math.exp(eps)) * laws + beta_out + rounding * value + 1e-300
        return value + margin, value


def binary_forward_delta(
    eps: float,
    *,
    n_users: int,
    epsilon_local: float,
    cache: BlockCache | None = None,
    relative_stop: float = _RELATIVE_STOP,
) -> tuple[float, float, int]:
    """(certified upper bound on max_j F(j), largest F(j) evaluated, its j) for k = 2 (module doc).

    The windows start at ``_WINDOW_SDS`` standard deviations. Where the mass they leave out (added to every
    block's bound) is not negligible next to the maximum -- deep in the tail, where delta is far below that
    mass (e^-97 added to a maximum of e^-110 at n = 1000, eps0 = 0.5, eps = 0.25, and rising with
    eps through the margin's e^eps) -- the search is run again with windows wide enough that a binomial tail
    beyond them is below ``relative_stop`` times the largest value seen, until the bound is within
    ``relative_stop`` of the largest F(j) or the windows reach ``_MAX_WINDOW_SDS``. ``cache`` keeps the
    blocks across epsilons (a fresh one if None)."""
    cache = BlockCache() if cache is None else cache
    sds = _WINDOW_SDS
    while True:
        upper, best, best_j, largest = _search(eps, n_users, epsilon_local, cache, relative_stop, sds)
        if upper <= best * (1.0 + relative_stop) or upper == 0.0 or sds >= _MAX_WINDOW_SDS or largest <= 0.0:
            return upper, best, best_j
        # Gaussian-tail estimate of the window needed (the certification is the exact mass left out, re-checked)
        needed = math.sqrt(2.0 * (math.log(1.0 / relative_stop) + 10.0 - math.log(largest)))
        sds = min(_MAX_WINDOW_SDS, max(sds + 8.0, needed))


def _search(
    eps: float, n: int, epsilon_local: float, cache: BlockCache, relative_stop: float, sds: float
) -> tuple[float, float, int, float]:
    """One branch and bound at windows of ``sds`` standard deviations: (certified upper bound, largest certified
    lower end of an F(j), its j, largest summed F(j) without margins)."""
    krr = KrrParams.of(epsilon_local, 2)
    log_p, log_q = krr.log_p, krr.log_q
    p, q = math.exp(log_p), math.exp(log_q)

    def block(a, b):
        key = (a, b, sds)
        if key not in cache.blocks:
            if cache.size > _CACHE_LIMIT:  # memory bound: start over (only time is lost)
                cache.clear()
            cache.blocks[key] = Block(a, b, n, log_p, log_q, windows=cache.windows, sds=sds)
            cache.size += cache.blocks[key].rows.size
        return cache.blocks[key]

    log_gamma, log_1mgamma = _gamma_logs(log_q)

    def prefetch(blocks: list[tuple[int, int]]) -> None:
        """The binomial windows of the blocks (a, b) about to be built that are not kept yet, one batch per
        law (:func:`~shuffledp.accounting.numerics.windows.pmf_windows`: the same arrays as computed one by one)."""
        wanted: dict[tuple[float, float], set[int]] = {}
        for a, b in blocks:
            if (a, b, sds) in cache.blocks:
                continue
            for trials, law in (
                (a, (log_p, log_q)),
                (n - 1 - b, (log_q, log_p)),
                (b - a, (log_gamma, log_1mgamma)),
            ):
                if (trials, *law, sds) not in cache.windows:
                    wanted.setdefault(law, set()).add(trials)
        for law, counts in wanted.items():
            ordered = sorted(counts)
            for t, window in zip(ordered, pmf_windows(ordered, *law, sds)):
                cache.windows[(t, *law, sds)] = window

    size = max(1, -(-n // _FIRST_BLOCKS))
    heap: list[tuple[float, int, int]] = []
    best, best_j, largest = -1.0, -1, 0.0
    starts = range(0, n, size)
    prefetch(
        [(a, min(n - 1, a + size - 1)) for a in starts]
        + [(j, j) for a in starts for j in {a, min(n - 1, a + size - 1)}]
    )

    def single(j):
        nonlocal best, best_j, largest
        u_j, v_j = block(j, j).upper(p, q, eps)
        largest = max(largest, v_j)
        if v_j - (u_j - v_j) > best:
            best, best_j = v_j - (u_j - v_j), j

    for a in starts:
        b = min(n - 1, a + size - 1)
        upper, _value = block(a, b).upper(p, q, eps)
        heapq.heappush(heap, (-upper, a, b))
        for j in {a, b}:  # single datasets: exact values (the lower end of the search)
            single(j)
    while True:
        negative, a, b = heapq.heappop(heap)
        upper = -negative
        if a == b or upper <= best * (1.0 + relative_stop) or upper == 0.0:
            return upper, best, best_j, largest
        middle = (a + b) // 2
        prefetch([(a, middle), (middle + 1, b), (middle, middle)])
        for lo, hi in ((a, middle), (middle + 1, b)):
            u, _v = block(lo, hi).upper(p, q, eps)
            heapq.heappush(heap, (-u, lo, hi))
            if lo == hi:
                single(lo)
        # a dataset inside the block (its centre) keeps the lower end current
        single(middle)


class K2BlockSearch(Search):
    """The k = 2 search at n <= 10^4 behind the search interface: :func:`binary_forward_delta` with its
    blocks kept across epsilons, capped by the differing user's own k-RR delta (valid for every dataset;
    the search's rounding allowance could otherwise put it ~1e-12 above that at eps0 = 29, n = 2)."""

    name = "k2-blocks"

    def __init__(self, setting: ShuffleSetting):
        super().__init__(setting)
        self.cache = BlockCache()

    def result(self, eps: float) -> SearchResult:
        """The certified maximum over every dataset j (n_x0 = j) at ``eps``, within 1e-9 relative.

        Args:
            eps: the central epsilon.

        Returns:
            upper: the search's bound capped by u's own report; lower: the best dataset's certified lower end.
        """
        s = self.setting
        upper, best, best_j = binary_forward_delta(
            float(eps), n_users=self.n_users, epsilon_local=self.epsilon_local, cache=self.cache
        )
        log_upper = min(log_or_minus_inf(upper), float(OwnReportView(s).log_delta([float(eps)])[0]))
        closed = upper <= best * (1.0 + _RELATIVE_STOP) or upper == 0.0
        return SearchResult(
            log_upper,
            float(np.log(best)) if best > 0 else -np.inf,
            (best_j,) if best_j >= 0 else None,
            Status.CLOSED if closed else Status.OPEN,
        )
