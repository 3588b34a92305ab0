"""Utility experiments of the paper's Section V: one replicate = f(parameters, rng) -> tidy rows.

Layering: uses accountants (delta-hat of eq. 10), mechanisms, estimators and metrics; knows nothing
about files or the workflow. Every function that draws takes ``rng: numpy.random.Generator``; the
workflow derives one stream per (seed, replicate identity) with :func:`shuffledp._random.job_rng`, so
a replicate's numbers depend only on the seed and its identity -- not on job order or ``--cores``.

Room: the library side of ``workflow/rules/utility.smk``'s replicate rules. Imports accountants,
mechanisms, estimators, metrics and :func:`shuffledp.experiments.utility_tables.interval_strength`;
the comparison with the paper's printed draws lives in :mod:`shuffledp.experiments.utility_tables`.

Mechanisms compared (names used in every output):

* ``gaussian`` -- central model: true histogram + N(0, sigma^2) per bin, analytic-Gaussian sigma at
  (epsilon, delta-hat); the estimate is the noisy histogram / n (paper: "the noisy histogram itself").
* ``gaussian+proj`` -- the same noisy histogram / n projected onto the simplex (fair post-processing).
* ``shuffle`` -- the shuffled k-RR histogram / n (no de-noising).
* ``shuffle+INV`` -- matrix inversion + projection onto the simplex (the paper's estimator; the
  estimator is configurable, see :data:`shuffledp.estimators.ESTIMATORS`).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from shuffledp._progress import progress
from shuffledp._random import job_rng
from shuffledp._validation import check_integer, check_real, check_real_array
from shuffledp.accounting import accountant_class, get_accountant
from shuffledp.accounting.randomizers import KRR
from shuffledp.estimators import estimate_distribution, normalise_counts, project_to_simplex
from shuffledp.experiments.utility_tables import interval_strength
from shuffledp.mechanisms import gaussian_calibration, gaussian_histogram, sample_shuffled_counts
from shuffledp.metrics import total_variation

__all__ = [
    "MECHANISMS",
    "CALIBRATIONS",
    "calibration_accountants",
    "discretise_normal",
    "synthetic_counts",
    "sample_region_counts",
    "delta_for_value",
    "delta_hat",
    "Calibration",
    "calibrate",
    "community_utility",
    "individual_utility",
    "individual_gaussian_errors",
    "community_sweep",
    "check_utility_config",
    "synthetic_dataset",
    "individual_job",
    "synthetic_community_job",
    "heatmap_job",
]

MECHANISMS = ("gaussian", "gaussian+proj", "shuffle", "shuffle+INV")

#: the Gaussian's calibrations, in report order, and the ``utility`` config key naming each accountant:
#: the paper's own (eq. 6 as printed), the tightest valid upper bound ("configured") and a lower bound
#: on the worst case ("lower"). A verdict that is the same under "configured" and "lower" is certain.
CALIBRATIONS = {"as_printed": "printed_accountant", "configured": "accountant", "lower": "lower_accountant"}


def calibration_accountants(utility: dict) -> list[tuple[str, str]]:
    """(calibration, accountant) pairs of :data:`CALIBRATIONS` present in the ``utility`` config slice."""
    return [(kind, utility[key]) for kind, key in CALIBRATIONS.items() if utility.get(key)]


# --- data --------------------------------------------------------------------------------------


def discretise_normal(values, *, k: int, mean: float, bin_width: float) -> np.ndarray:
    """Bin index 0..k-1 of each value: k bins of width ``bin_width`` centred on
    mean + (j - (k - 1) / 2) * bin_width; values beyond the outer bins fall into them (clipped tails).
    """
    k = check_integer(k, "k", low=2)
    bin_width = check_real(bin_width, "bin_width", low=0.0, low_open=True, high_open=True)
    position = (np.asarray(values, dtype=float) - mean) / bin_width + (k - 1) / 2.0
    return np.clip(np.floor(position + 0.5), 0, k - 1).astype(np.int64)


def synthetic_counts(
    n_users: int,
    *,
    k: int,
    mean: float,
    standard_deviation: float,
    bin_width: float,
    rng: np.random.Generator,
) -> np.ndarray:
    """Histogram of ``n_users`` draws from N(mean, standard_deviation^2) discretised to k bins."""
    n_users = check_integer(n_users, "n_users", low=1)
    standard_deviation = check_real(
        standard_deviation, "standard_deviation", low=0.0, low_open=True, high_open=True
    )
    values = rng.normal(mean, standard_deviation, size=n_users)
    return np.bincount(discretise_normal(values, k=k, mean=mean, bin_width=bin_width), minlength=k)


def sample_region_counts(cell_counts, n_users: int, *, replace: bool, rng: np.random.Generator) -> np.ndarray:
    """Cell histogram of ``n_users`` check-ins drawn from a region's check-ins (``cell_counts``).

    With ``replace`` the draw is Multinomial(n, counts / N); without, multivariate hypergeometric
    (a random subset of n distinct check-ins; needs n <= N).
    """
    counts = np.asarray(cell_counts, dtype=np.int64)
    total = int(counts.sum())
    n_users = check_integer(n_users, "n_users", low=1)
    if replace:
        return rng.multinomial(n_users, counts / total)
    if n_users > total:
        raise ValueError(
            f"`n_users` must be at most the region's {total} check-ins when sampling without "
            f"replacement; got {n_users}. Lower n or set utility.gowalla.sampling: with-replacement."
        )
    return rng.multivariate_hypergeometric(counts, n_users)


# --- delta-hat (eq. 10) ------------------------------------------------------------------------


def _delta(accountant: str, *, epsilons, epsilon_local, n_users, k, n_x0) -> np.ndarray:
    if not accountant_class(accountant).needs_n_x0:
        n_x0 = None
    return np.asarray(
        get_accountant(
            accountant, epsilon_local=epsilon_local, n_users=n_users, k=k, n_x0=n_x0
        ).delta_for_epsilon(epsilons),
        dtype=float,
    )


def delta_for_value(counts, x0: int, *, epsilons, epsilon_local: float, accountant: str) -> np.ndarray:
    """delta(epsilon) of the individual holding value ``x0`` (0-based): n_x0 = c_x0 - 1 others hold it.

    If nobody holds x0 (c_x0 = 0) the individual is taken to be the only one (n_x0 = 0).
    """
    counts = np.asarray(counts, dtype=np.int64)
    x0 = check_integer(x0, "x0", low=0, high=counts.size - 1)
    epsilons = check_real_array(epsilons, "epsilon", low=0.0)
    return _delta(
        accountant,
        epsilons=epsilons,
        epsilon_local=epsilon_local,
        n_users=int(counts.sum()),
        k=counts.size,
        n_x0=max(int(counts[x0]) - 1, 0),
    )


def delta_hat(counts, *, epsilons, epsilon_local: float, accountant: str) -> np.ndarray:
    """Paper eq. (10): max over values x with c_x >= 1 of delta(epsilon; n_x0 = c_x - 1), per epsilon.

    Each distinct count is evaluated once. For an accountant that does not depend on n_x0 (e.g. the
    all-dataset upper bound) this is its single delta. The max inherits the accountant's direction:
    the max of exact single-pair deltas is a lower bound on the mechanism's delta (other neighbouring
    pairs may be worse); an all-dataset upper bound stays an upper bound.
    """
    counts = np.asarray(counts, dtype=np.int64)
    epsilons = check_real_array(epsilons, "epsilon", low=0.0)
    n_users, k = int(counts.sum()), counts.size
    if not accountant_class(accountant).needs_n_x0:
        return _delta(
            accountant, epsilons=epsilons, epsilon_local=epsilon_local, n_users=n_users, k=k, n_x0=None
        )
    deltas = [
        _delta(
            accountant, epsilons=epsilons, epsilon_local=epsilon_local, n_users=n_users, k=k, n_x0=int(c) - 1
        )
        for c in np.unique(counts[counts >= 1])
    ]
    return np.max(np.vstack(deltas), axis=0)


# --- Gaussian calibration with the delta = 0 rule ---------------------------------------------


@dataclass(frozen=True)
class Calibration:
    """delta as computed, delta used (floored if 0), and both sigmas (see mechanisms.gaussian_calibration)."""

    delta: float
    delta_used: float
    delta_floored: bool
    sigma: float
    sigma_diffprivlib: float
    diffprivlib_differs: bool

    def columns(self, prefix: str = "") -> dict:
        return {f"{prefix}{name}": value for name, value in self.__dict__.items()}


def calibrate(delta: float, *, epsilon: float, sensitivity: float, delta_floor: float) -> Calibration:
    """Analytic-Gaussian sigma at (epsilon, delta), applying the one rule for delta = 0.

    Rule (config ``utility.delta_floor``): a delta below the floor -- in particular delta = 0, where
    the Gaussian is undefined because no finite sigma is (eps, 0)-DP -- is replaced by the floor, and
    the row is marked ``delta_floored``. The Gaussian is then slightly *less* private than the shuffle
    model it is compared with.
    """
    delta = check_real(delta, "delta", low=0.0, high=1.0, high_open=True)
    delta_floor = check_real(delta_floor, "delta_floor", low=0.0, high=1.0, low_open=True, high_open=True)
    floored = delta < delta_floor
    used = delta_floor if floored else delta
    result = gaussian_calibration(epsilon=epsilon, delta=used, sensitivity=sensitivity)
    return Calibration(
        delta=float(delta),
        delta_used=float(used),
        delta_floored=bool(floored),
        sigma=result.sigma,
        sigma_diffprivlib=result.sigma_diffprivlib,
        diffprivlib_differs=result.diffprivlib_differs,
    )


# --- one batch of replicates -------------------------------------------------------------------


def community_utility(
    counts,
    *,
    epsilon_local: float,
    sigma: float,
    estimator: str,
    rng: np.random.Generator,
    replicates: int = 1,
) -> dict[str, np.ndarray]:
    """TV distance to the true distribution for each mechanism, ``replicates`` draws each.

    Returns {mechanism: array of shape (replicates,)} for :data:`MECHANISMS` (``sigma`` = inf or NaN
    skips the Gaussian, giving NaN).
    """
    counts = np.asarray(counts, dtype=np.int64)
    n_users = counts.sum()
    truth = counts / n_users
    randomizer = KRR(epsilon_local=epsilon_local, k=counts.size)
    reports = sample_shuffled_counts(counts, randomizer=randomizer, rng=rng, size=replicates)
    result = {
        "shuffle": total_variation(normalise_counts(reports), truth),
        "shuffle+INV": total_variation(
            estimate_distribution(reports, randomizer=randomizer, estimator=estimator), truth
        ),
    }
    if math.isfinite(sigma):
        noisy = gaussian_histogram(counts, sigma=sigma, rng=rng, size=replicates) / n_users
        result["gaussian"] = total_variation(noisy, truth)
        result["gaussian+proj"] = total_variation(project_to_simplex(noisy), truth)
    else:
        result["gaussian"] = result["gaussian+proj"] = np.full(replicates, np.nan)
    return {name: result[name] for name in MECHANISMS}


def individual_utility(
    counts,
    x0s: Sequence[int],
    *,
    epsilon_local: float,
    sigmas: Sequence[float],
    estimator: str,
    rng: np.random.Generator,
    replicates: int,
) -> dict[str, np.ndarray]:
    """Individual-specific errors |estimate_x0 - pi_x0| (paper's W-bar divided by n) for each x0.

    ``sigmas[i]`` is the Gaussian's sigma for ``x0s[i]`` (its own delta). Returns {mechanism: array
    (replicates, len(x0s))}; the shuffle draws are shared by all x0 (they do not depend on delta).
    """
    counts = np.asarray(counts, dtype=np.int64)
    x0 = np.asarray(x0s, dtype=np.int64)
    n_users = counts.sum()
    truth = counts / n_users
    randomizer = KRR(epsilon_local=epsilon_local, k=counts.size)
    reports = sample_shuffled_counts(counts, randomizer=randomizer, rng=rng, size=replicates)
    estimate = estimate_distribution(reports, randomizer=randomizer, estimator=estimator)
    return {
        "gaussian": individual_gaussian_errors(n_users, sigmas, rng=rng, replicates=replicates),
        "shuffle+INV": np.abs(estimate[:, x0] - truth[x0]),
    }


def individual_gaussian_errors(
    n_users: int, sigmas: Sequence[float], *, rng: np.random.Generator, replicates: int
) -> np.ndarray:
    """The Gaussian's individual-specific errors |noise_x0| / n, one column per sigma.

    Args:
        n_users: the number of users n (the errors are on the paper's printed scale, W-bar / n).
        sigmas: the Gaussian's sigma for each x0 (its own delta).
        rng: the stream the noise is drawn from (``replicates`` x ``len(sigmas)`` standard normals, row by row).
        replicates: the number of draws per x0.

    Returns:
        An array (replicates, len(sigmas)).
    """
    sigma = np.asarray(sigmas, dtype=float)
    noise = rng.normal(size=(replicates, sigma.size)) * sigma
    return np.abs(noise) / n_users


# --- sweeps ------------------------------------------------------------------------------------


def community_sweep(
    region_counts,
    *,
    n_users_grid: Sequence[int],
    settings: Sequence[dict],
    runs: int,
    replace: bool,
    accountants: Sequence[tuple[str, str]],
    neighbouring_sensitivity: float,
    delta_floor: float,
    estimator: str,
    seed: int,
    identity: tuple,
) -> pd.DataFrame:
    """Figures 6/7: for each n, ``runs`` datasets of n check-ins sampled from the region, each
    released once by every mechanism under each privacy setting (epsilon, epsilon_local).

    ``accountants``: (calibration, accountant) pairs (:func:`calibration_accountants`); the Gaussian is
    calibrated at delta-hat (eq. 10, from each sampled dataset) of each. The dataset of run r depends
    on (seed, identity, "data", n, r) only -- the same datasets are used for every setting; the
    mechanisms' draws on (seed, identity, "mechanisms", eps, eps0, n, r), the same for every
    calibration (common random numbers: the shuffle's draws are identical across calibrations and the
    Gaussians differ only by their sigma). Returns tidy rows with a ``calibration`` column.
    """
    rows = []
    bar = progress(total=len(n_users_grid) * runs, desc=f"community runs {'/'.join(map(str, identity))}")
    for n_users in n_users_grid:
        for run in range(runs):
            bar.update()
            counts = sample_region_counts(
                region_counts, n_users, replace=replace, rng=job_rng(seed, *identity, "data", n_users, run)
            )
            for setting, (kind, accountant) in itertools.product(settings, accountants):
                epsilon, epsilon_local = float(setting["epsilon"]), float(setting["epsilon_local"])
                delta = float(
                    delta_hat(counts, epsilons=[epsilon], epsilon_local=epsilon_local, accountant=accountant)[
                        0
                    ]
                )
                calibration = calibrate(
                    delta, epsilon=epsilon, sensitivity=neighbouring_sensitivity, delta_floor=delta_floor
                )
                rng = job_rng(seed, *identity, "mechanisms", epsilon, epsilon_local, n_users, run)
                tv = community_utility(
                    counts, epsilon_local=epsilon_local, sigma=calibration.sigma, estimator=estimator, rng=rng
                )
                for mechanism, values in tv.items():
                    rows.append(
                        {
                            "n_users": n_users,
                            "run": run,
                            "epsilon": epsilon,
                            "epsilon_local": epsilon_local,
                            "calibration": kind,
                            "accountant": accountant,
                            "mechanism": mechanism,
                            "l1_half": float(values[0]),
                            **calibration.columns(),
                        }
                    )
    bar.close()
    return pd.DataFrame(rows)


# --- comparison with a single printed draw -----------------------------------------------------


#: how far off a printed value is assumed to be when judging the strength of a single-draw test
def check_utility_config(config) -> None:
    """Cross-key checks of the ``utility`` section; raises ``ConfigError`` with one clear message.

    Table V's x0 labels must lie in 1..synthetic.k; every Gowalla region must be a configured region
    and its Table VI x0 a cell index of that region's grid; figure names must be distinct.
    """
    from shuffledp.config import ConfigError

    utility = config.get("utility")
    if utility is None:
        return
    k = utility["synthetic"]["k"]
    for x0 in utility["table5"]["x0"]:
        if x0 > k:
            raise ConfigError(
                f"config: `utility.table5.x0` values must be in [1, {k}] (utility.synthetic.k); got {x0}."
            )
    regions = config.get("regions") or {}
    figures = []
    for name, entry in utility["gowalla"]["regions"].items():
        if name not in regions:
            raise ConfigError(
                f"config: `utility.gowalla.regions` names region {name!r}, which is not under `regions` "
                f"({', '.join(sorted(regions))})."
            )
        cells = regions[name]["grid"]["n_lon"] * regions[name]["grid"]["n_lat"]
        for x0 in entry["x0"]:
            if x0 >= cells:
                raise ConfigError(
                    f"config: `utility.gowalla.regions.{name}.x0` values must be cell indices in [0, {cells - 1}]; got {x0}."
                )
        figures += [entry["heatmap_figure"], entry["boxplot_figure"]]
    reserved = {"fig2", "table5", "table6", "crossover"}
    duplicate = next((f for f in figures if figures.count(f) > 1 or f in reserved), None)
    if duplicate is not None:
        raise ConfigError(
            f"config: `utility.gowalla.regions` figure names must be distinct and not one of "
            f"{', '.join(sorted(reserved))}; got {duplicate!r} twice or reserved."
        )


# --- workflow jobs: one call per Snakemake job, plain config dicts in, tidy frames out ---------


def _summary(draws) -> dict:
    draws = np.asarray(draws, dtype=float)
    low, median, high = np.quantile(draws, [0.025, 0.5, 0.975])
    strength = interval_strength(draws, low, high)
    return {
        "mean": draws.mean(),
        "se": draws.std(ddof=1) / math.sqrt(draws.size),
        "q025": low,
        "median": median,
        "q975": high,
        "replicates": draws.size,
        "p_pass_3x_larger": strength["p_pass_3x_larger"],
        "p_pass_3x_smaller": strength["p_pass_3x_smaller"],
    }


def synthetic_dataset(utility: dict, n_users: int, seed: int) -> np.ndarray:
    """The synthetic dataset of size n (one draw per n, from its own stream (seed, "synthetic-data", n))."""
    synthetic = utility["synthetic"]
    return synthetic_counts(
        n_users,
        k=synthetic["k"],
        mean=synthetic["mean"],
        standard_deviation=synthetic["standard_deviation"],
        bin_width=synthetic["bin_width"],
        rng=job_rng(seed, "synthetic-data", n_users),
    )


def _sensitivity(utility: dict) -> float:
    from shuffledp.mechanisms import sensitivity_for

    return sensitivity_for(utility["neighbouring"])


def individual_job(
    counts, x0_indices, x0_labels, *, utility: dict, setting: dict, seed: int, identity: tuple
) -> pd.DataFrame:
    """Individual-specific utility (Tables V/VI) for each x0, Gaussian calibrated per x0 under each of
    :data:`CALIBRATIONS` (printed, configured upper bound, lower bound). Summaries of ``setting["replicates"]`` draws per cell,
    errors on the paper's printed scale |estimate_x0 - pi_x0| (= W-bar / n).

    Each kind draws from its own stream (seed, identity, "individual", kind). The shuffle does not depend
    on delta, so it is drawn once, from the first kind's stream (then that kind's noise); the other kinds'
    streams give only their Gaussian noise (docs/decisions/workflow.md, "The quick profile's grids").
    """
    counts = np.asarray(counts, dtype=np.int64)
    epsilon, epsilon_local = float(setting["epsilon"]), float(setting["epsilon_local"])
    replicates = int(setting["replicates"])
    sensitivity = _sensitivity(utility)
    calibrations = {}
    for kind, accountant in calibration_accountants(utility):
        calibrations[kind] = [
            calibrate(
                float(
                    delta_for_value(
                        counts, x0, epsilons=[epsilon], epsilon_local=epsilon_local, accountant=accountant
                    )[0]
                ),
                epsilon=epsilon,
                sensitivity=sensitivity,
                delta_floor=utility["delta_floor"],
            )
            for x0 in x0_indices
        ]
    rows = []
    shuffle_done = False
    for kind, accountant in calibration_accountants(utility):
        rng = job_rng(seed, *identity, "individual", kind)
        sigmas = [c.sigma for c in calibrations[kind]]
        # the shuffle is drawn once, from the first kind's stream; the others draw only their noise
        if shuffle_done:
            errors = {
                "gaussian": individual_gaussian_errors(counts.sum(), sigmas, rng=rng, replicates=replicates)
            }
        else:
            errors = individual_utility(
                counts,
                x0_indices,
                epsilon_local=epsilon_local,
                sigmas=sigmas,
                estimator=utility["estimator"],
                rng=rng,
                replicates=replicates,
            )
        for i, (x0, label) in enumerate(zip(x0_indices, x0_labels)):
            base = {
                "n_users": int(counts.sum()),
                "x0": label,
                "x0_index": int(x0),
                "x0_count": int(counts[x0]),
                "epsilon": epsilon,
                "epsilon_local": epsilon_local,
            }
            rows.append(
                {
                    **base,
                    "mechanism": "gaussian",
                    "calibration": kind,
                    "accountant": accountant,
                    **calibrations[kind][i].columns(),
                    **_summary(errors["gaussian"][:, i]),
                }
            )
            if not shuffle_done:  # the shuffle does not depend on delta: report it once
                rows.append(
                    {
                        **base,
                        "mechanism": "shuffle+INV",
                        "calibration": "none",
                        "accountant": "",
                        **_summary(errors["shuffle+INV"][:, i]),
                    }
                )
        shuffle_done = True
    return pd.DataFrame(rows)


def synthetic_community_job(
    utility: dict, setting: dict, n_users: int, *, seed: int, tag: str
) -> pd.DataFrame:
    """Community TV of every mechanism on the synthetic dataset of size n, ``setting["replicates"]``
    draws, Gaussian calibrated at delta-hat (eq. 10) under each of :data:`CALIBRATIONS`."""
    counts = synthetic_dataset(utility, n_users, seed)
    epsilon, epsilon_local = float(setting["epsilon"]), float(setting["epsilon_local"])
    rows = []
    for kind, accountant in calibration_accountants(utility):
        delta = float(
            delta_hat(counts, epsilons=[epsilon], epsilon_local=epsilon_local, accountant=accountant)[0]
        )
        calibration = calibrate(
            delta, epsilon=epsilon, sensitivity=_sensitivity(utility), delta_floor=utility["delta_floor"]
        )
        tv = community_utility(
            counts,
            epsilon_local=epsilon_local,
            sigma=calibration.sigma,
            estimator=utility["estimator"],
            rng=job_rng(seed, tag, "community", n_users, kind),
            replicates=int(setting["replicates"]),
        )
        for mechanism, values in tv.items():
            for run, value in enumerate(values):
                rows.append(
                    {
                        "n_users": n_users,
                        "run": run,
                        "epsilon": epsilon,
                        "epsilon_local": epsilon_local,
                        "calibration": kind,
                        "accountant": accountant,
                        "mechanism": mechanism,
                        "l1_half": value,
                        **calibration.columns(),
                    }
                )
    return pd.DataFrame(rows)


def heatmap_job(cell_counts, *, utility: dict, seed: int, region: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Figures 4/5: one release of the region's full histogram by the Gaussian and by shuffle+INV at
    the heat-map setting. Returns (per-cell estimates, summary).

    The Gaussian is calibrated at delta-hat of each of :data:`CALIBRATIONS` with common random numbers
    (one standard-normal vector scaled by each sigma); the summary has one row per calibration, and
    the per-cell estimates (the picture) are those of the configured calibration.
    """
    counts = np.asarray(cell_counts, dtype=np.int64)
    setting = utility["gowalla"]["heatmap"]
    epsilon, epsilon_local = float(setting["epsilon"]), float(setting["epsilon_local"])
    rng = job_rng(seed, "gowalla-heatmap", region)
    n_users = counts.sum()
    truth = counts / n_users
    randomizer = KRR(epsilon_local=epsilon_local, k=np.asarray(counts).size)
    reports = sample_shuffled_counts(counts, randomizer=randomizer, rng=rng)
    shuffle_inv = estimate_distribution(reports, randomizer=randomizer, estimator=utility["estimator"])
    standard_normal = rng.standard_normal(counts.size)
    rows, pictured = [], None
    for kind, accountant in calibration_accountants(utility):
        delta = float(
            delta_hat(counts, epsilons=[epsilon], epsilon_local=epsilon_local, accountant=accountant)[0]
        )
        calibration = calibrate(
            delta, epsilon=epsilon, sensitivity=_sensitivity(utility), delta_floor=utility["delta_floor"]
        )
        gaussian = (counts + calibration.sigma * standard_normal) / n_users
        if kind == "configured" or pictured is None:
            pictured = gaussian
        rows.append(
            {
                "region": region,
                "n_users": int(n_users),
                "epsilon": epsilon,
                "epsilon_local": epsilon_local,
                "calibration": kind,
                "accountant": accountant,
                "l1_half_gaussian": total_variation(gaussian, truth),
                "l1_half_shuffle_inv": total_variation(shuffle_inv, truth),
                **calibration.columns(),
            }
        )
    cells = pd.DataFrame(
        {"cell": np.arange(counts.size), "original": truth, "gaussian": pictured, "shuffle+INV": shuffle_inv}
    )
    summary = pd.DataFrame(rows)
    order = {
        kind: i for i, kind in enumerate(["configured", *(c for c in CALIBRATIONS if c != "configured")])
    }
    summary = summary.sort_values("calibration", key=lambda c: c.map(order), kind="stable").reset_index(
        drop=True
    )
    return cells, summary
