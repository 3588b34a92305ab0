"""Brute-force reference distributions for the shuffled k-RR histogram query (tests only).

Exact enumeration over all k^n report vectors, in mpmath arbitrary precision, for tiny n. Every
accountant test that needs "the truth" on a small case imports this module; its API is stable:

* :func:`histogram_distributions` ``(n, k, n_x0, dataset="third", *, epsilon_local) -> (P0, P1)``:
  law of the full shuffled histogram (a tuple of k counts) under D(x0) and D(x1).
* :func:`single_bin_distributions` ``(n, k, n_x0, dataset="third", *, epsilon_local) -> (P0, P1)``:
  law of the count of bin x0 only (an int).
* :func:`pair_distributions` ``(n, k, n_x0, dataset="third", *, epsilon_local) -> (P0, P1)``:
  law of the pair (count of x0, count of x1).
* :func:`hockey_stick` ``(P, Q, eps) -> mpmath.mpf``: H_{e^eps}(P || Q) = sum_o max(P(o) - e^eps Q(o), 0).
* :func:`histogram_distribution_of_values` ``(values, k, *, epsilon_local) -> P``: law of the
  histogram for an arbitrary list of true values (for worst-case searches over datasets).
* :func:`dataset_values` ``(n, k, n_x0, dataset)``: the true values of the n - 1 other users.

Worst case over datasets and adversary views (Koskela, Heikkila, Honkela, "Tight accounting in the
shuffle model", Def. 1 and Def. 3):

* :func:`histogram_distribution_of_counts` ``(counts, k, *, epsilon_local) -> P``: law of the
  histogram when ``counts[v]`` users hold value v (user-by-user convolution of the k-RR report law;
  equal to :func:`histogram_distribution_of_values` on the same multiset, a test checks it).
* :func:`other_datasets` ``(n, k)``: every dataset of the n - 1 other users, as count vectors
  (all multisets of values, i.e. all tuples of k counts summing to n - 1).
* :func:`true_worst_case_delta` ``(eps, epsilon_local, n, k) -> WorstCase``: max over every
  dataset of the others and both directions of the exact full-histogram delta, with the argmax.
* :func:`weak_adversary_view_distributions` ``(n, k, *, epsilon_local, others=None,
  remove_truthful=True) -> (P0, P1)``: law of the weak adversary's view (Def. 3) by literal
  enumeration of blanket bits and reports; :func:`weak_adversary_view_bruteforce` ``(eps,
  epsilon_local, n, k) -> mpf``: its delta, max of both directions.
* :func:`strong_adversary_view_distributions` / :func:`strong_adversary_view_bruteforce`: the same
  when u's own blanket bit is revealed too (Def. 1).

Conventions (the paper's setting, Biswas, Jung, Palamidessi, arXiv 2022, Section IV): values are
``0 .. k-1``; x0 = 0, x1 = 1, x2 = 2. The distinguished user u holds x0 in D(x0) and x1 in D(x1);
``n_x0`` of the other n - 1 users hold x0. Where the rest hold their values is ``dataset``:

* ``"third"``: all n - 1 - n_x0 on x2 (for k = 2 there is no third value: they hold x1);
* ``"x1"``: all on x1;
* ``"spread"``: round-robin over x2, ..., x_{k-1} (x1 when k = 2).

Each user reports its true value with probability p = e^eps0 / (e^eps0 + k - 1) and each other
value with probability q = 1 / (e^eps0 + k - 1) (k-randomized response). Probabilities are mpmath
``mpf`` numbers at ``dps`` significant digits (default 50); the enumeration is literal (every report
vector, counted exactly with numpy), so keep k^n below about 10^6. The convolutions over datasets
(:func:`histogram_distribution_of_counts`, :func:`true_worst_case_delta`) run on integers in fixed
point (units of 2^-338 at 50 digits: within ~1e-100 of the exact values, converted to mpmath at the
end), about 10x faster than mpmath numbers; on every case the suite uses they equal the
former all-mpmath computation to ~1e-48 relative.

Import from a test file in ``tests/accounting/`` as ``from brute_force import ...`` (pytest's default
"prepend" import mode puts the test file's directory on ``sys.path``).
"""

from __future__ import annotations

import functools
import itertools
import math
from collections import defaultdict
from typing import NamedTuple

import mpmath
import numpy as np
from mpmath.libmp import fzero, mpf_add

