"""Exact worst case over datasets at small n: every dataset of (n_x0, n_x1, the rest) by enumeration.

The differing user u holds x0 in D and x1 in D'; the other n - 1 users hold ``a`` x0's, ``b`` x1's and
``m = n - 1 - a - b`` values outside {x0, x1}. Each user's k-RR report is x0, x1 or "outside"; write
(r0, r1) for the counts of x0 and x1 reports of the other users and G for their law.

**k = 3 (:func:`k3_worst_case`): exact, hence both an upper and a lower bound.** With three values the
m users all hold x2, and the histogram (h0, h1, h2) is a function of (h0, h1) (h2 = n - h0 - h1), so
(h0, h1) is the whole output (sufficiency is not even needed). Its law under D is
p G(h - e0) + q G(h - e1) + q G(h) and under D' the same with p, q swapped in the first two terms, so
the delta of the dataset is sum_h (P - e^eps Q)_+, and the worst case over datasets and both
directions is the maximum of that over every (a, b) (the reverse direction of (a, b) is the forward
direction of (b, a): relabel x0 <-> x1). Enumerating every (a, b) is O(n^2) datasets.

**k >= 4, rest on one third value (:func:`third_value_delta`): a LOWER bound.** The dataset
"a on x0, b on x1, the rest on x2" is one dataset, so its exact histogram delta is below the worst
case. Its histogram is sufficient through (h0, h1, h2): the counts of the k - 3 values x3 .. receive
every user's report with probability q each whatever its value, so given their total they are
uniformly multinomial, with the same law under D and D'. The (h0, h1, h2) law of the others is a
multinomial (the m users on x2, closed form) convolved with the a + b users (added one at a time);
P(h) = p G(h - e0) + q G(h - e1) + q G(h - e2) + (k - 3) q G(h), Q with p, q swapped in the first two.

Above small n the law is kept for h0, h1 below ~14 standard deviations above their mean only; the
outcomes summed are those whose four neighbouring cells are all kept (exact terms), so the value is a
partial sum of the true one: still a lower bound.

**Rounding.** Every pmf is built from non-negative terms by multiplications and additions (no
subtraction), so each entry carries a relative error of at most ``c u`` with c the number of
operations that led to it (bounded by 4 (n + 8); u = 2^-53), plus the representation error of p and q
themselves (each off its exact value by at most rho = ``KrrParams.probability_error``), which the n factors of
every term carry: c = 4 (n + 8) + 1.001 n rho / u. Hence |fl(P - e^eps Q) - (P - e^eps Q)|
<= tol = c u (P + e^eps Q) per outcome, and the upper value sums (fl + tol)_+ where fl > -tol (a
certified upper bound), the lower value sums (fl - tol)_+ (a certified lower bound); the final sums
add a relative (cells) u. The gap between the two is reported as a margin and is ~1e-13 relative.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view
from scipy.special import gammaln

from shuffledp.accounting.params import KrrParams

__all__ = [
    "K3Worst",
    "K3_CACHE_USERS",
    "add_user",
    "k3_worst_case",
    "pair_laws",
    "pair_outputs",
    "pair_sums",
    "stack_laws",
    "third_value_delta",
    "third_value_law",
    "third_value_outputs",
]

_U = 2.0**-53
#: largest n whose every pair law is cached across epsilons (memory ~ n^4 / 2 doubles)
K3_CACHE_USERS = 64
_CHUNK = 16  # datasets evaluated at once (larger chunks were slower: memory-bound)
_SLAB_CELLS = (
    32768  # cells of the third-value sums formed at once (in cache; the sum is over the whole array)
)


class K3Worst(NamedTuple):
    """Result of :func:`k3_worst_case`: certified upper and lower values of the worst-case delta."""

    upper: float
    lower: float
    #: the maximising dataset (a on x0, b on x1, the rest on x2), forward direction D || D'
    argmax: tuple[int, int]


def add_user(g: np.ndarray, p0: float, p1: float, rest: float) -> np.ndarray:
    """Law of (r0, r1) after one more user reporting x0 / x1 / outside with these probabilities."""
    out = np.zeros((g.shape[0] + 1, g.shape[1] + 1))
    out[:-1, :-1] = rest * g
    out[1:, :-1] += p0 * g
    out[:-1, 1:] += p1 * g
    return out


def pair_laws(n_users: int, p: float, q: float) -> dict[tuple[int, int], np.ndarray]:
    """{(a, b): law of (r0, r1) of the n - 1 others} for every a + b <= n - 1 (k = 3: the rest on x2).

    Built by totals: the datasets of t users from those of t - 1 (one x2 user added when a + b < t,
    else one x0 or x1 user), so each law costs one O(t^2) step; O(n^5) operations in all."""
    rest = q  # a user on x0 or x1 lands on x2 with probability q = 1 - p - q (never a difference: at large
    #           eps0, 1 - p - q cancels to a wrong or negative number)
    level = {(0, 0): np.ones((1, 1))}
    for t in range(1, n_users):
        new = {}
        for a in range(t + 1):
            for b in range(t + 1 - a):
                if a + b < t:
                    new[(a, b)] = add_user(level[(a, b)], q, q, 1.0 - 2.0 * q)
                elif a > 0:
                    new[(a, b)] = add_user(level[(a - 1, b)], p, q, rest)
                else:
                    new[(a, b)] = add_user(level[(a, b - 1)], q, p, rest)
        level = new
    return level


def _lower_sum(P: np.ndarray, Q: np.ndarray, e: float, ops: float) -> float:
    """Certified lower value of sum (P - e Q)_+ given entries with relative errors <= ``ops`` u (module doc):
    sum (P - e Q - ops u (P + e Q))_+ lowered by a relative (cells) u. The terms are formed a few slabs
    of the first axis at a time (temporaries that stay in cache), then summed as one array."""
    terms = np.empty(P.shape)
    step = max(1, _SLAB_CELLS // max(P[0].size, 1))
    for start in range(0, P.shape[0], step):
        part = slice(start, start + step)
        eq = e * Q[part]
        t = np.subtract(P[part], eq, out=terms[part])
        np.add(P[part], eq, out=eq)
        np.multiply(ops * _U, eq, out=eq)  # the tolerance of each term
        np.subtract(t, eq, out=t)
        np.maximum(t, 0.0, out=t)
    lower = float(np.sum(terms))
    return max(lower * (1.0 - 2.0 * terms.size * _U), 0.0)


def _pair_forward(
    g: np.ndarray, p: float, q: float, k: int, eps: float, ops: float
) -> tuple[np.ndarray, np.ndarray]:
    """(upper, lower) on H_{e^eps}(P || Q) for the (h0, h1) laws built from the others' laws ``g``
    (a stack of laws of one shape, shape (datasets, rows, cols)): one value per dataset."""
    return pair_sums(*pair_outputs(g, p, q, k), eps, ops)


def pair_outputs(g: np.ndarray, p: float, q: float, k: int) -> tuple[np.ndarray, np.ndarray]:
    """(P, Q): the (h0, h1) laws under D and D' from a stack of the others' laws ``g`` (u added).

    Each cell is (p G(h - e0) + q G(h - e1)) + (k - 2) q G(h) under D (p and q swapped under D'), the three
    products formed once and added in that order in place; a term whose shift falls outside the law is an
    exact 0 and adding it leaves the sum as it is, so these are the bits of the sum of three zero-padded
    shifted copies (tests/accounting/test_worst_case_exact.py keeps that form as the reference)."""
    shape = (g.shape[0], g.shape[1] + 1, g.shape[2] + 1)
    on_x0, on_x1, stay = (
        (slice(None), slice(1, None), slice(None, -1)),
        (slice(None), slice(None, -1), slice(1, None)),
        (slice(None), slice(None, -1), slice(None, -1)),
    )
    pg, qg, cg = p * g, q * g, (k - 2) * q * g
    out = []
    for first, second in ((pg, qg), (qg, pg)):
        law = np.empty(shape)
        law[:, 0, :] = 0.0
        law[:, :, -1] = 0.0
        law[on_x0] = first
        law[on_x1] += second
        law[stay] += cg
        out.append(law)
    return out[0], out[1]


def pair_sums(P: np.ndarray, Q: np.ndarray, eps: float, ops: float) -> tuple[np.ndarray, np.ndarray]:
    """(upper, lower) certified values of sum (P - e^eps Q)_+ per dataset of a stack of (P, Q) whose
    entries carry a relative error of at most ``ops`` u (module doc, "Rounding").

    The upper value sums fl(terms + tol) where terms > -tol: the same as (terms + tol)_+, since a sum of
    two doubles is exactly 0 only when they cancel (gradual underflow), so it is > 0 exactly when
    terms > -tol; both sums are formed in place over arrays of the same shape as before (same bits)."""
    e = math.exp(eps)
    shape = P.shape
    tol = e * Q
    terms = np.subtract(P, tol)
    np.add(P, tol, out=tol)
    tol *= ops * _U
    above = np.add(terms, tol)
    upper = np.sum(np.maximum(above, 0.0, out=above), axis=(1, 2))
    np.subtract(terms, tol, out=terms)
    lower = np.sum(np.maximum(terms, 0.0, out=terms), axis=(1, 2))
    cells = shape[1] * shape[2]
    return upper * (1.0 + 2.0 * cells * _U) + 1e-300, np.maximum(lower * (1.0 - 2.0 * cells * _U), 0.0)


def stack_laws(laws: dict) -> tuple[list, np.ndarray]:
    """(keys, stacked array) of :func:`pair_laws`' output (every law of n - 1 users has shape (n, n))."""
    keys = list(laws)
    return keys, np.stack([laws[key] for key in keys])


def k3_worst_case(eps: float, *, n_users: int, epsilon_local: float, laws=None) -> K3Worst:
    """Exact worst case over every dataset and both directions for k = 3 (module doc), certified.
    ``laws``: :func:`stack_laws` of :func:`pair_laws` (cached by the caller), or None."""
    n = n_users
    krr = KrrParams.of(epsilon_local, 3)
    p, q = math.exp(krr.log_p), math.exp(krr.log_q)
    keys, stacked = stack_laws(pair_laws(n, p, q)) if laws is None else laws
    ops = 4 * (n + 8) + krr.representation_ulps(n)
    uppers, lowers = [], []
    for start in range(0, len(keys), _CHUNK):
        hi, lo = _pair_forward(stacked[start : start + _CHUNK], p, q, 3, eps, ops)
        uppers.append(hi)
        lowers.append(lo)
    upper, lower = np.concatenate(uppers), np.concatenate(lowers)
    best = int(np.argmax(lower))
    return K3Worst(float(np.max(upper)), float(lower[best]), keys[best])


def _multinomial3(m: int, log_probs: tuple[float, float, float, float], rows: int) -> np.ndarray:
    """Law of (c0, c1, c2) of m users with report probabilities (x0, x1, x2, elsewhere), closed form,
    for c0, c1 < ``rows`` only (the rest is not computed). One slab of c0 at a time; the log factorials
    come from one table of gammaln(c + 1), c <= m (the same values as gammaln over the grid), the rest's
    (rest = m - c0 - c1 - c2) from the table reversed, read as a Hankel view (by c0 + c1 + c2), +inf
    where the rest would be negative (log -> -inf, probability 0)."""
    c = np.arange(m + 1, dtype=float)
    table = gammaln(c + 1)
    l0, l1, l2, lr = log_probs
    top = gammaln(m + 1.0)
    size = min(rows, m + 1)
    c1, table1 = c[:size, None], table[:size, None]
    c1_l1, c_l2 = c1 * l1, c * l2
    rest = m - np.arange(2 * size + m, dtype=float)  # by c0 + c1 + c2
    table_rest = np.full(len(rest), np.inf)
    table_rest[: m + 1] = table[::-1]
    table_rest, rest_lr = sliding_window_view(table_rest, m + 1), sliding_window_view(rest * lr, m + 1)
    out = np.empty((size, size, m + 1))
    for c0 in range(size):
        log = top - table[c0] - table1 - table - table_rest[c0 : c0 + size] + c[c0] * l0 + c1_l1 + c_l2
        if m > 0:
            log += rest_lr[c0 : c0 + size]
        np.exp(log, out=out[c0])
    return out


def _add_user3(g: np.ndarray, probs: tuple[float, float, float, float], rows: int) -> np.ndarray:
    """Law of (c0, c1, c2) after one more user reporting x0 / x1 / x2 / elsewhere with ``probs``, for
    c0, c1 < ``rows`` only (entries at c0 or c1 >= rows would be partial); one slab of c0 at a time."""
    r0, r1 = g.shape[:2]
    out = np.zeros((min(r0 + 1, rows), min(r1 + 1, rows), g.shape[2] + 1))
    for c0, slab in enumerate(out):
        if c0 < r0:
            slab[:r1, :-1] = probs[3] * g[c0]
        if c0 > 0:
            slab[:r1, :-1] += probs[0] * g[c0 - 1]
        if c0 < r0:
            slab[1:, :-1] += probs[1] * g[c0][: out.shape[1] - 1]
            slab[:r1, 1:] += probs[2] * g[c0]
    return out


def third_value_law(*, n_users: int, k: int, epsilon_local: float, a: int = 0, b: int = 0) -> np.ndarray:
    """Law of the others' (c0, c1, c2) for "a on x0, b on x1, the rest on x2" (k >= 4; module doc);
    reusable across epsilons by :func:`third_value_delta`."""
    n = n_users
    if k < 4:
        raise ValueError(f"`k` must be >= 4 for the third-value dataset's three-count law; got {k!r}.")
    krr = KrrParams.of(epsilon_local, k)
    p, q = math.exp(krr.log_p), math.exp(krr.log_q)
    rest = (k - 3) * q  # = 1 - p - 2 q, written without the difference (it cancels at large eps0)
    rows = _rows(n, q, a + b)
    g = _multinomial3(
        n - 1 - a - b, (krr.log_q, krr.log_q, krr.log_p, math.log(max((k - 3) * q, 1e-300))), rows
    )
    for _ in range(a):
        g = _add_user3(g, (p, q, q, rest), rows)
    for _ in range(b):
        g = _add_user3(g, (q, p, q, rest), rows)
    return g


def _rows(n: int, q: float, ab: int) -> int:
    """Counts of x0 (and x1) kept: all n when n is small, else up to ~14 standard deviations above the
    mean of Bin(n, q) + ab (what lies beyond is left out of the LOWER value: a partial sum)."""
    return int(min(n, math.ceil(n * q + ab + 14.0 * math.sqrt(n * q) + 16.0)))


def _third_value_outputs(
    g: np.ndarray, p: float, q: float, k: int, rows: int
) -> tuple[np.ndarray, np.ndarray]:
    """(P, Q) of the module doc from the others' law ``g`` of (c0, c1, c2) (u added) for h0, h1 < ``rows``:
    P = (p G(h - e0) + q G(h - e1)) + (q G(h - e2) + (k - 3) q G(h)), Q with p, q swapped in the first
    two; one slab of h0 at a time (from the slabs h0 - 1 and h0 of g)."""
    r1, cols = g.shape[1], g.shape[2] + 1
    P, Q = np.zeros((rows, rows, cols)), np.zeros((rows, rows, cols))
    common = np.empty((rows, cols))
    previous = None
    for h0 in range(rows):
        current = (p * g[h0], q * g[h0]) if h0 < g.shape[0] else None
        if current is not None:
            common.fill(0.0)
            common[:r1, 1:] = current[1]
            common[:r1, :-1] += (k - 3) * q * g[h0]
        for out, first, second in ((P[h0], 0, 1), (Q[h0], 1, 0)):
            if previous is not None:
                out[:r1, :-1] = previous[first]
            if current is not None:
                out[1:, :-1] += current[second][: rows - 1]
                out += common
        previous = current
    return P, Q


def third_value_outputs(
    *, n_users: int, k: int, epsilon_local: float, a: int = 0, b: int = 0
) -> tuple[np.ndarray, np.ndarray]:
    """(P, Q) of "a on x0, b on x1, the rest on x2" over the outcomes summed (module doc), which do not
    depend on eps: reusable across epsilons by :func:`third_value_delta`."""
    n = n_users
    g = third_value_law(n_users=n, k=k, epsilon_local=epsilon_local, a=a, b=b)
    krr = KrrParams.of(epsilon_local, k)
    # a truncated law: only outcomes whose four neighbours are all kept are exact
    rows = g.shape[0] if g.shape[0] < n else g.shape[0] + 1
    return _third_value_outputs(g, math.exp(krr.log_p), math.exp(krr.log_q), k, rows)


def third_value_delta(
    eps: float,
    *,
    n_users: int,
    k: int,
    epsilon_local: float,
    a: int = 0,
    b: int = 0,
    outputs: tuple[np.ndarray, np.ndarray] | None = None,
) -> float:
    """Certified LOWER value of the exact histogram delta (D || D') of "a on x0, b on x1, the rest on
    x2" (k >= 4; module doc). The reverse direction is the forward direction of (b, a). ``outputs``:
    what :func:`third_value_outputs` returns for the same arguments (cached by the caller), or None."""
    n = n_users
    if outputs is None:
        outputs = third_value_outputs(n_users=n, k=k, epsilon_local=epsilon_local, a=a, b=b)
    # exp of a log of size L carries a relative error of ~4 L u: counted with the additions
    krr = KrrParams.of(epsilon_local, k)
    size = float(gammaln(n + 1.0)) + n * abs(krr.log_q)
    # p and q (and their logs) carry their own representation error, n factors of it in each entry
    return _lower_sum(*outputs, math.exp(eps), int(8 * size) + 8 * (n + 8) + 64 + krr.representation_ulps(n))
