"""k >= 4: a certified upper bound on the worst case over every dataset by branch and bound over blocks.

Setting (docs/worst-case-k4.md): u holds x0 in D and x1 in D'; the other n - 1 users hold a dataset
(a on x0, b on x1, a partition c_1 >= c_2 >= ... of the rest over the k - 2 outside values, which are
exchangeable). The reverse direction of a dataset is the forward direction of its x0 <-> x1 relabelling,
which is again a dataset, so the worst case over datasets and both directions is the maximum of the
forward delta over every dataset.

**Blocks.** A node of the search fixes, in the order x0, x1, first outside value, second, ..., the exact
counts of the values before the "open" one and a lower bound on the open one; the values after it are
free. Its datasets have at least those counts ("sure" users: a1 on x0, b1 on x1, s_1 >= s_2 >= ... on
outside values); the other U users are "uncertain". Its two children ("one more on the open value",
"the open value closes at its count, the next one opens at 0") split its datasets in two, so the leaves
(U = 0) are the datasets, each exactly once.

**A node's bound (post-processing of a finer experiment).** Each k-RR report is, with probability
gamma = k q, uniform over the k values (blanket), else its sender's own value. Reveal which uncertain
users are blanket (beta ~ Bin(U, gamma), the same law for every dataset of the node). A non-blanket
uncertain user reports its own value, which the adversary (who knows the dataset) subtracts. So every
dataset's histogram is a function of beta and the histogram H of the sure users, the beta blanket users
and u, whose law does not depend on the dataset: delta(D) <= Bound = sum_beta Bin(U, gamma)(beta)
delta(sure + beta uniform users). U = 0: the dataset's exact delta. The root (no sure user) is Koskela
et al.'s weak adversary.

**Sufficiency.** In H the values that no sure user holds ("free" values: k - 2 - J of them, J the number
of occupied outside values) receive every report with the same probability (q from a sure user or from u
in either world, 1/k from a blanket user), so given their total the arrangement over them is uniform
multinomial under D and D': (h0, h1, the J occupied counts) is sufficient (the free total is implied).
Its law is built user by user on a dense grid of J + 2 axes (J + 1 when J = k - 2: no free value, the
last occupied count is implied by the total), each of length at most n + 1.

**Search.** Best first (largest bound first) from a few likely maxima ("all others on one outside
value", on x1, on x0), stopping when no open node's bound is above the largest leaf. A node whose view
would need more than :data:`MAX_CELLS_K4_BLOCKS` cells (J + 2 axes), or the node count budget, stops the search:
the result is then max(largest leaf, largest open bound), still a certified upper bound (every dataset
is in a leaf evaluated or under an open or pruned node). ``exact`` says whether the search closed (then
the result is the exact worst case, up to rounding).

**Tightened nodes and allowances (docs/worst-case-k4.md items 8, 9).** A node's open outside
count is raised to ceil(R / outside values left), the least any of its datasets holds (same datasets, more sure
users). Above n = :data:`MAX_USERS_UNCROPPED` the laws' edge slabs of mass <= :data:`CROP` are dropped after
each user and the Bin(U, gamma) tails of weight <= :data:`TAIL` left out (beta below: bounded by 1; above: by
the view at the last beta kept, delta being non-increasing in beta); every dropped mass is added to the bound.

**Rounding.** Every law entry is a sum of products of non-negative terms (no differences; 1 - gamma is
formed as q expm1(eps0)): relative error <= (n + 4)(axes + 8) u per cell from the arithmetic, plus n rho
from the representation error rho of p, q, gamma, 1 - gamma themselves (``KrrParams.probability_error``,
raised 0.1 %; each term has n such factors); each term is summed as
(fl + c u (P + e^eps Q))_+ over the terms with fl > -c u (P + e^eps Q), plus a relative (cells) u for
the sum and an absolute bound on underflow; the Bin(U, gamma) weights (Pascal, 2 U u, and U rho) and the
dot product add 4 (U + 3) u + U rho of the bound.
"""

from __future__ import annotations

import bisect
import heapq
import itertools
import math
from typing import NamedTuple

import numpy as np

from shuffledp.accounting.params import KrrParams
from shuffledp.accounting.worst_case.kept import Kept

