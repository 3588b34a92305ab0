"""k = 3 at large n: a certified upper bound on the worst case over datasets by branch and bound over
blocks of datasets on windowed laws, stopped at a relative tolerance.

Setting and argument as in :mod:`~shuffledp.accounting.worst_case.k3.blocks` (docs/worst-case-k3.md, "k = 3 at
larger n: blocks of datasets"): u holds x0 in D and x1 in D'; of the other n - 1 users ``a`` hold x0, ``b`` hold
x1 and m = n - 1 - a - b hold x2; the output is (h0, h1); the worst case over datasets and directions is the
maximum over the triangle a + b <= n - 1 of the forward delta; a block's bound (reveal the blanket bits of its
uncertain users: post-processing) is above every dataset of the block; a leaf's bound is its exact delta. That
module keeps every law on the full (n, n) grid and runs to the exact maximum, which costs O(n^3) per block:
it stops at n = 200. Here:

1. **Windowed laws from closed pieces.** A user on x2 "lands" in {x0, x1} with probability 2 q and then on
   either with probability 1/2; a user on x0 leaves x0 with probability 2 q, then to x1 or x2 with 1/2 each
   (x1 alike). So the law of the others' (r0, r1) is the 2-D convolution of three "split" laws, each a binomial
   Bin(count, 2 q) times a Bin(., 1/2) split, and ``beta`` uniform users (blanket: the three values with 1/3
   each) add a Bin(beta, 2/3) landing count to the x2 users' (their landings split 1/2 too). Every binomial is
   built by Pascal's recursion on a window of counts: what leaves the window is summed and carried as the
   law's **lost mass** (an upper value: a sum of non-negative terms times (1 + c u)). The convolution is a
   sum of products of non-negative terms (a matrix product). Relative error per entry <= ``ops`` u (module
   constant below: the Pascal steps, the products and the sums), plus the representation error of p, q,
   2 q and 1 - 3 q themselves (n factors of ``KrrParams.probability_error`` in each entry and in the lost
   mass, U in each block weight); the (P, Q) sums are those of
   :func:`~shuffledp.accounting.worst_case.exact.enumeration.pair_sums`.
2. **Lost mass.** With G = G_w + G_out (G_out >= 0 of total mass <= L), P = P_w + P_out with sum P_out <= L
   (P is a mixture of shifts of G), so delta <= delta_w + L, and delta >= delta_w - e^eps L.
3. **Blocks, fewer views.** delta(sure users + beta uniform users) is non-increasing in beta (one more
   uniform user adds an independent report whose law is the same under D and D': post-processing), so
   sum_beta Bin(U, 3 q)(beta) delta_beta <= sum_{beta <= B} w_beta delta_beta + Pr(beta > B) delta_B for any B:
   views are built for beta <= B only (B = mean + 6 sd + 3 of Bin(U, 3 q)).
4. **Tolerance.** Best first from a few leaves; a block whose bound is not above (1 + :data:`RELATIVE_STOP`)
   times the largest leaf is not split; the result is max(largest leaf, largest bound left): certified above
   every dataset (every dataset lies in an evaluated leaf or an unsplit block). It is within RELATIVE_STOP of
   the exact worst case (the largest leaf is a dataset's exact delta, a certified lower value of the worst
   case, also returned). A node budget (:data:`MAX_NODES_K3_LARGE`) stops the search early with the same guarantee.
5. **Screening** across epsilons as in k3_blocks (a bound at eps' <= eps bounds the block at eps).

Measured: docs/worst-case-k3.md, "k = 3 above n = 200".
"""

from __future__ import annotations

import functools
import heapq
import math
from typing import NamedTuple

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from shuffledp.accounting.params import KrrParams
from shuffledp.accounting.worst_case.exact.enumeration import K3Worst, add_user, pair_outputs, pair_sums
from shuffledp.accounting.worst_case.k3.blocks import (  # the same triangle blocks and halving, the same setting
    Block,
    k3_setting,
)
from shuffledp.accounting.worst_case.search import Search, SearchResult, Status, log_or_minus_inf

__all__ = [
    "K3LargeSearch",
    "K3WindowedSearch",
    "MAX_USERS_K3_LARGE",
    "MIN_USERS_K3_LARGE",
    "RELATIVE_STOP",
    "large_worst",
    "searched",
    "shared_large_search",
]

