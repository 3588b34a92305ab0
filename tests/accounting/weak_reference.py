"""mpmath references for the weak adversary (Koskela et al., Def. 3) and the (h_x0, h_x1) marginal.

Independent of the library's accountants (tests only). Setting and notation as in
:mod:`brute_force`: k-RR with p = e^eps0 / (e^eps0 + k - 1), q = 1 / (e^eps0 + k - 1); the blanket
view: each user draws uniformly over the k values w.p. gamma = k q and reports its value otherwise.

* :func:`weak_adversary_view_law_mpmath` ``(epsilon_local, n, k, *, dps=60) -> (P, Q)``: joint law of
  (b, a, c) under D(x0) and D(x1), as dicts (b = number of blanket others, a / c = counts of x0 / x1
  among the blanket others' reports and u's report). For small n (pmfs for dp_accounting).
* :func:`weak_view_log_pmfs` ``(epsilon_local, n, k) -> (log_p, log_q)``: the same law as natural-log
  floats (dicts keyed by (b, a, c)), ready for dp_accounting's
  ``from_two_probability_mass_functions``.
* :func:`weak_adversary_reference_mpmath` ``(eps, epsilon_local, n, k, *, dps=60)``: delta of that view
  at ``eps`` (a number: returns an mpf; a sequence: returns a list of mpf), max of both directions,
  by the direct triple sum over (b, a, c). Usable up to n ~ 150 (O(n^3) mpmath operations).
* :func:`pair_marginal_law_mpmath` ``(epsilon_local, n, k, *, dps=60) -> (P, Q)`` and
  :func:`pair_marginal_reference_mpmath` ``(eps, epsilon_local, n, k, *, dps=60)``: law and delta of
  the pair (h_x0, h_x1) of the REAL shuffled histogram when no other user holds x0 or x1 (k >= 3;
  for k = 2 such datasets do not exist and a ValueError is raised). The others' counts of x0 and x1
  are trinomial(n - 1, q, q) whatever values in x2 .. x_{k-1} they hold; u adds x0 w.p. p / q, x1
  w.p. q / p, neither w.p. (k - 2) q. The pair is a function of the histogram, so its delta is a
  LOWER bound on the full-histogram delta of every such dataset (data processing), hence on the
  worst case over datasets. It is the exact full-histogram delta when k = 3 (the rest of the
  histogram is n - h_x0 - h_x1), not in general for k >= 4 (brute-force tests check both).
* :func:`all_on_x0_reference_mpmath` ``(eps, epsilon_local, n, k, *, dps=60)``: exact full-histogram
  delta of the dataset "every other user holds x0" (the pair is sufficient there), max of both
  directions; any k >= 2.

Definition used: with b ~ Bin(n - 1, gamma) and T_b(a, c) the trinomial law
of the counts of x0 and x1 among b uniform draws (probabilities 1/k, 1/k, 1 - 2/k),

    P(a, c | b) = p T_b(a-1, c) + q T_b(a, c-1) + (k-2) q T_b(a, c)
    Q(a, c | b) = q T_b(a-1, c) + p T_b(a, c-1) + (k-2) q T_b(a, c)

and delta = sum_b Bin(b) sum_{a, c} max(P - e^eps Q, 0) (and the same with P, Q swapped). T_b is
built by its defining recursion (one uniform draw at a time), not by a closed form. That (b, a, c) is
sufficient for the weak adversary's full view (bits, histogram of the remaining reports) is checked
against :func:`brute_force.weak_adversary_view_distributions` on tiny cases.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

import mpmath
import numpy as np
from mpmath.libmp import fzero, mpf_add, mpf_gt, mpf_log, mpf_mul, to_float

__all__ = [
    "REFERENCE_DPS",
    "krr_parameters_mpmath",
    "weak_adversary_view_law_mpmath",
    "weak_view_log_pmfs",
    "weak_adversary_reference_mpmath",
    "pair_marginal_law_mpmath",
    "pair_marginal_reference_mpmath",
    "all_on_x0_reference_mpmath",
]

#: significant digits of the references
REFERENCE_DPS = 60


def krr_parameters_mpmath(epsilon_local, k: int) -> tuple[mpmath.mpf, mpmath.mpf, mpmath.mpf]:
    """(p, q, gamma) of k-RR at the current mpmath precision."""
    e = mpmath.exp(mpmath.mpf(epsilon_local))
    q = 1 / (e + k - 1)
    return e * q, q, k * q


# The law's recursion and sums are evaluated on mpmath's raw values with libmp's mpf_mul and mpf_add at the
# context's precision and rounding: what mpf's * and + call (an int 0 operand is mpf 0's raw zero), without
# their wrappers; the law's values are wrapped as mpf once, at the end.


def _uniform_draw_laws(n_max: int, k: int):
    """Yield (b, T_b) for b = 0 .. n_max: T_b[a][c] = P(a draws on x0, c on x1 among b uniform draws),
    as raw mpf values (at the current mpmath precision).

    Recursion on one more draw: x0 w.p. 1/k, x1 w.p. 1/k, elsewhere w.p. 1 - 2/k.
    """
    prec, rounding = mpmath.mp._prec_rounding
    one = mpmath.mpf(1) / k
    rest = (1 - 2 * one)._mpf_
    one = one._mpf_
    law = [[mpmath.mpf(1)._mpf_]]  # b = 0
    yield 0, law
    for b in range(1, n_max + 1):
        new = [[fzero] * (b + 1 - a) for a in range(b + 1)]
        for a in range(b):
            row, here, up = law[a], new[a], new[a + 1]
            for c in range(b - a):
                value = row[c]
                here[c] = mpf_add(here[c], mpf_mul(rest, value, prec, rounding), prec, rounding)
                up[c] = mpf_add(up[c], mpf_mul(one, value, prec, rounding), prec, rounding)
                here[c + 1] = mpf_add(here[c + 1], mpf_mul(one, value, prec, rounding), prec, rounding)
        law = new
        yield b, law


def _cell(table, a: int, c: int):
    if a < 0 or c < 0 or a >= len(table) or c >= len(table[a]):
        return fzero
    return table[a][c]


def _conditional_pq(table, b: int, p, q, k: int):
    """Yield (a, c, P(a, c | b), Q(a, c | b)) for the b blanket draws plus u's k-RR report (raw mpf values, as
    ``table``; ``p`` and ``q`` are mpf)."""
    prec, rounding = mpmath.mp._prec_rounding
    other = ((k - 2) * q)._mpf_
    p, q = p._mpf_, q._mpf_

    def mix(first, second, x0, x1, elsewhere):  # first x0 + second x1 + other elsewhere
        total = mpf_add(
            mpf_mul(first, x0, prec, rounding), mpf_mul(second, x1, prec, rounding), prec, rounding
        )
        return mpf_add(total, mpf_mul(other, elsewhere, prec, rounding), prec, rounding)

    for a in range(b + 2):
        for c in range(b + 2 - a):
            to_x0 = _cell(table, a - 1, c)  # u reported x0
            to_x1 = _cell(table, a, c - 1)  # u reported x1
            elsewhere = _cell(table, a, c)  # u reported another value
            yield a, c, mix(p, q, to_x0, to_x1, elsewhere), mix(q, p, to_x0, to_x1, elsewhere)


def _as_list(eps):
    if isinstance(eps, Sequence) and not isinstance(eps, str):
        return list(eps), True
    return [eps], False


def _weak_view_law_raw(epsilon_local, n: int, k: int) -> tuple[dict, dict]:
    """:func:`weak_adversary_view_law_mpmath`'s two laws as raw mpf values, at the current mpmath precision."""
    p, q, gamma = krr_parameters_mpmath(epsilon_local, k)
    prec, rounding = mpmath.mp._prec_rounding
    law_p, law_q = {}, {}
    for b, table in _uniform_draw_laws(n - 1, k):
        weight = (mpmath.binomial(n - 1, b) * gamma**b * (1 - gamma) ** (n - 1 - b))._mpf_
        for a, c, value_p, value_q in _conditional_pq(table, b, p, q, k):
            law_p[(b, a, c)] = mpf_mul(weight, value_p, prec, rounding)
            law_q[(b, a, c)] = mpf_mul(weight, value_q, prec, rounding)
    return law_p, law_q


