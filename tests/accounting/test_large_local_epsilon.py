"""Validity at large eps0 (15 .. 50), where cancellations can break three bounds.

References, each able to fail (each failed before the fix, with the numbers in the comments):
* the exact k = 3 worst case over every dataset (``k3_worst_case``), itself checked here against the
  50-digit brute force of the dataset "every other user on x2" at eps0 = 30;
* an upper bound must be at or above it, a lower bound at or below it.
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from brute_force import histogram_distribution_of_counts, hockey_stick

from shuffledp.accounting import get_accountant
from shuffledp.accounting.worst_case.exact.enumeration import k3_worst_case
from shuffledp.accounting.worst_case.k3.blocks import K3BlockSearch

FRACTIONS = (0.3, 0.5, 0.8, 0.9, 0.95, 0.99)


def test_exact_k3_laws_match_the_brute_force_at_eps0_30():
    """The laws once wrote 1 - p - q for q: at eps0 = 40 that difference is -q (negative probabilities)."""
    n, e0, eps = 10, 30.0, 28.5
    P = histogram_distribution_of_counts((1, 0, n - 1), 3, epsilon_local=mpmath.mpf(e0))
    Q = histogram_distribution_of_counts((0, 1, n - 1), 3, epsilon_local=mpmath.mpf(e0))
    truth = float(hockey_stick(P, Q, mpmath.mpf(eps)))
    upper, lower = K3BlockSearch(n_users=n, epsilon_local=e0)._leaf(0, 0, eps)
    assert lower <= truth <= upper and upper == pytest.approx(truth, rel=1e-12)


@pytest.mark.parametrize("e0", [15.0, 19.0, 24.0, 28.0, 36.0, 40.0, 50.0])
def test_upper_bounds_are_above_and_the_lower_bound_below_the_exact_worst_case(e0):
    """Before: weak-adversary below the exact value by 1e-10 (eps0 = 15) .. 4e-6 (24) .. 0.5 (38) in delta;
    worst-case-lower's "none" member above it by 1.5e-3 at eps0 = 30, eps = 0.95 eps0."""
    n = 10
    eps = np.array(FRACTIONS) * e0
    exact = [k3_worst_case(float(x), n_users=n, epsilon_local=e0) for x in eps]
    for name in ("weak-adversary", "worst-case-upper"):
        values = np.exp(get_accountant(name, epsilon_local=e0, n_users=n, k=3).log_delta_for_epsilon(eps))
        assert all(v >= w.lower * (1 - 1e-12) for v, w in zip(values, exact)), (name, values, exact)
    lower = np.exp(
        get_accountant("worst-case-lower", epsilon_local=e0, n_users=n, k=3).log_delta_for_epsilon(eps)
    )
    assert all(v <= w.upper * (1 + 1e-12) for v, w in zip(lower, exact)), (lower, exact)


@pytest.mark.parametrize("e0,f", [(16.0, 0.95), (25.0, 0.83), (30.0, 0.95)])
def test_the_none_member_stays_below_its_exact_dataset(e0, f):
    n, eps = 10, f * e0
    none = math.exp(
        get_accountant("worst-case-lower", epsilon_local=e0, n_users=n, k=3).member_log_deltas(eps)["none"]
    )
    assert (
        none <= K3BlockSearch(n_users=n, epsilon_local=e0)._leaf(0, 0, eps)[0]
    )  # its exact delta, certified from above


@pytest.mark.parametrize("n,k", [(300, 10), (10**5, 3)])
def test_above_eps0_14_the_sums_are_kept_and_bracketed(n, k):
    """Above eps0 = 14 the weak and strong sums are kept (no fallback to u's own report, which gives no
    amplification): each between the lower bound and, for the weak adversary, u's own report's delta
    (p - e^eps q)_+ (a valid bound for every dataset), the strong adversary at or above the weak."""
    e0 = 20.0
    eps = np.array([0.0, 10.0, 19.0, 20.0, 25.0])
    p = math.exp(e0) / (math.exp(e0) + k - 1)
    local = np.array([max(p * (1 - math.exp(x - e0)), 0.0) for x in eps])
    weak, strong, lower = (
        get_accountant(name, epsilon_local=e0, n_users=n, k=k).delta_for_epsilon(eps)
        for name in ("weak-adversary", "strong-adversary", "worst-case-lower")
    )
    assert (
        np.all(weak <= local) and np.all(lower <= weak * (1 + 1e-12)) and np.all(weak <= strong * (1 + 1e-12))
    )
    assert weak[1] < local[1] * (
        1 - 1e-7
    )  # some amplification kept at eps = eps0 / 2 (before: equal to local)


@pytest.mark.parametrize("n,e0", [(10**8, 14.5), (10**8, 15.0), (10**11, 20.0)])
def test_the_bracket_at_large_eps0_keeps_the_amplification(n, e0):
    """At k = 10, delta = 1e-6 (eps0 = 14.5, 15, 20; lower ends 0.898, 1.259, 0.397) the two ends agree to
    1e-6 relative (upper >= lower) and the upper is far below eps0."""
    upper = get_accountant("worst-case-upper", epsilon_local=e0, n_users=n, k=10).epsilon_for_delta(1e-6)
    lower = get_accountant("worst-case-lower", epsilon_local=e0, n_users=n, k=10).epsilon_for_delta(1e-6)
    assert lower <= upper <= lower * (1 + 1e-6) and upper < 0.1 * e0
