"""k >= 4 at small n: a certified upper bound on the worst case over datasets, below the weak adversary.

Setting (docs/worst-case-k3.md, "k >= 4: own-value hits"): u holds x0 in D and x1 in D'; of the other
n - 1 users, ``a`` hold x0, ``b`` hold x1 and m = n - 1 - a - b hold values outside {x0, x1}, spread
over them in any configuration c. Every number here is valid for EVERY c, and the search below covers
every (a, b); the reverse direction of (a, b) is the forward direction of (b, a) (relabel x0 <-> x1).

**The view, for one theta in [0, 1].** Write k-RR of an outside user as a mixture: with probability
w = theta gamma (gamma = k q) a uniform report over all k values ("blanket"), otherwise a residual law
that puts q_r = q (1 - theta) / (1 - w) on x0 and on x1 and, given that it lands outside {x0, x1},
hits the user's own value with probability r. The adversary is told which outside users are blanket
(their number beta). "Group A" is u, the a + b users on x0 / x1 and the beta blanket users: whatever
they report outside {x0, x1} is uniform over the k - 2 outside values (u's too, in both worlds).
Given s = h0 + h1, J of group A and L = s - J residual users landed in {x0, x1}. The residual users
landing outside are a uniformly random subset of size m_r - s + J (m_r = m - beta); couple them
through one random order of the residual users: the first m_r - s + J_min are a base, and the next
J_max - J_min ("slots", J_min = max(0, s - m_r), J_max = min(|A|, s)) are either residual users landing
outside (J - J_min of the slots, a uniformly random subset) or stand in for a group-A user landing
outside. The adversary is told, for each slot, whether its report is the slot user's own value
(Y = 1): probability r for a residual slot, 1 / (k - 2) for a group-A slot; a report with Y = 0 is
uniform over the other k - 3 outside values in both cases. So the real histogram is a function of
(h0, h1, the base reports, the slot users' values and the Y's) and of randomness the same in both
worlds (**post-processing**), and by exchangeability the number N_Y of ones is **sufficient** among
the Y's. The view (beta, s, h0, N_Y) depends on (a, b) only, never on c.

theta = 0 reveals nothing but the slots' hits; theta = 1 is "weak adversary for the m outside users,
the a + b users exact" (and at a = b = 0 exactly Koskela et al.'s weak adversary).

**One bound from several views.** s has the same law in every view and both worlds (it is the real
h0 + h1), so delta = sum_s P(s) H(view | s) for each view, and each conditional is above the truth's
(the post-processing works given s). Hence delta(a, b, c) <= B(a, b) = sum_s min_theta D_theta(s),
D_theta(s) = sum over (beta, h0, N_Y) with that s of (P - e^eps Q)_+. The thetas are :data:`THETAS`.

**Every (a, b).** B(a, b) <= D_1(a, b) (the theta = 1 term alone), which costs O(n^3). The search
evaluates B in decreasing order of D_1 (starting at a = b = 0), and stops when the next D_1 is not
above the largest B: the result is >= B(a, b) for every (a, b).
B(0, 0) is computed first; a dataset whose D_1 at an eps' <= eps, computed earlier by the same
search, is not above it is skipped without its D_1 at eps (screening: every term (P - e^eps Q)_+ is
non-increasing in eps, so D_1(eps) <= D_1(eps') <= B(0, 0)); the others are taken in decreasing
order of D_1 at eps, exactly as without screening. Within one
dataset the views are taken from theta = 1 down, and once the minimum so far is not above the largest B
the rest are skipped (that minimum is itself >= B(a, b), so the dataset cannot raise the maximum).

**Rounding.** Every law is built from non-negative terms by products and sums (1 - r is written as
(k - 3) q_r / (1 - 2 q_r), p - q as q (e^eps0 - 1) and p - theta q as (p - q) + (1 - theta) q, never as
differences), so each entry carries a relative error of at most c u, c = 16 (n + 4) + 4 n rho / u
(u = 2^-53; rho the representation error of p and q, ``KrrParams.probability_error``: each of the n factors
of a term is formed from at most four of p, q, p - q); each D sums (fl + c u (P + e^eps Q))_+ (an upper value), the final
sum adds a relative (cells) u, and an absolute 1e-290 covers products that underflowed (large eps0).

Cost: the theta = 1 laws of every dataset take 0.15 s at n = 20 and 0.4 s at n = 30 (the laws of the a
users on x0 and b on x1 are built once for every (a, b), those of the residual users once per theta).
The search builds
the other views' laws only for the datasets whose theta = 1 value is above the running maximum, one
view at a time (theta = 3/4, 1/2, ... until the minimum so far is not above that maximum), and keeps
them across epsilons (least recently used dropped beyond :data:`CACHE_DOUBLES`, 800 MB). Epsilon
searches (benchmarks/bench_own_hits.py: k in {4, 5, 10}, eps0 in 0.5 .. 4, delta in {1e-6, 1e-9}, quiet
machine) took a median 0.10 / 0.45 / 1.7 s and at most 0.16 / 0.68 / 2.9 s at n = 10 / 20 / 30 before the
screening and the shared per-(a, b) laws; after (the goal grid, k in {4, 10, 100, 1000}, eps0 in
0.5 .. 8, quiet machine): median 0.23 / 0.58 s, at most 0.54 / 2.4 s at n = 20 / 30 (0.6 GB
of laws at n = 30, 0.8 GB at 32; the convolutions are matrix products with Toeplitz matrices and the
hit laws are gathered from one table per theta). Before the one-view-at-a-time pruning and the per-s blocks, 14-70 s at n = 30 with the laws capped at
320 MB to 1.2 GB (rebuilt over and over) and 4.5-13 s uncapped (2.3 GB). Hence
:data:`MAX_USERS_OWN_HITS` = 32.
"""

