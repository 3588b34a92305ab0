"""k = 3 beyond enumeration: the exact worst case over datasets by branch and bound over blocks of datasets.

Setting (docs/worst-case-k3.md, "k = 3 at larger n: blocks of datasets"): u holds x0 in D and x1 in D';
of the other n - 1 users ``a`` hold x0, ``b`` hold x1 and m = n - 1 - a - b hold x2. The output is
(h0, h1) (h2 = n - h0 - h1), and the delta of one dataset is computed exactly as in
:func:`shuffledp.accounting.worst_case.exact.enumeration.k3_worst_case`. The reverse direction of (a, b) is the
forward direction of (b, a) (relabel x0 <-> x1), so the worst case is the maximum of the forward delta
over the triangle a, b >= 0, a + b <= n - 1. Enumerating it costs n^4 / 2 doubles of laws; this module
visits only the datasets that can be the maximum.

**A bound for a block of datasets.** A block is the set of datasets of the triangle with
a1 <= a <= a2 and b1 <= b <= b2. Every dataset in it has at least a1 users on x0, b1 on x1 and
m_min = max(0, n - 1 - a2 - b2) on x2 ("sure" users); the other U = n - 1 - a1 - b1 - m_min users are
"uncertain" (their values differ between the block's datasets).

1. **Mixture.** k = 3 RR of any user is, with probability 3 q, a uniform report over the three values
   (blanket), otherwise its own value (p = q + (1 - 3 q)).
2. **A finer experiment.** The adversary is told which uncertain users are blanket (beta of them,
   beta ~ Bin(U, 3 q), the same law for every dataset of the block).
3. **Post-processing.** Given those bits, a non-blanket uncertain user reports its own value, which
   the adversary (who knows the dataset) subtracts: the histogram is the sure users', the beta blanket
   users' and u's reports plus a constant. So the dataset's delta is at most the delta of the view
   (beta, h0, h1 of the sure + blanket users and u), whose law does not depend on the dataset in the
   block: delta(a, b) <= Bound(block) = sum_beta Bin(U, 3 q)(beta) delta(sure users + beta uniform users).
4. **Leaves.** A block of one dataset has U = 0: its bound is that dataset's exact delta.

**Search.** The triangle is tiled into blocks of side :data:`TILE`; a few leaves give a first maximum
((0, 0), (n - 1, 0) and the maximisers at the epsilons searched before); blocks whose bound is above the maximum are split in two along their longer side (largest
bound first), leaves update the maximum, and the search stops when no block's bound is above it. The
result is the maximising leaf's certified value: above delta(a, b) for every dataset (pruned blocks are
below it). Block bounds only decide pruning, so they may be loose; each is certified all the same.
Screening across epsilons, as in :mod:`~shuffledp.accounting.worst_case.k4.own_hits`: a block's certified bound
at eps' <= eps bounds it at eps (delta is non-increasing in eps), so a block whose earlier bound is not
above the maximum is pruned without being evaluated.

**Rounding.** Laws are built by :func:`~shuffledp.accounting.worst_case.exact.enumeration.add_user` (non-negative
terms; at most n - 1 additions per entry) and evaluated by the certified sums of
:func:`~shuffledp.accounting.worst_case.exact.enumeration._pair_forward` (c = 4 (n + 8)); the block weights
Bin(U, 3 q) come from a Pascal recursion of non-negative terms (relative error <= 2 U u per entry;
1 - 3 q is formed as q (e^eps0 - 1), not as a difference), and their dot product with the per-beta values
adds (U + 1) u: each block bound adds 4 (U + 2) u of its value. p, q and 1 - 3 q carry their own
representation error rho (``KrrParams.probability_error``): n factors of each law entry (c grows by
1.001 n rho / u) and U factors of each weight (the block bound by 1.001 U rho).

Cost (benchmarks/bench_bracket.py --goals): see docs/worst-case-k3.md; the laws of the blocks
evaluated are kept across epsilons up to :data:`CACHE_DOUBLES`.
"""

from __future__ import annotations

import functools
import heapq
import math
from typing import NamedTuple

import numpy as np

