"""The equal-guarantee experiment: targets, calibration, one (dataset, n) job, the verdict
table, and the config checks. Closed forms: Gaussian MSE sigma^2 / n^2 and TV k sigma sqrt(2/pi) / (2n),
geometric 2 alpha / (1 - alpha)^2 / n^2 and k alpha / ((1 - alpha^2) n), unprojected INV's variance."""

from __future__ import annotations

import copy
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from shuffledp.accounting import get_accountant
from shuffledp.config import ConfigError, load_schema, validate_config
from shuffledp.experiments import equal_guarantee as E

ROOT = Path(__file__).resolve().parents[2]
SEED = 20240612
SMALL = {
    "datasets": ["synthetic"],
    "n_users": [1000],
    "epsilon": [0.5, 2.0],
    "delta_fixed": [1e-6],
    "delta_power": [1.1],
    "replicates": 60,
    "epsilon_local_upper": 30.0,
}


@pytest.fixture(scope="module")
def config():
    with open(ROOT / "config" / "config.yaml", encoding="utf-8") as handle:
        return yaml.safe_load(handle)


@pytest.fixture(scope="module")
def calibration():
    return E.calibration_job(SMALL, k=15, n_users=1000)


@pytest.fixture(scope="module")
def counts(config):
    return E.dataset_counts("synthetic", 1000, utility=config["utility"], seed=SEED)


def _job(counts, calibration, equal=SMALL, seed=SEED, neighbouring="replace-one"):
    return E.utility_job(
        counts, calibration, dataset="synthetic", equal=equal, neighbouring=neighbouring, seed=seed
    )


# --- grid and calibration ------------------------------------------------------------------------


def test_targets_name_each_delta_rule():
    found = E.targets(SMALL, 10_000)
    assert [(t.epsilon, t.delta_rule) for t in found] == [
        (0.5, "fixed 1e-06"),
        (0.5, "1/n^1.1"),
        (2.0, "fixed 1e-06"),
        (2.0, "1/n^1.1"),
    ]
    assert found[1].delta == pytest.approx(10_000**-1.1, rel=1e-15)


def test_calibration_rows_meet_their_target_and_the_next_eps0_does_not(calibration):
    assert len(calibration) == 4 * len(E.ACCOUNTANTS)
    for row in calibration.itertuples():

        def delta(eps0, row=row):
            return get_accountant(
                row.accountant, epsilon_local=eps0, n_users=row.n_users, k=row.k
            ).delta_for_epsilon(row.epsilon)[0]

        assert row.epsilon_local >= row.epsilon
        assert delta(row.epsilon_local) <= row.delta < delta(row.epsilon_local + 1e-6)
        assert row.epsilon_local_fails - row.epsilon_local <= 1e-6
    # the lower bound on delta allows at least the eps0 of the upper bound
    pivot = calibration.pivot_table(
        index=["epsilon", "delta_rule"], columns="accountant", values="epsilon_local"
    )
    assert np.all(pivot["weak-adversary"] <= pivot["worst-case-lower"] + 1e-6)


# --- one job ---------------------------------------------------------------------------------------


def test_job_has_one_row_per_target_calibration_and_mechanism(counts, calibration):
    frame = _job(counts, calibration)
    assert len(frame) == 4 * (len(E.ACCOUNTANTS) * len(E.SHUFFLE_MECHANISMS) + len(E.CENTRAL_MECHANISMS))
    assert not frame.duplicated(subset=E.KEYS).any()
    assert set(frame["mechanism"]) == set(E.MECHANISMS)
    assert (frame["replicates"] == SMALL["replicates"]).all()
    np.testing.assert_allclose(frame["l1_half_high"] - frame["l1_half_mean"], 1.96 * frame["l1_half_se"])
    shuffle = frame[frame["mechanism"].str.startswith("shuffle")]
    assert (
        set(shuffle["calibration"]) == set(E.ACCOUNTANTS)
        and (shuffle["epsilon_local"] >= shuffle["epsilon"]).all()
    )
    # pure epsilon: the geometric rows are the same draws for every delta rule
    geometric = frame[frame["mechanism"] == "geometric"].groupby("epsilon")["l1_half_mean"].nunique()
    assert (geometric == 1).all()