def weak_adversary_view_law_mpmath(
    epsilon_local, n: int, k: int, *, dps: int = REFERENCE_DPS
) -> tuple[dict, dict]:
    """Joint law of (b, a, c) under D(x0) (P) and D(x1) (Q): Bin(n-1, gamma)(b) P(a, c | b)."""
    with mpmath.workdps(dps):
        make = mpmath.mp.make_mpf
        return tuple({o: make(v) for o, v in law.items()} for law in _weak_view_law_raw(epsilon_local, n, k))


def weak_view_log_pmfs(epsilon_local, n: int, k: int, *, dps: int = REFERENCE_DPS) -> tuple[dict, dict]:
    """(log P, log Q) of the weak view (b, a, c) as float dicts (outcomes of probability 0 omitted).

    For dp_accounting: ``from_two_probability_mass_functions(log_q, log_p, ...)`` is the privacy loss
    distribution of H(P || Q) (its second argument is the "upper" distribution). Each value is mpmath's
    ``float(log(v))`` at ``dps`` digits, formed with libmp's mpf_log and to_float (what those call).
    """
    with mpmath.workdps(dps):
        prec, rounding = mpmath.mp._prec_rounding
        return tuple(
            {
                o: to_float(mpf_log(v, prec, rounding), rnd=rounding)
                for o, v in law.items()
                if mpf_gt(v, fzero)
            }
            for law in _weak_view_law_raw(epsilon_local, n, k)
        )