from shuffledp.accounting.params import KrrParams
from shuffledp.accounting.worst_case.exact.enumeration import (
    K3_CACHE_USERS,
    K3Worst,
    add_user,
    k3_worst_case,
    pair_laws,
    pair_outputs,
    pair_sums,
    stack_laws,
)
from shuffledp.accounting.worst_case.kept import Kept
from shuffledp.accounting.worst_case.search import Search, SearchResult, Status, log_or_minus_inf

__all__ = [
    "Block",
    "K3BlockSearch",
    "MAX_USERS_K3_BLOCKS",
    "TILE",
    "K3ExactSearch",
    "exact_worst",
    "k3_setting",
    "shared_search",
]

#: largest n searched by blocks (above: worst-case-upper returns weak-adversary for k = 3)
MAX_USERS_K3_BLOCKS = 200
#: side of the first blocks
TILE = 32
#: doubles of block laws kept across epsilons (least recently used dropped first)
CACHE_DOUBLES = 60_000_000
_U = 2.0**-53


class Block(NamedTuple):
    """The datasets with a1 <= n_x0 <= a2, b1 <= n_x1 <= b2 and n_x0 + n_x1 <= n - 1 (the rest on x2)."""

    a1: int
    a2: int
    b1: int
    b2: int

    def leaf(self) -> bool:
        """One dataset: (a1, b1)."""
        return self.a1 == self.a2 and self.b1 == self.b2

    def sure(self, n_users: int) -> tuple[int, int, int, int]:
        """(a1, b1, m_min, U): the sure users on x0, x1, x2 and the number of uncertain users."""
        m_min = max(0, n_users - 1 - self.a2 - self.b2)
        return self.a1, self.b1, m_min, n_users - 1 - self.a1 - self.b1 - m_min

    def halves(self, n_users: int) -> list:
        """The two halves along the longer side, each cut to the triangle a + b <= n - 1."""
        if self.a2 - self.a1 >= self.b2 - self.b1:
            mid = (self.a1 + self.a2) // 2
            parts = [(self.a1, mid, self.b1, self.b2), (mid + 1, self.a2, self.b1, self.b2)]
        else:
            mid = (self.b1 + self.b2) // 2
            parts = [(self.a1, self.a2, self.b1, mid), (self.a1, self.a2, mid + 1, self.b2)]
        return [
            Block(a1, a2, b1, min(b2, n_users - 1 - a1)) for a1, a2, b1, b2 in parts if a1 + b1 <= n_users - 1
        ]


def _weights(users: int, w: float, stay: float) -> np.ndarray:
    """Bin(users, w) by Pascal's recursion, ``stay`` = 1 - w formed without a difference (non-negative terms;
    relative error <= 2 users u beyond the representation error of w and stay)."""
    row = np.ones(1)
    for _ in range(users):
        row = np.concatenate((row * stay, [0.0])) + np.concatenate(([0.0], row * w))
    return row


def k3_setting(
    n_users: int, epsilon_local: float, *, max_users: int, search: str
) -> tuple[int, float, float]:
    """The setting of a k = 3 search over blocks of datasets: n checked, and k-RR's probabilities.

    Args:
        n_users: the number of users n, at least 2 and at most ``max_users``.
        epsilon_local: the local epsilon_0 of k-RR with k = 3.
        max_users: the largest n the search takes.
        search: the search's name, for the error message.

    Returns:
        (n, p, q): n, and the probabilities that a user reports its own value (p) and one given other value (q).

    Raises:
        ValueError: ``n_users`` outside [2, ``max_users``].
    """
    if not 2 <= n_users <= max_users:
        raise ValueError(f"`n_users` must be in [2, {max_users}] for the k = 3 {search}; got {n_users}.")
    krr = KrrParams.of(epsilon_local, 3)
    return n_users, math.exp(krr.log_p), math.exp(krr.log_q)