def test_same_seed_gives_the_identical_frame_and_another_seed_does_not(counts, calibration):
    pd.testing.assert_frame_equal(_job(counts, calibration), _job(counts, calibration))
    assert not np.allclose(
        _job(counts, calibration)["l1_half_mean"], _job(counts, calibration, seed=SEED + 1)["l1_half_mean"]
    )


def test_rows_do_not_depend_on_the_grid_around_them(counts, calibration):
    full = _job(counts, calibration).set_index(E.KEYS).sort_index()
    reordered = (
        _job(counts, calibration, equal={**SMALL, "epsilon": [2.0, 0.5]}).set_index(E.KEYS).sort_index()
    )
    pd.testing.assert_frame_equal(full, reordered)
    alone = _job(counts, calibration, equal={**SMALL, "epsilon": [2.0], "delta_power": []}).set_index(E.KEYS)
    pd.testing.assert_frame_equal(alone.sort_index(), full.loc[alone.index].sort_index())


def test_monte_carlo_intervals_hold_the_closed_form_expectations(counts, calibration):
    frame = _job(counts, calibration, equal={**SMALL, "replicates": 400})
    for column in ("l1_half", "mse"):
        rows = frame[frame[f"{column}_expected"].notna()]
        assert len(rows) >= 8
        z = (rows[f"{column}_mean"] - rows[f"{column}_expected"]) / rows[f"{column}_se"]
        assert np.all(np.abs(z) <= 4.0), rows.assign(z=z)[["mechanism", "epsilon", "delta_rule", "z"]]
        inside = (rows[f"{column}_low"] <= rows[f"{column}_expected"]) & (
            rows[f"{column}_expected"] <= rows[f"{column}_high"]
        )
        assert inside.mean() >= 0.75
    gaussian = frame[frame["mechanism"] == "gaussian"]
    np.testing.assert_allclose(gaussian["mse_expected"], gaussian["sigma"] ** 2 / 1000**2)


def test_add_remove_uses_the_smaller_sensitivities(counts, calibration):
    replace = _job(counts, calibration).set_index(E.KEYS)
    add_remove = _job(counts, calibration, neighbouring="add-remove").set_index(E.KEYS)
    for mechanism, ratio in (("gaussian", math.sqrt(2.0)), ("geometric", 2.0)):
        rows = replace.xs(mechanism, level="mechanism")
        assert (
            (rows["sensitivity"] / add_remove.xs(mechanism, level="mechanism")["sensitivity"]).eq(ratio).all()
        )


def test_calibration_must_hold_every_target(counts, calibration):
    with pytest.raises(
        ValueError, match=r"`calibration` must hold one row for epsilon = 0.5, delta rule 'fixed 1e-06'"
    ):
        _job(counts, calibration[calibration["epsilon"] != 0.5])


def test_region_data_are_drawn_with_replacement():
    cells = np.array([3, 0, 2])
    drawn = E.dataset_counts("paris", 100, utility={}, seed=SEED, cell_counts=cells)
    assert drawn.sum() == 100 and drawn[1] == 0  # more users than check-ins; empty cells stay empty
    np.testing.assert_array_equal(
        drawn, E.dataset_counts("paris", 100, utility={}, seed=SEED, cell_counts=cells)
    )
    with pytest.raises(ValueError, match=r"`cell_counts` must be given for region 'paris'; got None"):
        E.dataset_counts("paris", 100, utility={}, seed=SEED)


# --- combine and verdicts --------------------------------------------------------------------------


def _verdict_frame(shuffle_upper, shuffle_lower, gaussian, gaussian_proj=(9.0, 0.1)):
    """Rows of one grid point: (mean, se) of shuffle+INV per calibration and of both Gaussians."""
    base = {"dataset": "d", "k": 3, "n_users": 10, "epsilon": 1.0, "delta_rule": "fixed 1e-06", "delta": 1e-6}
    rows = []
    for calibration, mechanism, (mean, se) in [
        ("weak-adversary", "shuffle+INV", shuffle_upper),
        ("worst-case-lower", "shuffle+INV", shuffle_lower),
        ("none", "gaussian", gaussian),
        ("none", "gaussian+proj", gaussian_proj),
        ("none", "geometric+proj", (1.0, 0.1)),
    ]:
        rows.append(
            {
                **base,
                "calibration": calibration,
                "mechanism": mechanism,
                "epsilon_local": 2.0,
                **E.summarise(np.array([mean - se, mean + se]), "l1_half"),
            }
        )
    return pd.DataFrame(rows)


