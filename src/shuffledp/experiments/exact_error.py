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
from scipy.special import gammaln, xlog1py, xlogy

from shuffledp.mechanisms import geometric_moments, krr_probabilities

__all__ = [
    "NEGLECTED_MASS",
    "ExpectedError",
    "binomial_window",
    "binomial_sum_mean_absolute_deviation",
    "krr_inv_expected_error",
    "gaussian_expected_error",
    "geometric_expected_error",
]

#: largest probability mass of the summed binomial left outside its window (Bernstein bound)
NEGLECTED_MASS = 1e-30
#: largest number of (cell, window point) pairs evaluated at once (memory of one chunk)
_CHUNK_POINTS = 2_000_000


class ExpectedError(tuple):
    """(tv, squared_l2): expected TV distance and expected squared L2 error of an estimator."""

    __slots__ = ()

    def __new__(cls, tv: float, squared_l2: float):
        return super().__new__(cls, (float(tv), float(squared_l2)))

    @property
    def tv(self) -> float:
        return self[0]

    @property
    def squared_l2(self) -> float:
        return self[1]


def binomial_window(
    trials, probability, *, neglected_mass: float = NEGLECTED_MASS
) -> tuple[np.ndarray, np.ndarray]:
    """Integer windows [low, high] of Bin(trials, probability), vectorised, outside mass <= ``neglected_mass``.

    Bernstein: P(|A - m r| >= s) <= 2 exp(-s^2 / (2 (v + s/3))), v = m r (1 - r); the window's half
    width s = L/3 + sqrt(L^2/9 + 2 L v), L = log(2 / neglected_mass), meets it with equality.
    """
    trials = np.asarray(trials, dtype=float)
    probability = np.asarray(probability, dtype=float)
    log_ratio = math.log(2.0 / neglected_mass)
    variance = trials * probability * (1.0 - probability)
    half = log_ratio / 3.0 + np.sqrt(log_ratio**2 / 9.0 + 2.0 * log_ratio * variance)
    mean = trials * probability
    low = np.clip(np.floor(mean - half), 0, trials)
    high = np.clip(np.ceil(mean + half), 0, trials)
    return low.astype(np.int64), high.astype(np.int64)


def _binomial_pmf_rows(low, high, trials, probability, width: int) -> tuple[np.ndarray, np.ndarray]:
    """Rows of Bin(trials, probability)'s pmf on [low, low + width) (zero past ``high``), and the offsets."""
    offsets = np.arange(width)
    values = low[:, None] + offsets[None, :]
    inside = values <= high[:, None]
    values = np.where(inside, values, low[:, None])  # padding: any point of the support (masked below)
    trials, probability = trials[:, None], probability[:, None]
    log_pmf = (
        gammaln(trials + 1.0)
        - gammaln(values + 1.0)
        - gammaln(np.maximum(trials - values, 0) + 1.0)
        + xlogy(values, probability)
        + xlog1py(trials - values, -probability)
    )
    return np.where(inside, np.exp(log_pmf), 0.0), offsets


