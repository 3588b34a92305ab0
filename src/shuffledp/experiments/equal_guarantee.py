"""Equal-guarantee experiment: which mechanism gives the better histogram at one target (eps, delta)?

For every target (epsilon, delta) of the grid, every number of users n and every dataset (k bins):

* **calibration** -- the largest local eps0 for which the shuffled k-RR histogram meets (epsilon,
  delta) under ``weak-adversary`` (a certified upper bound on delta for every dataset: this eps0 is
  *valid*) and under ``worst-case-lower`` (a lower bound on the worst case: no analysis can justify a
  larger eps0). The tight answer lies between the two; :func:`calibration_job`.
* **mechanisms** -- at each calibration's eps0: ``shuffle+INV`` (matrix inversion + projection onto
  the simplex), ``shuffle+INV-unprojected`` (unbiased, for the closed-form checks) and ``shuffle+IBU``
  (the limit of iterative Bayesian update = the maximum-likelihood estimate, computed exactly by
  :func:`shuffledp.estimators.krr_maximum_likelihood`); centrally at the same (epsilon, delta):
  ``gaussian`` / ``gaussian+proj`` (analytic Gaussian, the package's log-space calibration, L2
  sensitivity of ``utility.neighbouring``; without / with projection onto the simplex); at pure epsilon
  (delta = 0, a *stronger* guarantee): ``geometric`` / ``geometric+proj`` (two-sided geometric noise,
  L1 sensitivity 2 for replace-one, 1 for add-remove; the classical reference).
* **metrics** -- per replicate the TV distance to the dataset's own distribution and the per-cell
  MSE (1/k) sum_x (estimate_x - pi_x)^2; summarised as mean, standard error and the Monte-Carlo
  interval mean +- 1.96 SE over ``replicates`` draws (:func:`summarise`). Where a closed form exists
  it is written beside (``l1_half_expected``, ``mse_expected``): Gaussian MSE sigma^2 / n^2, geometric
  2 alpha / ((1 - alpha)^2 n^2), unprojected INV (1/k) sum_x (c_x p(1-p) + (n - c_x) q(1-q)) / (n (p - q))^2.

Randomness: the dataset of (dataset, n) comes from its own stream (the synthetic one is the utility
stage's :func:`shuffledp.experiments.utility.synthetic_dataset`; a region's n users are drawn *with
replacement* from its check-ins, so n may exceed them); each mechanism's draws come from
``job_rng(seed, "equal-guarantee", dataset, n, epsilon, delta rule, calibration or mechanism)``, so a
row depends only on the seed and its identity -- not on job order, the grid around it or ``--cores``.
INV, INV-unprojected and IBU share the shuffled reports of one calibration; the geometric draws do
not depend on delta, so both delta rules show the same geometric rows.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping, Sequence
from typing import NamedTuple

import numpy as np
import pandas as pd

from shuffledp._random import job_rng
from shuffledp.accounting.calibrate import calibrate_epsilon_local_traced
from shuffledp.accounting.randomizers import KRR
from shuffledp.estimators import invert, krr_maximum_likelihood, project_to_simplex
from shuffledp.experiments.utility import sample_region_counts, synthetic_dataset
from shuffledp.mechanisms import (
    analytic_gaussian_sigma,
    gaussian_histogram,
    geometric_alpha,
    geometric_histogram,
    geometric_moments,
    l1_sensitivity_for,
    sample_shuffled_counts,
    sensitivity_for,
)
from shuffledp.metrics import total_variation

__all__ = [
    "ACCOUNTANTS",
    "MECHANISMS",
    "SHUFFLE_MECHANISMS",
    "CENTRAL_MECHANISMS",
    "Z_95",
    "SYNTHETIC",
    "Target",
    "targets",
    "dataset_k",
    "check_equal_guarantee_config",
    "calibration_job",
    "dataset_counts",
    "summarise",
    "utility_job",
    "combine",
    "ratio_table",
]

#: calibrations: the certified upper bound on delta (a valid eps0), then the lower bound (the best eps0)
ACCOUNTANTS = ("weak-adversary", "worst-case-lower")
SHUFFLE_MECHANISMS = ("shuffle+INV", "shuffle+INV-unprojected", "shuffle+IBU")
CENTRAL_MECHANISMS = ("gaussian", "gaussian+proj", "geometric", "geometric+proj")
MECHANISMS = SHUFFLE_MECHANISMS + CENTRAL_MECHANISMS
#: two-sided normal quantile of the Monte-Carlo intervals (mean +- Z_95 SE)
Z_95 = 1.96
#: dataset name of utility.synthetic (k = utility.synthetic.k)
SYNTHETIC = "synthetic"
#: key columns of one row of the tidy result
KEYS = ["dataset", "k", "n_users", "epsilon", "delta_rule", "delta", "calibration", "mechanism"]


# --- the grid ----------------------------------------------------------------------------------


class Target(NamedTuple):
    """One target at a given n: epsilon, the delta rule's name ("fixed 1e-06", "1/n^1.1") and delta."""

    epsilon: float
    delta_rule: str
    delta: float