from __future__ import annotations

import functools
import math
from typing import NamedTuple

import numpy as np

from shuffledp.accounting.params import KrrParams
from shuffledp.accounting.worst_case.kept import Kept

__all__ = ["THETAS", "MAX_USERS_OWN_HITS", "OwnHitsSearch", "OwnHitsWorst"]

#: blanket weights tried (each a valid view; the bound takes the smallest per s)
THETAS = (0.0, 0.25, 0.5, 0.75, 1.0)
_ORDER = tuple(sorted(THETAS, reverse=True))  # theta = 1 first: its laws are built for every dataset
#: largest n searched (the laws of one dataset cost O(n^5) to build; above, ``weak-adversary``)
MAX_USERS_OWN_HITS = 32
#: doubles of full (theta < 1) laws kept across epsilons (800 MB); the least recently used are dropped beyond it
CACHE_DOUBLES = 100_000_000
_U = 2.0**-53
#: added to every value: bounds the mass lost to underflow (< 2.3e-308 per product, ~1e6 terms of ~n
#: operations each at n <= 32), so that the value stays an upper bound even where delta is near 1e-300
_UNDERFLOW = 1e-290


class OwnHitsWorst(NamedTuple):
    """Result of :meth:`OwnHitsSearch.worst`: certified upper value and the (a, b) attaining it."""

    upper: float
    argmax: tuple[int, int]
    #: datasets whose bound B was evaluated beyond its theta = 1 view (the others were pruned by that view)
    evaluated: int


def _pascal(rows: int, r: float, one_minus_r: float) -> np.ndarray:
    """table[i, j] = Bin(i, r)(j) for 0 <= j <= i <= rows (sums of non-negative products)."""
    table = np.zeros((rows + 1, rows + 1))
    table[0, 0] = 1.0
    for i in range(1, rows + 1):
        table[i] = table[i - 1] * one_minus_r
        table[i, 1:] += table[i - 1, :-1] * r
    return table


def _add(law: np.ndarray, on_x0: float, on_x1: float, stay: float) -> np.ndarray:
    """One more user in a law[landed in {x0, x1}, landed on x0]."""
    out = law * stay
    out[1:, 1:] += on_x0 * law[:-1, :-1]
    out[1:, :] += on_x1 * law[:-1, :]
    return out


class _Params(NamedTuple):
    p: float
    q: float
    k: int
    n: int
    #: p - q = q (e^eps0 - 1), formed without the difference (which cancels at small eps0)
    p_minus_q: float


class _Residual(NamedTuple):
    """One theta's split of an outside user's k-RR: blanket weight w, residual in-landing q_r, own-hit r."""

    w: float
    one_minus_w: float
    q_r: float
    rest_r: float
    r: float
    one_minus_r: float