def weak_adversary_reference_mpmath(eps, epsilon_local, n: int, k: int, *, dps: int = REFERENCE_DPS):
    """Delta of the weak adversary's view, max of both directions: direct triple sum over (b, a, c).

    ``eps`` a number -> mpf; a sequence -> list of mpf (one pass over the cells for all of them).
    """
    epsilons, many = _as_list(eps)
    result = _weak_reference_cached(tuple(float(e) for e in epsilons), float(epsilon_local), n, k, dps)
    return list(result) if many else result[0]


def _integer_draw_counts(n_max: int, k: int):
    """Yield (b, M_b) for b = 0 .. n_max with M_b[a][c] = k^b T_b(a, c), an exact integer.

    Same recursion as :func:`_uniform_draw_laws`, scaled by k per draw: M_b(a, c) = M_{b-1}(a-1, c)
    + M_{b-1}(a, c-1) + (k - 2) M_{b-1}(a, c) (the number of length-b draw sequences with a on x0
    and c on x1, the others on the k - 2 remaining values).
    """
    law = [[1]]
    yield 0, law
    for b in range(1, n_max + 1):
        new = [[0] * (b + 1 - a) for a in range(b + 1)]
        for a in range(b):
            row, up, here = law[a], new[a + 1], new[a]
            for c in range(b - a):
                value = row[c]
                here[c] += (k - 2) * value
                up[c] += value
                here[c + 1] += value
        law = new
        yield b, law


#: relative margin of the float sign test in :func:`_positive_gap_sum`, far above the float evaluation's error
#: (at most 7 ulp of the sum of the three terms' absolute values; the analysis is in that function's docstring)
_SIGN_MARGIN = 1e-10
#: absolute margin of the same test: a product that underflows loses at most 2^-1075
_SIGN_FLOOR = 1e-300
#: the smallest normal float: a count whose T_b value is below it is not known to 1 ulp in floats
_SMALLEST_NORMAL = 2.2250738585072014e-308


def _positive_gap_sum(constants, floats, counts, exact_only):
    """Sum over the cells of max(c_x X + c_y Y + c_z Z, 0), an exact integer.

    ``constants``: three (integer, float) pairs, the float being the integer / 2^bits (correctly rounded);
    ``counts``: the integer arrays X, Y, Z (object dtype); ``floats``: X, Y, Z / k^b (each correctly rounded,
    Z's times k - 2 once more); ``exact_only``: cells whose float values are not known to 1 ulp (below the
    smallest normal float), or every cell when a constant does not fit a float; cells whose float
    products overflow are decided on the integers too.

    The float gap value = sum of the three float products has error at most 4 ulp in each product and 2 ulp
    of the sum of their absolute values, A, in the two additions (plus 2^-1075 per product that underflows),
    so a cell whose float gap exceeds 1e-10 A + 1e-300 has a positive integer gap, one below -(1e-10 A +
    1e-300) a negative one; only the cells in between are decided on the integer gap. The positive cells'
    gaps sum to c_x sum(X) + c_y sum(Y) + c_z sum(Z) over them (exact integers): the same integer as
    summing each positive gap.
    """
    (c_x, f_x), (c_y, f_y), (c_z, f_z) = constants
    x, y, z = counts
    with np.errstate(over="ignore", invalid="ignore"):  # a product beyond the float range: on the integers
        terms = (f_x * floats[0], f_y * floats[1], f_z * floats[2])
        value = terms[0] + terms[1] + terms[2]
        margin = _SIGN_MARGIN * (np.abs(terms[0]) + np.abs(terms[1]) + np.abs(terms[2])) + _SIGN_FLOOR
    exact_only = exact_only | ~np.isfinite(margin)
    positive = (value > margin) & ~exact_only
    total = c_x * int(x[positive].sum()) + c_y * int(y[positive].sum()) + c_z * int(z[positive].sum())
    for j in np.flatnonzero((np.abs(value) <= margin) | exact_only):
        gap = c_x * x[j] + c_y * y[j] + c_z * z[j]
        if gap > 0:
            total += gap
    return total


