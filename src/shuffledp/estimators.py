"""Estimators of the original distribution from a noisy histogram (paper Section V-A).

All functions work on the last axis and are vectorised over any leading axes (replicates).

Every estimator takes the randomizer that produced the counts (a
:class:`~shuffledp.accounting.randomizers.Randomizer`, e.g. ``KRR(epsilon_local, k)``).

* :func:`invert` -- the randomizer's unbiased estimate (``randomizer.estimate``). For k-RR, matrix inversion
  (INV) in closed form: the k-RR channel is C = (p - q) I + q 1 1^T, so an observed frequency vector
  f = pi C gives pi_hat = (f - q) / (p - q) (paper eq. 7: unbiased, E[pi_hat] = pi; may leave the simplex);
  a randomizer with a finite channel of full row rank: f C^+.
* :func:`project_to_simplex` -- Euclidean projection onto the probability simplex, exact, in
  O(k log k) (Wang & Carreira-Perpinan 2013, arXiv:1309.1541, Algorithm 1).
* :func:`clip_and_renormalise` -- the naive baseline: negative entries set to 0, then rescaled.
* :func:`iterative_bayesian_update` -- IBU (Agrawal & Aggarwal 2001; ElSalamouny & Palamidessi
  2020), an EM algorithm whose fixed point is the maximum-likelihood estimate.
* :func:`krr_iterative_bayesian_update` -- the same IBU for the k-RR channel C = (p - q) I + q 1 1^T
  in O(k) per step instead of O(k^2): theta C = (p - q) theta + q (theta sums to 1) and
  w C^T = (p - q) w + q sum(w). ``estimate_distribution(..., "ibu")`` uses it.
* :func:`krr_maximum_likelihood` -- IBU's limit for k-RR in closed form. The log-likelihood
  sum_y f_y log((p - q) theta_y + q) is separable and concave, so (KKT) the maximiser over the simplex
  is theta_y = max(t f_y - q / (p - q), 0) with t fixed by sum theta = 1 (a water-filling, solved
  exactly by sorting, O(k log k)). Where INV is non-negative it is INV itself (t = 1). IBU converges
  to it only slowly when eps0 is small (10^5 steps are not enough at k = 408, eps0 = 4).
* :func:`maximum_likelihood` -- k-RR's closed form, else IBU on the randomizer's channel.
* :func:`estimate_distribution` -- one entry point selecting the estimator by name ("shuffle+INV"
  in the paper is ``"inv-projection"``).
"""

from __future__ import annotations

import numpy as np

from shuffledp._validation import check_choice, check_integer, check_real
from shuffledp.accounting.randomizers import KRR, Randomizer
from shuffledp.accounting.randomizers.counts import as_rows, normalise_counts

__all__ = [
    "ESTIMATORS",
    "normalise_counts",
    "invert",
    "project_to_simplex",
    "clip_and_renormalise",
    "iterative_bayesian_update",
    "krr_iterative_bayesian_update",
    "krr_maximum_likelihood",
    "maximum_likelihood",
    "estimate_distribution",
]

#: estimator names accepted by :func:`estimate_distribution`
ESTIMATORS = ("inv-projection", "inv-clip", "inv", "ibu", "raw")

_IBU_TOLERANCE = 1e-12
_IBU_MAX_ITERATIONS = 100_000


def _as_rows(values, name: str) -> np.ndarray:
    return as_rows(values, name)


def _krr(randomizer, estimator: str) -> KRR:
    if not isinstance(randomizer, KRR):
        raise ValueError(
            f"`randomizer` must be k-RR for {estimator} (its closed form is k-RR's); got {randomizer!r}."
        )
    return randomizer


def _check_randomizer(randomizer) -> Randomizer:
    if not isinstance(randomizer, Randomizer):
        raise TypeError(
            f"`randomizer` must be a Randomizer (shuffledp.accounting.randomizers, e.g. KRR(epsilon_local, k)); "
            f"got {type(randomizer).__name__}."
        )
    return randomizer


def invert(reported_counts, *, randomizer: Randomizer) -> np.ndarray:
    """The randomizer's unbiased estimate of the original distribution (``randomizer.estimate``).

    k-RR: matrix inversion in closed form, pi_hat = (f - q) / (p - q) (f C^{-1} for the k-RR channel C).

    Args:
        reported_counts: the shuffled report counts (..., d).
        randomizer: the randomizer that produced them.

    Returns:
        (..., k): sums to 1, may have negative entries.

    Raises:
        ValueError: counts of the wrong width, negative, or a row summing to 0; TypeError: not a randomizer.
    """
    return _check_randomizer(randomizer).estimate(reported_counts)


