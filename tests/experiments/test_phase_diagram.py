"""shuffledp.experiments.phase_diagram: delta rules as the equal-guarantee grid names them, the grid, the
boundary interpolation and the Monte-Carlo verdicts."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from shuffledp.experiments.equal_guarantee import targets
from shuffledp.experiments.exact_error import gaussian_expected_error, krr_inv_expected_error
from shuffledp.experiments.phase_diagram import (
    accountant_for,
    boundary,
    bracket_for,
    constant_error,
    delta_rules,
    grid_axes,
    grid_job,
    monte_carlo_verdicts,
    rule_slug,
    verdict,
)

EQUAL = {"delta_fixed": [1e-6], "delta_power": [1.1], "epsilon": [1.0], "epsilon_local_upper": 30.0}
PHASE = {
    "k": [2, 5],
    "n_min": 100,
    "n_max": 10000,
    "n_points": 3,
    "epsilon_min": 0.5,
    "epsilon_max": 4.0,
    "epsilon_points": 3,
    "accountant": "worst-case-upper",
    "binary_accountant": "worst-case-upper",
    "tolerance": 1e-4,
    "data": "uniform",
}


def test_delta_rules_are_named_as_the_equal_guarantee_grid():
    assert [name for name, _, _ in delta_rules(EQUAL)] == [t.delta_rule for t in targets(EQUAL, 1000)]
    assert [rule_slug(name) for name, _, _ in delta_rules(EQUAL)] == ["fixed_1e-06", "n_pow_1.1"]


def test_grid_axes_and_accountants():
    n_axis, epsilon_axis = grid_axes(PHASE)
    assert n_axis.tolist() == [100, 1000, 10000] and epsilon_axis == pytest.approx([0.5, math.sqrt(2), 4.0])
    assert accountant_for(PHASE, 2) == "worst-case-upper" and accountant_for(PHASE, 5) == "worst-case-upper"


@pytest.mark.parametrize("key, k", [("binary_accountant", 2), ("accountant", 5)])
def test_every_panel_is_calibrated_on_a_guarantee(key, k):
    """Every panel, k = 2 included, is calibrated on a guarantee (worst-case-lower is a lower bound, not one)."""
    from shuffledp.accounting import BoundKind, accountant_class

    assert accountant_class(accountant_for(PHASE, k)).kind is BoundKind.UPPER
    with pytest.raises(
        ValueError,
        match=rf"`utility.phase_diagram.{key}` must be an upper-bound accountant .*'worst-case-lower' \(lower bound\)",
    ):
        accountant_for({**PHASE, key: "worst-case-lower"}, k)


def test_shipped_config_calibrates_every_panel_on_an_upper_bound():
    from pathlib import Path

    import yaml

    from shuffledp.accounting import BoundKind, accountant_class

    config = yaml.safe_load(
        (Path(__file__).resolve().parents[2] / "config" / "config.yaml").read_text(encoding="utf-8")
    )
    phase = config["utility"]["phase_diagram"]
    assert all(accountant_class(accountant_for(phase, k)).kind is BoundKind.UPPER for k in phase["k"])


def test_grid_rows_are_the_exact_rows():
    grid = grid_job(
        {**PHASE, "n_max": 100, "n_points": 2, "epsilon_points": 2}, EQUAL, k=5, neighbouring="replace-one"
    )
    assert len(grid) == 2 * 1 * 3  # rules x n x epsilon (0.5 and 4.0, and the equal-guarantee grid's 1.0)
    assert sorted(set(grid["epsilon"])) == pytest.approx([0.5, 1.0, 4.0])
    row = grid.iloc[0]
    counts = np.full(5, 20)
    assert (
        row["l1_half_shuffle"] == krr_inv_expected_error(counts, epsilon_local=row["epsilon_local"]).l1_half
    )
    assert row["l1_half_gaussian"] == gaussian_expected_error(k=5, n_users=100, sigma=row["sigma"]).l1_half
    assert row["log_ratio"] == pytest.approx(math.log(row["l1_half_shuffle"] / row["l1_half_gaussian"]))
    assert set(grid["accountant"]) == {"worst-case-upper"} and set(grid["accountant_kind"]) == {"upper bound"}


def test_boundary_interpolates_in_log_epsilon():
    """log ratio = log(epsilon) - log(2) crosses 0 at epsilon = 2 exactly (linear in log epsilon)."""
    epsilons = np.array([0.5, 1.0, 4.0, 8.0])
    grid = pd.DataFrame(
        {
            "delta_rule": "r",
            "k": 3,
            "n_users": 10,
            "epsilon": epsilons,
            "log_ratio": np.log(epsilons) - math.log(2.0),
        }
    )
    crossing = boundary(grid)
    assert len(crossing) == 1 and crossing["epsilon"].iloc[0] == pytest.approx(2.0)
    assert bool(crossing["shuffle_wins_below"].iloc[0])


def test_monte_carlo_verdicts():
    keys = {"dataset": "synthetic", "k": 5, "n_users": 200, "delta_rule": "fixed 0.001"}
    rows = []
    for epsilon, shuffle, gaussian in ((0.5, 0.1, 0.2), (1.0, 0.2, 0.1), (2.0, 0.1, 0.101)):
        rows.append(
            {
                **keys,
                "epsilon": epsilon,
                "mechanism": "shuffle+INV-unprojected",
                "calibration": "weak-adversary",
                "l1_half_mean": shuffle,
                "l1_half_se": 0.001,
            }
        )
        rows.append(
            {
                **keys,
                "epsilon": epsilon,
                "mechanism": "shuffle+INV-unprojected",
                "calibration": "worst-case-lower",
                "l1_half_mean": 0.0,
                "l1_half_se": 0.01,
            }
        )
        rows.append(
            {
                **keys,
                "epsilon": epsilon,
                "mechanism": "gaussian",
                "calibration": "none",
                "l1_half_mean": gaussian,
                "l1_half_se": 0.001,
            }
        )
        # the projected Gaussian is not the phase diagram's pair (both sides unprojected): ignored
        rows.append(
            {
                **keys,
                "epsilon": epsilon,
                "mechanism": "gaussian+proj",
                "calibration": "none",
                "l1_half_mean": 0.0,
                "l1_half_se": 0.01,
            }
        )
    verdicts = monte_carlo_verdicts(pd.DataFrame(rows))
    assert verdicts["verdict"].tolist() == ["shuffle", "gaussian", "undecided"]
    assert verdicts["ratio"].tolist() == pytest.approx([0.5, 2.0, 1 / 1.01])


def test_grid_and_equal_guarantee_jobs_calibrate_the_gaussian_without_diffprivlib():
    """The phase-diagram grid and the equal-guarantee jobs use only the log-space sigma, so they do not import
    diffprivlib (with scikit-learn and scipy.stats: ~0.85 s CPU per job); sigma is the one of
    mechanisms.gaussian_calibration, bit for bit."""
    import subprocess
    import sys

    script = f"""