__all__ = [
    "K4Worst",
    "K4BlockSearch",
    "MAX_CELLS_K4_BLOCKS",
    "MAX_USERS_K4_BLOCKS",
    "MAX_USERS_K4_ONLY",
    "max_users",
    "Chain",
    "MAX_NODES_K4_BLOCKS",
    "node_bound",
    "node_laws",
    "leaf_delta",
]

#: largest n searched by ``worst-case-upper`` for k >= 5 (above: own-value hits to n = 32, then weak-adversary)
MAX_USERS_K4_BLOCKS = 24
#: largest n searched at k = 4 (every view has at most 3 axes there: x0, x1 and one outside count)
MAX_USERS_K4_ONLY = 50


def max_users(k: int) -> int:
    """Largest n at which ``worst-case-upper`` runs this search for ``k``."""
    return MAX_USERS_K4_ONLY if k == 4 else MAX_USERS_K4_BLOCKS


#: largest grid of one view ((n + 1)^(J + 2) cells); a node needing more stops the search
MAX_CELLS_K4_BLOCKS = 1_200_000
#: nodes evaluated per epsilon before the search stops (its result stays a certified upper bound)
MAX_NODES_K4_BLOCKS = 4000
#: law cells summed per epsilon before the search stops (the same; the k = 4, n = 24 searches measured that
#: close sum up to ~3e7, so this bounds the cost where many occupied outside values keep it from closing)
MAX_WORK = 60_000_000
#: above this n the laws are cropped (:data:`CROP`) and the Bin(U, gamma) tails bounded (:data:`TAIL`)
MAX_USERS_UNCROPPED = 24
#: mass a crop may drop at each end of each axis, per user added (added to the bound)
CROP = 1e-30
#: weight of each Bin(U, gamma) tail left out of a node's sum (bounded, and added)
TAIL = 1e-30
#: the same above n = 24 (k = 4 to n = 50: a search that closes there sums up to ~6e8 cells, ~12 CPU s)
MAX_WORK_LARGE = 1_000_000_000
#: doubles of node laws kept across epsilons (160 MB)
CACHE_DOUBLES = 20_000_000
#: doubles of sure users' laws kept to continue from (80 MB; the k = 4, n = 50 searches hold up to ~1e5 each)
SURE_DOUBLES = 10_000_000
_U = 2.0**-53
_TINY = 2.0**-1074


class K4Worst(NamedTuple):
    """Certified upper value of the worst case, its argmax leaf, whether the search closed, nodes evaluated."""

    upper: float
    argmax: tuple[int, ...] | None  # None when no leaf beat the cap
    exact: bool
    nodes: int


class _Node(NamedTuple):
    counts: (
        tuple  # (a, b, s_1, s_2, ...): exact for all but the last, the last a lower bound (the open value)
    )

    @property
    def stage(self) -> int:
        return len(self.counts) - 1


class _Params(NamedTuple):
    n: int
    k: int
    p: float
    q: float
    gamma: float
    one_minus_gamma: float
    #: the representation error of p, q, gamma, 1 - gamma in units of u (``KrrParams.probability_error``)
    rho: float


def _params(n: int, k: int, epsilon_local: float) -> _Params:
    krr = KrrParams.of(epsilon_local, k)
    q = math.exp(krr.log_q)
    return _Params(
        n,
        k,
        math.exp(krr.log_p),
        q,
        math.exp(krr.log_gamma),
        q * math.expm1(epsilon_local),
        krr.representation_ulps(1),
    )


def _add(law: np.ndarray, probs: tuple, rest: float) -> np.ndarray:
    """Law after one more user reporting on axis i with probability probs[i], on a free value with ``rest``
    (every axis grows by one). An axis of probability 0 adds nothing: its term, 0 times a finite law, is an
    exact 0, and adding it leaves every sum as it is (same bits), so it is not formed.

    Formed on :func:`_grown`'s flat grid (contiguous passes; each cell's terms added in the same order as on
    the law's own grid, a term absent there being an exact +0 here), each distinct product formed once."""
    grown = _grown(law)
    products: dict = {}

    def times(prob: float) -> np.ndarray:
        if prob not in products:
            products[prob] = prob * grown.flat
        return products[prob]

    if rest > 0:  # the rest's product is the sum's start: formed in place unless an axis shares it
        out = times(rest).copy() if rest in probs else rest * grown.flat
    else:
        out = np.zeros(grown.flat.size)
    for step, prob in zip(grown.steps, probs):
        if prob == 0.0:
            continue
        out[step:] += times(prob)[:-step]
    return out.reshape(grown.shape)