def targets(equal: Mapping, n_users: int) -> list[Target]:
    """Targets of ``utility.equal_guarantee`` at n: every epsilon with every fixed delta (rule
    "fixed 1e-06") and every delta = 1 / n^a (rule "1/n^a")."""
    deltas = [(f"fixed {float(d):g}", float(d)) for d in equal["delta_fixed"]]
    deltas += [(f"1/n^{float(a):g}", float(n_users) ** -float(a)) for a in equal["delta_power"]]
    return [Target(float(epsilon), rule, delta) for epsilon in equal["epsilon"] for rule, delta in deltas]


def dataset_k(config: Mapping, dataset: str) -> int:
    """Number of bins of a dataset: utility.synthetic.k, or a region's n_lon * n_lat grid cells."""
    if dataset == SYNTHETIC:
        return int(config["utility"]["synthetic"]["k"])
    grid = config["regions"][dataset]["grid"]
    return int(grid["n_lon"]) * int(grid["n_lat"])


def check_equal_guarantee_config(config: Mapping) -> None:
    """Cross-key checks of ``utility.equal_guarantee`` (the schema checks types and ranges); raises
    ``ConfigError`` naming the key, what is accepted and the value."""
    from shuffledp.config import ConfigError

    equal = (config.get("utility") or {}).get("equal_guarantee")
    if equal is None:
        return
    regions = config.get("regions") or {}
    for dataset in equal["datasets"]:
        if dataset != SYNTHETIC and dataset not in regions:
            raise ConfigError(
                f"config: `utility.equal_guarantee.datasets` entries must be {SYNTHETIC!r} or a region under "
                f"`regions` ({', '.join(sorted(regions))}); got {dataset!r}."
            )
    if not equal["delta_fixed"] and not equal["delta_power"]:
        raise ConfigError(
            "config: `utility.equal_guarantee` needs at least one target delta: `delta_fixed` and `delta_power` "
            "are both empty; got [] and []."
        )


# --- calibration -------------------------------------------------------------------------------


def calibration_job(equal: Mapping, *, k: int, n_users: int) -> pd.DataFrame:
    """Largest eps0 meeting every target at (n, k) under each accountant of :data:`ACCOUNTANTS`.

    One row per (epsilon, delta rule, accountant): ``epsilon_local`` (meets the target),
    ``epsilon_local_fails`` (at most 1e-6 above; does not), log delta at both, the number of
    accountant evaluations and the wall-clock seconds of the calibration.
    """
    rows = []
    for target in targets(equal, n_users):
        for accountant in ACCOUNTANTS:
            started = time.perf_counter()
            result = calibrate_epsilon_local_traced(
                accountant,
                n_users=n_users,
                k=k,
                epsilon=target.epsilon,
                delta=target.delta,
                upper=float(equal["epsilon_local_upper"]),
            )
            rows.append(
                {
                    "k": k,
                    "n_users": n_users,
                    "epsilon": target.epsilon,
                    "delta_rule": target.delta_rule,
                    "delta": target.delta,
                    "accountant": accountant,
                    "epsilon_local": result.epsilon_local,
                    "epsilon_local_fails": result.epsilon_local_fails,
                    "log_delta": result.log_delta,
                    "log_delta_fails": result.log_delta_fails,
                    "evaluations": result.evaluations,
                    "seconds": time.perf_counter() - started,
                }
            )
    return pd.DataFrame(rows)