import sys
from shuffledp.experiments.equal_guarantee import calibration_job, dataset_counts, utility_job
from shuffledp.experiments.phase_diagram import grid_job
grid = grid_job({{**{PHASE!r}, "n_max": 100, "n_points": 2, "epsilon_points": 2}}, {EQUAL!r}, k=5, neighbouring="replace-one")
equal = {{"datasets": ["synthetic"], "n_users": [200], "epsilon": [1.0], "delta_fixed": [1e-6], "delta_power": [],
          "replicates": 5, "epsilon_local_upper": 30.0}}
utility = {{"synthetic": {{"k": 5, "mean": 0.0, "standard_deviation": 1.0, "bin_width": 1.0}}}}
rows = utility_job(dataset_counts("synthetic", 200, utility=utility, seed=1), calibration_job(equal, k=5, n_users=200),
                   dataset="synthetic", equal=equal, neighbouring="replace-one", seed=1)
assert "diffprivlib" not in sys.modules, "diffprivlib was imported"
print(repr([(r.epsilon, r.delta, r.sigma) for r in grid.itertuples()]))
print(repr([(r.epsilon, r.delta, r.sigma) for r in rows[rows["mechanism"] == "gaussian"].itertuples()]))
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    from shuffledp.mechanisms import gaussian_calibration, sensitivity_for

    lines = done.stdout.strip().splitlines()
    for line in lines:
        cases = eval(line)
        assert cases
        for epsilon, delta, sigma in cases:
            assert (
                sigma
                == gaussian_calibration(
                    epsilon=epsilon, delta=delta, sensitivity=sensitivity_for("replace-one")
                ).sigma
            )