def binomial_sum_mean_absolute_deviation(
    summed_trials, summed_probability, other_trials, other_probability
) -> np.ndarray:
    """E|A + B - E(A + B)| for independent A ~ Bin(summed_trials, summed_probability) and B ~ Bin(other_trials,
    other_probability), elementwise over equal-shape 1-d arrays.

    Both laws on their windows (:func:`binomial_window`). For each a of A's window, with t = mu - a and
    F, G the cumulative sums of P(B = b) and (b - low_B) P(B = b) over B's window,
    sum_b P(b) |b - t| = (G_end - t' F_end) + 2 (t' F(floor t) - G(floor t)), t' = t - low_B (centred, so
    no cancellation at large n). O(width_A + width_B) per cell; vectorised over cells in chunks.
    """
    summed_trials = np.asarray(summed_trials, dtype=np.int64)
    other_trials = np.asarray(other_trials, dtype=np.int64)
    summed_probability = np.broadcast_to(np.asarray(summed_probability, dtype=float), summed_trials.shape)
    other_probability = np.broadcast_to(np.asarray(other_probability, dtype=float), summed_trials.shape)
    total_mean = summed_trials * summed_probability + other_trials * other_probability
    low_a, high_a = binomial_window(summed_trials, summed_probability)
    low_b, high_b = binomial_window(other_trials, other_probability)
    width_a = int((high_a - low_a).max()) + 1 if summed_trials.size else 1
    width_b = int((high_b - low_b).max()) + 1 if summed_trials.size else 1
    result = np.empty(summed_trials.shape, dtype=float)
    rows = max(1, _CHUNK_POINTS // (width_a + width_b))
    for start in range(0, summed_trials.size, rows):
        part = slice(start, start + rows)
        pmf_a, offsets_a = _binomial_pmf_rows(
            low_a[part], high_a[part], summed_trials[part], summed_probability[part], width_a
        )
        pmf_b, offsets_b = _binomial_pmf_rows(
            low_b[part], high_b[part], other_trials[part], other_probability[part], width_b
        )
        cumulative = np.cumsum(pmf_b, axis=1)
        first_moment = np.cumsum(offsets_b[None, :] * pmf_b, axis=1)
        centred = (total_mean[part, None] - low_a[part, None] - offsets_a[None, :]) - low_b[part, None]  # t'
        index = np.floor(centred)
        inside = np.clip(index, 0, width_b - 1).astype(np.int64)
        below = np.where(index < 0, 0.0, np.take_along_axis(cumulative, inside, axis=1))
        below_moment = np.where(index < 0, 0.0, np.take_along_axis(first_moment, inside, axis=1))
        deviation = (first_moment[:, -1:] - centred * cumulative[:, -1:]) + 2.0 * (
            centred * below - below_moment
        )
        result[part] = np.sum(pmf_a * deviation, axis=1)
    return result


def krr_inv_expected_error(counts, *, epsilon_local: float) -> ExpectedError:
    """Exact E TV and E squared L2 of unprojected INV on the k-RR histogram of ``counts`` at ``epsilon_local``.

    Distinct cell counts are evaluated once. Per cell the smaller binomial (by variance) is summed over its
    window, the other is taken in closed form (module docstring).
    """
    counts = np.asarray(counts, dtype=np.int64)
    n_users, k = int(counts.sum()), counts.size
    p, q = krr_probabilities(k, epsilon_local)
    distinct, multiplicity = np.unique(counts, return_counts=True)
    others = n_users - distinct
    keep_variance = distinct * p * (1 - p)
    other_variance = others * q * (1 - q)
    swap = keep_variance > other_variance  # sum over the narrower law
    summed_trials = np.where(swap, others, distinct)
    summed_probability = np.where(swap, q, p)
    other_trials = np.where(swap, distinct, others)
    other_probability = np.where(swap, p, q)
    deviation = binomial_sum_mean_absolute_deviation(
        summed_trials, summed_probability, other_trials, other_probability
    )
    scale = n_users * (p - q)
    tv = 0.5 * float(np.sum(multiplicity * deviation)) / scale
    squared_l2 = float(np.sum(multiplicity * (keep_variance + other_variance))) / scale**2
    return ExpectedError(tv, squared_l2)


def gaussian_expected_error(*, k: int, n_users: int, sigma: float) -> ExpectedError:
    """E TV = k sigma sqrt(2/pi) / (2 n) and E squared L2 = k sigma^2 / n^2 of N(0, sigma^2) noise per cell."""
    return ExpectedError(0.5 * k * sigma * math.sqrt(2.0 / math.pi) / n_users, k * sigma**2 / n_users**2)


def geometric_expected_error(*, k: int, n_users: int, alpha: float) -> ExpectedError:
    """E TV = k (2 alpha / (1 - alpha^2)) / (2 n) and E squared L2 = k (2 alpha / (1 - alpha)^2) / n^2."""
    moments = geometric_moments(alpha)
    return ExpectedError(0.5 * k * moments["mean_absolute"] / n_users, k * moments["variance"] / n_users**2)