# --- one (dataset, n) job ----------------------------------------------------------------------


def dataset_counts(
    dataset: str, n_users: int, *, utility: Mapping, seed: int, cell_counts=None
) -> np.ndarray:
    """The dataset of n users: the synthetic histogram of the utility stage (same draw as its other
    experiments at this n), or n check-ins drawn with replacement from a region's ``cell_counts``."""
    if dataset == SYNTHETIC:
        return synthetic_dataset(dict(utility), n_users, seed)
    if cell_counts is None:
        raise ValueError(f"`cell_counts` must be given for region {dataset!r}; got None.")
    return sample_region_counts(
        cell_counts, n_users, replace=True, rng=job_rng(seed, "equal-guarantee", "data", dataset, n_users)
    )


def summarise(draws, prefix: str) -> dict:
    """Mean, standard error and the Monte-Carlo interval mean +- 1.96 SE of ``draws``."""
    draws = np.asarray(draws, dtype=float)
    mean = float(draws.mean())
    se = float(draws.std(ddof=1) / math.sqrt(draws.size)) if draws.size > 1 else math.nan
    return {
        f"{prefix}_mean": mean,
        f"{prefix}_se": se,
        f"{prefix}_low": mean - Z_95 * se,
        f"{prefix}_high": mean + Z_95 * se,
    }


def _errors(estimates, truth) -> tuple[np.ndarray, np.ndarray]:
    return total_variation(estimates, truth), np.mean((estimates - truth) ** 2, axis=-1)


def _inv_mse(counts, epsilon_local: float) -> float:
    """E[(1/k) sum_x (pi_hat_x - pi_x)^2] of unprojected INV on a fixed dataset (k-RR closed form)."""
    n_users, k = counts.sum(), counts.size
    p, q = KRR(epsilon_local=epsilon_local, k=k).probabilities
    variance = counts * p * (1 - p) + (n_users - counts) * q * (1 - q)
    return float(variance.mean() / (n_users * (p - q)) ** 2)


def _calibration_for(calibration: pd.DataFrame, target: Target, accountant: str) -> float:
    match = calibration[
        np.isclose(calibration["epsilon"], target.epsilon, rtol=1e-12, atol=0)
        & (calibration["delta_rule"] == target.delta_rule)
        & (calibration["accountant"] == accountant)
    ]
    if len(match) != 1 or not math.isclose(float(match["delta"].iloc[0]), target.delta, rel_tol=1e-9):
        raise ValueError(
            f"`calibration` must hold one row for epsilon = {target.epsilon}, delta rule {target.delta_rule!r} "
            f"(delta = {target.delta:g}) and accountant {accountant!r}; got {len(match)}. Rerun the calibration job."
        )
    return float(match["epsilon_local"].iloc[0])


