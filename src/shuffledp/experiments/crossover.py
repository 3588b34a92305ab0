"""Beyond the paper: where do shuffle+INV and the Gaussian cross, for eps < eps0 (delta-hat > 0)?

:func:`crossover_sweep` computes, over a grid of (eps0, eps < eps0) on one dataset, the mean TV of
shuffle+INV and of the Gaussian calibrated at delta-hat (eq. 10) of each accountant -- the raw Gaussian
histogram / n (``l1_half_gaussian_*``: half the L1 distance of a vector that is not a distribution, so it
may exceed 1) and the same draws projected onto the simplex (``tv_gaussian_proj_*``: a distribution,
the fair comparison drawn in the figure). Room: after :mod:`shuffledp.experiments.utility`, whose
calibration and replicate functions it uses.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import pandas as pd

from shuffledp._progress import progress
from shuffledp._random import job_rng
from shuffledp.estimators import project_to_simplex
from shuffledp.experiments.utility import calibrate, community_utility, delta_hat
from shuffledp.mechanisms import gaussian_histogram
from shuffledp.metrics import total_variation

__all__ = ["crossover_sweep"]


def _mean_se(values, replicates: int) -> tuple[float, float]:
    return float(values.mean()), float(values.std(ddof=1) / math.sqrt(replicates))


def crossover_sweep(
    counts,
    *,
    epsilon_locals: Sequence[float],
    epsilons: Sequence[float],
    accountants: Sequence[str],
    neighbouring_sensitivity: float,
    delta_floor: float,
    estimator: str,
    replicates: int,
    seed: int,
    identity: tuple,
) -> pd.DataFrame:
    """Mean TV of the Gaussian (calibrated at delta-hat of each accountant; raw and projected onto the
    simplex, from the same draws) and of shuffle+INV over a grid of (epsilon_local, epsilon) with
    epsilon < epsilon_local.

    The shuffle's draws depend on (seed, identity, "shuffle", eps0) and the Gaussian's on
    (seed, identity, "gaussian", eps0, eps, accountant); the projection draws nothing, so the raw
    columns do not depend on it. Rows with delta-hat = 0 are floored and marked.
    ``gaussian_better`` compares the raw Gaussian, ``gaussian_proj_better`` the projected one.
    """
    rows = []
    truth = counts / counts.sum()
    for epsilon_local in progress(iterable=list(epsilon_locals), desc="crossover sweep", total=None):
        below = [float(e) for e in epsilons if e < epsilon_local]
        if not below:
            continue
        shuffle = community_utility(
            counts,
            epsilon_local=epsilon_local,
            sigma=math.inf,
            estimator=estimator,
            replicates=replicates,
            rng=job_rng(seed, *identity, "shuffle", epsilon_local),
        )["shuffle+INV"]
        shuffle_mean, shuffle_se = _mean_se(shuffle, replicates)
        for accountant in accountants:
            deltas = delta_hat(counts, epsilons=below, epsilon_local=epsilon_local, accountant=accountant)
            for epsilon, delta in zip(below, deltas):
                calibration = calibrate(
                    float(delta),
                    epsilon=epsilon,
                    sensitivity=neighbouring_sensitivity,
                    delta_floor=delta_floor,
                )
                rng = job_rng(seed, *identity, "gaussian", epsilon_local, epsilon, accountant)
                noisy = (
                    gaussian_histogram(counts, sigma=calibration.sigma, rng=rng, size=replicates)
                    / counts.sum()
                )
                gaussian = total_variation(noisy, truth)
                projected = total_variation(project_to_simplex(noisy), truth)
                gaussian_mean, gaussian_se = _mean_se(gaussian, replicates)
                projected_mean, projected_se = _mean_se(projected, replicates)
                rows.append(
                    {
                        "epsilon_local": epsilon_local,
                        "epsilon": epsilon,
                        "accountant": accountant,
                        "n_users": int(counts.sum()),
                        "k": counts.size,
                        "replicates": replicates,
                        "l1_half_gaussian_mean": gaussian_mean,
                        "l1_half_gaussian_se": gaussian_se,
                        "l1_half_shuffle_inv_mean": shuffle_mean,
                        "l1_half_shuffle_inv_se": shuffle_se,
                        "gaussian_better": bool(gaussian_mean < shuffle_mean),
                        **calibration.columns(),
                        "tv_gaussian_proj_mean": projected_mean,
                        "tv_gaussian_proj_se": projected_se,
                        "gaussian_proj_better": bool(projected_mean < shuffle_mean),
                    }
                )
    return pd.DataFrame(rows)