class K3BlockSearch:
    """The certified exact worst case over every dataset for k = 3 (module docstring), laws kept across epsilons."""

    def __init__(self, *, n_users: int, epsilon_local: float):
        n, self._p, self._q = k3_setting(
            n_users, epsilon_local, max_users=MAX_USERS_K3_BLOCKS, search="block search"
        )
        krr = KrrParams.of(epsilon_local, 3)
        self._n = n
        self._krr = krr
        #: 1 - 3 q = q (e^eps0 - 1): as a difference it lost ~43 ulp at eps0 = 0.1 (3 q = 0.97)
        self._stay = self._q * math.expm1(epsilon_local)
        # arithmetic (4 (n + 8)) plus the representation error of p and q, n factors of each entry
        self._ops = 4 * (n + 8) + krr.representation_ulps(n)
        self._laws: Kept[tuple[np.ndarray, np.ndarray]] = Kept(CACHE_DOUBLES, lambda pq: 2 * pq[0].size)
        self._seen: dict = {}  # block -> {eps: certified bound}
        self._on_x2 = [np.ones((1, 1))]  # [m] = law of (r0, r1) of m users on x2
        #: leaves evaluated first: nobody else on x0 or x1, everybody on x0, and the latest maximisers
        self._starts = [(0, 0), (n - 1, 0)]

    def worst(self, eps: float) -> K3Worst:
        """Certified upper and lower values of the worst case over datasets and directions at ``eps``."""
        eps, n = float(eps), self._n
        best, best_lower, arg = -1.0, 0.0, (0, 0)
        for a, b in self._starts:  # likely maxima first: the better the start, the more is pruned
            upper, lower = self._leaf(a, b, eps)
            if upper > best:
                best, best_lower, arg = upper, lower, (a, b)
        heap: list[tuple[float, Block]] = []
        for a1 in range(0, n, TILE):
            for b1 in range(0, n - a1, TILE):
                self._push(
                    heap, Block(a1, min(n - 1, a1 + TILE - 1), b1, min(n - 1 - a1, b1 + TILE - 1)), eps, best
                )
        while heap:
            value, block = heapq.heappop(heap)
            if -value <= best:
                break
            if block.leaf():
                upper, lower = self._leaf(block.a1, block.b1, eps)
                if upper > best:
                    best, best_lower, arg = upper, lower, (block.a1, block.b1)
                continue
            for half in block.halves(n):
                self._push(heap, half, eps, best)
        self._starts = list(dict.fromkeys([arg, *self._starts]))[:4]
        return K3Worst(min(best, 1.0), min(best_lower, 1.0), arg)

    def _push(self, heap: list, block: Block, eps: float, best: float) -> None:
        """Queue ``block`` with its bound unless a bound at a smaller epsilon, or at this one, is not above ``best``."""
        screen = self._screen(block, eps)
        if screen is not None and screen <= best:
            return
        if block.leaf():
            value = self._leaf(block.a1, block.b1, eps)[0]
        else:
            value = self._bound(block, eps)
        self._seen.setdefault(block, {})[eps] = value
        if value > best:
            heapq.heappush(heap, (-value, block))

    def _screen(self, block: Block, eps: float) -> float | None:
        """The smallest certified bound of ``block`` at an epsilon <= ``eps`` (a bound at ``eps`` too: delta is
        non-increasing in epsilon), or None if it was not evaluated at one."""
        earlier = [value for at, value in self._seen.get(block, {}).items() if at <= eps]
        return min(earlier) if earlier else None

    def _leaf(self, a: int, b: int, eps: float) -> tuple[float, float]:
        """(upper, lower) certified values of the exact forward delta of the dataset (a, b)."""
        upper, lower = pair_sums(*self._outputs(Block(a, a, b, b)), eps, self._ops)
        return float(upper[0]), float(lower[0])

    def _bound(self, block: Block, eps: float) -> float:
        """Certified upper value of the block's bound (module docstring, steps 1-3)."""
        P, Q = self._outputs(block)
        upper, _ = pair_sums(P, Q, eps, self._ops)
        users = P.shape[0] - 1
        weights = _weights(users, 3.0 * self._q, self._stay)
        # the Pascal rows and the dot product (4 (U + 1) u), and the U factors of 3 q or 1 - 3 q in each weight
        return float(weights @ upper) * (
            1.0 + (4.0 * (users + 2) + self._krr.representation_ulps(users)) * _U
        )

    def _outputs(self, block: Block) -> tuple[np.ndarray, np.ndarray]:
        """(P, Q) of the block's views, one per beta (kept across epsilons, least recently used dropped first)."""
        kept = self._laws.get(block)
        if kept is not None:
            return kept
        stack = self._stack(block)
        rows, cols = np.flatnonzero(stack.any(axis=(0, 2))), np.flatnonzero(stack.any(axis=(0, 1)))
        # cells whose law is exactly 0 in every view add nothing to any sum: keep the box around the others
        P, Q = pair_outputs(stack[:, rows[0] : rows[-1] + 1, cols[0] : cols[-1] + 1], self._p, self._q, 3)
        self._laws.put(block, (P, Q))
        return P, Q

    def _stack(self, block: Block) -> np.ndarray:
        """Laws of (r0, r1) of the sure users plus beta uniform users, beta = 0 .. U, padded to (n, n)."""
        n, p, q = self._n, self._p, self._q
        a1, b1, m_min, uncertain = block.sure(n)
        while len(self._on_x2) <= m_min:  # the users on x2 first: their laws are shared by all blocks
            self._on_x2.append(add_user(self._on_x2[-1], q, q, 1.0 - 2.0 * q))
        law = self._on_x2[m_min]
        for _ in range(a1):  # landing on x2: q = 1 - p - q, never written as the difference
            law = add_user(law, p, q, q)
        for _ in range(b1):
            law = add_user(law, q, p, q)
        stack = np.zeros((uncertain + 1, n, n))
        for beta in range(uncertain + 1):
            stack[beta, : law.shape[0], : law.shape[1]] = law
            if beta < uncertain:
                law = add_user(law, 1.0 / 3.0, 1.0 / 3.0, 1.0 / 3.0)
        return stack


