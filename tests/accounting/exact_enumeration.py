"""Exact worst case over every dataset at medium n, by direct convolution with symmetry (tests only).

Independent of the library (numpy and mpmath only; nothing from ``shuffledp``) and of
:mod:`brute_force` (a different algorithm and arithmetic; a test checks the two agree at n <= 6).

Setting: n users apply k-RR (p = e^eps0 / (e^eps0 + k - 1) on the own value, q = 1 / (e^eps0 + k - 1)
on each other value); the output is the shuffled histogram. The differing user u holds x0 = value 0
(D) or x1 = value 1 (D'); the n - 1 others hold a dataset. The truth is

    delta(eps) = max over every dataset of the others and both directions of sum_h (P(h) - e^eps Q(h))_+.

**Symmetry.** The histogram law depends on the others only through their count vector, and the values
2 .. k-1 are exchangeable (permuting them permutes the histogram's coordinates, which leaves the
hockey-stick sum unchanged). So the datasets enumerated are (c_x0, c_x1, d_2 >= d_3 >= ... >= d_{k-1}):
counts on x0 and x1 and a partition of the rest into at most k - 2 parts -- every dataset up to that
permutation, hence the maximum over every dataset. Both directions are computed (the swap x0 <-> x1
maps one onto the other; the tests use that as a check).

**Convolution.** The others' histogram law R is built user by user on a dense (k - 1)-dimensional array
(the count of value k - 1 is implied by the total): one more user holding v maps R to
q * sum_y shift_y(R) + (p - q) * shift_v(R) (shift_y adds one report to bin y; for y = k - 1 it is the
identity). Datasets sharing their first counts share those steps. Then, with A = R(h - e_x0),
B = R(h - e_x1) and C = sum over y >= 2 of R(h - e_y) (all nonnegative, no differences),

    P0(h) - e^eps P1(h) = (p - e^eps q) A + (q - e^eps p) B + q (1 - e^eps) C,

the coefficients formed without cancellation: q e^eps0 (-expm1(eps - eps0)), -q expm1(eps + eps0),
-q expm1(eps) (swap A and B for the other direction). No FFT.

**Precision.** Pass 1 is float64 over every dataset, with a first-order rounding-error bound per dataset:
each cell of R carries relative error <= (n - 1)(k + 3) u (u = 2^-53; sums and products of nonnegative
terms), the combination (k + 10) u more, and each cell adds at most 1e-300 absolute for underflow; the
bound is summed over the cells whose computed value is not certainly <= 0 (of the grid's cells, only those
a report can reach: elsewhere every term is exactly 0). Every dataset whose interval
[delta - err, delta + err] reaches the best lower end is a candidate. If the winner's interval is wider
than ``rel_tol`` (default 1e-13) relative, pass 2 recomputes every candidate in fixed point: Python
integers in units of 2^-``FIXED_BITS`` (2^-400 ~ 4e-121), the channel rounded to nearest from 60-digit
mpmath, one floor per cell and user (absolute error <= n 2^-400 per cell of R); the hockey-stick sums
are exact integer arithmetic in units of 2^-800 on those cells, so pass 2's value is within
~cells x n x 3 e^eps x 2^-400 < 1e-100 of the exact delta. :class:`Truth` reports the interval.
"""

from __future__ import annotations

import functools
import math
from typing import NamedTuple

import mpmath
import numpy as np

__all__ = ["Truth", "worst_case", "datasets", "FIXED_BITS"]

#: fixed-point resolution of pass 2 (units of 2^-FIXED_BITS)
FIXED_BITS = 400
_U = 2.0**-53
_UNDERFLOW = 1e-300


class Truth(NamedTuple):
    """The exact worst-case delta at one epsilon: the certified interval [low, high], its centre and argmax."""

    delta: float  # centre of [low, high] (as a float; mpmath values when refined are in low/high)
    low: float
    high: float
    others: tuple  # argmax dataset (c_x0, c_x1, d_2, ..., d_{k-1}), d non-increasing
    direction: str  # "P0||P1" (u on x0 first) or "P1||P0"
    refined: bool  # whether pass 2 (fixed point) was needed


