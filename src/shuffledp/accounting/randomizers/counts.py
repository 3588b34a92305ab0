"""The shuffled reports as counts, and what every randomizer's sampler, estimator and exact error share.

The shuffled multiset of n reports is a vector of counts over the randomizer's outputs (k-RR: the k
values; a randomizer whose report is a vector, e.g. unary encoding, would sum them). This module holds
the pieces every :class:`~shuffledp.accounting.randomizers.Randomizer` uses for it:

* :func:`check_counts` and :func:`check_rng`: a true histogram of non-negative integers, a numpy Generator;
* :func:`sample_through_channel`: the shuffled counts of a randomizer with a finite channel C (k x d,
  C[x, y] = P(report y | input x)): the users holding x report Multinomial(c_x, C[x]) independently
  across x, and the counts are the sum over x. O(size k d), whatever the number of users;
* :func:`as_rows` and :func:`normalise_counts`: reports as frequencies along the last axis;
* :class:`ExpectedError`: (l1_half, squared_l2), the expected half L1 error (total variation distance for a distribution) (None where no exact
  formula is known: callers then use Monte Carlo with its standard error) and expected squared L2 error;
* :func:`channel_squared_error`: the exact E ||pi_hat - pi||^2 of the unbiased estimate pi_hat = f C^+ of any
  finite channel of full row rank: trace(C^+T Cov(Y) C^+) / n^2, Cov(Y) = sum_x c_x (diag C[x] - C[x]^T C[x]);
* :func:`binomial_window` and :func:`binomial_sum_mean_absolute_deviation`: E|A + B - E(A + B)| of two
  independent binomials, exactly on windows whose left-out mass is at most :data:`NEGLECTED_MASS` (k-RR's
  exact expected TV, :meth:`shuffledp.accounting.randomizers.KRR.expected_error`).
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import gammaln, xlog1py, xlogy

from shuffledp._validation import check_integer

__all__ = [
    "NEGLECTED_MASS",
    "ExpectedError",
    "check_counts",
    "check_rng",
    "sample_through_channel",
    "as_rows",
    "normalise_counts",
    "channel_squared_error",
    "binomial_window",
    "binomial_sum_mean_absolute_deviation",
]

#: largest probability mass of the summed binomial left outside its window (Bernstein bound)
NEGLECTED_MASS = 1e-30
#: largest number of (cell, window point) pairs evaluated at once (memory of one chunk)
_CHUNK_POINTS = 2_000_000


def check_counts(counts, name: str = "counts", *, k: int | None = None) -> np.ndarray:
    """``counts`` as a 1-d int64 array of at least 2 non-negative integers (exactly ``k`` when given).

    Raises:
        ValueError: not 1-d, fewer than 2 bins, a negative, non-finite or fractional entry, or not ``k`` bins.
        TypeError: a non-numeric or complex dtype.
    """
    array = np.asarray(counts)
    if array.ndim != 1 or array.size < 2:
        raise ValueError(f"`{name}` must be a 1-d array of at least 2 bin counts; got shape {array.shape}.")
    if not np.issubdtype(array.dtype, np.number) or np.issubdtype(array.dtype, np.complexfloating):
        raise TypeError(f"`{name}` must hold non-negative integers; got dtype {array.dtype}.")
    if np.any(~np.isfinite(array)) or np.any(array < 0) or np.any(array != np.round(array)):
        bad = array[np.argmax(~np.isfinite(array) | (array < 0) | (array != np.round(array)))]
        raise ValueError(f"`{name}` must hold non-negative integers; got {bad.item()!r}.")
    if k is not None and array.size != k:
        raise ValueError(
            f"`{name}` must hold k = {k} bin counts (the randomizer's domain); got {array.size}."
        )
    return array.astype(np.int64)


def check_rng(rng) -> np.random.Generator:
    """``rng`` itself if it is a numpy Generator.

    Raises:
        TypeError: anything else.
    """
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"`rng` must be a numpy.random.Generator; got {type(rng).__name__}.")
    return rng


def sample_through_channel(
    channel, counts, *, rng: np.random.Generator, size: int | None = None
) -> np.ndarray:
    """The shuffled counts of ``counts`` (true histogram) through ``channel`` (k x d, rows sum to 1).

    Args:
        channel: C[x, y] = P(report y | input x).
        counts: the true histogram, k non-negative integers.
        rng: the numpy Generator drawn from (one ``multinomial`` call).
        size: None for one draw of shape (d,); else ``size`` independent draws, shape (size, d).

    Returns:
        The counts of each report over the n users.
    """
    counts = np.asarray(counts, dtype=np.int64)
    replicates = 1 if size is None else check_integer(size, "size", low=1)
    # Only the values somebody holds are drawn: numpy's multinomial draws nothing for a zero count (its
    # first binomial returns 0 at once), so leaving those rows out gives the same reports and leaves the
    # generator in the same state, bit for bit (tests/test_mechanisms.py), for less work on sparse data
    # (65 of San Francisco's 408 cells are empty).
    held = np.flatnonzero(counts)
    trials = np.broadcast_to(counts[held], (replicates, held.size))
    reports = rng.multinomial(trials, np.asarray(channel)[held][np.newaxis, :, :])  # (replicates, x, y)
    histogram = reports.sum(axis=1)
    return histogram[0] if size is None else histogram


def as_rows(values, name: str) -> np.ndarray:
    """``values`` as a float array with at least 2 finite entries on its last axis.

    Raises:
        ValueError: fewer than 2 entries on the last axis, or a non-finite entry.
    """
    array = np.asarray(values, dtype=float)
    if array.ndim < 1 or array.shape[-1] < 2:
        raise ValueError(f"`{name}` must have at least 2 entries on its last axis; got shape {array.shape}.")
    if not np.all(np.isfinite(array)):
        raise ValueError(f"`{name}` must be finite; got a non-finite entry.")
    return array


def normalise_counts(counts) -> np.ndarray:
    """Frequencies counts / counts.sum() along the last axis.

    Args:
        counts: the counts (..., d), d >= 2.

    Returns:
        (..., d): each row divided by its total.

    Raises:
        ValueError: fewer than 2 entries on the last axis, a non-finite or negative entry, or a row
            summing to 0.
    """
    counts = as_rows(counts, "counts")
    if np.any(counts < 0):
        raise ValueError(f"`counts` must be non-negative; got {counts[counts < 0].flat[0].item()!r}.")
    totals = counts.sum(axis=-1, keepdims=True)
    if np.any(totals <= 0):
        raise ValueError("`counts` must have a positive total in every row; got a row summing to 0.")
    return counts / totals


def channel_squared_error(channel, inverse, counts) -> float:
    """Exact E ||f C^+ - pi||^2 (f: the shuffled counts' frequencies; module docstring).

    Args:
        channel: C (k x d).
        inverse: a right inverse C^+ of C (d x k, C C^+ = I), the one the estimate uses.
        counts: the true histogram (k).

    Returns:
        The expected squared L2 error of the estimated distribution.
    """
    channel, inverse = np.asarray(channel, dtype=float), np.asarray(inverse, dtype=float)
    weights = np.asarray(counts, dtype=float)
    covariance = np.diag(weights @ channel) - (channel.T * weights) @ channel
    return float(np.trace(inverse.T @ covariance @ inverse)) / float(weights.sum()) ** 2


class ExpectedError(tuple):
    """(l1_half, squared_l2): expected half L1 error (the TV distance where the estimate is a distribution; None where no exact formula is known) and
    expected squared L2 error of an estimator."""

    __slots__ = ()

    def __new__(cls, l1_half: float | None, squared_l2: float):
        return super().__new__(cls, (None if l1_half is None else float(l1_half), float(squared_l2)))

    @property
    def l1_half(self) -> float | None:
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