@functools.lru_cache(maxsize=2)
def shared_search(n_users: int, epsilon_local: float) -> K3BlockSearch:
    """One search per (n, eps0), shared by ``worst-case-upper`` and ``worst-case-lower`` (a bracket needs
    both; a search's results do not depend on the epsilons it saw before, test_k3_blocks.py)."""
    return K3BlockSearch(n_users=n_users, epsilon_local=epsilon_local)


def exact_worst(eps: float, *, n_users: int, epsilon_local: float) -> K3Worst:
    """The exact k = 3 worst case at ``eps``, used by both ``worst-case-upper`` and ``worst-case-lower``: the
    enumeration of every dataset up to K3_CACHE_USERS, the block search above (both kept across calls)."""
    n = n_users
    if n > K3_CACHE_USERS:
        return shared_search(n, epsilon_local).worst(eps)
    return k3_worst_case(eps, n_users=n, epsilon_local=epsilon_local, laws=_enumerated_laws(n, epsilon_local))


@functools.lru_cache(maxsize=2)
def _enumerated_laws(n: int, epsilon_local: float):
    """:func:`~shuffledp.accounting.worst_case.exact.enumeration.stack_laws` of every dataset's law (~n^4 / 2 doubles)."""
    krr = KrrParams.of(epsilon_local, 3)
    return stack_laws(pair_laws(n, math.exp(krr.log_p), math.exp(krr.log_q)))


class K3ExactSearch(Search):
    """The exact k = 3 worst case (n <= :data:`MAX_USERS_K3_BLOCKS`) behind the search interface:
    :func:`exact_worst` (enumeration up to n = 64, these blocks above), its certified upper and lower
    values and the maximising dataset (n_x0, n_x1)."""

    name = "k3-exact"

    def result(self, eps: float) -> SearchResult:
        """The exact worst case at ``eps``.

        Args:
            eps: the central epsilon.

        Returns:
            The certified upper and lower values (equal up to rounding) and the maximising (n_x0, n_x1).
        """
        worst = exact_worst(float(eps), n_users=self.n_users, epsilon_local=self.epsilon_local)
        lower = float(np.log(worst.lower)) if worst.lower > 0 else -np.inf
        return SearchResult(log_or_minus_inf(worst.upper), lower, tuple(worst.argmax), Status.CLOSED)