__all__ = [
    "DEFAULT_DPS",
    "MAX_VECTORS",
    "dataset_values",
    "histogram_distribution_of_values",
    "histogram_distributions",
    "single_bin_distributions",
    "pair_distributions",
    "hockey_stick",
    "histogram_distribution_of_counts",
    "other_datasets",
    "WorstCase",
    "true_worst_case_delta",
    "weak_adversary_view_distributions",
    "weak_adversary_view_bruteforce",
    "strong_adversary_view_distributions",
    "strong_adversary_view_bruteforce",
]

#: significant decimal digits of the mpmath computations
DEFAULT_DPS = 50
#: refuse enumerations larger than this many report vectors
MAX_VECTORS = 2_000_000

_DATASETS = ("third", "x1", "spread")


def dataset_values(n: int, k: int, n_x0: int, dataset: str = "third") -> list[int]:
    """True values of the n - 1 users other than u (u itself is not included)."""
    if not (isinstance(n, int) and n >= 1):
        raise ValueError(f"`n` must be an integer >= 1; got {n!r}.")
    if not (isinstance(k, int) and k >= 2):
        raise ValueError(f"`k` must be an integer >= 2; got {k!r}.")
    if not (isinstance(n_x0, int) and 0 <= n_x0 <= n - 1):
        raise ValueError(f"`n_x0` must be an integer in [0, {n - 1}]; got {n_x0!r}.")
    if dataset not in _DATASETS:
        raise ValueError(f"`dataset` must be one of {_DATASETS}; got {dataset!r}.")
    rest = n - 1 - n_x0
    if dataset == "x1" or k == 2:
        others = [1] * rest
    elif dataset == "third":
        others = [2] * rest
    else:  # spread
        others = [2 + (i % (k - 2)) for i in range(rest)]
    return [0] * n_x0 + others


def _channel(k: int, epsilon_local) -> list[list[mpmath.mpf]]:
    """k-RR channel matrix W[x][y] = P(report y | true x), in mpmath."""
    e = mpmath.exp(mpmath.mpf(epsilon_local))
    p = e / (e + k - 1)
    q = 1 / (e + k - 1)
    return [[p if x == y else q for y in range(k)] for x in range(k)]


def histogram_distribution_of_values(values, k: int, *, epsilon_local, dps: int = DEFAULT_DPS) -> dict:
    """Law of the shuffled histogram (tuple of k counts) when the users' true values are ``values``.

    Literal enumeration over all k^len(values) report vectors (numpy arrays of the vectors): each
    vector's probability is p^j q^(n - j), j = the number of users who report their own value, so
    the vectors are counted exactly per (histogram, j) and the law is sum_j count * p^j q^(n - j) in
    mpmath.
    """
    values = list(values)
    n = len(values)
    if k**n > MAX_VECTORS:
        raise ValueError(
            f"brute force over k^n = {k}^{n} report vectors exceeds MAX_VECTORS = {MAX_VECTORS}."
        )
    reports = np.indices((k,) * n, dtype=np.int8).reshape(n, k**n).T  # every report vector, one a row
    keys = np.column_stack(
        [(reports == y).sum(axis=1) for y in range(k)]
        + [(reports == np.array(values, dtype=np.int8)).sum(axis=1)]
    )
    rows, multiplicity = np.unique(keys, axis=0, return_counts=True)
    with mpmath.workdps(dps):
        p, q = _channel(k, epsilon_local)[0][:2]  # W[0][0] = p, W[0][1] = q
        law: dict = defaultdict(lambda: mpmath.mpf(0))
        for row, count in zip(rows.tolist(), multiplicity.tolist()):
            law[tuple(row[:k])] += count * p ** row[k] * q ** (n - row[k])
        return dict(law)


def histogram_distributions(
    n: int, k: int, n_x0: int, dataset: str = "third", *, epsilon_local, dps: int = DEFAULT_DPS
) -> tuple[dict, dict]:
    """(P0, P1): laws of the full histogram under D(x0) (u holds x0) and D(x1) (u holds x1)."""
    others = dataset_values(n, k, n_x0, dataset)
    p0 = histogram_distribution_of_values([0] + others, k, epsilon_local=epsilon_local, dps=dps)
    p1 = histogram_distribution_of_values([1] + others, k, epsilon_local=epsilon_local, dps=dps)
    return p0, p1