@functools.lru_cache(maxsize=256)
def _weak_reference_cached(epsilons: tuple, epsilon_local: float, n: int, k: int, dps: int):
    """The triple sum with T_b = M_b / k^b exact (integers) and P, Q divided by q / k^b:

        P(a, c | b) k^b / q = e X + Y + Z,  Q(a, c | b) k^b / q = X + e Y + Z,
        X = M_b(a-1, c), Y = M_b(a, c-1), Z = (k-2) M_b(a, c), e = e^eps0 = p / q,

    so (P - E Q) k^b / q = (e - E) X + (1 - E e) Y + (1 - E) Z with E = e^eps. The three constants
    are rounded to integers at 2^-bits (bits well above ``dps`` digits); everything else is exact
    integer arithmetic, and each b's sum of positive gaps is scaled back once:
    delta = sum_b C(n-1, b) q^b (1 - gamma)^(n-1-b) * q * (sum of gaps) / 2^bits.
    Which gaps are positive is decided in floats where that is certain, on the integers elsewhere
    (:func:`_positive_gap_sum`), so every b's sum is the same integer as a cell-by-cell integer sum.
    Cross-checked against the all-mpmath law (:func:`weak_adversary_view_law_mpmath`) in the tests.
    """
    bits = int(dps * 3.33) + 96
    with mpmath.workdps(dps + 40):
        p, q, gamma = krr_parameters_mpmath(epsilon_local, k)
        e = p / q
        scale = mpmath.mpf(2) ** bits
        constants = []
        for eps in epsilons:
            factor = mpmath.exp(mpmath.mpf(eps))
            integers = [int(mpmath.nint(value * scale)) for value in (e - factor, 1 - factor * e, 1 - factor)]
            try:
                constants.append(([(c, c / 2**bits) for c in integers], False))
            except OverflowError:  # a constant beyond the float range: every cell on the integers
                constants.append(([(c, 0.0) for c in integers], True))
        forward = [mpmath.mpf(0)] * len(epsilons)
        backward = [mpmath.mpf(0)] * len(epsilons)
        for b, table in _integer_draw_counts(n - 1, k):
            weight = mpmath.binomial(n - 1, b) * q ** (b + 1) * (1 - gamma) ** (n - 1 - b) / scale
            # M_b with a zero border: padded[a + 1, c + 1] = M_b(a, c), 0 outside a + c <= b
            padded = np.zeros((b + 3, b + 3), dtype=object)
            padded_float = np.zeros((b + 3, b + 3))
            power = k**b
            for a, row in enumerate(table):
                padded[a + 1, 1 : len(row) + 1] = row
                padded_float[a + 1, 1 : len(row) + 1] = [value / power for value in row]
            inexact = (padded_float < _SMALLEST_NORMAL) & (padded != 0)
            # the cells (a, c), a + c <= b + 1, where X, Y or Z is nonzero (the others' gaps are 0)
            a, c = np.nonzero(np.add.outer(np.arange(b + 2), np.arange(b + 2)) <= b + 1)
            sources = ((a, c + 1), (a + 1, c), (a + 1, c + 1))
            counts = [padded[source] for source in sources]
            counts[2] = (k - 2) * counts[2]
            keep = (counts[0] != 0) | (counts[1] != 0) | (counts[2] != 0)
            counts = [values[keep] for values in counts]
            floats = [padded_float[source][keep] for source in sources]
            floats[2] = (k - 2) * floats[2]
            inexact_cells = np.zeros(len(floats[0]), dtype=bool)
            for source in sources:
                inexact_cells |= inexact[source][keep]
            for i, ((c_main, c_cross, c_rest), all_exact) in enumerate(constants):
                exact_only = np.ones_like(inexact_cells) if all_exact else inexact_cells
                forward[i] += weight * _positive_gap_sum(
                    (c_main, c_cross, c_rest), floats, counts, exact_only
                )
                backward[i] += weight * _positive_gap_sum(
                    (c_cross, c_main, c_rest), floats, counts, exact_only
                )
    with mpmath.workdps(dps):
        return tuple(+max(f, r) for f, r in zip(forward, backward))