def test_shards_together_are_the_whole_grid():
    """A k's grid split into jobs (interleaved slices) gives, combined as utility_phase_diagram
    combines them (sorted by rule, k, n, epsilon), exactly the rows of one job; no point is in two shards."""
    keys = ["delta_rule", "k", "n_users", "epsilon"]
    whole = grid_job(PHASE, EQUAL, k=5, neighbouring="replace-one")
    parts = [
        grid_job({**PHASE, "shards": 4}, EQUAL, k=5, neighbouring="replace-one", shard=s) for s in range(4)
    ]
    assert [len(part) for part in parts] == [6, 6, 6, 6]  # 24 points: 2 rules x 3 n x 4 epsilon (with 1.0)
    combined = pd.concat(parts, ignore_index=True).sort_values(keys, kind="stable").reset_index(drop=True)
    assert not combined.duplicated(keys).any()
    pd.testing.assert_frame_equal(combined, whole.sort_values(keys, kind="stable").reset_index(drop=True))
    empty = grid_job({**PHASE, "shards": 40}, EQUAL, k=5, neighbouring="replace-one", shard=39)
    assert empty.empty and list(empty.columns) == list(whole.columns)


@pytest.mark.parametrize("shard", [-1, 4])
def test_a_shard_outside_the_grid_is_refused(shard):
    with pytest.raises(
        ValueError, match=rf"`shard` must be in 0..3 \(utility.phase_diagram.shards = 4\); got {shard}"
    ):
        grid_job({**PHASE, "shards": 4}, EQUAL, k=5, neighbouring="replace-one", shard=shard)


def test_publication_config_is_at_least_40_by_40_and_sharded():
    """config/phase_publication.yaml: at least 40 n x 40 epsilon per k and delta rule, split into
    several jobs per k, and a valid overlay of config/config.yaml."""
    from pathlib import Path

    import yaml
    from snakemake.utils import update_config

    from shuffledp.config import load_schema, validate_config

    root = Path(__file__).resolve().parents[2]
    config = yaml.safe_load((root / "config" / "config.yaml").read_text(encoding="utf-8"))
    update_config(
        config, yaml.safe_load((root / "config" / "phase_publication.yaml").read_text(encoding="utf-8"))
    )
    config = validate_config(config, load_schema(root / "config" / "schema" / "config.schema.yaml"))
    phase = config["utility"]["phase_diagram"]
    n_axis, epsilon_axis = grid_axes(phase)
    assert len(n_axis) >= 40 and len(epsilon_axis) >= 40 and phase["shards"] > 1
    assert {100, 1000, 10**4, 10**5, 10**6, 10**7, 10**8} <= set(n_axis.tolist())


def test_binary_bracket_is_a_lower_bound_and_only_at_k2():
    """``binary_bracket`` (k = 2 only) must be a lower bound: where it exceeds the target every
    guarantee does; an upper bound there is refused, naming the key; the shipped config sets worst-case-lower."""
    from pathlib import Path

    import yaml

    assert bracket_for(PHASE, 2) is None
    assert bracket_for({**PHASE, "binary_bracket": "worst-case-lower"}, 2) == "worst-case-lower"
    assert bracket_for({**PHASE, "binary_bracket": "worst-case-lower"}, 5) is None
    with pytest.raises(
        ValueError,
        match=r"`utility.phase_diagram.binary_bracket` must be a lower-bound accountant .*"
        r"'weak-adversary' \(upper bound\)",
    ):
        grid_job({**PHASE, "binary_bracket": "weak-adversary"}, EQUAL, k=2, neighbouring="replace-one")
    root = Path(__file__).resolve().parents[2]
    shipped = yaml.safe_load((root / "config" / "config.yaml").read_text(encoding="utf-8"))["utility"][
        "phase_diagram"
    ]
    assert bracket_for(shipped, 2) == "worst-case-lower"


def test_bracketed_k2_grid_moves_within_the_tolerance_and_shards_still_equal_one_job():
    """The k = 2 rows with ``binary_bracket``: each eps0 within ``tolerance`` of the plain search's (both meet the
    target by worst-case-upper; tested in tests/accounting/test_calibrate.py), and 3 shards combined are the
    rows of one job, row for row."""
    keys = ["delta_rule", "k", "n_users", "epsilon"]
    phase = {**PHASE, "binary_bracket": "worst-case-lower", "tolerance": 1e-3}
    plain = grid_job({**PHASE, "tolerance": 1e-3}, EQUAL, k=2, neighbouring="replace-one")
    whole = grid_job(phase, EQUAL, k=2, neighbouring="replace-one")
    pd.testing.assert_frame_equal(whole[keys], plain[keys])
    moved = (whole["epsilon_local"] - plain["epsilon_local"]).abs()
    assert moved.max() <= 1e-3 and (whole["epsilon_local"] >= whole["epsilon"]).all()
    parts = [
        grid_job({**phase, "shards": 3}, EQUAL, k=2, neighbouring="replace-one", shard=s) for s in range(3)
    ]
    combined = pd.concat(parts, ignore_index=True).sort_values(keys, kind="stable").reset_index(drop=True)
    pd.testing.assert_frame_equal(combined, whole.sort_values(keys, kind="stable").reset_index(drop=True))


