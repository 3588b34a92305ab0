"""Validation messages of the `accounting` config section (schema and cross-key checks)."""

from pathlib import Path

import pytest
import yaml

from shuffledp.config import ConfigError, load_schema, validate_config
from shuffledp.experiments.accounting import check_accounting_config
from shuffledp.experiments.guarantees import check_worst_case_config

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def schema():
    return load_schema(ROOT / "config" / "schema" / "config.schema.yaml")


@pytest.fixture(params=["config/config.yaml", ".test/config/config.yaml"])
def config(request):
    with open(ROOT / request.param, encoding="utf-8") as handle:
        return yaml.safe_load(handle)


def test_shipped_configs_are_valid(config, schema):
    checked = validate_config(config, schema)
    check_accounting_config(checked["accounting"])
    check_worst_case_config(checked["accounting"])
    assert checked["accounting"]["table2"]["epsilon"] == [0.01, 0.1, 0.2, 0.3, 0.4]  # paper: Table II rows


def _set(config, path, value):
    node = config
    *parents, last = path
    for part in parents:
        node = node[part]
    node[last] = value


A = "accounting"


@pytest.mark.parametrize(
    "path, value, match",
    [
        ((A, "table2", "epsilon"), [0.0], r"`accounting.table2.epsilon\[0\]` must be > 0; got 0\.0\."),
        ((A, "table2", "epsilon"), [-0.1], r"`accounting.table2.epsilon\[0\]` must be > 0; got -0\.1\."),
        ((A, "table2", "k"), 1, r"`accounting.table2.k` must be >= 2; got 1\."),
        ((A, "table2", "n_x0_fraction"), 1.5, r"`accounting.table2.n_x0_fraction` must be <= 1; got 1\.5\."),
        (
            (A, "table2", "blocks", 0, "n_users"),
            1,
            r"`accounting.table2.blocks\[0\].n_users` must be >= 2; got 1\.",
        ),
        (
            (A, "table2", "blocks", 1, "epsilon_local"),
            0,
            r"`accounting.table2.blocks\[1\].epsilon_local` must be > 0; got 0\.",
        ),
        (
            (A, "table2", "bounds"),
            ["feldman"],
            r"`accounting.table2.bounds\[0\]` must be one of .*'biswas-printed'.*; got 'feldman'\.",
        ),
        ((A, "table2", "bounds"), [], r"`accounting.table2.bounds` must have at least 1 item\(s\); got 0\."),
        ((A, "table4", "epsilon"), [0.1, 0.1], r"`accounting.table4.epsilon` must not repeat items"),
        (
            (A, "table4", "blocks", 0, "vary"),
            "seed",
            r"`accounting.table4.blocks\[0\].vary` must be one of 'epsilon_local', 'n_users', 'k'; got 'seed'\.",
        ),
        ((A, "table4", "blocks", 2, "k"), 1, r"`accounting.table4.blocks\[2\].k` must be >= 2; got 1\."),
        (
            (A, "table4", "blocks", 1, "n_x0", "rule"),
            "half",
            r"`accounting.table4.blocks\[1\].n_x0.rule` must be one of 'fixed', 'fraction'; got 'half'\.",
        ),
        ((A, "fig1", "epsilon", "num"), 1, r"`accounting.fig1.epsilon.num` must be >= 2; got 1\."),
        (
            (A, "fig1", "epsilon_local", "start"),
            0,
            r"`accounting.fig1.epsilon_local.start` must be > 0; got 0\.",
        ),
        ((A, "fig1", "n_users"), 1, r"`accounting.fig1.n_users` must be >= 2; got 1\."),
        (
            (A, "sweeps", "Bad-Name"),
            {},
            r"unknown key `Bad-Name` under `accounting.sweeps`.*Names must match",
        ),
        (
            (A, "epsilon_comparison", "delta"),
            1.0,
            r"`accounting.epsilon_comparison.delta` must be < 1; got 1\.0\.",
        ),
        (
            (A, "epsilon_comparison", "delta"),
            0,
            r"`accounting.epsilon_comparison.delta` must be > 0; got 0\.",
        ),
        (
            (A, "epsilon_comparison", "against_n", "n_users"),
            [1],
            r"`accounting.epsilon_comparison.against_n.n_users\[0\]` must be >= 2; got 1\.",
        ),
        (
            (A, "epsilon_comparison", "against_epsilon_local", "epsilon_local"),
            [],
            r"`accounting.epsilon_comparison.against_epsilon_local.epsilon_local` must have at least 1 item\(s\); got 0\.",
        ),
        (
            (A, "epsilon_comparison", "accountants"),
            ["weak"],
            r"`accounting.epsilon_comparison.accountants\[0\]` must be one of .*; got 'weak'\.",
        ),
        (
            (A, "epsilon_comparison", "against_n", "k"),
            10,
            r"unknown key `k` under `accounting.epsilon_comparison.against_n`",
        ),
        ((A, "bracket", "k"), [1], r"`accounting.bracket.k\[0\]` must be >= 2; got 1\."),
        ((A, "bracket", "delta"), [1e-6, 1.5], r"`accounting.bracket.delta\[1\]` must be < 1; got 1\.5\."),
        (
            (A, "bracket", "epsilon_local"),
            [0.5, 0.5],
            r"`accounting.bracket.epsilon_local` must not repeat items",
        ),
    ],
)
def test_schema_messages_name_key_range_and_value(config, schema, path, value, match):
    _set(config, path, value)
    with pytest.raises(ConfigError, match=match):
        validate_config(config, schema)