def _marginal(law: dict, key, dps: int = DEFAULT_DPS) -> dict:
    with mpmath.workdps(dps):
        out: dict = defaultdict(lambda: mpmath.mpf(0))
        for outcome, probability in law.items():
            out[key(outcome)] += probability
        return dict(out)


def single_bin_distributions(
    n: int, k: int, n_x0: int, dataset: str = "third", *, epsilon_local, dps: int = DEFAULT_DPS
) -> tuple[dict, dict]:
    """(P0, P1): laws of the count of bin x0 under D(x0) and D(x1) (Theorem IV.1's query)."""
    p0, p1 = histogram_distributions(n, k, n_x0, dataset, epsilon_local=epsilon_local, dps=dps)
    return _marginal(p0, lambda c: c[0], dps), _marginal(p1, lambda c: c[0], dps)


def pair_distributions(
    n: int, k: int, n_x0: int, dataset: str = "third", *, epsilon_local, dps: int = DEFAULT_DPS
) -> tuple[dict, dict]:
    """(P0, P1): laws of the pair (count of x0, count of x1) under D(x0) and D(x1)."""
    p0, p1 = histogram_distributions(n, k, n_x0, dataset, epsilon_local=epsilon_local, dps=dps)
    return _marginal(p0, lambda c: (c[0], c[1]), dps), _marginal(p1, lambda c: (c[0], c[1]), dps)


def hockey_stick(P: dict, Q: dict, eps, *, dps: int = DEFAULT_DPS) -> mpmath.mpf:
    """H_{e^eps}(P || Q) = sum over outcomes of max(P(o) - e^eps Q(o), 0), in mpmath.

    This is the smallest delta with P(S) <= e^eps Q(S) + delta for every event S (one direction);
    call ``hockey_stick(Q, P, eps)`` for the other.
    """
    with mpmath.workdps(dps):
        factor = mpmath.exp(mpmath.mpf(eps))
        total = mpmath.mpf(0)
        for outcome, probability in P.items():
            gap = mpmath.mpf(probability) - factor * mpmath.mpf(Q.get(outcome, 0))
            if gap > 0:
                total += gap
        return +total


# ------------------------------------------------------------------ worst case over every dataset


def _check_small(n: int, k: int) -> None:
    if not (isinstance(n, int) and n >= 1):
        raise ValueError(f"`n` must be an integer >= 1; got {n!r}.")
    if not (isinstance(k, int) and k >= 2):
        raise ValueError(f"`k` must be an integer >= 2; got {k!r}.")


def _blanket_gamma(k: int, epsilon_local) -> mpmath.mpf:
    """gamma = k q: probability that a user's report is drawn uniformly (the blanket)."""
    return k / (mpmath.exp(mpmath.mpf(epsilon_local)) + k - 1)


def _fixed_bits(dps: int) -> int:
    """Bits of the fixed-point integers of the convolutions below: twice mpmath's working precision at
    ``dps`` digits (338 bits at 50 digits, an absolute resolution of 2^-338 ~ 3e-102)."""
    with mpmath.workdps(dps):
        return 2 * mpmath.mp.prec


def _fixed_channel(k: int, epsilon_local, bits: int) -> list[list[int]]:
    """k-RR channel W[x][y] in fixed point: the integer nearest W[x][y] 2^bits (mpmath, bits + 64 bits)."""
    with mpmath.workprec(bits + 64):
        return [[int(mpmath.nint(mpmath.ldexp(w, bits))) for w in row] for row in _channel(k, epsilon_local)]


def _strides(n: int, k: int) -> list[int]:
    """Histograms of at most n reports are coded as integers sum_y h_y (n + 1)^y: a report y adds (n + 1)^y."""
    return [(n + 1) ** y for y in range(k)]


def _decode(code: int, n: int, k: int) -> tuple[int, ...]:
    """The histogram (h_0, ..., h_{k-1}) of the code of :func:`_strides`."""
    histogram = []
    for _ in range(k):
        code, count = divmod(code, n + 1)
        histogram.append(count)
    return tuple(histogram)


def _add_user(law: dict, row: list[int], strides: list[int], bits: int) -> dict:
    """Fixed-point law of the histogram (coded, :func:`_strides`) after one more user whose report has
    law ``row``: the old histogram plus the report. Products exact, one floor per outcome (< 2^-bits)."""
    new: dict = defaultdict(int)
    steps = list(zip(strides, row))
    for code, probability in law.items():
        for stride, weight in steps:
            new[code + stride] += probability * weight
    return {code: value >> bits for code, value in new.items()}


