"""Exact expected errors of the unprojected histogram estimators: no simulation.

Every estimator here is unbiased and acts cell by cell, so its expected TV distance to the true
distribution pi is (1/2) sum_x E|pi_hat_x - pi_x| and its expected squared L2 error is
sum_x Var(pi_hat_x); each cell's error has a known one-dimensional law.

* **k-RR + INV** (shuffled at eps0, or local k-RR at eps0 = eps: the aggregator sees the same
  histogram). Cell x's reported count is Y_x = A + B with A ~ Bin(c_x, p) (users truly in x who report
  it) and B ~ Bin(n - c_x, q) (the others), independent; INV gives pi_hat_x - pi_x = (Y_x - mu_x) /
  (n (p - q)), mu_x = c_x p + (n - c_x) q. So E|pi_hat_x - pi_x| = E|A + B - mu_x| / (n (p - q)),
  computed by summing over A's law on a window and, for each a, E|B - t| (t = mu_x - a) from the
  cumulative sums of B's pmf and first moment on its window (:func:`binomial_sum_mean_absolute_deviation`):
  O(window) per cell, vectorised over the distinct cell counts. Each window is chosen with Bernstein's
  inequality P(|A - EA| >= s) <= 2 exp(-s^2 / (2 (Var A + s / 3))) so that the mass left out is at
  most :data:`NEGLECTED_MASS` (1e-30) per binomial: the sum errs *low*, by at most 4 n NEGLECTED_MASS
  counts per cell. Var(Y_x) = c_x p (1 - p) + (n - c_x) q (1 - q).
* **Gaussian** N(0, sigma^2) per cell on the counts: E|.| = sigma sqrt(2 / pi), so E TV = k sigma
  sqrt(2/pi) / (2 n) and E squared L2 = k sigma^2 / n^2.
* **Two-sided geometric** with parameter alpha: E|Z| = 2 alpha / (1 - alpha^2) and Var Z = 2 alpha /
  (1 - alpha)^2 (:func:`shuffledp.mechanisms.geometric_moments`), so E TV = k E|Z| / (2 n).
"""

from __future__ import annotations

import math

import numpy as np

from shuffledp.accounting.randomizers import KRR
from shuffledp.accounting.randomizers.counts import (
    NEGLECTED_MASS,
    ExpectedError,
    binomial_sum_mean_absolute_deviation,
    binomial_window,
)
from shuffledp.mechanisms import geometric_moments

__all__ = [
    "NEGLECTED_MASS",
    "ExpectedError",
    "binomial_window",
    "binomial_sum_mean_absolute_deviation",
    "krr_inv_expected_error",
    "gaussian_expected_error",
    "geometric_expected_error",
]


def krr_inv_expected_error(counts, *, epsilon_local: float) -> ExpectedError:
    """Exact E TV and E squared L2 of unprojected INV on the k-RR histogram of ``counts`` at ``epsilon_local``:
    :meth:`shuffledp.accounting.randomizers.KRR.expected_error` of k-RR(epsilon_local, k = len(counts))."""
    counts = np.asarray(counts, dtype=np.int64)
    return KRR(epsilon_local=epsilon_local, k=counts.size).expected_error(counts)


def gaussian_expected_error(*, k: int, n_users: int, sigma: float) -> ExpectedError:
    """E TV = k sigma sqrt(2/pi) / (2 n) and E squared L2 = k sigma^2 / n^2 of N(0, sigma^2) noise per cell."""
    return ExpectedError(0.5 * k * sigma * math.sqrt(2.0 / math.pi) / n_users, k * sigma**2 / n_users**2)


def geometric_expected_error(*, k: int, n_users: int, alpha: float) -> ExpectedError:
    """E TV = k (2 alpha / (1 - alpha^2)) / (2 n) and E squared L2 = k (2 alpha / (1 - alpha)^2) / n^2."""
    moments = geometric_moments(alpha)
    return ExpectedError(0.5 * k * moments["mean_absolute"] / n_users, k * moments["variance"] / n_users**2)