def test_new_accountants_are_accepted_and_sections_required(config, schema):
    checked = validate_config(config, schema)
    assert {"weak-adversary", "worst-case-lower"} <= set(checked[A]["epsilon_comparison"]["accountants"])
    del config[A]["bracket"]
    with pytest.raises(ConfigError, match=r"`accounting` is missing required key `bracket`\."):
        validate_config(config, schema)


def test_unknown_key_in_accounting_is_rejected(config, schema):
    config[A]["table2"]["epsilons"] = [0.1]
    with pytest.raises(ConfigError, match=r"unknown key `epsilons` under `accounting.table2`"):
        validate_config(config, schema)


def test_sweep_x_must_be_a_parameter(config, schema):
    name = next(iter(config[A]["sweeps"]))
    config[A]["sweeps"][name]["x"] = "delta"
    with pytest.raises(
        ConfigError, match=rf"`accounting.sweeps.{name}.x` must be one of 'n_users', .*; got 'delta'\."
    ):
        validate_config(config, schema)


@pytest.mark.parametrize(
    "mutate, match",
    [
        (
            lambda c: _set(c, (A, "table4", "blocks", 0, "n_x0"), {"rule": "fixed", "value": 100}),
            r"`accounting.table4.blocks\[0\].n_x0.value` must be an integer in \[0, 99\] \(n - 1 for n = 100\); got 100\.",
        ),
        (
            lambda c: _set(c, (A, "table4", "blocks", 1, "n_x0"), {"rule": "fixed", "value": 80}),
            r"`accounting.table4.blocks\[1\].n_x0.value` must be an integer in \[0, 49\] \(n - 1 for n = 50\); got 80\. "
            r"Use rule 'fraction'",
        ),
        (
            lambda c: _set(c, (A, "table4", "blocks", 1, "n_x0"), {"rule": "fraction", "value": 1.5}),
            r"`accounting.table4.blocks\[1\].n_x0.value` must be in \[0, 1\] for rule 'fraction'; got 1\.5\.",
        ),
        (
            lambda c: _set(c, (A, "table4", "blocks", 2, "values"), [5, 1.5]),
            r"`accounting.table4.blocks\[2\].values` must be integers >= 2 when varying k; got 1\.5\.",
        ),
        (
            lambda c: _set(c, (A, "fig1", "epsilon"), {"start": 3.0, "stop": 0.1, "num": 5}),
            r"`accounting.fig1.epsilon.stop` must be greater than `start` \(3\.0\); got 0\.1\.",
        ),
        (
            lambda c: _set(c, (A, "fig1", "n_x0"), {"rule": "fixed", "value": 10_000}),
            r"`accounting.fig1.n_x0.value` must be an integer in \[0, \d+\] \(n - 1\); got 10000\.",
        ),
    ],
)
def test_cross_key_checks(config, schema, mutate, match):
    mutate(config)
    checked = validate_config(config, schema)
    with pytest.raises(ConfigError, match=match):
        check_accounting_config(checked[A])


def test_unregistered_accountant_is_rejected(config, schema):
    checked = validate_config(config, schema)
    with pytest.raises(
        ConfigError,
        match=r"`accounting.table2.bounds` must name registered accountants \(erlingsson\); got '.+'\.",
    ):
        check_accounting_config(checked[A], available=["erlingsson"])