def test_grid_axes_join_the_equal_guarantee_points_inside_the_ranges():
    """Every Monte-Carlo marker gets a point computed at its own n and epsilon: the equal-guarantee grid's
    n and epsilon inside the phase grid's ranges join its axes (outside ones do not widen it). The old axes
    put a marker at n = 1,000 in the cell computed at n = 100."""
    phase = {**PHASE, "n_max": 100000, "n_points": 2}  # n axis 100, 100000
    equal = {**EQUAL, "n_users": [50, 1000, 10000, 10**7], "epsilon": [0.1, 1.0, 2.0, 9.0]}
    n_axis, epsilon_axis = grid_axes(phase, equal)
    assert n_axis.tolist() == [100, 1000, 10000, 100000]
    assert epsilon_axis == pytest.approx([0.5, 1.0, math.sqrt(2), 2.0, 4.0])
    assert grid_axes(phase)[0].tolist() == [100, 100000]  # without the equal-guarantee grid: as configured


def test_neither_is_useful_where_both_errors_reach_the_constant_estimate():
    """A constant estimate (the uniform distribution) has worst-case half L1 error 1 - 1/k; where both
    estimators' expected errors reach it the verdict is "neither", never a win (the old grid counted a
    "win" between errors of 27 and 210)."""
    assert constant_error(2) == 0.5 and constant_error(192) == pytest.approx(191 / 192)
    assert verdict(210.0, 27.0, 192) == "neither" and verdict(0.999, 0.9999, 192) == "neither"
    assert verdict(0.2, 3.0, 192) == "shuffle" and verdict(3.0, 0.2, 15) == "gaussian"
    assert verdict(math.nan, 0.2, 15) == ""
    with pytest.raises(ValueError, match=r"`k` must be an integer >= 2; got 1"):
        constant_error(1)
    rows = [
        {
            "dataset": "d",
            "k": 4,
            "n_users": 10,
            "epsilon": e,
            "delta_rule": "r",
            "calibration": c,
            "mechanism": m,
            "l1_half_mean": v,
            "l1_half_se": 0.001,
        }
        for e, shuffle, gaussian in ((0.1, 5.0, 2.0), (1.0, 0.1, 0.5))
        for m, c, v in (
            ("shuffle+INV-unprojected", "weak-adversary", shuffle),
            ("gaussian", "none", gaussian),
        )
    ]
    verdicts = monte_carlo_verdicts(pd.DataFrame(rows))
    assert verdicts["verdict"].tolist() == ["neither", "shuffle"]


def test_grid_rows_carry_the_constant_error_and_the_verdict():
    grid = grid_job(
        {**PHASE, "n_max": 100, "n_points": 1, "epsilon_points": 2}, EQUAL, k=5, neighbouring="replace-one"
    )
    assert (grid["l1_half_constant"] == 0.8).all()
    for row in grid.itertuples():
        assert row.verdict == verdict(row.l1_half_shuffle, row.l1_half_gaussian, 5)


def test_boundary_marks_crossings_between_useless_points():
    epsilons = np.array([0.5, 1.0, 4.0])
    grid = pd.DataFrame(
        {
            "delta_rule": "r",
            "k": 2,
            "n_users": 10,
            "epsilon": epsilons,
            "log_ratio": np.log(epsilons) - math.log(2.0),
            "l1_half_shuffle": [0.6, 0.7, 0.1],
            "l1_half_gaussian": [0.9, 0.6, 0.3],
        }
    )
    crossing = boundary(grid)
    assert len(crossing) == 1 and not bool(crossing["neither_useful"].iloc[0])
    crossing = boundary(grid.assign(l1_half_shuffle=[0.6, 0.7, 0.9], l1_half_gaussian=[0.9, 0.6, 0.8]))
    assert bool(crossing["neither_useful"].iloc[0])
