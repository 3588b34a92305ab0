"""Validation messages of the `utility` config section (schema and cross-key checks)."""

import copy
from pathlib import Path

import pytest
import yaml

from shuffledp.config import ConfigError, load_schema, validate_config
from shuffledp.experiments.utility import check_utility_config

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def schema():
    return load_schema(ROOT / "config" / "schema" / "config.schema.yaml")


@pytest.fixture
def config():
    with open(ROOT / "config" / "config.yaml", encoding="utf-8") as handle:
        return yaml.safe_load(handle)


def test_shipped_config_is_valid(config, schema):
    checked = validate_config(config, schema)
    check_utility_config(checked)
    assert checked["utility"]["synthetic"]["k"] == 15  # paper: Table V


def _set(config, dotted, value):
    node = config
    *parents, last = dotted
    for part in parents:
        node = node[part]
    node[last] = value


@pytest.mark.parametrize(
    "path, value, match",
    [
        (
            ("utility", "accountant"),
            "feldman",
            r"`utility.accountant` must be one of .*'biswas-printed'.*; got 'feldman'\.",
        ),
        (
            ("utility", "neighbouring"),
            "swap",
            r"`utility.neighbouring` must be one of 'replace-one', 'add-remove'; got 'swap'\.",
        ),
        (("utility", "delta_floor"), 0, r"`utility.delta_floor` must be > 0; got 0\."),
        (("utility", "delta_floor"), 1.5, r"`utility.delta_floor` must be < 1; got 1\.5\."),
        (
            ("utility", "estimator"),
            "mle",
            r"`utility.estimator` must be one of 'inv-projection', .*; got 'mle'\.",
        ),
        (("utility", "synthetic", "k"), 1, r"`utility.synthetic.k` must be >= 2; got 1\."),
        (
            ("utility", "synthetic", "standard_deviation"),
            0.0,
            r"`utility.synthetic.standard_deviation` must be > 0; got 0\.0\.",
        ),
        (("utility", "table5", "epsilon"), -4, r"`utility.table5.epsilon` must be > 0; got -4\."),
        (("utility", "table5", "n_users"), [1], r"`utility.table5.n_users\[0\]` must be >= 2; got 1\."),
        (("utility", "table5", "replicates"), 1, r"`utility.table5.replicates` must be >= 2; got 1\."),
        (
            ("utility", "fig2", "n_users"),
            [],
            r"`utility.fig2.n_users` must have at least 1 item\(s\); got 0\.",
        ),
        (
            ("utility", "gowalla", "sampling"),
            "bootstrap",
            r"`utility.gowalla.sampling` must be one of 'without-replacement', 'with-replacement'; got 'bootstrap'\.",
        ),
        (("utility", "gowalla", "runs"), 0, r"`utility.gowalla.runs` must be >= 1; got 0\."),
        (
            ("utility", "gowalla", "settings"),
            [{"epsilon": 4.0}],
            r"`utility.gowalla.settings\[0\]` is missing required key `epsilon_local`\.",
        ),
        (
            ("utility", "gowalla", "heatmap", "epsilon_local"),
            0,
            r"`utility.gowalla.heatmap.epsilon_local` must be > 0; got 0\.",
        ),
        (
            ("utility", "crossover", "accountants"),
            ["strong-adversary", "strong-adversary"],
            r"`utility.crossover.accountants` must not repeat items",
        ),
        (
            ("utility", "gowalla", "regions", "paris", "x0"),
            [-1],
            r"`utility.gowalla.regions.paris.x0\[0\]` must be >= 0; got -1\.",
        ),
    ],
)
def test_schema_messages_name_key_range_and_value(config, schema, path, value, match):
    _set(config, path, value)
    with pytest.raises(ConfigError, match=match):
        validate_config(config, schema)


def test_unknown_key_in_utility_is_rejected(config, schema):
    config["utility"]["table5"]["replicate"] = 10
    with pytest.raises(ConfigError, match=r"unknown key `replicate` under `utility.table5`"):
        validate_config(config, schema)


@pytest.mark.parametrize(
    "mutate, match",
    [
        (
            lambda c: _set(c, ("utility", "table5", "x0"), [1, 16]),
            r"`utility.table5.x0` values must be in \[1, 15\] \(utility.synthetic.k\); got 16\.",
        ),
        (
            lambda c: c["utility"]["gowalla"]["regions"].__setitem__(
                "tokyo", copy.deepcopy(c["utility"]["gowalla"]["regions"]["paris"])
            ),
            r"`utility.gowalla.regions` names region 'tokyo', which is not under `regions`",
        ),
        (
            lambda c: _set(c, ("utility", "gowalla", "regions", "paris", "x0"), [192]),
            r"`utility.gowalla.regions.paris.x0` values must be cell indices in \[0, 191\]; got 192\.",
        ),
        (
            lambda c: _set(c, ("utility", "gowalla", "regions", "paris", "boxplot_figure"), "fig6"),
            r"figure names must be distinct .*; got 'fig6'",
        ),
    ],
)
def test_cross_key_checks(config, schema, mutate, match):
    mutate(config)
    checked = validate_config(config, schema)
    with pytest.raises(ConfigError, match=match):
        check_utility_config(checked)