class _Grown(NamedTuple):
    flat: np.ndarray  # the law at the origin of a zero array one longer on every axis, flattened (C order)
    shape: tuple  # that array's shape
    steps: tuple  # flat offset of one step along each axis


def _grown(law: np.ndarray) -> _Grown:
    """The law placed at the origin of a zero array one longer on every axis (the shape one more user gives):
    a step along an axis is then a fixed offset in the flat array, so a shifted copy is one contiguous slice.
    The cells that such a slice carries past a row's end (into the next row's first index) are the padding's,
    exact zeros, and the first axis's last slab falls off the end: a cell of the result gets the terms it gets
    on the law's own grid, in the same order, plus exact zeros where that grid has no term, and x + 0 is x
    (the laws are non-negative), so every entry has the same bits."""
    shape = tuple(m + 1 for m in law.shape)
    padded = np.zeros(shape)
    padded[tuple(slice(0, m) for m in law.shape)] = law
    steps = tuple(math.prod(shape[axis + 1 :]) for axis in range(len(shape)))
    return _Grown(padded.reshape(-1), shape, steps)


def _layout(par: _Params, counts: tuple) -> tuple[list, int, int]:
    """(sure users per axis, sure users on the implied value, values lumped into the implied remainder).

    Axes: x0, x1, then the occupied outside values; the remainder (the free values) is implied by the
    total. When every outside value is occupied (J = k - 2) there is no free value: the last occupied
    value is the remainder instead (the histogram's last count is implied by the total)."""
    parts = [c for c in counts[2:] if c > 0]
    explicit = parts[:-1] if len(parts) == par.k - 2 else parts
    implied = parts[-1] if len(parts) == par.k - 2 else 0
    on_axes = list(counts[:2]) + [0] * (2 - len(counts[:2])) + explicit
    return on_axes, implied, par.k - len(on_axes)


def _sequence(par: _Params, counts: tuple) -> tuple[tuple, tuple]:
    """The order in which :func:`_sure_law` adds the sure users ``counts``: (the layout's number of axes and
    lumped values, the users per position: each axis of :func:`_layout` in turn, then the implied value).
    Two nodes of one layout whose positions agree up to one, the first holding fewer users there and none
    after it, build their laws along one path: the first node's law is a step of the second's."""
    on_axes, implied, lumped = _layout(par, counts)
    return (len(on_axes), lumped), (*on_axes, implied)


def _sure_law(
    par: _Params, counts: tuple, crop: float = 0.0, start: tuple | None = None
) -> tuple[np.ndarray, float]:
    """Law of the sure users ``counts`` on the axes of :func:`_layout` (the remainder implied), cropped by
    :func:`_crop` after every user, and the certified mass dropped (0 when ``crop`` = 0).

    ``start``: (users per position, law, lost) of a step of this node's path (:func:`_sequence`), from which
    the remaining users are added: the same operations in the same order as from no user, so the same bits."""
    (axes, lumped), users = _sequence(par, counts)
    done, law, lost = start if start is not None else ((0,) * len(users), np.ones((1,) * axes), 0.0)
    for position, count in enumerate(users):
        if position < axes:
            probs, rest = tuple(par.p if i == position else par.q for i in range(axes)), lumped * par.q
        else:  # a user on the implied value: p + (lumped - 1) q there
            probs, rest = (par.q,) * axes, par.p + (lumped - 1) * par.q
        for _ in range(count - done[position]):
            law, lost = _crop_law(_add(law, probs, rest), lost, crop)
    return law, lost