def pair_marginal_law_mpmath(epsilon_local, n: int, k: int, *, dps: int = REFERENCE_DPS) -> tuple[dict, dict]:
    """Law of (h_x0, h_x1) of the real histogram when no other user holds x0 or x1 (k >= 3)."""
    if k < 3:
        raise ValueError(
            "for k = 2 every other user holds x0 or x1: the 'no other on x0 or x1' family is empty."
        )
    with mpmath.workdps(dps):
        p, q, _ = krr_parameters_mpmath(epsilon_local, k)
        m = n - 1
        rest = 1 - 2 * q

        def trinomial(a, c):
            if a < 0 or c < 0 or a + c > m:
                return 0
            return (
                mpmath.factorial(m)
                / (mpmath.factorial(a) * mpmath.factorial(c) * mpmath.factorial(m - a - c))
                * q ** (a + c)
                * rest ** (m - a - c)
            )

        cache = {(a, c): trinomial(a, c) for a in range(-1, n + 1) for c in range(-1, n + 1)}
        other = (k - 2) * q
        law_p, law_q = {}, {}
        for a in range(n + 1):
            for c in range(n + 1 - a):
                to_x0, to_x1, elsewhere = cache[(a - 1, c)], cache[(a, c - 1)], cache[(a, c)]
                law_p[(a, c)] = p * to_x0 + q * to_x1 + other * elsewhere
                law_q[(a, c)] = q * to_x0 + p * to_x1 + other * elsewhere
        return law_p, law_q


@functools.lru_cache(maxsize=64)
def _pair_terms_cached(epsilon_local: float, n: int, k: int, dps: int, others_on_x0: bool = False):
    """[(X, Y, Z)] per cell (a, c): the others' trinomial at (a-1, c), (a, c-1), and (k-2) q (a, c).

    The others' counts of (x0, x1) are trinomial(n - 1; q, q) when none holds x0 or x1, and
    trinomial(n - 1; p, q) when all hold x0.
    """
    if k < 3 and not others_on_x0:
        raise ValueError(
            "for k = 2 every other user holds x0 or x1: the 'no other on x0 or x1' family is empty."
        )
    with mpmath.workdps(dps):
        p, q, _ = krr_parameters_mpmath(epsilon_local, k)
        m = n - 1
        to_x0 = p if others_on_x0 else q
        rest = 1 - to_x0 - q
        log_x0, log_q = mpmath.log(to_x0), mpmath.log(q)
        log_rest = mpmath.log(rest) if k > 2 else None  # k = 2 (all on x0): p + q = 1, no third bin

        # each log-gamma value and each multiple of a log once (the same calls at the same precision, so the
        # same values as forming them per cell)
        log_factorial = [mpmath.loggamma(j + 1) for j in range(m + 1)]
        x0_terms = [a * log_x0 for a in range(m + 1)]
        q_terms = [c * log_q for c in range(m + 1)]
        rest_terms = None if log_rest is None else [j * log_rest for j in range(m + 1)]

        def trinomial(a, c):
            if a < 0 or c < 0 or a + c > m:
                return mpmath.mpf(0)
            if rest_terms is None:  # k = 2: every report is x0 or x1
                if a + c != m:
                    return mpmath.mpf(0)
                rest_term = 0
            else:
                rest_term = rest_terms[m - a - c]
            return mpmath.exp(
                log_factorial[m]
                - log_factorial[a]
                - log_factorial[c]
                - log_factorial[m - a - c]
                + x0_terms[a]
                + q_terms[c]
                + rest_term
            )

        cache = {(a, c): trinomial(a, c) for a in range(-1, n + 1) for c in range(-1, n + 1)}
        return [
            (cache[(a - 1, c)], cache[(a, c - 1)], (k - 2) * q * cache[(a, c)])
            for a in range(n + 1)
            for c in range(n + 1 - a)
        ]