def project_to_simplex(values) -> np.ndarray:
    """Euclidean projection of each row onto {x : x >= 0, sum x = 1} (Wang & Carreira-Perpinan 2013).

    Sort u descending, rho = max{j : u_j + (1 - sum_{i<=j} u_i) / j > 0},
    lambda = (1 - sum_{i<=rho} u_i) / rho, x = max(v + lambda, 0). Exact; O(k log k) per row.

    Args:
        values: the vectors to project (..., k), k >= 2, finite.

    Returns:
        (..., k): the nearest point of the simplex to each row (non-negative, summing to 1).

    Raises:
        ValueError: fewer than 2 entries on the last axis, or a non-finite entry.
    """
    values = _as_rows(values, "values")
    k = values.shape[-1]
    ordered = -np.sort(-values, axis=-1)
    cumulative = np.cumsum(ordered, axis=-1)
    index = np.arange(1, k + 1, dtype=float)
    positive = ordered + (1.0 - cumulative) / index > 0
    rho = k - np.argmax(positive[..., ::-1], axis=-1)  # last j (1-based) where the test holds
    shift = (1.0 - np.take_along_axis(cumulative, (rho - 1)[..., None], axis=-1)) / rho[..., None]
    return np.maximum(values + shift, 0.0)


def clip_and_renormalise(values) -> np.ndarray:
    """Set negative entries to 0 and rescale each row to sum to 1 (uniform if nothing is positive).

    Args:
        values: the vectors to clip (..., k), k >= 2, finite.

    Returns:
        (..., k): each row clipped at 0 and divided by its sum; the uniform 1 / k where no entry is positive.

    Raises:
        ValueError: fewer than 2 entries on the last axis, or a non-finite entry.
    """
    values = _as_rows(values, "values")
    clipped = np.maximum(values, 0.0)
    totals = clipped.sum(axis=-1, keepdims=True)
    uniform = np.full_like(clipped, 1.0 / values.shape[-1])
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(totals > 0, clipped / np.where(totals > 0, totals, 1.0), uniform)


def iterative_bayesian_update(
    reported_counts,
    *,
    channel,
    tolerance: float = _IBU_TOLERANCE,
    max_iterations: int = _IBU_MAX_ITERATIONS,
) -> np.ndarray:
    """IBU / EM estimate of the original distribution from a noisy histogram and its channel.

    theta_{t+1}[x] = sum_y f[y] theta_t[x] C[x, y] / sum_x' theta_t[x'] C[x', y], from the uniform
    start, until the largest change in any row is below ``tolerance`` (or ``max_iterations``). Its
    limit maximises the multinomial likelihood of the reports over the simplex.

    Args:
        reported_counts: the shuffled report counts (..., k), non-negative, no row summing to 0.
        channel: C (k x k), C[x, y] = P(report y | input x).
        tolerance: stop when no entry changes by this much or more in one step (> 0).
        max_iterations: largest number of steps (>= 1); the last iterate is returned when it is reached.

    Returns:
        (..., k): the estimate, on the simplex.

    Raises:
        ValueError: counts with fewer than 2 entries, a non-finite or negative entry or a row summing to 0;
            a ``channel`` that is not k x k or not finite; ``tolerance`` not > 0 or ``max_iterations`` < 1.
        TypeError: ``tolerance`` not a real number or ``max_iterations`` not an integer.
    """
    frequencies = normalise_counts(reported_counts)
    channel = _as_rows(channel, "channel")
    k = frequencies.shape[-1]
    if channel.shape != (k, k):
        raise ValueError(f"`channel` must have shape ({k}, {k}) to match the counts; got {channel.shape}.")
    tolerance = check_real(tolerance, "tolerance", low=0.0, low_open=True)
    max_iterations = check_integer(max_iterations, "max_iterations", low=1)
    theta = np.full_like(frequencies, 1.0 / k)
    for _ in range(max_iterations):
        predicted = theta @ channel  # P(report y) under theta, (..., k)
        with np.errstate(invalid="ignore", divide="ignore"):
            weights = np.where(frequencies > 0, frequencies / predicted, 0.0)
        updated = theta * (weights @ channel.T)
        if np.max(np.abs(updated - theta)) < tolerance:
            return updated
        theta = updated
    return theta


def krr_iterative_bayesian_update(
    reported_counts,
    *,
    randomizer: KRR,
    tolerance: float = _IBU_TOLERANCE,
    max_iterations: int = _IBU_MAX_ITERATIONS,
) -> np.ndarray:
    """:func:`iterative_bayesian_update` for the k-RR channel, O(k) per step (same iterates, same stop).

    With C = (p - q) I + q 1 1^T: P(report y) = (p - q) theta_y + q, and
    theta_{t+1}[x] = theta_t[x] ((p - q) w_x + q sum_y w_y), w_y = f_y / P(report y).

    Args:
        reported_counts: the shuffled k-RR histogram (..., k).
        randomizer: the k-RR randomizer (:class:`~shuffledp.accounting.randomizers.KRR`) that produced it.
        tolerance: the stopping rule of :func:`iterative_bayesian_update` (> 0).
        max_iterations: its largest number of steps (>= 1).

    Returns:
        (..., k) on the simplex.

    Raises:
        ValueError: a randomizer that is not k-RR, counts that are not k wide, negative or not finite or
            with a row summing to 0, ``tolerance`` not > 0 or ``max_iterations`` < 1 (one line each).
        TypeError: ``tolerance`` not a real number or ``max_iterations`` not an integer.
    """
    randomizer = _krr(randomizer, "krr_iterative_bayesian_update")
    frequencies = normalise_counts(reported_counts)
    k = _width(frequencies, randomizer)
    p, q = randomizer.probabilities
    gap = p - q
    tolerance = check_real(tolerance, "tolerance", low=0.0, low_open=True)
    max_iterations = check_integer(max_iterations, "max_iterations", low=1)
    theta = np.full_like(frequencies, 1.0 / k)
    for _ in range(max_iterations):
        predicted = gap * theta + q * theta.sum(axis=-1, keepdims=True)
        with np.errstate(invalid="ignore", divide="ignore"):
            weights = np.where(frequencies > 0, frequencies / predicted, 0.0)
        updated = theta * (gap * weights + q * weights.sum(axis=-1, keepdims=True))
        if np.max(np.abs(updated - theta)) < tolerance:
            return updated
        theta = updated
    return theta