def _view_sums(law: np.ndarray, par: _Params, eps: float, users: int) -> float:
    """Certified upper value of sum_h (P - e^eps Q)_+ of the view whose others' law is ``law`` (u added)."""
    e = math.exp(eps)
    axes = law.ndim
    free = (par.k - axes) * par.q  # u's reports on the values lumped into the remainder
    # relative error of every entry, in units of u: the arithmetic, and the representation error of p, q and
    # 1/k (rho each, 1/k within u <= rho) in the ``users`` factors of every term
    ops = (users + 4) * (axes + 8) * 1.01 + users * par.rho
    # C: u reports a value other than x0, x1 (the same in both worlds); A, B: u reports x0 / x1. On the flat
    # grid of :func:`_grown`, as in :func:`_add`: each cell's terms in the same order, absent ones an exact +0
    grown = _grown(law)
    p_law, q_law = par.p * grown.flat, par.q * grown.flat  # each product formed once (the same values)
    common = (q_law.copy() if free == par.q else free * grown.flat) if free > 0 else np.zeros(q_law.size)
    for step in grown.steps[2:]:
        common[step:] += q_law[:-step]
    on_x0, on_x1 = grown.steps[:2]
    P, Q = common.copy(), common
    P[on_x0:] += p_law[:-on_x0]
    P[on_x1:] += q_law[:-on_x1]
    Q[on_x0:] += q_law[:-on_x0]
    Q[on_x1:] += p_law[:-on_x1]
    P, Q = P.reshape(grown.shape), Q.reshape(grown.shape)
    Q *= e
    tol = np.add(P, Q)
    tol *= ops * _U
    P -= Q
    P += tol  # (fl + tol)_+: positive exactly where fl > -tol
    upper = float(np.sum(np.maximum(P, 0.0, out=P)))
    cells = P.size
    return upper * (1.0 + 2.0 * cells * _U) + cells * ops * (1.0 + e) * _TINY


def _weights(users: int, w: float, one_minus_w: float) -> np.ndarray:
    """Bin(users, w) by Pascal's recursion (non-negative terms; relative error <= 2 users u)."""
    row = np.ones(1)
    for _ in range(users):
        row = np.concatenate((row * one_minus_w, [0.0])) + np.concatenate(([0.0], row * w))
    return row


def _cells(par: _Params, counts: tuple) -> int:
    return (par.n + 1) ** len(_layout(par, counts)[0])


class Chain(NamedTuple):
    """A node's others' laws (sure users plus beta uniform users, beta = 0 .. len - 1), each possibly cropped,
    and ``lost[beta]``: a certified upper value of the mass its crops dropped (0 without cropping)."""

    laws: list
    lost: list


def _crop(law: np.ndarray, tau: float) -> tuple[np.ndarray, float]:
    """Drop, at both ends of every axis, the longest run of slabs whose total mass is <= ``tau`` (at least one
    slab kept). Returns the cropped law and a certified upper value of the mass dropped (the slabs' totals,
    overlaps counted twice). tau = 0: nothing is dropped.

    The running totals are formed one after another from each end (as ``np.cumsum`` forms them, the same
    bits), and only as far as the first one above ``tau``, except along the last axis, where a few slabs cost
    what the whole margin does (they lie across every row)."""
    if tau <= 0.0 or law.size == 1:
        return law, 0.0
    window, dropped = [], 0.0
    for axis in range(law.ndim):
        size = law.shape[axis]
        others = tuple(i for i in range(law.ndim) if i != axis)
        if axis == law.ndim - 1:
            margin = law.sum(axis=others).tolist()
            head, tail = list(itertools.accumulate(margin)), list(itertools.accumulate(margin[::-1]))
        else:
            head, tail = _edge_sums(law, axis, others, tau, False), _edge_sums(law, axis, others, tau, True)
        lo = bisect.bisect_right(head, tau)  # slabs 0 .. lo - 1 hold <= tau (the totals do not decrease)
        hi = bisect.bisect_right(tail, tau)  # the last hi slabs hold <= tau
        lo, hi = min(lo, size - 1), min(hi, size - 1 - min(lo, size - 1))
        dropped += (head[lo - 1] if lo else 0.0) + (tail[hi - 1] if hi else 0.0)
        window.append(slice(lo, size - hi))
    if dropped == 0.0:
        return law, 0.0
    # entries carry a relative error <= (n + 4)(axes + 8) u and the sums (cells) u: far below this margin
    return np.ascontiguousarray(law[tuple(window)]), dropped * (1.0 + 1e-6)