def pair_marginal_reference_mpmath(eps, epsilon_local, n: int, k: int, *, dps: int = REFERENCE_DPS):
    """Delta of (h_x0, h_x1) when no other user holds x0 or x1, max of both directions (k >= 3).

    ``eps`` a number -> mpf; a sequence -> list of mpf. Each gap is evaluated as
    P - E Q = (p - E q) X + (q - E p) Y + (1 - E) Z (X, Y, Z the three terms of the law), so at
    eps = eps0 the first coefficient is exactly 0 (p is computed as e^eps0 q) and delta(eps0) = 0
    exactly instead of rounding noise.
    """
    return _pair_reference(eps, epsilon_local, n, k, dps, False)


def all_on_x0_reference_mpmath(eps, epsilon_local, n: int, k: int, *, dps: int = REFERENCE_DPS):
    """Exact full-histogram delta when every other user holds x0, max of both directions (k >= 2).

    The others' counts of (x0, x1) are trinomial(n - 1; p, q); u adds its k-RR report as in
    :func:`pair_marginal_reference_mpmath`. Here the pair (h_x0, h_x1) is sufficient: given it, the
    reports outside {x0, x1} (the others' and u's alike) are uniform over the k - 2 other values
    under both hypotheses. ``eps`` a number -> mpf; a sequence -> list of mpf.
    """
    return _pair_reference(eps, epsilon_local, n, k, dps, True)


def _pair_reference(eps, epsilon_local, n, k, dps, others_on_x0):
    """The pair's delta, max of both directions, with every gap summed exactly in integers.

    Each term X, Y, Z of :func:`_pair_terms_cached` is an mpf m 2^e, so 2^shift times it is an exact
    integer for shift = -(the smallest e). The gap's three constants p - E q, q - E p and 1 - E are
    rounded to integers at 2^-bits (bits well above ``dps`` digits; p - E q is exactly 0 at eps = eps0,
    as in :func:`_pair_reference_plain`), so every cell's gap and the sum of the positive ones are
    exact, and the sum is scaled back once. The same values as the all-mpmath sum
    (:func:`_pair_reference_plain`, the tests compare the two), at a fraction of its cost: one integer
    product per term instead of an mpf product and sum.
    """
    epsilons, many = _as_list(eps)
    terms, shift = _pair_terms_integers(float(epsilon_local), n, k, dps, others_on_x0)
    bits = int(dps * 3.33) + 96
    out = []
    with mpmath.workdps(dps + 40):
        p, q, _ = krr_parameters_mpmath(epsilon_local, k)
        scale = mpmath.mpf(2) ** bits
        for e in epsilons:
            factor = mpmath.exp(mpmath.mpf(e))
            main, cross, same = (
                int(mpmath.nint(value * scale)) for value in (p - factor * q, q - factor * p, 1 - factor)
            )
            forward = backward = 0
            for x, y, z in terms:
                rest = same * z
                gap = main * x + cross * y + rest
                if gap > 0:
                    forward += gap
                gap = cross * x + main * y + rest
                if gap > 0:
                    backward += gap
            out.append(max(forward, backward))
    with mpmath.workdps(dps):
        out = [+mpmath.ldexp(mpmath.mpf(total), -(bits + shift)) for total in out]
    return out if many else out[0]


@functools.lru_cache(maxsize=64)
def _pair_terms_integers(epsilon_local: float, n: int, k: int, dps: int, others_on_x0: bool):
    """(terms, shift): :func:`_pair_terms_cached`'s (X, Y, Z) times 2^shift, as exact integers."""
    terms = _pair_terms_cached(epsilon_local, n, k, dps, others_on_x0)
    shift = -min(value._mpf_[2] for triple in terms for value in triple if value)
    return [tuple(int(mpmath.ldexp(value, shift)) for value in triple) for triple in terms], shift


def _pair_reference_plain(eps, epsilon_local, n, k, dps, others_on_x0):
    """The pair's delta as an mpmath sum of mpf gaps at ``dps`` digits (the slow path that
    :func:`_pair_reference` is checked against)."""
    epsilons, many = _as_list(eps)
    terms = _pair_terms_cached(float(epsilon_local), n, k, dps, others_on_x0)
    out = []
    with mpmath.workdps(dps):
        p, q, _ = krr_parameters_mpmath(epsilon_local, k)
        for e in epsilons:
            factor = mpmath.exp(mpmath.mpf(e))
            main, cross, same = p - factor * q, q - factor * p, 1 - factor
            forward = mpmath.fsum(max(main * x + cross * y + same * z, 0) for x, y, z in terms)
            backward = mpmath.fsum(max(cross * x + main * y + same * z, 0) for x, y, z in terms)
            out.append(+max(forward, backward))
    return out if many else out[0]