def _residual(par: _Params, theta: float) -> _Residual:
    q, k = par.q, par.k
    w = theta * k * q
    one_minus_w = (1.0 - theta) + theta * par.p_minus_q  # 1 - theta k q without cancellation
    q_r = q * (1.0 - theta) / one_minus_w
    rest_r = 1.0 - 2.0 * q_r
    own = par.p_minus_q + (1.0 - theta) * q  # p - theta q, without cancellation
    return _Residual(w, one_minus_w, q_r, rest_r, own / one_minus_w / rest_r, (k - 3) * q_r / rest_r)


def _pair_table(par: _Params, theta: float) -> np.ndarray:
    """table[i, l] = law of Bin(i, r) + Bin(l, 1 / (k - 2)) (i + l <= n): the hit count of i residual and l
    group-A slots; the same for every dataset at this theta."""
    n, k = par.n, par.k
    res = _residual(par, theta)
    hits_r, hits_t = _pascal(n, res.r, res.one_minus_r), _pascal(n, 1.0 / (k - 2), (k - 3) / (k - 2))
    table = np.zeros((n + 1, n + 1, n + 1))
    for i in range(n + 1):
        for ell in range(n + 1 - i):
            row = np.convolve(hits_r[i, : i + 1], hits_t[ell, : ell + 1])
            table[i, ell, : row.size] = row
    return table


def _group_laws(par: _Params) -> dict[tuple[int, int], np.ndarray]:
    """(a, b) -> law[J', g0] of the a users on x0 and the b on x1 landing in {x0, x1} (J') and on x0 (g0)."""
    p, q, k, n = par[:4]
    size = n + 1
    laws, law = {}, np.zeros((size, size))
    law[0, 0] = 1.0
    for a in range(n):
        row = law
        for b in range(n - a):
            laws[a, b] = row
            row = _add(row, q, p, (k - 2) * q)
        law = _add(law, p, q, (k - 2) * q)
    return laws


def _residual_laws(par: _Params, theta: float) -> list:
    """[i] = law[landed in {x0, x1}, landed on x0] of i residual users at this theta, i = 0..n."""
    res, size = _residual(par, theta), par.n + 1
    laws = [np.eye(1, size * size).reshape(size, size)]
    for _ in range(par.n):
        laws.append(_add(laws[-1], res.q_r, res.q_r, res.rest_r))
    return laws