def _edge_sums(law: np.ndarray, axis: int, others: tuple, tau: float, from_end: bool) -> list:
    """Running totals of the slabs along ``axis`` from one end (the last slab first if ``from_end``), as far
    as the first total above ``tau`` (or the whole axis): :func:`_crop` needs no more. The slabs' totals are
    those of the whole margin (``law.sum`` over the other axes of the same slabs, the same iteration), and a
    running total depends only on the slabs before it, so every value is the one the whole axis gives."""
    size = law.shape[axis]
    slabs = min(size, 2)  # in the searches a crop rarely drops more than one slab at an end
    while True:
        index = [slice(None)] * law.ndim
        index[axis] = slice(size - slabs, size) if from_end else slice(0, slabs)
        margin = law[tuple(index)].sum(axis=others).tolist()
        sums = list(itertools.accumulate(margin[::-1] if from_end else margin))
        if slabs == size or sums[-1] > tau:
            return sums
        slabs = min(size, 4 * slabs)


def node_laws(
    par: _Params, counts: tuple, *, crop: float = 0.0, sure: tuple | None = None, top: int | None = None
) -> Chain:
    """The others' laws of the node's views: sure users ``counts`` plus beta uniform users, beta = 0 .. ``top``
    (default U). ``sure``: (law, lost) of the sure users if already known; ``crop``: :func:`_crop`'s tau."""
    uncertain = par.n - 1 - sum(counts)
    top = uncertain if top is None else top
    law, lost = sure if sure is not None else _sure_law(par, counts, crop)
    uniform = tuple(1.0 / par.k for _ in range(law.ndim))
    laws, losts = [law], [lost]
    for _ in range(top):
        law, dropped = _crop(_add(laws[-1], uniform, (par.k - law.ndim) / par.k), crop)
        laws.append(law)
        losts.append(losts[-1] + dropped)
    return Chain(laws, losts)


def _crop_law(law: np.ndarray, lost: float, crop: float) -> tuple[np.ndarray, float]:
    law, dropped = _crop(law, crop)
    return law, lost + dropped


def beta_range(par: _Params, uncertain: int, tail: float) -> tuple[np.ndarray, int, int]:
    """(Bin(U, gamma) weights, lo, hi): the views beta in [lo, hi] are summed; beta < lo (total weight <= tail)
    are bounded by 1 and beta > hi (total weight <= tail) by the view at hi (delta is non-increasing in beta:
    one more uniform report is the same Markov kernel applied in both worlds). tail = 0: every beta."""
    weights = _weights(uncertain, par.gamma, par.one_minus_gamma)
    if tail <= 0.0:
        return weights, 0, uncertain
    head, back = np.cumsum(weights), np.cumsum(weights[::-1])
    lo = int(np.searchsorted(head, tail, side="right"))
    hi = uncertain - int(np.searchsorted(back, tail, side="right"))
    lo = min(lo, uncertain)
    return weights, lo, max(hi, lo)


def node_bound(
    par: _Params, counts: tuple, eps: float, laws: Chain | list | None = None, tail: float = 0.0
) -> float:
    """Certified upper value of the bound of the node whose sure users are ``counts`` (module docstring);
    ``tail``: :func:`beta_range`'s (0: every beta summed, as without it)."""
    uncertain = par.n - 1 - sum(counts)
    weights, lo, hi = beta_range(par, uncertain, tail) if uncertain else (np.ones(1), 0, 0)
    chain = node_laws(par, counts, top=hi) if laws is None else laws
    if not isinstance(chain, Chain):
        chain = Chain(list(chain), [0.0] * len(chain))
    values = np.array([_view_sums(chain.laws[b], par, eps, par.n) + chain.lost[b] for b in range(lo, hi + 1)])
    if uncertain == 0:
        return float(values[0])
    body = float(weights[lo : hi + 1] @ values)
    below = float(np.sum(weights[:lo])) * (1.0 + 2e-6)
    above = float(np.sum(weights[hi + 1 :])) * (1.0 + 2e-6) * float(values[-1])
    # Pascal and the dot product (4 (U + 3) u); each weight's U factors of gamma or 1 - gamma (rho each)
    return (body + below + above) * (1.0 + (4.0 * (uncertain + 3) + uncertain * par.rho) * _U)