@pytest.mark.parametrize(
    "upper, lower, gaussian, winners, certain",
    [
        ((1.0, 0.01), (0.9, 0.01), (2.0, 0.01), ("shuffle", "shuffle"), True),
        ((3.0, 0.01), (2.9, 0.01), (2.0, 0.01), ("central", "central"), True),
        (
            (2.02, 0.01),
            (1.0, 0.01),
            (2.0, 0.01),
            ("undecided", "shuffle"),
            False,
        ),  # intervals overlap at the upper eps0
        ((3.0, 0.01), (1.0, 0.01), (2.0, 0.01), ("central", "shuffle"), False),  # calibrations disagree
    ],
)
def test_ratio_table_verdicts(upper, lower, gaussian, winners, certain):
    table = E.ratio_table(_verdict_frame(upper, lower, gaussian))
    row = table.iloc[0]
    assert (row["winner_upper"], row["winner_lower"]) == winners and bool(row["certain"]) is certain
    assert row["best_gaussian"] == "gaussian" and row["ratio"] == pytest.approx(upper[0] / gaussian[0])
    assert row["ratio_geometric"] == pytest.approx(upper[0] / 1.0)


def test_combine_rejects_a_repeated_row(counts, calibration):
    frame = _job(counts, calibration)
    assert len(E.combine([frame])) == len(frame)
    with pytest.raises(ValueError, match=r"`frames` must not repeat a row key"):
        E.combine([frame, frame.iloc[:1]])


# --- config ------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def schema():
    return load_schema(ROOT / "config" / "schema" / "config.schema.yaml")


def test_shipped_config_has_the_equal_guarantee_grid(config, schema):
    checked = validate_config(config, schema)
    E.check_equal_guarantee_config(checked)
    equal = checked["utility"]["equal_guarantee"]
    assert equal["epsilon"] == [0.1, 0.25, 0.5, 1.0, 2.0, 4.0] and equal["n_users"] == [
        10**3,
        10**4,
        10**5,
        10**6,
    ]
    assert [E.dataset_k(checked, d) for d in equal["datasets"]] == [15, 192, 408]


@pytest.mark.parametrize(
    "key, value, match",
    [
        ("replicates", 1, r"`utility.equal_guarantee.replicates` must be >= 2; got 1\."),
        ("delta_fixed", [0.0], r"`utility.equal_guarantee.delta_fixed\[0\]` must be > 0; got 0\.0\."),
        ("delta_power", [0.5], r"`utility.equal_guarantee.delta_power\[0\]` must be >= 1; got 0\.5\."),
        ("n_users", [5], r"`utility.equal_guarantee.n_users\[0\]` must be >= 10; got 5\."),
        ("epsilon", [-1.0], r"`utility.equal_guarantee.epsilon\[0\]` must be > 0; got -1\.0\."),
        ("epsilon_local_upper", 0, r"`utility.equal_guarantee.epsilon_local_upper` must be > 0; got 0\."),
        ("colour", "red", r"unknown key `colour` under `utility.equal_guarantee`\. Allowed keys: datasets, "),
    ],
)
def test_bad_values_are_named_with_range_and_value(config, schema, key, value, match):
    bad = copy.deepcopy(config)
    bad["utility"]["equal_guarantee"][key] = value
    with pytest.raises(ConfigError, match=match):
        validate_config(bad, schema)


@pytest.mark.parametrize(
    "change, match",
    [
        (
            {"datasets": ["synthetic", "berlin"]},
            r"`utility.equal_guarantee.datasets` entries must be 'synthetic' or a region under `regions` \(paris, san_francisco\); got 'berlin'\.",
        ),
        (
            {"delta_fixed": [], "delta_power": []},
            r"needs at least one target delta: `delta_fixed` and `delta_power` are both empty",
        ),
    ],
)
def test_cross_key_errors(config, schema, change, match):
    bad = copy.deepcopy(config)
    bad["utility"]["equal_guarantee"].update(change)
    with pytest.raises(ConfigError, match=match):
        E.check_equal_guarantee_config(validate_config(bad, schema))