def _theta_laws(
    par: _Params, a: int, b: int, theta: float, group: np.ndarray, kit: tuple | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For one dataset (a, b) and one theta: (beta weights, P, Q); P is [beta, cell] over the cells
    (s, h0 <= s, N_Y <= s) in that order (:func:`_triangle`; theta = 1: an array P[beta, s, h0], the hit
    count being a function of s there). ``group`` is (a, b)'s law from :func:`_group_laws`; ``kit`` is
    (:func:`_pair_table`, :func:`_residual_laws`) at this theta (needed for theta < 1)."""
    p, q, k, n = par[:4]
    size = n + 1
    m = n - 1 - a - b
    res = _residual(par, theta)
    weights = _pascal(m, res.w, res.one_minus_w)[m, : m + 1] if theta > 0 else np.eye(1, m + 1)[0]
    table, residual = kit if kit is not None else (None, None)
    full = theta < 1.0
    P = np.zeros((m + 1, size, size, size) if full else (m + 1, size, size))
    Q = np.zeros_like(P)
    for beta in range(m + 1):
        if beta:
            group = _add(group, 1.0 / k, 1.0 / k, (k - 2) / k)
        if weights[beta] == 0.0:
            continue
        if not full:  # no residual user lands in {x0, x1}: s = J, and the hit count is a function of s
            P[beta], Q[beta] = _with_u(group, p, q, k)
            continue
        lp, lq = _with_u(_others(group, residual[m - beta], size), p, q, k)
        hits = _hit_law(size, m - beta, a + b + beta + 1, table)  # [s, J, N_Y]
        np.matmul(lp, hits, out=P[beta])
        np.matmul(lq, hits, out=Q[beta])
    if full:  # h0 <= s and N_Y <= s: keep those cells only (a third of the cube)
        cells = _triangle(size)[0]
        P, Q = P.reshape(m + 1, -1)[:, cells], Q.reshape(m + 1, -1)[:, cells]
    return weights, P, Q


@functools.lru_cache(maxsize=4)
def _triangle(size: int) -> tuple[np.ndarray, np.ndarray]:
    """(flat indices of the cells h0 <= s, N_Y <= s of an [s, h0, N_Y] cube, s-major; where each s starts)."""
    s, h0, hits = np.indices((size, size, size))
    cells = np.flatnonzero((h0 <= s) & (hits <= s))
    starts = np.concatenate(([0], np.cumsum((np.arange(size) + 1) ** 2)[:-1]))
    return cells, starts


def _others(group: np.ndarray, res: np.ndarray, size: int) -> np.ndarray:
    """law[s, h0, J'] = sum over g0 of group[J', g0] res[s - J', h0 - g0] (group A's others and the
    residual users): one product with a Toeplitz matrix per J' (sums of non-negative products)."""
    idx = np.arange(size)
    lag = idx[None, :] - idx[:, None]  # h0 - h0'
    toeplitz = np.where(lag >= 0, group[:, np.maximum(lag, 0)], 0.0)  # [J', h0', h0]
    shifted = np.zeros((size, size, size))  # [J', s, h0']
    for j in range(size):
        shifted[j, j:] = res[: size - j]
    return np.matmul(shifted, toeplitz).transpose(1, 2, 0)


def _with_u(others: np.ndarray, p: float, q: float, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Add u (x0 in D, x1 in D'): the laws over [s, h0, J] under both worlds; a 2-d law is [s, h0] (s = J)."""
    on_x0, on_x1 = np.zeros_like(others), np.zeros_like(others)  # others' law moved by u landing there
    if others.ndim == 3:  # s and J move together
        on_x0[1:, 1:, 1:], on_x1[1:, :, 1:] = others[:-1, :-1, :-1], others[:-1, :, :-1]
    else:
        on_x0[1:, 1:], on_x1[1:, :] = others[:-1, :-1], others[:-1, :]
    lp, lq = (k - 2) * q * others, (k - 2) * q * others
    lp += p * on_x0
    lp += q * on_x1
    lq += q * on_x0
    lq += p * on_x1
    return lp, lq


def _hit_law(size: int, m_r: int, group: int, table: np.ndarray) -> np.ndarray:
    """law[s, J, N_Y]: N_Y = Bin(J - J_min, r) + Bin(J_max - J, 1 / (k - 2)) given s and J (zero where J
    is outside [J_min, J_max]: those (s, J) have probability 0)."""
    s, j = np.arange(size)[:, None], np.arange(size)[None, :]
    lo, hi = np.maximum(0, s - m_r), np.minimum(group, s)
    inside = (j >= lo) & (j <= hi)
    rows = table[np.where(inside, j - lo, 0), np.where(inside, hi - j, 0)]
    return np.where(inside[:, :, None], rows, 0.0)


def _per_s(
    weights: np.ndarray, P: np.ndarray, Q: np.ndarray, eps: float, c: float, starts=None
) -> np.ndarray:
    """Upper values of D(s) = sum over (beta, h0, N_Y) of (P - e^eps Q)_+, weighted by beta's law; ``starts``:
    where each s begins among the cells of a [beta, cell] law (:func:`_triangle`), unused for [beta, s, h0]."""
    e = math.exp(eps)
    diff = P - e * Q
    diff += c * _U * (P + e * Q)
    np.maximum(diff, 0.0, out=diff)
    if P.ndim == 2:  # [beta, cell]: cells by s
        per = np.add.reduceat(diff, starts, axis=1)
    else:
        per = diff.reshape(diff.shape[0], diff.shape[1], -1).sum(axis=2)  # [beta, s]
    return weights @ per


def _value(per: np.ndarray) -> float:
    """Certified upper value of sum_s of the per-s upper values: the final sum's rounding and underflow added."""
    return float(per.sum()) * (1.0 + per.size * _U) + _UNDERFLOW


class OwnHitsSearch:
    """The certified maximum over every (a, b) of B(a, b) (module docstring), laws kept across epsilons."""

    def __init__(self, *, n_users: int, k: int, epsilon_local: float):
        n = n_users
        if k < 4:
            raise ValueError(f"`k` must be >= 4 for the own-hits view, got {k}")
        if not 2 <= n <= MAX_USERS_OWN_HITS:
            raise ValueError(
                f"`n_users` must be in [2, {MAX_USERS_OWN_HITS}] for the own-hits view; got {n}."
            )
        krr = KrrParams.of(epsilon_local, k)
        p, q = krr.quotient_probabilities
        self._par = _Params(p, q, k, n, q * math.expm1(epsilon_local))
        # arithmetic, and the representation error of the n factors of each term: each of q_r, 1 - 2 q_r,
        # r, 1 - r, w, 1 - w is formed from at most four of p, q, p - q (rho each) by products and quotients
        self._c = 16.0 * (n + 4) + 4.0 * krr.representation_ulps(n)
        self._starts = _triangle(n + 1)[1]
        self._groups = _group_laws(self._par)
        self._first = {ab: _theta_laws(self._par, *ab, 1.0, group) for ab, group in self._groups.items()}
        #: ((a, b), theta) -> the laws at theta, kept across epsilons
        self._full: Kept[tuple] = Kept(CACHE_DOUBLES, lambda laws: 2 * laws[1].size)
        self._tables: dict = {}
        #: (a, b) -> {eps: certified theta = 1 value at eps}; the value is non-increasing in eps
        self._seen: dict = {ab: {} for ab in self._first}

    def bound(
        self,
        a: int,
        b: int,
        eps: float,
        thetas: tuple[float, ...] | None = None,
        stop_at: float | None = None,
    ) -> float:
        """Certified upper value of B(a, b) at ``eps`` (forward direction; valid for every spread of the rest).

        ``thetas`` (a subset of :data:`THETAS`) restricts the views whose minimum is taken. The views are
        taken from theta = 1 down; with ``stop_at``, as soon as the minimum so far is <= ``stop_at`` that
        (still certified, larger) value is returned without building the remaining views' laws.
        """
        return self._bound((a, b), float(eps), thetas, stop_at, None)

    def _bound(self, ab, eps: float, thetas, stop_at, first_term) -> float:
        """:meth:`bound`, with the theta = 1 term ``first_term`` already computed (or None)."""
        per = None
        for theta in _ORDER:
            if thetas is not None and theta not in thetas:
                continue
            if theta == 1.0 and first_term is not None:
                term = first_term
            else:
                term = _per_s(*self._laws(ab, theta), eps, self._c, self._starts)
            per = term if per is None else np.minimum(per, term)
            value = _value(per)
            if stop_at is not None and value <= stop_at:
                break
        return value

    def _laws(self, ab: tuple[int, int], theta: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        if theta == 1.0:
            return self._first[ab]
        key = (ab, theta)
        laws = self._full.get(key)
        if laws is None:
            if theta not in self._tables:
                self._tables[theta] = (_pair_table(self._par, theta), _residual_laws(self._par, theta))
            laws = _theta_laws(self._par, *ab, theta, self._groups[ab], self._tables[theta])
            self._full.put(key, laws)
        return laws

    def worst(self, eps: float) -> OwnHitsWorst:
        """Certified upper value of the worst case over datasets and directions, at ``eps``."""
        eps = float(eps)
        origin = self._first_term((0, 0), eps)[0]
        best, arg, built = self._bound((0, 0), eps, None, None, origin), (0, 0), 1
        # a dataset whose theta = 1 value at a smaller epsilon is not above B(0, 0) cannot raise the maximum
        first = {
            ab: self._first_term(ab, eps) for ab in self._first if ab != (0, 0) and self._above(ab, eps, best)
        }
        for ab in sorted(
            first, key=lambda ab: -first[ab][1]
        ):  # by decreasing theta = 1 value, which bounds B
            if first[ab][1] <= best:
                break
            value = self._bound(ab, eps, None, best, first[ab][0])
            built += 1
            if value > best:
                best, arg = value, ab
        return OwnHitsWorst(min(best, 1.0), arg, built)

    def _first_term(self, ab: tuple[int, int], eps: float):
        """The theta = 1 per-s term of (a, b) at ``eps`` and its certified value (remembered for screening)."""
        term = _per_s(*self._first[ab], eps, self._c)
        value = self._seen[ab][eps] = _value(term)
        return term, value

    def _screen(self, ab: tuple[int, int], eps: float) -> float | None:
        """A certified upper value of (a, b)'s theta = 1 value at ``eps`` from one computed at a smaller or equal
        epsilon (delta is non-increasing in epsilon), or None if there is none."""
        below = [value for at, value in self._seen[ab].items() if at <= eps]
        return min(below) if below else None

    def _above(self, ab: tuple[int, int], eps: float, best: float) -> bool:
        """False if a screening value shows (a, b) cannot raise ``best``."""
        screen = self._screen(ab, eps)
        return screen is None or screen > best