def datasets(n: int, k: int) -> list[tuple]:
    """Every dataset of the n - 1 others up to permutation of the values 2 .. k-1 (see the module doc)."""
    return [counts for counts, _ in _walk(n, k, None)]


def _walk(n: int, k: int, step):
    """Yield (counts, law) for every dataset; ``step(law, v)`` adds one user holding v (None: no laws).

    The datasets come in order: c_x0 from 0 up, c_x1 from 0 up, then the partition of the rest with its
    first part from the largest down (:func:`_partitions`). Every law is the one adding the users value by value
    (all on x0, then x1, then 2, 3, ...) from the empty law gives, and datasets sharing a prefix of that
    sequence share its steps: each count of a value is one step from the count below it
    (:func:`_partitions`), instead of each partition adding its parts anew from the law before them."""
    if step is None:  # the datasets alone: every law None
        step = _no_laws
    total = n - 1
    law_a = step(None, None)
    for c0 in range(total + 1):
        if c0:
            law_a = step(law_a, 0)
        law_b = law_a
        for c1 in range(total - c0 + 1):
            if c1:
                law_b = step(law_b, 1)
            rest = total - c0 - c1
            if k == 2:
                if rest == 0:
                    yield (c0, c1), law_b
                continue
            for part, law in _partitions(law_b, rest, 2, k - 2, rest, step):
                yield (c0, c1) + part, law


def _no_laws(law, value):
    """The step of :func:`_walk` when only the datasets are asked for."""
    return None