def utility_job(
    counts, calibration: pd.DataFrame, *, dataset: str, equal: Mapping, neighbouring: str, seed: int
) -> pd.DataFrame:
    """Every mechanism at every target of the grid on one dataset of n users; one row per
    (target, calibration, mechanism) with TV and per-cell MSE summaries (module docstring)."""
    counts = np.asarray(counts, dtype=np.int64)
    n_users, k = int(counts.sum()), counts.size
    truth = counts / n_users
    replicates = int(equal["replicates"])
    sensitivity, l1_sensitivity = sensitivity_for(neighbouring), l1_sensitivity_for(neighbouring)
    identity = ("equal-guarantee", dataset, n_users)
    rows = []

    def add(target: Target, calibration_name: str, mechanism: str, estimates, **extra):
        tv, mse = _errors(estimates, truth)
        rows.append(
            {
                "dataset": dataset,
                "k": k,
                "n_users": n_users,
                "epsilon": target.epsilon,
                "delta_rule": target.delta_rule,
                "delta": target.delta,
                "calibration": calibration_name,
                "mechanism": mechanism,
                "replicates": replicates,
                **summarise(tv, "l1_half"),
                **summarise(mse, "mse"),
                "l1_half_expected": math.nan,
                "mse_expected": math.nan,
                "epsilon_local": math.nan,
                "sigma": math.nan,
                "geometric_alpha": math.nan,
                "sensitivity": math.nan,
                **extra,
            }
        )

    for target in targets(equal, n_users):
        for accountant in ACCOUNTANTS:
            epsilon_local = _calibration_for(calibration, target, accountant)
            rng = job_rng(seed, *identity, target.epsilon, target.delta_rule, accountant)
            randomizer = KRR(epsilon_local=epsilon_local, k=k)
            reports = sample_shuffled_counts(counts, randomizer=randomizer, rng=rng, size=replicates)
            inverted = invert(reports, randomizer=randomizer)
            add(target, accountant, "shuffle+INV", project_to_simplex(inverted), epsilon_local=epsilon_local)
            add(
                target,
                accountant,
                "shuffle+INV-unprojected",
                inverted,
                epsilon_local=epsilon_local,
                mse_expected=_inv_mse(counts, epsilon_local),
            )
            add(
                target,
                accountant,
                "shuffle+IBU",
                krr_maximum_likelihood(reports, randomizer=randomizer),
                epsilon_local=epsilon_local,
            )
        sigma = analytic_gaussian_sigma(epsilon=target.epsilon, delta=target.delta, sensitivity=sensitivity)
        rng = job_rng(seed, *identity, target.epsilon, target.delta_rule, "gaussian")
        noisy = gaussian_histogram(counts, sigma=sigma, rng=rng, size=replicates) / n_users
        gaussian = {"sigma": sigma, "sensitivity": sensitivity}
        add(
            target,
            "none",
            "gaussian",
            noisy,
            **gaussian,
            mse_expected=sigma**2 / n_users**2,
            l1_half_expected=0.5 * k * sigma * math.sqrt(2.0 / math.pi) / n_users,
        )
        add(target, "none", "gaussian+proj", project_to_simplex(noisy), **gaussian)
        alpha = geometric_alpha(epsilon=target.epsilon, sensitivity=l1_sensitivity)
        rng = job_rng(
            seed, *identity, target.epsilon, "geometric"
        )  # pure epsilon: the same draws for every delta
        noisy = (
            geometric_histogram(
                counts, epsilon=target.epsilon, sensitivity=l1_sensitivity, rng=rng, size=replicates
            )
            / n_users
        )
        moments = geometric_moments(alpha)
        geometric = {"geometric_alpha": alpha, "sensitivity": l1_sensitivity}
        add(
            target,
            "none",
            "geometric",
            noisy,
            **geometric,
            mse_expected=moments["variance"] / n_users**2,
            l1_half_expected=0.5 * k * moments["mean_absolute"] / n_users,
        )
        add(target, "none", "geometric+proj", project_to_simplex(noisy), **geometric)
    return pd.DataFrame(rows)


# --- combine -----------------------------------------------------------------------------------


