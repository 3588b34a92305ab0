"""Which randomizer to shuffle, over a grid: the equal-guarantee comparison redrawn with every shuffled randomizer.

For each dataset of ``utility.randomizers`` (``synthetic``: the utility stage's synthetic histogram; a region:
its grid of cells, Paris k = 192, San Francisco k = 408), each number of users n and each target (epsilon,
delta) (the delta rules of the equal-guarantee experiment, :func:`~shuffledp.experiments.equal_guarantee.targets`),
:func:`grid_job` sets every shuffled randomizer at the eps0 of its tightest valid upper bound (as
:func:`~shuffledp.experiments.which_randomizer.calibrate_tightest` finds it) beside the
Gaussian and geometric curators (:func:`~shuffledp.experiments.which_randomizer.compare_randomizers`'s rows:
exact expected half L1 and squared L2 of the unbiased estimates, nothing simulated). The datasets are the
equal-guarantee experiment's own (:func:`~shuffledp.experiments.equal_guarantee.dataset_counts`: a region's n
users drawn with replacement from its check-ins, from the seeded stream of (dataset, n)).

:func:`verdicts` reduces the rows to one line per (dataset, n, target): the best shuffled randomizer, whether
shuffled k-RR beats the Gaussian curator, and which shuffled randomizers do -- what the report counts.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pandas as pd

from shuffledp.experiments.equal_guarantee import SYNTHETIC, targets
from shuffledp.experiments.which_randomizer import (
    curator_rows,
    first_best,
    randomizer_rows,
    shuffled_randomizers,
)

__all__ = ["KEYS", "CURATORS", "check_randomizer_grid_config", "grid_job", "combine", "verdicts"]

#: key columns of one row of the tidy result
KEYS = ["dataset", "k", "n_users", "epsilon", "delta_rule", "delta", "randomizer"]
#: the rows that are curators, not shuffled randomizers
CURATORS = ("gaussian", "geometric")


def check_randomizer_grid_config(config: Mapping) -> None:
    """Cross-key checks of ``utility.randomizers`` (the schema checks types and ranges).

    Args:
        config: the whole configuration.

    Raises:
        ConfigError: a dataset that is neither ``synthetic`` nor a configured region (naming it), or no delta.
    """
    from shuffledp.config import ConfigError

    grid = (config.get("utility") or {}).get("randomizers")
    if grid is None:
        return
    if not grid["delta_fixed"] and not grid["delta_power"]:
        raise ConfigError(
            "`utility.randomizers` must name at least one delta (delta_fixed or delta_power); got none."
        )
    known = {SYNTHETIC, *config.get("regions", {})}
    for dataset in grid["datasets"]:
        if dataset not in known:
            raise ConfigError(
                f"`utility.randomizers.datasets` must name {', '.join(sorted(known))}; got {dataset!r}."
            )


def grid_job(
    counts, *, dataset: str, grid: Mapping, neighbouring: str, randomizers: Sequence[str] | None = None
) -> pd.DataFrame:
    """Every shuffled randomizer and both curators at every target of ``grid`` on one dataset of n users.

    Args:
        counts: the dataset (k cells, n users).
        dataset: its name (a column).
        grid: ``utility.randomizers`` (``epsilon``, ``delta_fixed``, ``delta_power``).
        neighbouring: the curators' neighbouring relation.
        randomizers: registered keys (None: every one that can be built at k).

    Returns:
        One row per (target, randomizer or curator): the :data:`KEYS`, ``name``, ``parameters``,
        ``epsilon_local``, ``accountant``, ``l1_half``, ``squared_l2``.
    """
    n_users, k = int(sum(counts)), len(counts)
    keys = list(shuffled_randomizers(k) if randomizers is None else randomizers)
    records = []
    for target in targets(grid, n_users):
        rows = randomizer_rows(counts, epsilon=target.epsilon, delta=target.delta, randomizers=keys)
        rows += curator_rows(
            n_users=n_users, k=k, epsilon=target.epsilon, delta=target.delta, neighbouring=neighbouring
        )
        for row in rows:
            records.append(
                {
                    "dataset": dataset,
                    "k": k,
                    "n_users": n_users,
                    "epsilon": target.epsilon,
                    "delta_rule": target.delta_rule,
                    "delta": target.delta,
                    **row,
                }
            )
    return pd.DataFrame.from_records(records)


def combine(frames: Sequence[pd.DataFrame]) -> pd.DataFrame:
    """The tidy result: every job's rows, sorted by the keys (randomizers in their row order).

    Args:
        frames: the jobs' frames.

    Returns:
        One frame.

    Raises:
        ValueError: a key repeats.
    """
    frame = pd.concat(list(frames), ignore_index=True)
    if frame.duplicated(KEYS).any():
        raise ValueError(
            f"`frames` must not repeat a row; got {frame[frame.duplicated(KEYS)][KEYS].iloc[0].to_dict()}."
        )
    order = {key: rank for rank, key in enumerate(dict.fromkeys(frame["randomizer"]))}
    frame = frame.assign(_order=frame["randomizer"].map(order))
    frame = frame.sort_values(["dataset", "n_users", "epsilon", "delta_rule", "_order"], kind="stable")
    return frame.drop(columns="_order").reset_index(drop=True)


def verdicts(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per (dataset, k, n, target): the best shuffled randomizer by expected half L1, whether k-RR beats
    the Gaussian curator, and the shuffled randomizers that do.

    Args:
        frame: the tidy result (:func:`grid_job` rows).

    Returns:
        Columns ``dataset``, ``k``, ``n_users``, ``epsilon``, ``delta_rule``, ``best_shuffled``,
        ``krr_beats_gaussian``, ``beating_gaussian`` (comma-separated keys, empty for none),
        ``other_beats_gaussian_where_krr_does_not``.
    """
    records = []
    for key, group in frame.groupby(["dataset", "k", "n_users", "epsilon", "delta_rule"], sort=True):
        gaussian = float(group.loc[group["randomizer"] == "gaussian", "l1_half"].iloc[0])
        shuffled = group[~group["randomizer"].isin(CURATORS)]
        best = shuffled["randomizer"].iloc[first_best(shuffled["l1_half"].tolist())]
        beating = shuffled.loc[shuffled["l1_half"] < gaussian, "randomizer"].tolist()
        krr = "krr" in beating
        records.append(
            {
                **dict(zip(["dataset", "k", "n_users", "epsilon", "delta_rule"], key, strict=True)),
                "best_shuffled": best,
                "krr_beats_gaussian": krr,
                "beating_gaussian": ",".join(beating),
                "other_beats_gaussian_where_krr_does_not": bool(beating) and not krr,
            }
        )
    return pd.DataFrame.from_records(records)
