"""Phase diagram: where shuffled k-RR + INV and the analytic Gaussian have equal expected error.

Over an (n, epsilon) grid (``utility.phase_diagram``: n and epsilon log-spaced) and for each k, at every
delta rule of ``utility.equal_guarantee`` (each fixed delta, each delta = 1 / n^a), :func:`grid_job` computes
the *exact* expected TV of unprojected shuffle+INV at the eps0 of ``accountant`` (``binary_accountant``
for k = 2, see :func:`accountant_for`; both must be upper bounds, recorded per row with their kind) and of the unprojected
Gaussian (:mod:`shuffledp.experiments.exact_error`), on ``data`` (uniform or zipf:S, as
:func:`shuffledp.experiments.compare.dataset_counts`). Their log ratio is smooth in log epsilon, so
:func:`boundary` finds each crossing (ratio = 1) by linear interpolation of log ratio in log epsilon
between grid points; :func:`monte_carlo_verdicts` reads the equal-guarantee grid's verdicts for the
same pair (``shuffle+INV-unprojected`` at the weak-adversary eps0 against ``gaussian``) to draw on top.

The calibrations are the cost (about 10 accountant evaluations each); the exact TV rows are
milliseconds. Calibrations whose target cannot be met below ``epsilon_local_upper`` (only at tiny n and
large epsilon) are left as NaN.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping

import numpy as np
import pandas as pd

from shuffledp.accounting import BoundKind, accountant_class
from shuffledp.accounting.calibrate import calibrate_epsilon_local
from shuffledp.experiments.compare import dataset_counts
from shuffledp.experiments.exact_error import gaussian_expected_error, krr_inv_expected_error
from shuffledp.mechanisms import analytic_gaussian_sigma, sensitivity_for

__all__ = [
    "delta_rules",
    "rule_slug",
    "grid_axes",
    "grid_shards",
    "accountant_for",
    "bracket_for",
    "grid_job",
    "boundary",
    "monte_carlo_verdicts",
    "constant_error",
    "verdict",
]


def accountant_for(phase: Mapping, k: int) -> str:
    """``binary_accountant`` for k = 2, else ``accountant``; either must be a guarantee (an accountant of
    kind "upper bound": its eps0 is valid for every dataset), else ``ValueError`` naming the key. For
    k = 2 ``worst-case-upper`` is the certified maximum over datasets (up to about 2 CPU s per calibration,
    0.05-0.3 s below n = 10^4);
    ``worst-case-lower`` (a lower bound, not a guarantee) is refused."""
    key = "binary_accountant" if int(k) == 2 else "accountant"
    name = str(phase[key])
    kind = accountant_class(name).kind
    if kind is not BoundKind.UPPER:
        raise ValueError(
            f"`utility.phase_diagram.{key}` must be an upper-bound accountant (a guarantee for every "
            f"dataset, e.g. worst-case-upper); got {name!r} ({kind.value})."
        )
    return name


def bracket_for(phase: Mapping, k: int) -> str | None:
    """``binary_bracket`` for k = 2 (None if unset, and at k >= 3): a LOWER-bound accountant whose cheap
    calibration brackets each k = 2 calibration first (``calibrate_epsilon_local_traced``'s
    ``lower``: the eps0 found still meets the target by the upper-bound accountant's own value); any other kind
    is refused with ``ValueError`` naming the key."""
    name = phase.get("binary_bracket") if int(k) == 2 else None
    if name is not None and accountant_class(str(name)).kind is not BoundKind.LOWER:
        raise ValueError(
            f"`utility.phase_diagram.binary_bracket` must be a lower-bound accountant (where it exceeds "
            f"the target so does every guarantee), e.g. worst-case-lower; got {name!r} "
            f"({accountant_class(str(name)).kind.value})."
        )
    return None if name is None else str(name)


def delta_rules(equal: Mapping) -> list[tuple[str, str, float]]:
    """(name, kind, value) of every delta rule of ``utility.equal_guarantee``, named as its ``delta_rule``
    column: ("fixed 1e-06", "fixed", 1e-6) and ("1/n^1.1", "power", 1.1)."""
    rules = [(f"fixed {float(d):g}", "fixed", float(d)) for d in equal["delta_fixed"]]
    return rules + [(f"1/n^{float(a):g}", "power", float(a)) for a in equal["delta_power"]]


def rule_slug(name: str) -> str:
    """File-name form of a rule name: "fixed 1e-06" -> "fixed_1e-06", "1/n^1.1" -> "n_pow_1.1"."""
    return name.replace("1/n^", "n_pow_").replace(" ", "_")


def _delta(kind: str, value: float, n_users: int) -> float:
    return value if kind == "fixed" else float(n_users) ** -value


def grid_axes(phase: Mapping, equal: Mapping | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The n axis and the epsilon axis of the grid.

    Args:
        phase: ``utility.phase_diagram`` (n_min, n_max, n_points; epsilon_min, epsilon_max, epsilon_points).
        equal: ``utility.equal_guarantee`` or None. Given, its ``n_users`` and ``epsilon`` inside the grid's
            ranges join the axes, so every Monte-Carlo verdict drawn on the diagram sits on a point
            computed at its own n and epsilon (never in a neighbour's cell).

    Returns:
        (n axis: sorted unique integers, log-spaced from n_min to n_max; epsilon axis: sorted, unique,
        log-spaced from epsilon_min to epsilon_max).
    """
    n_axis = np.round(np.geomspace(phase["n_min"], phase["n_max"], int(phase["n_points"]))).astype(np.int64)
    epsilon_axis = np.geomspace(phase["epsilon_min"], phase["epsilon_max"], int(phase["epsilon_points"]))
    if equal is not None:
        extra_n = np.asarray(equal.get("n_users", []), dtype=np.int64)
        extra_epsilon = np.asarray(equal.get("epsilon", []), dtype=float)
        n_axis = np.concatenate([n_axis, extra_n[(extra_n >= n_axis[0]) & (extra_n <= n_axis[-1])]])
        inside = (extra_epsilon >= epsilon_axis[0]) & (extra_epsilon <= epsilon_axis[-1])
        epsilon_axis = np.concatenate([epsilon_axis, extra_epsilon[inside]])
    return np.unique(n_axis), np.unique(epsilon_axis)


def constant_error(k: int) -> float:
    """The expected half L1 error of the best estimate that ignores the data: 1 - 1/k.

    A constant estimate c (a distribution over k cells) must serve every true distribution; its worst
    half L1 error is max over pi of TV(c, pi) = 1 - min_j c_j, smallest (1 - 1/k) for the uniform c. An
    estimator whose expected half L1 error reaches this does no better than guessing the uniform
    distribution without collecting anything (docs/decisions/compare.md, "Neither is useful").

    Args:
        k: number of cells, at least 2.

    Returns:
        1 - 1/k.

    Raises:
        ValueError: k below 2.
    """
    if int(k) < 2:
        raise ValueError(f"`k` must be an integer >= 2; got {k}")
    return 1.0 - 1.0 / int(k)


def verdict(l1_half_shuffle: float, l1_half_gaussian: float, k: int) -> str:
    """Who has the lower expected half L1 error: "shuffle", "gaussian", "neither" (both at least
    :func:`constant_error`: neither is useful, whoever is lower) or "" (not computed: a NaN error)."""
    if not (math.isfinite(l1_half_shuffle) and math.isfinite(l1_half_gaussian)):
        return ""
    if min(l1_half_shuffle, l1_half_gaussian) >= constant_error(k):
        return "neither"
    return "shuffle" if l1_half_shuffle < l1_half_gaussian else "gaussian"


_GRID_COLUMNS = [
    "delta_rule",
    "k",
    "n_users",
    "epsilon",
    "delta",
    "accountant",
    "accountant_kind",
    "epsilon_local",
    "sigma",
    "l1_half_shuffle",
    "l1_half_gaussian",
    "log_ratio",
    "l1_half_constant",
    "verdict",
]


def _grid_point(
    accountant: str,
    phase: Mapping,
    equal: Mapping,
    *,
    k: int,
    n_users: int,
    epsilon: float,
    delta: float,
    counts,
    sensitivity: float,
) -> dict:
    """eps0, sigma, the exact half L1 errors, their log ratio and the verdict at one grid point."""
    lower = bracket_for(phase, k)
    bracket = {} if lower is None else {"lower": lower}
    try:
        epsilon_local = calibrate_epsilon_local(
            accountant,
            n_users=n_users,
            k=k,
            epsilon=epsilon,
            delta=delta,
            upper=float(equal["epsilon_local_upper"]),
            tolerance=float(phase["tolerance"]),
            **bracket,
        )
    except ValueError:  # even the upper end of the search meets the target
        epsilon_local = math.nan
    sigma = analytic_gaussian_sigma(epsilon=epsilon, delta=delta, sensitivity=sensitivity)
    l1_half_gaussian = gaussian_expected_error(k=k, n_users=n_users, sigma=sigma).l1_half
    l1_half_shuffle = (
        krr_inv_expected_error(counts, epsilon_local=epsilon_local).l1_half
        if math.isfinite(epsilon_local)
        else math.nan
    )
    return {
        "epsilon_local": epsilon_local,
        "sigma": sigma,
        "l1_half_shuffle": l1_half_shuffle,
        "l1_half_gaussian": l1_half_gaussian,
        "log_ratio": math.log(l1_half_shuffle / l1_half_gaussian)
        if math.isfinite(l1_half_shuffle)
        else math.nan,
        "l1_half_constant": constant_error(k),
        "verdict": verdict(l1_half_shuffle, l1_half_gaussian, k),
    }


def grid_shards(phase: Mapping) -> int:
    """How many jobs share each k's grid (``shards``, default 1): shard s of S computes the points whose
    index in (delta rule, n, epsilon) order is s modulo S, so every shard gets its share of the costly
    large-n calibrations and the shards take about equal time."""
    return int(phase.get("shards", 1))


def grid_job(phase: Mapping, equal: Mapping, *, k: int, neighbouring: str, shard: int = 0) -> pd.DataFrame:
    """One row per (delta rule, n, epsilon) at this k, of shard ``shard`` (of :func:`grid_shards`): delta,
    eps0, sigma, the exact half L1 errors, their log ratio, the error of the best constant estimate and the
    verdict (:func:`verdict`). The shards' rows together are the whole grid; its axes are :func:`grid_axes`
    of ``phase`` and ``equal``."""
    shards = grid_shards(phase)
    if not 0 <= int(shard) < shards:
        raise ValueError(
            f"`shard` must be in 0..{shards - 1} (utility.phase_diagram.shards = {shards}); got {shard}"
        )
    n_axis, epsilon_axis = grid_axes(phase, equal)
    sensitivity = sensitivity_for(neighbouring)
    accountant = accountant_for(phase, k)
    bracket_for(phase, k)  # a wrong binary_bracket is refused before any point is computed
    accountant_kind = accountant_class(accountant).kind.value
    points = [
        (rule, kind, value, n_users, epsilon)
        for rule, kind, value in delta_rules(equal)
        for n_users in n_axis
        for epsilon in epsilon_axis
    ][int(shard) :: shards]
    rows = []
    for (rule, kind, value, n_users), group in itertools.groupby(points, key=lambda point: point[:4]):
        counts = dataset_counts(str(phase["data"]), n_users=int(n_users), k=k)
        delta = _delta(kind, value, int(n_users))
        for epsilon in (point[4] for point in group):
            row = _grid_point(
                accountant,
                phase,
                equal,
                k=k,
                n_users=int(n_users),
                epsilon=float(epsilon),
                delta=delta,
                counts=counts,
                sensitivity=sensitivity,
            )
            rows.append(
                {
                    "delta_rule": rule,
                    "k": k,
                    "n_users": int(n_users),
                    "epsilon": float(epsilon),
                    "delta": delta,
                    "accountant": accountant,
                    "accountant_kind": accountant_kind,
                    **row,
                }
            )
    return pd.DataFrame(rows, columns=_GRID_COLUMNS)


def boundary(grid: pd.DataFrame) -> pd.DataFrame:
    """Each crossing of log(TV shuffle / TV Gaussian) = 0 along epsilon, per (delta rule, k, n): the
    epsilon found by linear interpolation in log epsilon, and which side the shuffle wins below it
    (``shuffle_wins_below``), and ``neither_useful``: True where both grid points around the crossing
    have the verdict "neither" (both errors at least :func:`constant_error`)."""
    rows = []
    for (rule, k, n_users), group in grid.groupby(["delta_rule", "k", "n_users"], sort=True):
        group = group.sort_values("epsilon").dropna(subset=["log_ratio"])
        log_epsilon, ratio = np.log(group["epsilon"].to_numpy()), group["log_ratio"].to_numpy()
        if {"l1_half_shuffle", "l1_half_gaussian"} <= set(group.columns):
            smaller = np.minimum(group["l1_half_shuffle"].to_numpy(), group["l1_half_gaussian"].to_numpy())
            useless = smaller >= constant_error(int(k))
        else:  # a grid without the errors themselves: no point is known to be useless
            useless = np.zeros(len(group), dtype=bool)
        for i in np.flatnonzero(np.sign(ratio[:-1]) * np.sign(ratio[1:]) < 0):
            share = ratio[i] / (ratio[i] - ratio[i + 1])
            rows.append(
                {
                    "delta_rule": rule,
                    "k": int(k),
                    "n_users": int(n_users),
                    "epsilon": float(
                        math.exp(log_epsilon[i] + share * (log_epsilon[i + 1] - log_epsilon[i]))
                    ),
                    "shuffle_wins_below": bool(ratio[i] < 0),
                    "neither_useful": bool(useless[i] and useless[i + 1]),
                }
            )
    return pd.DataFrame(
        rows, columns=["delta_rule", "k", "n_users", "epsilon", "shuffle_wins_below", "neither_useful"]
    )


def monte_carlo_verdicts(equal_guarantee: pd.DataFrame, *, z: float = 1.96) -> pd.DataFrame:
    """The equal-guarantee grid's verdict on the phase diagram's pair at every (dataset, k, n, epsilon,
    delta rule): ``shuffle+INV-unprojected`` at the weak-adversary eps0 against ``gaussian``; "shuffle" or
    "gaussian" when their mean +- z SE intervals do not overlap, else "undecided"; "neither" where both
    means are at least :func:`constant_error` (neither is useful, whoever is lower)."""
    keys = ["dataset", "k", "n_users", "epsilon", "delta_rule"]
    frame = equal_guarantee
    shuffle = frame[
        (frame["mechanism"] == "shuffle+INV-unprojected") & (frame["calibration"] == "weak-adversary")
    ]
    gaussian = frame[frame["mechanism"] == "gaussian"]
    pair = shuffle[keys + ["l1_half_mean", "l1_half_se"]].merge(
        gaussian[keys + ["l1_half_mean", "l1_half_se"]],
        on=keys,
        suffixes=("_shuffle", "_gaussian"),
        validate="one_to_one",
    )
    low = lambda side: pair[f"l1_half_mean_{side}"] - z * pair[f"l1_half_se_{side}"]
    high = lambda side: pair[f"l1_half_mean_{side}"] + z * pair[f"l1_half_se_{side}"]
    pair["verdict"] = np.where(
        high("shuffle") < low("gaussian"),
        "shuffle",
        np.where(high("gaussian") < low("shuffle"), "gaussian", "undecided"),
    )
    floor = 1.0 - 1.0 / pair["k"].astype(float)
    useless = np.minimum(pair["l1_half_mean_shuffle"], pair["l1_half_mean_gaussian"]) >= floor
    pair["verdict"] = np.where(useless, "neither", pair["verdict"])
    pair["ratio"] = pair["l1_half_mean_shuffle"] / pair["l1_half_mean_gaussian"]
    return pair.sort_values(keys, kind="stable").reset_index(drop=True)