def _fixed_laws_of_counts(
    total: int,
    channel: list[list[int]],
    strides: list[int],
    bits: int,
    prefix: tuple = (),
    law: dict | None = None,
):
    """Yield (counts, fixed-point law) for every count vector of ``total`` users (lexicographic order).

    Users are added value by value (every user of value 0, then of value 1, ...), one at a time, as in
    :func:`histogram_distribution_of_counts`; vectors with the same first counts share those steps."""
    law = {0: 1 << bits} if law is None else law
    value, left = len(prefix), total - sum(prefix)
    if value == len(channel) - 1:
        for _ in range(left):
            law = _add_user(law, channel[value], strides, bits)
        yield prefix + (left,), law
        return
    for how_many in range(left + 1):
        if how_many:
            law = _add_user(law, channel[value], strides, bits)
        yield from _fixed_laws_of_counts(total, channel, strides, bits, prefix + (how_many,), law)


def histogram_distribution_of_counts(counts, k: int, *, epsilon_local, dps: int = DEFAULT_DPS) -> dict:
    """Law of the shuffled histogram when ``counts[v]`` users hold value v (v = 0 .. k-1).

    Users are added one at a time: the histogram of users 1..j+1 is the histogram of users 1..j plus
    the unit vector of user j+1's report (independent, law W[x] of k-RR). The number of states is at
    most C(n + k - 1, k - 1) (every histogram of n reports). Computed in fixed point (integers in
    units of 2^-bits, :func:`_fixed_bits`: each probability within n 2^-bits ~ 1e-100 of the exact
    one, far below the last of the ``dps`` digits of any probability of these tiny cases), returned as
    mpmath numbers at ``dps`` digits.
    """
    counts = tuple(counts)
    if len(counts) != k or any((not isinstance(c, int)) or c < 0 for c in counts):
        raise ValueError(f"`counts` must be {k} non-negative integers; got {counts!r}.")
    bits, n = _fixed_bits(dps), sum(counts)
    channel, strides = _fixed_channel(k, epsilon_local, bits), _strides(n, k)
    law = {0: 1 << bits}
    for x, how_many in enumerate(counts):
        for _ in range(how_many):
            law = _add_user(law, channel[x], strides, bits)
    with mpmath.workdps(dps):
        return {_decode(code, n, k): mpmath.ldexp(mpmath.mpf(value), -bits) for code, value in law.items()}


def other_datasets(n: int, k: int) -> list[tuple[int, ...]]:
    """Every dataset of the n - 1 users other than u, as a count vector (c_0, ..., c_{k-1}).

    All tuples of k non-negative integers summing to n - 1 (every multiset of values: the shuffled
    histogram depends on the others' data only through these counts). There are C(n + k - 2, k - 1).
    """
    _check_small(n, k)
    total = n - 1
    out = []
    # stars and bars: choose the k - 1 bar positions among total + k - 1 slots
    for bars in itertools.combinations(range(total + k - 1), k - 1):
        edges = (-1,) + bars + (total + k - 1,)
        out.append(tuple(edges[i + 1] - edges[i] - 1 for i in range(k)))
    return out


class WorstCase(NamedTuple):
    """Result of :func:`true_worst_case_delta`."""

    #: max over datasets and directions of the full-histogram delta
    delta: mpmath.mpf
    #: argmax: the others' count vector (c_0, ..., c_{k-1}); the first maximiser in
    #: :func:`other_datasets` order (values within ~1e-90 of each other count as ties)
    others: tuple[int, ...]
    #: argmax direction: "P0||P1" (H(law under D(x0) || law under D(x1))) or "P1||P0"
    direction: str


@functools.lru_cache(maxsize=64)
def _worst_case_laws(epsilon_local, n: int, k: int, bits: int):
    """[(others' counts, P0, P1)] for every dataset of the others, fixed point, histograms coded
    (:func:`_strides`; cached: tests reuse them)."""
    channel, strides = _fixed_channel(k, epsilon_local, bits), _strides(n, k)
    rest = dict(_fixed_laws_of_counts(n - 1, channel, strides, bits))
    # u's value: x0 in D(x0), x1 in D(x1)
    return [
        (counts, *(_add_user(rest[counts], channel[x], strides, bits) for x in (0, 1)))
        for counts in other_datasets(n, k)
    ]


