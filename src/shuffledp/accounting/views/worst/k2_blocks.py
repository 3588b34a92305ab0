"""The k = 2 worst case over datasets by branch and bound over blocks of datasets (used by
``worst-case-upper``; the method, its certification and its cost are in that accountant's module
docstring, :mod:`shuffledp.accounting.accountants.worst_case_upper`, "k = 2").

A block of datasets j in [a, b] (j of the other n - 1 users hold x0, the rest x1) is bounded by the view
that also reveals the blanket bits of the b - a users whose value differs within the block
(:class:`Block`: the laws of Y_beta for the likely blanket counts beta, with the mass left out);
:func:`binary_forward_delta` keeps the blocks in a priority queue by their bound and splits the largest.
"""

from __future__ import annotations

import heapq
import math

import numpy as np

from shuffledp.accounting.numerics.windows import pmf_window
from shuffledp.accounting.params import KrrParams

__all__ = ["Block", "binary_forward_delta"]

_WINDOW_SDS = 12.0
_RELATIVE_STOP = 1e-9
_ROUNDING = 1e-12
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


def _window_memo(windows: dict):
    """:func:`pmf_window` at ``_WINDOW_SDS``, kept in ``windows`` (blocks of one width share their blanket-count
    windows, blocks with one end share that binomial's): the same arrays, computed once."""
    def window(trials: int, log_p: float, log_q: float):
        key = (trials, log_p, log_q)
        if key not in windows:
            windows[key] = pmf_window(trials, log_p, log_q, _WINDOW_SDS)
        return windows[key]
    return window


class Block:
    """Datasets j in [a, b]: the laws of Y_beta for the likely beta, with the mass left out."""

    __slots__ = ("a", "b", "weights", "rows", "dropped")

    def __init__(self, a: int, b: int, n_users: int, log_p: float, log_q: float, windows: dict | None = None):
        n = n_users
        self.a, self.b = a, b
        w = b - a
        window = _window_memo({} if windows is None else windows)
        _, _, pa, out_a = window(a, log_p, log_q)
        _, _, pm, out_m = window(n - 1 - b, log_q, log_p)
        base = np.convolve(pa, pm)
        log_gamma = math.log(2.0) + log_q
        log_1mgamma = float(np.log1p(-2.0 * math.exp(log_q)))
        b_lo, b_hi, weights, out_w = window(w, log_gamma, log_1mgamma)
        half = math.log(0.5)
        _, _, start, out_start = window(b_lo, half, half) if b_lo > 0 else (0, 0, np.ones(1), 0.0)
        g = np.convolve(base, start)
        out_beta = out_start
        # row i: the pmf of Y_beta, beta = b_lo + i (g convolved i times with Bern(1/2)), zero-padded;
        # each row is 0.5 (previous + previous shifted by one), the same operations as on growing arrays
        rows = np.zeros((b_hi - b_lo + 1, g.size + (b_hi - b_lo)))
        rows[0, :g.size] = g
        for i in range(1, rows.shape[0]):
            size = g.size + i
            rows[i, :size] = 0.5 * (rows[i - 1, :size] + np.concatenate([[0.0], rows[i - 1, :size - 1]]))
        self.weights = weights
        self.rows = rows
        # mass left out of each law Y_beta (at most): windows of the two binomials and of Bin(b_lo, 1/2);
        # beta outside its window: weight out_w, each delta_beta <= 1
        self.dropped = (out_a + out_m + out_beta, out_w)

    def upper(self, p: float, q: float, eps: float) -> tuple[float, float]:
        """(certified upper bound U on F(j) for j in the block, the summed value without margins)."""
        value = float(np.dot(self.weights, _hockey_rows(self.rows, p, q, eps)))
        laws, beta_out = self.dropped
        margin = (1.0 + math.exp(eps)) * laws + beta_out + _ROUNDING * value + 1e-300
        return value + margin, value


def binary_forward_delta(eps: float, *, n_users: int, epsilon_local: float, cache: dict | None = None,
                         relative_stop: float = _RELATIVE_STOP) -> tuple[float, float, int]:
    """(certified upper bound on max_j F(j), largest F(j) evaluated, its j) for k = 2 (module doc)."""
    n = n_users
    krr = KrrParams.of(epsilon_local, 2)
    log_p, log_q = krr.log_p, krr.log_q
    p, q = math.exp(log_p), math.exp(log_q)
    cache = {} if cache is None else cache

    def block(a, b):
        key = (a, b)
        if key not in cache:
            if cache.get("_size", 0) > _CACHE_LIMIT:  # memory bound: start over (only time is lost)
                cache.clear()
            cache[key] = Block(a, b, n, log_p, log_q, windows=cache.setdefault("_windows", {}))
            cache["_size"] = cache.get("_size", 0) + cache[key].rows.size
        return cache[key]

    size = max(1, -(-n // _FIRST_BLOCKS))
    heap = []
    best, best_j = -1.0, -1
    for a in range(0, n, size):
        b = min(n - 1, a + size - 1)
        upper, value = block(a, b).upper(p, q, eps)
        heapq.heappush(heap, (-upper, a, b))
        for j in {a, b}:  # single datasets: exact values (the lower end of the search)
            u_j, v_j = block(j, j).upper(p, q, eps)
            if v_j - (u_j - v_j) > best:
                best, best_j = v_j - (u_j - v_j), j
    while True:
        negative, a, b = heapq.heappop(heap)
        upper = -negative
        if a == b or upper <= best * (1.0 + relative_stop) or upper == 0.0:
            return upper, best, best_j
        middle = (a + b) // 2
        for lo, hi in ((a, middle), (middle + 1, b)):
            u, v = block(lo, hi).upper(p, q, eps)
            heapq.heappush(heap, (-u, lo, hi))
            if lo == hi and v - (u - v) > best:
                best, best_j = v - (u - v), lo
        # a dataset inside the block (its centre) keeps the lower end current
        j = middle
        u_j, v_j = block(j, j).upper(p, q, eps)
        if v_j - (u_j - v_j) > best:
            best, best_j = v_j - (u_j - v_j), j
