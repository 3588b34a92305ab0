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
``mpf`` numbers at ``dps`` significant digits (default 50); the enumeration is literal (itertools
over every report vector), so keep k^n below about 10^5.

Import from a test file in ``tests/accounting/`` as ``from brute_force import ...`` (pytest's default
"prepend" import mode puts the test file's directory on ``sys.path``).
"""

from __future__ import annotations

import functools
import math
import itertools
from collections import defaultdict
from typing import NamedTuple

import mpmath

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

    Literal enumeration over all k^len(values) report vectors.
    """
    values = list(values)
    if k ** len(values) > MAX_VECTORS:
        raise ValueError(
            f"brute force over k^n = {k}^{len(values)} report vectors exceeds MAX_VECTORS = {MAX_VECTORS}."
        )
    with mpmath.workdps(dps):
        channel = _channel(k, epsilon_local)
        law: dict = defaultdict(lambda: mpmath.mpf(0))
        for reports in itertools.product(range(k), repeat=len(values)):
            probability = mpmath.mpf(1)
            for x, y in zip(values, reports):
                probability *= channel[x][y]
            counts = [0] * k
            for y in reports:
                counts[y] += 1
            law[tuple(counts)] += probability
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


def histogram_distribution_of_counts(counts, k: int, *, epsilon_local, dps: int = DEFAULT_DPS) -> dict:
    """Law of the shuffled histogram when ``counts[v]`` users hold value v (v = 0 .. k-1).

    Users are added one at a time: the histogram of users 1..j+1 is the histogram of users 1..j plus
    the unit vector of user j+1's report (independent, law W[x] of k-RR). Exact, in mpmath; the
    number of states is at most C(n + k - 1, k - 1) (every histogram of n reports).
    """
    counts = tuple(counts)
    if len(counts) != k or any((not isinstance(c, int)) or c < 0 for c in counts):
        raise ValueError(f"`counts` must be {k} non-negative integers; got {counts!r}.")
    with mpmath.workdps(dps):
        channel = _channel(k, epsilon_local)
        law: dict = {tuple([0] * k): mpmath.mpf(1)}
        for x, how_many in enumerate(counts):
            for _ in range(how_many):
                new: dict = defaultdict(lambda: mpmath.mpf(0))
                for histogram, probability in law.items():
                    for y in range(k):
                        bumped = list(histogram)
                        bumped[y] += 1
                        new[tuple(bumped)] += probability * channel[x][y]
                law = dict(new)
        return law


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
    #: :func:`other_datasets` order
    others: tuple[int, ...]
    #: argmax direction: "P0||P1" (H(law under D(x0) || law under D(x1))) or "P1||P0"
    direction: str


@functools.lru_cache(maxsize=64)
def _worst_case_laws(epsilon_local, n: int, k: int, dps: int):
    """[(others' counts, P0, P1)] for every dataset of the others (cached: tests reuse them)."""
    laws = []
    with mpmath.workdps(dps):
        channel = _channel(k, epsilon_local)
        for counts in other_datasets(n, k):
            rest = histogram_distribution_of_counts(counts, k, epsilon_local=epsilon_local, dps=dps)
            pair = []
            for x in (0, 1):  # u's value: x0 in D(x0), x1 in D(x1)
                law: dict = defaultdict(lambda: mpmath.mpf(0))
                for histogram, probability in rest.items():
                    for y in range(k):
                        bumped = list(histogram)
                        bumped[y] += 1
                        law[tuple(bumped)] += probability * channel[x][y]
                pair.append(dict(law))
            laws.append((counts, pair[0], pair[1]))
    return laws


def true_worst_case_delta(eps, epsilon_local, n: int, k: int, *, dps: int = DEFAULT_DPS) -> WorstCase:
    """Max over EVERY dataset of the other n - 1 users and both directions of the exact delta.

    The mechanism's output is the shuffled histogram (k counts); for each count vector of the
    others (:func:`other_datasets`) the laws P0 (u holds x0) and P1 (u holds x1) are exact
    (:func:`histogram_distribution_of_counts`), and delta = max(H(P0||P1), H(P1||P0)). This is the
    tight replace-one delta of the shuffled k-RR histogram for the pair of values (x0, x1); by the
    symmetry of k-RR every other pair of differing values gives the same maximum.
    """
    _check_small(n, k)
    if math.comb(n + k - 2, k - 1) * math.comb(n + k - 1, k - 1) * k > MAX_VECTORS * 10:
        raise ValueError(f"worst case over datasets for n = {n}, k = {k} is too large to enumerate.")
    best = None
    for counts, p0, p1 in _worst_case_laws(epsilon_local, n, k, dps):
        for direction, (first, second) in (("P0||P1", (p0, p1)), ("P1||P0", (p1, p0))):
            value = hockey_stick(first, second, eps, dps=dps)
            if best is None or value > best.delta:
                best = WorstCase(value, counts, direction)
    return best


# ------------------------------------------------------------------ adversary views (Koskela et al.)


def _adversary_view_distributions(n, k, epsilon_local, others, remove_truthful, reveal_own_bit, dps):
    _check_small(n, k)
    others = list(dataset_values(n, k, 0, "spread") if others is None else others)
    if len(others) != n - 1 or any(not (isinstance(v, int) and 0 <= v < k) for v in others):
        raise ValueError(f"`others` must be {n - 1} values in [0, {k - 1}]; got {others!r}.")
    size = k * (k + 1) ** (n - 1) * (2 if reveal_own_bit else 1)
    if size > MAX_VECTORS:
        raise ValueError(f"adversary view enumeration of {size} outcomes exceeds MAX_VECTORS = {MAX_VECTORS}.")
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
        laws = (defaultdict(lambda: mpmath.mpf(0)), defaultdict(lambda: mpmath.mpf(0)))
        for bits in itertools.product((0, 1), repeat=n - 1):  # 1 = blanket
            blanket = [i for i, bit in enumerate(bits) if bit]
            bits_probability = gamma ** len(blanket) * (1 - gamma) ** (n - 1 - len(blanket))
            truthful_counts = [0] * k
            for i, bit in enumerate(bits):
                if not bit:
                    truthful_counts[others[i]] += 1  # deterministic given the bits and the data
            for blanket_reports in itertools.product(range(k), repeat=len(blanket)):
                probability = bits_probability * uniform ** len(blanket)
                counts = [0] * k
                for y in blanket_reports:
                    counts[y] += 1
                if not remove_truthful:
                    counts = [a + b for a, b in zip(counts, truthful_counts)]
                for law, out in zip(own, laws):
                    for (own_bit, y), own_probability in law.items():
                        seen = list(counts)
                        seen[y] += 1
                        key = (bits, own_bit, tuple(seen)) if reveal_own_bit else (bits, tuple(seen))
                        out[key] += probability * own_probability
        return dict(laws[0]), dict(laws[1])


def weak_adversary_view_distributions(n: int, k: int, *, epsilon_local, others=None, remove_truthful: bool = True,
                                      dps: int = DEFAULT_DPS) -> tuple[dict, dict]:
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


def strong_adversary_view_distributions(n: int, k: int, *, epsilon_local, others=None, remove_truthful: bool = True,
                                        dps: int = DEFAULT_DPS) -> tuple[dict, dict]:
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


def weak_adversary_view_bruteforce(eps, epsilon_local, n: int, k: int, *, dps: int = DEFAULT_DPS) -> mpmath.mpf:
    """Delta of the weak adversary's view (Def. 3), max of both directions, by literal enumeration."""
    return _both_directions(*_weak_laws(epsilon_local, n, k, dps), eps, dps)


def strong_adversary_view_bruteforce(eps, epsilon_local, n: int, k: int, *, dps: int = DEFAULT_DPS) -> mpmath.mpf:
    """Delta of the strong adversary's view (Def. 1), max of both directions, by literal enumeration."""
    return _both_directions(*_strong_laws(epsilon_local, n, k, dps), eps, dps)
