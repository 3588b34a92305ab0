"""Utility metrics of the paper's Section V-A, vectorised over leading (replicate) axes.

* :func:`total_variation` -- community-level utility (eqs. 8-9) with d = total variation distance
  (paper footnote 7): d_TV(a, b) = (1/2) sum_x |a_x - b_x| between two distributions on the k bins.
  The paper writes d(n pi_hat, n pi); we evaluate it on the normalised vectors (the paper's printed
  values, e.g. 0.014, are on that scale). For the central model the estimate is the noisy histogram
  divided by n, which need not be a distribution: the formula is applied unchanged (half the L1
  distance), as in the paper.
* :func:`individual_error` -- individual-specific utility W-bar(M, x0) = |n pi_hat_x0 - n pi_x0|
  (and |H_x0 - n pi_x0| for the Gaussian), in counts; divide by n for the paper's printed scale.
"""

from __future__ import annotations

import numpy as np

from shuffledp._validation import check_integer

__all__ = ["total_variation", "individual_error"]


def _pair(estimate, truth) -> tuple[np.ndarray, np.ndarray]:
    estimate = np.asarray(estimate, dtype=float)
    truth = np.asarray(truth, dtype=float)
    if estimate.shape[-1:] != truth.shape[-1:] or estimate.ndim < 1:
        raise ValueError(
            f"`estimate` and `truth` must have the same number of bins on the last axis; "
            f"got shapes {estimate.shape} and {truth.shape}."
        )
    return estimate, truth


def total_variation(estimate, truth) -> np.ndarray:
    """Total variation distance, (1/2) sum_x |estimate_x - truth_x|, along the last axis.

    Args:
        estimate: estimated distribution(s), bins on the last axis (leading axes broadcast).
        truth: the true distribution(s), the same number of bins.

    Returns:
        The distances, one per leading index (a 0-d array for two vectors).

    Raises:
        ValueError: the two do not have the same number of bins on the last axis.
    """
    estimate, truth = _pair(estimate, truth)
    return 0.5 * np.abs(estimate - truth).sum(axis=-1)


def individual_error(estimate, truth, *, x0: int, n_users: int) -> np.ndarray:
    """The error on one bin in counts, |n estimate_x0 - n truth_x0| (the paper's W-bar before dividing by n).

    Args:
        estimate: estimated distribution(s), bins on the last axis (leading axes broadcast).
        truth: the true distribution(s), the same number of bins.
        x0: the bin's index, 0-based, in [0, number of bins - 1].
        n_users: number of users n, an integer >= 1.

    Returns:
        The errors, one per leading index.

    Raises:
        ValueError: the shapes differ, or ``x0`` or ``n_users`` is out of range (one line naming it).
    """
    estimate, truth = _pair(estimate, truth)
    x0 = check_integer(x0, "x0", low=0, high=estimate.shape[-1] - 1)
    n_users = check_integer(n_users, "n_users", low=1)
    return n_users * np.abs(estimate[..., x0] - truth[..., x0])