#: the range of n searched here (below: :mod:`~shuffledp.accounting.worst_case.k3.blocks`, exact)
MIN_USERS_K3_LARGE = 201
MAX_USERS_K3_LARGE = 10_000
#: the search runs where 2 q (n - 1), the expected landings of the others in {x0, x1}, is at most this: the
#: laws are then ~100 x 100 cells (at eps0 = 4, n = 1000: 35; at eps0 = 2: 212, where the laws would be ~40
#: times larger and the weak adversary is already within 0.2% in epsilon on the bracket grid)
MAX_LANDINGS = 48.0
#: a block whose bound is within this relative distance of the largest leaf is not split
RELATIVE_STOP = 1e-2
#: length of the first blocks on the line b = 0: max(TILE, n // TILE) (a block's bound exceeds its datasets'
#: deltas by about (its uncertain users) / n of the weak adversary's excess)
TILE = 32
#: blocks evaluated per epsilon at most (the bound returned is still certified when it is reached)
MAX_NODES_K3_LARGE = 400
_U = 2.0**-53


class _Law(NamedTuple):
    """A windowed law of (r0, r1): the array (its origin does not matter for the delta), an upper value of the
    mass the windows left out, and a bound on each entry's relative error in units of u."""

    g: np.ndarray
    lost: float
    ops: int


def _pascal(rows: int, w: float, stay: float, cap_of) -> tuple[list, list]:
    """Bin(t, w) for t = 0 .. rows - 1 by Pascal's recursion (``stay`` = 1 - w written without a difference),
    each row cut to ``cap_of(t)`` + 1 entries; the mass cut off is carried (cumulative upper values)."""
    out, lost = [np.ones(1)], [0.0]
    row, gone = np.ones(1), 0.0
    for t in range(1, rows):
        new = np.zeros(len(row) + 1)
        new[:-1] = row * stay
        new[1:] += row * w
        cap = cap_of(t) + 1
        if len(new) > cap:
            gone += float(np.sum(new[cap:])) * (1.0 + 4.0 * (t + len(new)) * _U)
            new = new[:cap]
        row = new
        out.append(row)
        lost.append(gone)
    return out, lost


def _cap(t: int, w: float) -> int:
    """A window for Bin(t, w): mean + 9 (sd + 1) (the tail beyond is ~1e-17 at mean 35 and smaller at smaller
    means; whatever it is, it is carried as lost mass, so it costs tightness only where delta is below ~1e-15)."""
    mean = t * w
    return int(min(t, math.ceil(mean + 9.0 * math.sqrt(mean + 1.0) + 9.0)))