def _fixed_hockey_stick(P: dict, Q: dict, factor: int, bits: int) -> int:
    """sum_o max(P(o) - e^eps Q(o), 0) in units of 2^-(2 bits); ``factor`` = e^eps in units of 2^-bits."""
    total = 0
    for outcome, probability in P.items():
        gap = (probability << bits) - factor * Q.get(outcome, 0)
        if gap > 0:
            total += gap
    return total


def true_worst_case_delta(eps, epsilon_local, n: int, k: int, *, dps: int = DEFAULT_DPS) -> WorstCase:
    """Max over EVERY dataset of the other n - 1 users and both directions of the exact delta.

    The mechanism's output is the shuffled histogram (k counts); for each count vector of the
    others (:func:`other_datasets`) the laws P0 (u holds x0) and P1 (u holds x1) are exact
    (the convolution of :func:`histogram_distribution_of_counts`), and delta = max(H(P0||P1),
    H(P1||P0)). This is the tight replace-one delta of the shuffled k-RR histogram for the pair of
    values (x0, x1); by the symmetry of k-RR every other pair of differing values gives the same
    maximum. Computed in fixed point (2 :func:`_fixed_bits` bits for the hockey-stick sums: the
    returned delta, an mpmath number at ``dps`` digits, is within ~1e-95 of the exact one).
    """
    _check_small(n, k)
    if math.comb(n + k - 2, k - 1) * math.comb(n + k - 1, k - 1) * k > MAX_VECTORS * 10:
        raise ValueError(f"worst case over datasets for n = {n}, k = {k} is too large to enumerate.")
    bits = _fixed_bits(dps)
    with mpmath.workprec(bits + 64):
        factor = int(mpmath.nint(mpmath.ldexp(mpmath.exp(mpmath.mpf(eps)), bits)))
    best, argmax = None, None
    rounding = 1 << (bits + 40)  # 2^-(bits - 40) ~ 1e-90: far above the fixed-point errors; a tie below it
    for counts, p0, p1 in _worst_case_laws(epsilon_local, n, k, bits):
        for direction, (first, second) in (("P0||P1", (p0, p1)), ("P1||P0", (p1, p0))):
            value = _fixed_hockey_stick(first, second, factor, bits)
            if best is None or value > best + rounding:  # the first maximiser (ties up to rounding)
                best, argmax = value, (counts, direction)
    with mpmath.workdps(dps):
        return WorstCase(mpmath.ldexp(mpmath.mpf(best), -2 * bits), *argmax)


# ------------------------------------------------------------------ adversary views (Koskela et al.)


def _adversary_view_distributions(n, k, epsilon_local, others, remove_truthful, reveal_own_bit, dps):
    _check_small(n, k)
    others = list(dataset_values(n, k, 0, "spread") if others is None else others)
    if len(others) != n - 1 or any(not (isinstance(v, int) and 0 <= v < k) for v in others):
        raise ValueError(f"`others` must be {n - 1} values in [0, {k - 1}]; got {others!r}.")
    size = k * (k + 1) ** (n - 1) * (2 if reveal_own_bit else 1)
    if size > MAX_VECTORS:
        raise ValueError(
            f"adversary view enumeration of {size} outcomes exceeds MAX_VECTORS = {MAX_VECTORS}."
        )
    with mpmath.workdps(dps):
        gamma = _blanket_gamma(k, epsilon_local)
        channel = _channel(k, epsilon_local)
        uniform = mpmath.mpf(1) / k
        # u's report law: as k-RR (weak: the bit is not seen), or split into (bit, report) (strong)
        own = []
        for x in (0, 1):
            if reveal_own_bit:
                law = {("blanket", y): gamma * uniform for y in range(k)}
                law[("truthful", x)] = law.get(("truthful", x), 0) + (1 - gamma)
            else:
                law = {(None, y): channel[x][y] for y in range(k)}
            own.append(law)
        # each outcome's probability is summed on mpmath's raw values (libmp's mpf_add at the context's precision
        # and rounding: what mpf's + calls, without its wrapper), from 0 in the order of the enumeration
        prec, rounding = mpmath.mp._prec_rounding
        laws = ({}, {})
        for bits in itertools.product((0, 1), repeat=n - 1):  # 1 = blanket
            blanket = [i for i, bit in enumerate(bits) if bit]
            bits_probability = gamma ** len(blanket) * (1 - gamma) ** (n - 1 - len(blanket))
            truthful_counts = [0] * k
            for i, bit in enumerate(bits):
                if not bit:
                    truthful_counts[others[i]] += 1  # deterministic given the bits and the data
            # one blanket report vector's probability, times each of u's reports: the same for every vector
            # of this bit vector, so formed once here (the same products, added in the same order)
            probability = bits_probability * uniform ** len(blanket)
            products = [
                [
                    (own_bit, y, (probability * own_probability)._mpf_)
                    for (own_bit, y), own_probability in law.items()
                ]
                for law in own
            ]
            for blanket_reports in itertools.product(range(k), repeat=len(blanket)):
                counts = [0] * k
                for y in blanket_reports:
                    counts[y] += 1
                if not remove_truthful:
                    counts = [a + b for a, b in zip(counts, truthful_counts)]
                for terms, out in zip(products, laws):
                    for own_bit, y, product in terms:
                        seen = list(counts)
                        seen[y] += 1
                        key = (bits, own_bit, tuple(seen)) if reveal_own_bit else (bits, tuple(seen))
                        out[key] = mpf_add(out.get(key, fzero), product, prec, rounding)
        return tuple({key: mpmath.mp.make_mpf(value) for key, value in law.items()} for law in laws)