def combine(frames: Sequence[pd.DataFrame]) -> pd.DataFrame:
    """The tidy result: every job's rows in one frame, sorted by (dataset, k, n, epsilon, delta rule,
    calibration, mechanism); raises if a key repeats."""
    frame = pd.concat(list(frames), ignore_index=True)
    frame = frame.sort_values(KEYS, kind="stable").reset_index(drop=True)
    duplicated = frame.duplicated(subset=[key for key in KEYS if key != "delta"])
    if duplicated.any():
        raise ValueError(
            f"`frames` must not repeat a row key; got {frame.loc[duplicated, KEYS].iloc[0].to_dict()}."
        )
    return frame


def _winner(shuffle_low, shuffle_high, central_low, central_high) -> np.ndarray:
    return np.where(
        shuffle_high < central_low, "shuffle", np.where(central_high < shuffle_low, "central", "undecided")
    )


def ratio_table(frame: pd.DataFrame, *, shuffle_mechanism: str = "shuffle+INV") -> pd.DataFrame:
    """Per (dataset, k, n, epsilon, delta rule): TV(``shuffle_mechanism`` at the weak-adversary eps0) /
    TV(best central Gaussian variant by mean TV), and who wins under each calibration; beside it the
    pure-epsilon ``geometric+proj`` reference (``ratio_geometric`` = TV shuffle / TV geometric).

    A winner under one calibration is "shuffle" or "central" when the two Monte-Carlo intervals do not
    overlap, else "undecided"; ``certain`` when both calibrations name the same decided winner (the
    tight eps0 lies between them, so the verdict holds for it too).
    """
    keys = ["dataset", "k", "n_users", "epsilon", "delta_rule", "delta"]
    gaussian = frame[frame["mechanism"].isin(["gaussian", "gaussian+proj"])]
    best = gaussian.loc[gaussian.groupby(keys)["l1_half_mean"].idxmin()]
    best = best[keys + ["mechanism", "l1_half_mean", "l1_half_low", "l1_half_high"]].rename(
        columns={
            "mechanism": "best_gaussian",
            "l1_half_mean": "l1_half_gaussian_mean",
            "l1_half_low": "l1_half_gaussian_low",
            "l1_half_high": "l1_half_gaussian_high",
        }
    )
    table = best
    for accountant, tag in zip(ACCOUNTANTS, ("upper", "lower")):
        shuffle = frame[(frame["mechanism"] == shuffle_mechanism) & (frame["calibration"] == accountant)]
        shuffle = shuffle[keys + ["epsilon_local", "l1_half_mean", "l1_half_low", "l1_half_high"]].rename(
            columns={
                "epsilon_local": f"epsilon_local_{tag}",
                "l1_half_mean": f"l1_half_shuffle_{tag}_mean",
                "l1_half_low": f"l1_half_shuffle_{tag}_low",
                "l1_half_high": f"l1_half_shuffle_{tag}_high",
            }
        )
        table = table.merge(shuffle, on=keys, how="inner", validate="one_to_one")
        table[f"winner_{tag}"] = _winner(
            table[f"l1_half_shuffle_{tag}_low"],
            table[f"l1_half_shuffle_{tag}_high"],
            table["l1_half_gaussian_low"],
            table["l1_half_gaussian_high"],
        )
    geometric = frame[(frame["mechanism"] == "geometric+proj")][
        keys + ["l1_half_mean", "l1_half_low", "l1_half_high"]
    ].rename(
        columns={
            "l1_half_mean": "l1_half_geometric_mean",
            "l1_half_low": "l1_half_geometric_low",
            "l1_half_high": "l1_half_geometric_high",
        }
    )
    table = table.merge(geometric, on=keys, how="left", validate="one_to_one")
    table.insert(len(keys), "shuffle_mechanism", shuffle_mechanism)
    table["ratio"] = table["l1_half_shuffle_upper_mean"] / table["l1_half_gaussian_mean"]
    table["certain"] = (table["winner_upper"] == table["winner_lower"]) & (
        table["winner_upper"] != "undecided"
    )
    table["ratio_geometric"] = table["l1_half_shuffle_upper_mean"] / table["l1_half_geometric_mean"]
    return table.sort_values(keys, kind="stable").reset_index(drop=True)
