"""Exact full-histogram deltas on tiny cases, shared by the prior-bound tests (cached per process).

The truth is the brute-force enumeration of :mod:`brute_force` (all k^n report vectors, mpmath):
``max(H(P0 || P1), H(P1 || P0))`` for the full shuffled histogram, for several datasets (n_x0 others
on x0, the rest on a third value / on x1 / spread), i.e. both directions of each neighbouring pair.
An UPPER bound valid for all neighbouring datasets must be >= each of these.
"""

from __future__ import annotations

import functools

from brute_force import histogram_distributions, hockey_stick

#: (n, k, n_x0, dataset, epsilon_local): small enough to enumerate, covering k = 2, 3, 4, n_x0 = 0,
#: n_x0 = n - 1 and intermediate values, and the three dataset shapes
CASES = [
    (6, 2, 0, "x1", 0.5),
    (6, 2, 3, "x1", 2.0),
    (6, 2, 5, "x1", 1.0),
    (7, 3, 0, "third", 1.0),
    (7, 3, 3, "third", 0.3),
    (7, 3, 6, "x1", 1.0),
    (7, 3, 2, "x1", 2.5),
    (6, 4, 2, "spread", 1.5),
    (5, 4, 0, "spread", 3.0),
]

#: epsilons at which the bounds are compared (include 0 and values above eps0)
EPSILONS = (0.0, 0.05, 0.2, 0.5, 1.0, 1.8, 3.5)


@functools.cache
def exact_histogram_deltas(
    n: int, k: int, n_x0: int, dataset: str, epsilon_local: float
) -> tuple[float, ...]:
    """Full-histogram delta, maximum over both directions, at each of :data:`EPSILONS`."""
    p0, p1 = histogram_distributions(n, k, n_x0, dataset, epsilon_local=epsilon_local)
    return tuple(float(max(hockey_stick(p0, p1, eps), hockey_stick(p1, p0, eps))) for eps in EPSILONS)


#: moderate cases for the ``histogram-exact`` accountant (exact full-histogram delta for the dataset
#: "n_x0 others on x0, the rest on x2", both directions; validated against brute force in its tests)
MODERATE_CASES = [
    (40, 3, 0, 1.0),
    (40, 3, 39, 1.0),
    (80, 10, 8, 0.49),
    (100, 10, 80, 0.49),  # the paper's Table II setting at n = 100
    (120, 4, 60, 2.0),
    (60, 2, 30, 0.35),
]

#: epsilons for the moderate cases
MODERATE_EPSILONS = (0.0, 0.01, 0.1, 0.2, 0.3, 0.4, 0.7, 1.5)


@functools.cache
def histogram_exact_deltas(n: int, k: int, n_x0: int, epsilon_local: float) -> tuple[float, ...]:
    """``histogram-exact`` delta (max of both directions) at each of :data:`MODERATE_EPSILONS`."""
    from shuffledp.accounting import get_accountant

    accountant = get_accountant(
        "histogram-exact", epsilon_local=epsilon_local, n_users=n, k=k, n_x0=n_x0, direction="both"
    )
    return tuple(float(d) for d in accountant.delta_for_epsilon(MODERATE_EPSILONS))
