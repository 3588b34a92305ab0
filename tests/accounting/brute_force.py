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

import itertools
from collections import defaultdict

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