def _partitions(law, rest: int, value: int, slots: int, top: int, step):
    """(part, law) for every non-increasing tuple ``part`` of ``slots`` nonnegative integers, each <= ``top``,
    summing to ``rest``, its first entry from the largest down (then its tail in the same order): the users
    of part[0] added to ``law`` on ``value``, of part[1] on ``value`` + 1, and so on. The laws of ``value``'s
    counts are one chain of steps, built upwards and read downwards."""
    if slots == 0:
        if rest == 0:
            yield (), law
        return
    highest = min(rest, top)
    lowest = -(-rest // slots)  # the first part is at least the average
    if lowest > highest:
        return
    chain = {}
    current = law
    for count in range(highest + 1):
        if count:
            current = step(current, value)
        if count >= lowest:
            chain[count] = current
    for first in range(highest, lowest - 1, -1):
        for tail, tail_law in _partitions(chain[first], rest - first, value + 1, slots - 1, first, step):
            yield (first,) + tail, tail_law


def _shift(arr, y: int, k: int):
    """The law after one more report on bin y (arr: (k-1)-dim array; y = k-1 is the implied bin)."""
    if y == k - 1:
        return arr
    out = np.zeros_like(arr)
    dst = [slice(None)] * arr.ndim
    src = [slice(None)] * arr.ndim
    dst[y], src[y] = slice(1, None), slice(None, -1)
    out[tuple(dst)] = arr[tuple(src)]
    return out


def _stepper(n: int, k: int, p, q, fixed: bool):
    shape = (n + 1,) * (k - 1)
    p_minus_q = p - q
    # flat offset of one more report on bin y (C order)
    offsets = [(n + 1) ** (k - 2 - y) for y in range(k - 1)]

    def step(law, v):
        if law is None and v is None:
            start = np.zeros(shape, dtype=object if fixed else float)
            start[(0,) * (k - 1)] = (1 << FIXED_BITS) if fixed else 1.0
            return start
        if not fixed:
            return _float_step(law, v)
        shifts = [_shift(law, y, k) for y in range(k)]
        total = shifts[0]
        for s in shifts[1:]:
            total = total + s
        new = q * total + p_minus_q * shifts[v]
        if fixed:
            new = new >> FIXED_BITS
        return new

    def _float_step(law, v):
        """The same sums in float64, each cell's terms added in the same order (shift_0 + shift_1 + ... +
        R), on the flat array: a shift is a copy at a fixed offset. A cell on bin y's first index receives
        there the cell on its last index of the row before, which is exactly 0 (a law of m <= n - 1 users
        before the step has no mass at count n on any bin), so each sum gains an exact 0 where the shifted
        grid has its zero: the same bits as :func:`_shift`'s arrays."""
        flat = law.reshape(-1)
        total = np.zeros(flat.size)
        total[offsets[0] :] = flat[: -offsets[0]]
        for offset in offsets[1:]:
            total[offset:] += flat[:-offset]
        total += flat  # bin k - 1: the implied one, no shift
        if v == k - 1:
            own = p_minus_q * flat
        else:
            own = np.zeros(flat.size)
            own[offsets[v] :] = p_minus_q * flat[: -offsets[v]]
        return (q * total + own).reshape(shape)

    return step


def _grow(law):
    """The (n - 1)-user grid padded by one in every axis (np.pad would put numpy int64 zeros in an object
    array, which numpy then fails to multiply by a huge Python integer)."""
    out = np.zeros(tuple(m + 1 for m in law.shape), dtype=law.dtype)
    out[tuple(slice(0, m) for m in law.shape)] = law
    return out


def _pieces(law, k: int):
    """A = R(h - e_x0), B = R(h - e_x1), C = sum over y >= 2 of R(h - e_y), on the n-user grid."""
    a, b = _shift(law, 0, k), _shift(law, 1, k)
    c = None
    for y in range(2, k):
        s = _shift(law, y, k)
        c = s if c is None else c + s
    if c is None:
        c = np.zeros_like(law)
    return a, b, c


def _coefficients_float(eps: np.ndarray, epsilon_local: float, k: int):
    q = 1.0 / (math.exp(epsilon_local) + k - 1)
    e0 = math.exp(epsilon_local)
    a = q * e0 * -np.expm1(eps - epsilon_local)
    b = -q * np.expm1(eps + epsilon_local)
    c = -q * np.expm1(eps)
    return a, b, c


def _reachable(n: int, k: int) -> np.ndarray:
    """Flat indices of the n-user grid's cells h with h_0 + ... + h_{k-2} <= n (the implied bin's count
    n - that sum is >= 0). A, B and C are exactly 0 elsewhere, in floating point as in exact arithmetic
    (no step ever writes there), so such a cell adds 0 to the sums and carries no rounding error; for
    k = 5 they are 23 of every 24 cells of the grid."""
    grid = np.indices((n + 1,) * (k - 1)).sum(axis=0)
    return np.flatnonzero(grid.ravel() <= n)


def _float_pass(n: int, k: int, epsilon_local: float, eps: np.ndarray, cells: np.ndarray | None = None):
    """Per dataset: (counts, H01, H10, err01, err10) as arrays over eps, the sums over ``cells`` (flat
    indices of the n-user grid; default: the reachable ones, :func:`_reachable`)."""
    q = 1.0 / (math.exp(epsilon_local) + k - 1)
    p = math.exp(epsilon_local) * q
    ca, cb, cc = _coefficients_float(eps, epsilon_local, k)
    kappa = ((n - 1) * (k + 3) + k + 10) * _U * 1.01
    cells = _reachable(n, k) if cells is None else cells
    ca_rows, cb_rows, cc_rows = ca[:, None], cb[:, None], cc[:, None]
    abs_a, abs_b, abs_c = np.abs(ca)[:, None], np.abs(cb)[:, None], np.abs(cc)[:, None]
    out = []
    for counts, law in _walk(n, k, _stepper(n - 1, k, p, q, fixed=False)):
        law = _grow(law)  # room for u's report: n users
        a, b, c = (x.ravel()[cells] for x in _pieces(law, k))
        row = [counts]
        for first, second in ((a, b), (b, a)):
            # one row per eps (contiguous passes; every entry the same expression), summed over the cells as a
            # (cells, eps) array, the layout whose column sums these are
            value = ca_rows * first + cb_rows * second + cc_rows * c
            err = kappa * (abs_a * first + abs_b * second + abs_c * c) + _UNDERFLOW
            live = value > -err
            row.append(np.ascontiguousarray(np.where(value > 0, value, 0.0).T).sum(axis=0))
            row.append(np.ascontiguousarray(np.where(live, err, 0.0).T).sum(axis=0))
        out.append(row)
    return out


def _boxed(value: int):
    """A Python integer as a 0-d object array (numpy would try to fit a huge one into int64)."""
    box = np.empty((), dtype=object)
    box[()] = value
    return box


def _fixed_value(n: int, k: int, epsilon_local: float, eps_list, counts) -> list[tuple]:
    """Pass 2 for one dataset: [(H01, H10)] as mpmath numbers, one pair per eps."""
    with mpmath.workdps(60):
        e0 = mpmath.exp(mpmath.mpf(epsilon_local))
        qm = 1 / (e0 + k - 1)
        pm = e0 * qm
        scale = mpmath.mpf(2) ** FIXED_BITS
        p, q = int(mpmath.nint(pm * scale)), int(mpmath.nint(qm * scale))
        coefficient_sets = []
        for eps in eps_list:
            ee = mpmath.exp(mpmath.mpf(eps))
            coefficient_sets.append(
                [_boxed(int(mpmath.nint(x * scale))) for x in (pm - ee * qm, qm - ee * pm, qm * (1 - ee))]
            )
    step = _stepper(n - 1, k, _boxed(p), _boxed(q), fixed=True)
    law = step(None, None)
    groups = list(counts[:2]) + list(counts[2:])
    for v, how_many in enumerate(groups):
        for _ in range(how_many):
            law = step(law, v)
    law = _grow(law)
    a, b, c = (x.ravel() for x in _pieces(law, k))
    out = []
    with mpmath.workdps(60):
        for ca, cb, cc in coefficient_sets:
            pair = []
            for first, second in ((a, b), (b, a)):
                value = ca * first + cb * second + cc * c
                positive = sum(int(v) for v in value if v > 0)
                pair.append(mpmath.ldexp(mpmath.mpf(positive), -2 * FIXED_BITS))
            out.append(tuple(pair))
    return out


@functools.lru_cache(maxsize=32)
def _cached(n: int, k: int, epsilon_local: float, eps: tuple, rel_tol: float):
    eps_arr = np.asarray(eps, dtype=float)
    rows = _float_pass(n, k, epsilon_local, eps_arr)
    results = []
    for j in range(len(eps)):
        if (
            eps[j] >= epsilon_local
        ):  # k-RR is eps0-LDP, so is the histogram (post-processing): delta = 0 exactly
            results.append(Truth(0.0, 0.0, 0.0, (n - 1,) + (0,) * (k - 1), "P0||P1", False))
            continue
        best_low, best = -1.0, None
        entries = []
        for counts, h01, e01, h10, e10 in rows:
            for direction, h, e in (("P0||P1", h01[j], e01[j]), ("P1||P0", h10[j], e10[j])):
                entries.append((h, e, counts, direction))
                if h - e > best_low:
                    best_low, best = h - e, (h, e, counts, direction)
        h, e, counts, direction = best
        if e <= rel_tol * h or (h == 0.0 and e <= _UNDERFLOW * 1e4):
            low = max(0.0, max(x[0] - x[1] for x in entries))
            high = max(x[0] + x[1] for x in entries)
            results.append(Truth(float(h), float(low), float(high), counts, direction, False))
            continue
        candidates = {x[2] for x in entries if x[0] + x[1] >= best_low}
        top = None
        for cand in sorted(candidates):
            h01, h10 = _fixed_value(n, k, epsilon_local, [eps[j]], cand)[0]
            for direction, value in (("P0||P1", h01), ("P1||P0", h10)):
                if top is None or value > top[0]:
                    top = (value, cand, direction)
        value = float(top[0])
        slack = value * 1e-15 + 1e-100  # float conversion and pass 2's < 1e-100 absolute error
        results.append(Truth(value, value - slack, value + slack, top[1], top[2], True))
    return tuple(results)


def worst_case(
    epsilons, epsilon_local: float, n: int, k: int, *, rel_tol: float = 1e-13
) -> tuple[Truth, ...]:
    """The exact worst-case delta at each epsilon (one :class:`Truth` per epsilon; cached per call)."""
    if not (isinstance(n, int) and n >= 2 and isinstance(k, int) and k >= 2):
        raise ValueError(f"need integers n >= 2 and k >= 2; got n = {n!r}, k = {k!r}.")
    if (n + 1) ** (k - 1) > 200_000:
        raise ValueError(f"dense grid (n + 1)^(k - 1) = {(n + 1) ** (k - 1)} too large for n = {n}, k = {k}.")
    eps = tuple(float(e) for e in np.atleast_1d(epsilons))
    return _cached(n, k, float(epsilon_local), eps, float(rel_tol))