def leaf_delta(eps: float, *, n_users: int, k: int, epsilon_local: float, counts: tuple) -> float:
    """Certified upper value of the exact forward delta of one dataset (a, b, c_1, c_2, ...), sum n - 1."""
    if sum(counts) != n_users - 1 or len(counts) > k:
        raise ValueError(
            f"`counts` must be n_users - 1 = {n_users - 1} users on at most k = {k} values; got {counts}."
        )
    return node_bound(_params(n_users, k, epsilon_local), tuple(counts), float(eps))


def _children(par: _Params, node: _Node) -> list:
    """The node's two halves ("one more on the open value"; "it closes, the next opens at 0"), empty ones dropped."""
    counts, stage = node.counts, node.stage
    uncertain = par.n - 1 - sum(counts)
    if uncertain == 0:
        return []
    out = [_Node(counts[:-1] + (counts[-1] + 1,))]
    if stage + 1 <= par.k - 1 and not (stage >= 2 and counts[-1] == 0):
        out.append(_Node(counts + (0,)))
    return [_tight(par, child) for child in out if _nonempty(par, child)]


def _tight(par: _Params, node: _Node) -> _Node:
    """The same node with its open outside count raised to the least any of its datasets has: the R users not
    on a closed value lie on the k - stage outside values from the open one on, whose counts do not increase,
    so the open one holds at least ceil(R / (k - stage)) of them (the node's datasets are unchanged; more of
    its users are sure, so its bound can only be tighter)."""
    counts, stage = node.counts, node.stage
    if stage < 2:
        return node
    rest = par.n - 1 - sum(counts[:-1])
    least = -(-rest // (par.k - stage))
    return node if counts[-1] >= least else _Node(counts[:-1] + (least,))


def _nonempty(par: _Params, node: _Node) -> bool:
    """Whether some dataset (outside parts non-increasing, at most k - 2 of them) completes the node."""
    counts, stage = node.counts, node.stage
    uncertain = par.n - 1 - sum(counts)
    if stage <= 2:
        return True
    cap = counts[-2]
    return counts[-1] <= cap and counts[-1] + uncertain <= (par.k - stage) * cap


class K4BlockSearch:
    """Best-first search over the nodes (module docstring) for one (n, k, eps0); laws kept across epsilons."""

    def __init__(
        self,
        *,
        n_users: int,
        k: int,
        epsilon_local: float,
        own_hits=None,
        crop: float | None = None,
        tail: float | None = None,
    ):
        if k < 4:
            raise ValueError(f"`k` must be >= 4 for the k >= 4 block search, got {k}.")
        if n_users < 2:
            raise ValueError(f"`n_users` must be >= 2, got {n_users}.")
        self._par = _params(n_users, k, epsilon_local)
        n = n_users
        large = n > MAX_USERS_UNCROPPED
        #: mass allowances (each added to the bound, so every value stays certified): crops of the laws' thin
        #: edges and the Bin(U, gamma) tails; none at n <= MAX_USERS_UNCROPPED (values as before them)
        self._crop = (CROP if large else 0.0) if crop is None else crop
        self._tail = (TAIL if large else 0.0) if tail is None else tail
        self._max_work = MAX_WORK_LARGE if large else MAX_WORK
        #: likely maxima, evaluated first: all others on one outside value, on x1, on x0
        self._starts = [(0, 0, n - 1), (0, n - 1), (n - 1,)]
        if n >= 4:  # the lower family's "all on x0 (x1) but one or two on x2"
            self._starts += [(n - 2, 0, 1), (0, n - 2, 1), (n - 3, 0, 2), (0, n - 3, 2)]
        #: counts -> Chain
        self._laws: Kept[Chain] = Kept(CACHE_DOUBLES, lambda chain: sum(law.size for law in chain.laws))
        #: ((axes, lumped), users per position) -> (law, lost): the sure laws kept
        self._sure: Kept[tuple[np.ndarray, float]] = Kept(SURE_DOUBLES, lambda kept: kept[0].size)
        self._seen: dict = {}  # counts -> {eps: certified bound}
        #: an OwnHitsSearch of the same setting (or None): bounds B(a, b) for nodes too large to expand
        self._own = own_hits
        self._work = 0  # law cells summed by the current search

    def worst(self, eps: float, max_nodes: int = MAX_NODES_K4_BLOCKS, rtol: float = 0.0) -> K4Worst:
        """Certified upper value of the worst case over every dataset and both directions at ``eps``."""
        eps = float(eps)
        best, arg, nodes = -1.0, None, 0
        self._work = 0
        for counts in self._starts:
            value = self._bound(counts, eps)
            nodes += 1
            if value > best:
                best, arg = value, counts
        heap = [(-self._bound((0,), eps), (0,))]
        nodes, cap = nodes + 1, -1.0  # cap: the largest bound of a node left unexpanded
        while heap:
            value, counts = heapq.heappop(heap)
            if -value <= max(best * (1.0 + rtol), cap):
                cap = max(cap, -value) if rtol else cap
                break
            kids = [kid.counts for kid in _children(self._par, _Node(counts))]
            if nodes + len(kids) > max_nodes or self._work > self._max_work:
                cap = -value  # every node still queued is below it
                break
            for kid in kids:
                if _cells(self._par, kid) > MAX_CELLS_K4_BLOCKS:
                    cap = max(cap, self._unexpanded(kid, -value, eps))
                    continue
                screen = self._screen(kid, eps)
                if screen is not None and screen <= max(best, cap):
                    continue  # a bound at a smaller epsilon already prunes it
                bound = self._bound(kid, eps)
                nodes += 1
                if self._par.n - 1 == sum(kid):
                    if bound > best:
                        best, arg = bound, kid
                elif bound > max(best, cap):
                    heapq.heappush(heap, (-bound, kid))
        if arg is not None:
            self._starts = list(dict.fromkeys([tuple(arg), *self._starts]))[:9]
        return K4Worst(min(max(best, cap), 1.0), arg, cap <= best, nodes)

    def _unexpanded(self, counts: tuple, parent: float, eps: float) -> float:
        """A certified bound for a node whose view is too large: its parent's bound, or the own-value-hit
        bound B(a, b), valid for every spread of the others once a and b are fixed (the node is past x1)."""
        if self._own is None or len(counts) < 3:
            return parent
        return min(parent, self._own.bound(counts[0], counts[1], eps))

    def _bound(self, counts: tuple, eps: float) -> float:
        """The node's certified bound at ``eps`` (remembered for screening at larger epsilons)."""
        chain = self._node_laws(counts)
        self._work += sum(law.size for law in chain.laws)
        value = node_bound(self._par, counts, eps, chain, self._tail)
        self._seen.setdefault(counts, {})[eps] = value
        return value

    def _screen(self, counts: tuple, eps: float) -> float | None:
        """The smallest certified bound of the node at an epsilon <= ``eps`` (a bound at ``eps``: delta is
        non-increasing in epsilon), or None."""
        earlier = [value for at, value in self._seen.get(counts, {}).items() if at <= eps]
        return min(earlier) if earlier else None

    def _node_laws(self, counts: tuple) -> Chain:
        """:func:`node_laws` up to the largest beta summed, kept across epsilons up to :data:`CACHE_DOUBLES`
        (least recently used dropped), the sure users' law from :meth:`_sure_law`."""
        chain = self._laws.get(counts)
        if chain is None:
            uncertain = self._par.n - 1 - sum(counts)
            top = beta_range(self._par, uncertain, self._tail)[2] if uncertain else 0
            chain = node_laws(self._par, counts, crop=self._crop, sure=self._sure_law(counts), top=top)
            self._laws.put(counts, chain)
        return chain

    def _sure_law(self, counts: tuple) -> tuple[np.ndarray, float]:
        """(law, lost) of the node's sure users, continued from the longest step of its path whose law is kept
        (:func:`_sequence`; the sure laws of the nodes evaluated are kept up to :data:`SURE_DOUBLES`, least
        recently used dropped): the same bits as from no user, with fewer users added. Many nodes the search
        visits, at one epsilon and again at the next, have sure users that extend those of a node it built."""
        key, users = _sequence(self._par, counts)
        step, position = list(users), len(users) - 1
        start = None
        while True:  # the path's steps, longest first: one user fewer at the last position holding one
            hit = self._sure.get((key, tuple(step)))
            if hit is not None:
                start = (tuple(step), *hit)
                break
            while position >= 0 and step[position] == 0:
                position -= 1
            if position < 0:
                break
            step[position] -= 1
        law, lost = _sure_law(self._par, counts, self._crop, start)
        if start is None or start[0] != users:  # not kept yet
            self._sure.put((key, users), (law, lost))
        return law, lost