def weak_adversary_view_distributions(
    n: int, k: int, *, epsilon_local, others=None, remove_truthful: bool = True, dps: int = DEFAULT_DPS
) -> tuple[dict, dict]:
    """(P0, P1): law of the weak adversary's view (Koskela et al., Def. 3), literal enumeration.

    The adversary knows the others' data ``others`` (n - 1 values; default: spread over x2.. as in
    :func:`dataset_values`) and their blanket bits (each 1 w.p. gamma = k q, independently). A
    blanket other reports uniformly over the k values; a truthful other reports its value. u's bit is
    NOT seen: u's report is k-RR of x0 (P0) or x1 (P1). Enumerated: every bit vector, every report
    of every blanket other, every report of u.

    View: ``(bits, histogram)``. With ``remove_truthful=True`` the histogram is of the reports that
    remain after removing the truthful others' (known) reports -- blanket others' and u's -- and
    its law does not depend on ``others`` at all. With ``remove_truthful=False`` it is the full
    shuffled histogram; given ``bits`` and ``others`` the two are in bijection, so both give the
    same hockey-stick divergence (a test checks both facts).
    """
    return _adversary_view_distributions(n, k, epsilon_local, others, remove_truthful, False, dps)


def strong_adversary_view_distributions(
    n: int, k: int, *, epsilon_local, others=None, remove_truthful: bool = True, dps: int = DEFAULT_DPS
) -> tuple[dict, dict]:
    """(P0, P1): law of the strong adversary's view (Koskela et al., Def. 1): as
    :func:`weak_adversary_view_distributions`, but u's blanket bit is revealed too. View:
    ``(bits, u's bit in {"blanket", "truthful"}, histogram)``; u blanket reports uniformly, u
    truthful reports its value (x0 under P0, x1 under P1)."""
    return _adversary_view_distributions(n, k, epsilon_local, others, remove_truthful, True, dps)


def _both_directions(p0: dict, p1: dict, eps, dps: int) -> mpmath.mpf:
    return max(hockey_stick(p0, p1, eps, dps=dps), hockey_stick(p1, p0, eps, dps=dps))


@functools.lru_cache(maxsize=64)
def _weak_laws(epsilon_local, n, k, dps):
    return weak_adversary_view_distributions(n, k, epsilon_local=epsilon_local, dps=dps)


@functools.lru_cache(maxsize=64)
def _strong_laws(epsilon_local, n, k, dps):
    return strong_adversary_view_distributions(n, k, epsilon_local=epsilon_local, dps=dps)


def weak_adversary_view_bruteforce(
    eps, epsilon_local, n: int, k: int, *, dps: int = DEFAULT_DPS
) -> mpmath.mpf:
    """Delta of the weak adversary's view (Def. 3), max of both directions, by literal enumeration."""
    return _both_directions(*_weak_laws(epsilon_local, n, k, dps), eps, dps)


def strong_adversary_view_bruteforce(
    eps, epsilon_local, n: int, k: int, *, dps: int = DEFAULT_DPS
) -> mpmath.mpf:
    """Delta of the strong adversary's view (Def. 1), max of both directions, by literal enumeration."""
    return _both_directions(*_strong_laws(epsilon_local, n, k, dps), eps, dps)