def krr_maximum_likelihood(reported_counts, *, randomizer: KRR) -> np.ndarray:
    """Maximum-likelihood estimate of the original distribution from a k-RR histogram: IBU's limit.

    theta_y = max(t f_y - c, 0), c = q / (p - q), with t the unique value giving sum theta = 1: sort
    f descending, t_m = (1 + m c) / (f_(1) + ... + f_(m)), keep the largest m with t_m f_(m) > c
    (the same active-set rule as the simplex projection). Exact; O(k log k) per row.

    Args:
        reported_counts: the shuffled k-RR histogram (..., k).
        randomizer: the k-RR randomizer (:class:`~shuffledp.accounting.randomizers.KRR`) that produced it.

    Returns:
        (..., k) on the simplex.

    Raises:
        ValueError: a randomizer that is not k-RR, or counts that are not k wide (one line each).
    """
    randomizer = _krr(randomizer, "krr_maximum_likelihood")
    frequencies = normalise_counts(reported_counts)
    k = _width(frequencies, randomizer)
    p, q = randomizer.probabilities
    shift = q / (p - q)
    ordered = -np.sort(-frequencies, axis=-1)
    cumulative = np.cumsum(ordered, axis=-1)
    active = np.arange(1, k + 1, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        scale = (1.0 + active * shift) / cumulative
    holds = (scale * ordered - shift > 0) & (cumulative > 0)
    size = k - np.argmax(holds[..., ::-1], axis=-1)  # largest m (1-based) where the rule holds
    chosen = np.take_along_axis(scale, (size - 1)[..., None], axis=-1)
    return np.maximum(chosen * frequencies - shift, 0.0)


def maximum_likelihood(reported_counts, *, randomizer: Randomizer) -> np.ndarray:
    """The maximum-likelihood estimate of the original distribution: k-RR's closed form
    (:func:`krr_maximum_likelihood`), else IBU's limit on the randomizer's channel (:func:`iterative_bayesian_update`).

    Args:
        reported_counts: the shuffled report counts (..., d).
        randomizer: the randomizer that produced them (k-RR, or one with a finite ``channel``).

    Returns:
        (..., k) on the simplex.

    Raises:
        ValueError: bad counts; NotImplementedError: a randomizer that is not k-RR and has no channel.
    """
    randomizer = _check_randomizer(randomizer)
    if isinstance(randomizer, KRR):
        return krr_maximum_likelihood(reported_counts, randomizer=randomizer)
    return iterative_bayesian_update(
        reported_counts, channel=randomizer.required_channel("maximum_likelihood")
    )


def estimate_distribution(
    reported_counts, *, randomizer: Randomizer, estimator: str = "inv-projection"
) -> np.ndarray:
    """Estimate the original distribution from shuffled report counts with the named estimator.

    Args:
        reported_counts: the shuffled report counts (..., d).
        randomizer: the randomizer that produced them.
        estimator: ``"inv-projection"`` (paper's shuffle+INV: the unbiased estimate projected onto the simplex),
            ``"inv-clip"``, ``"inv"`` (unprojected), ``"ibu"`` (k-RR's O(k) IBU, else IBU on the channel), or
            ``"raw"`` (the normalised noisy histogram itself: the paper's "shuffle").

    Returns:
        (..., k).

    Raises:
        ValueError: an unknown ``estimator`` or bad counts.
    """
    check_choice(estimator, "estimator", ESTIMATORS)
    randomizer = _check_randomizer(randomizer)
    if estimator == "raw":
        return normalise_counts(reported_counts)
    if estimator == "ibu":
        counts = _as_rows(reported_counts, "reported_counts")
        if isinstance(randomizer, KRR):
            return krr_iterative_bayesian_update(counts, randomizer=randomizer)
        return iterative_bayesian_update(counts, channel=randomizer.required_channel("ibu"))
    inverted = invert(reported_counts, randomizer=randomizer)
    if estimator == "inv":
        return inverted
    if estimator == "inv-clip":
        return clip_and_renormalise(inverted)
    return project_to_simplex(inverted)


def _width(frequencies: np.ndarray, randomizer: Randomizer) -> int:
    if frequencies.shape[-1] != randomizer.k:
        raise ValueError(
            f"`reported_counts` must have k = {randomizer.k} entries on its last axis; got shape {frequencies.shape}."
        )
    return frequencies.shape[-1]