def _conv(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """Direct 2-D convolution of non-negative arrays as one matrix product (rows of A as Toeplitz blocks)."""
    if A.size > B.size:
        A, B = B, A
    ar, ac = A.shape
    br, bc = B.shape
    width = ac + bc - 1
    pad = np.zeros((ar, ac + 2 * (bc - 1)))
    pad[:, bc - 1 : bc - 1 + ac] = A
    toeplitz = sliding_window_view(pad, bc, axis=1)[:, :, ::-1]  # [i, c, j] = A[i, c - j]
    blocks = np.ascontiguousarray(toeplitz.transpose(2, 0, 1)).reshape(bc, ar * width)
    products = (B @ blocks).reshape(br, ar, width)
    out = np.zeros((ar + br - 1, width))
    for i in range(ar):
        out[i : i + br] += products[:, i]
    return out


class _Pieces:
    """The closed pieces of step 1, built once per (n, eps0): the Bin(t, 2 q) rows, the 1/2-split rows and the
    blanket weights Bin(U, 3 q)."""

    def __init__(self, n: int, p: float, q: float, stay: float):
        self.n, self.p, self.q, self._stay = n, p, q, stay
        self.land, self.land_lost = _pascal(n, 2.0 * q, p, lambda t: _cap(t, 2.0 * q))
        self.top = max(len(row) for row in self.land) + 1
        self.half, _ = _pascal(self.top, 0.5, 0.5, lambda t: t)
        self._weights: dict = {}

    def own(self, count: int) -> _Law:
        """Law of ``count`` users on x0 as [stay offset, y]: d of them left x0 (r0 = count - d, the row index
        counting upwards), y of those on x1 (the other d - y on x2). The x1 users' law is its transpose."""
        dev = self.land[count]
        size = len(dev)
        out = np.zeros((size, size))
        for d in range(size):
            out[size - 1 - d, : d + 1] = dev[d] * self.half[d]
        return _Law(out, self.land_lost[count], 0)

    def symmetric(self, m: int) -> _Law:
        """Law of (r0, r1) of m users on x2: c ~ Bin(m, 2 q) landings, split evenly: [z, c - z]."""
        counts = self.land[m]
        size = len(counts)
        out = np.zeros((size, size))
        for c in range(size):
            out[np.arange(c + 1), c - np.arange(c + 1)] = counts[c] * self.half[c]
        return _Law(out, self.land_lost[m], 0)

    def weights(self, users: int) -> tuple[np.ndarray, float]:
        """(Bin(users, 3 q)(beta) for beta <= B, an upper value of Pr(beta > B)), B = mean + 6 sd + 3 (step 3):
        Pascal's recursion cut at B, the mass cut off summed as the tail; 1 - 3 q = q (e^eps0 - 1) (no
        difference)."""
        if users not in self._weights:
            w = 3.0 * self.q
            top = int(min(users, math.ceil(users * w + 6.0 * math.sqrt(users * w + 1.0) + 3.0)))
            row, tail = np.ones(1), 0.0
            for t in range(1, users + 1):
                new = np.zeros(len(row) + 1)
                new[:-1] = row * self._stay
                new[1:] += row * w
                if len(new) > top + 1:
                    tail += float(new[top + 1]) * (1.0 + 4.0 * (t + 1) * _U)
                    new = new[: top + 1]
                row = new
            self._weights[users] = (row, tail)
        return self._weights[users]

    def law(self, a: int, b: int, m: int) -> _Law:
        """The others' (r0, r1) law of a users on x0, b on x1 and m on x2 (step 1); ``ops`` bounds the relative
        error of each entry in units of u (Pascal rows <= 2 n, split rows <= 2 top, products, the two sums)."""
        x0, x1, x2 = self.own(a), self.own(b), self.symmetric(m)
        g = _conv(_conv(x0.g, x1.g.T), x2.g)
        terms = min(x0.g.size, x1.g.size) + min(x0.g.size * x1.g.size, x2.g.size)
        ops = 3 * (2 * self.n + 2 * self.top + 2) + terms + 8
        return _Law(g, x0.lost + x1.lost + x2.lost, ops)


class K3LargeSearch:
    """Certified upper value of the k = 3 worst case over every dataset, within RELATIVE_STOP (module doc)."""

    def __init__(self, *, n_users: int, epsilon_local: float):
        n, self._p, self._q = k3_setting(
            n_users, epsilon_local, max_users=MAX_USERS_K3_LARGE, search="large-n search"
        )
        krr = KrrParams.of(epsilon_local, 3)
        self._n = n
        self._pieces = _Pieces(n, self._p, self._q, self._q * math.expm1(epsilon_local))
        #: the representation error of p, q (and 3 q, 1 - 3 q) in units of u, n factors of each law entry
        self._krr = krr
        self._representation = krr.representation_ulps(n)
        self._laws: dict = {}
        self._seen: dict = {}
        #: leaves evaluated first (fixed, so that a result does not depend on the epsilons searched before:
        #: screening by earlier bounds prunes only blocks that the same comparison would prune)
        self._starts = ((0, 0), (n - 1, 0))
        #: blocks evaluated by the last call (a cost measure, kept for the benchmark)
        self.last_nodes = 0

    def worst(self, eps: float) -> K3Worst:
        """(certified upper value of the worst case, certified lower value of the best dataset found, it)."""
        eps, n = float(eps), self._n
        best, best_lower, arg = -1.0, 0.0, (0, 0)
        for a, b in self._starts:
            upper, lower = self._leaf(a, b, eps)
            if upper > best:
                best, best_lower, arg = upper, lower, (a, b)
        heap: list[tuple[float, Block]]
        heap, left, self.last_nodes = [], 0.0, 0
        for block in self._first_blocks():
            self._push(heap, block, eps, best)
        while heap:
            value, block = heapq.heappop(heap)
            if -value <= best:
                break
            if -value <= best * (1.0 + RELATIVE_STOP) or self.last_nodes >= MAX_NODES_K3_LARGE:
                left = -value  # the largest bound left: the search stops here
                break
            if block.leaf():
                upper, lower = self._leaf(block.a1, block.b1, eps)
                if upper > best:
                    best, best_lower, arg = upper, lower, (block.a1, block.b1)
                continue
            for half in block.halves(n):
                self._push(heap, half, eps, best)
        return K3Worst(min(max(best, left), 1.0), min(best_lower, 1.0), arg)

    def _first_blocks(self) -> list:
        """Tiles of the line "nobody else on x1" (the maximisers seen: a second x1 user lowers delta most), and
        the rest of the triangle (b >= 1) as one block, split as needed."""
        n = self._n
        tile = max(TILE, n // TILE)
        line = [Block(a1, min(n - 1, a1 + tile - 1), 0, 0) for a1 in range(0, n, tile)]
        return line + ([Block(0, n - 2, 1, n - 1)] if n > 1 else [])

    def _push(self, heap: list, block: Block, eps: float, best: float) -> None:
        """Queue ``block`` with its bound unless a bound at an epsilon <= ``eps`` is not above ``best``."""
        earlier = [value for at, value in self._seen.get(block, {}).items() if at <= eps]
        if earlier and min(earlier) <= best:
            return
        self.last_nodes += 1
        value = self._leaf(block.a1, block.b1, eps)[0] if block.leaf() else self._bound(block, eps)
        self._seen.setdefault(block, {})[eps] = value
        if value > best:
            heapq.heappush(heap, (-value, block))

    def _delta(self, law: _Law, eps: float) -> tuple[float, float]:
        """(upper, lower) certified values of the forward delta of the others' law ``law`` (step 2)."""
        P, Q = pair_outputs(law.g[None], self._p, self._q, 3)
        upper, lower = pair_sums(P, Q, eps, law.ops + 8 + self._representation)
        lost = law.lost * (1.0 + self._representation * _U)
        return float(upper[0]) + lost, max(float(lower[0]) - math.exp(eps) * lost, 0.0)

    def _cached(self, key: tuple[int, int, int]) -> _Law:
        if key not in self._laws:
            if len(self._laws) > _CACHE_LAWS:
                self._laws.pop(next(iter(self._laws)))
            self._laws[key] = self._pieces.law(*key)
        return self._laws[key]

    def _leaf(self, a: int, b: int, eps: float) -> tuple[float, float]:
        return self._delta(self._cached((a, b, self._n - 1 - a - b)), eps)

    def _bound(self, block: Block, eps: float) -> float:
        """Certified upper value of the block's bound (step 3): views for beta <= B, the tail at beta = B."""
        a1, b1, m_min, uncertain = block.sure(self._n)
        weights, tail = self._pieces.weights(uncertain)
        law = self._cached((a1, b1, m_min))
        g, total = law.g, 0.0
        for beta, weight in enumerate(weights):
            if beta:
                g = add_user(g, 1.0 / 3.0, 1.0 / 3.0, 1.0 / 3.0)
            value = self._delta(_Law(g, law.lost, law.ops + 2 * beta), eps)[0]
            total += weight * value
        total += tail * value
        # the weights' U factors of 3 q or 1 - 3 q carry their representation error too
        return total * (1.0 + (4.0 * (len(weights) + 2) + self._krr.representation_ulps(uncertain)) * _U)


#: laws kept across epsilons (each at most a few 10^4 doubles)
_CACHE_LAWS = 600


def searched(n_users: int, epsilon_local: float) -> bool:
    """Whether the search runs at (n, eps0) for k = 3 (MIN_USERS_K3_LARGE <= n <= MAX_USERS_K3_LARGE and at most
    MAX_LANDINGS expected landings)."""
    q = math.exp(KrrParams.of(epsilon_local, 3).log_q)
    return MIN_USERS_K3_LARGE <= n_users <= MAX_USERS_K3_LARGE and 2.0 * q * (n_users - 1) <= MAX_LANDINGS


@functools.lru_cache(maxsize=2)
def shared_large_search(n_users: int, epsilon_local: float) -> K3LargeSearch:
    """One search per (n, eps0), shared by ``worst-case-upper`` and ``worst-case-lower``."""
    return K3LargeSearch(n_users=n_users, epsilon_local=epsilon_local)


def large_worst(eps: float, *, n_users: int, epsilon_local: float) -> K3Worst:
    """:meth:`K3LargeSearch.worst` of the shared search."""
    return shared_large_search(n_users, epsilon_local).worst(eps)


class K3WindowedSearch(Search):
    """The k = 3 search above n = 200 where the laws are narrow (:func:`searched`) behind the search
    interface: :func:`large_worst` (shared with ``worst-case-lower``), its certified upper value, the best
    dataset found and that dataset's exact delta (a certified lower value)."""

    name = "k3-windowed"

    def result(self, eps: float) -> SearchResult:
        """The block search on windowed laws at ``eps``.

        Args:
            eps: the central epsilon.

        Returns:
            upper within :data:`RELATIVE_STOP` of the best dataset found when closed; that dataset and its delta.
        """
        worst = large_worst(float(eps), n_users=self.n_users, epsilon_local=self.epsilon_local)
        lower = float(np.log(worst.lower)) if worst.lower > 0 else -np.inf
        closed = worst.upper <= worst.lower * (1.0 + RELATIVE_STOP)
        return SearchResult(
            log_or_minus_inf(worst.upper),
            lower,
            tuple(worst.argmax),
            Status.CLOSED if closed else Status.OPEN,
        )
