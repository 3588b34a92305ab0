"""Config validation: one clear message naming the key, the accepted range and the value received."""

from __future__ import annotations

import copy
import functools
import shutil
from pathlib import Path

import pytest
import yaml
from snakemake.utils import update_config
from snakemake_runner import run_workflow

from shuffledp.config import ConfigError, load_schema, validate_config

REPO = Path(__file__).resolve().parents[1]
SCHEMA = load_schema(REPO / "config" / "schema" / "config.schema.yaml")


@functools.lru_cache(maxsize=1)
def _parsed_repo_config() -> dict:
    # Parsed once: the YAML parse (~45 ms) was most of each of the ~1,000 tests below.
    return yaml.safe_load((REPO / "config" / "config.yaml").read_text())


def repo_config() -> dict:
    """A fresh copy of config/config.yaml for each caller (tests edit it)."""
    return copy.deepcopy(_parsed_repo_config())


def with_change(path: str, value):
    config = repo_config()
    *parents, last = path.split(".")
    node = config
    for key in parents:
        node = node[key]
    if value is DELETE:
        del node[last]
    else:
        node[last] = value
    return config


DELETE = object()


def test_shipped_configs_are_valid():
    validate_config(repo_config(), SCHEMA)
    validate_config(yaml.safe_load((REPO / ".test" / "config" / "config.yaml").read_text()), SCHEMA)


def test_quick_profile_merges_deeply_and_is_valid():
    # Snakemake merges --configfile files with update_config (nested mappings merged, lists replaced).
    config = repo_config()
    assert config["grid_profile"] == "default" and config["data"]["source"] == "auto"
    update_config(config, yaml.safe_load((REPO / "config" / "quick.yaml").read_text()))
    checked = validate_config(config, SCHEMA)
    assert checked["grid_profile"] == "quick"
    assert checked["data"] == repo_config()["data"]  # the same data as the default run
    assert checked["accounting"]["bracket"]["n_users"] == [2, 10, 1000]
    assert checked["utility"]["phase_diagram"]["n_points"] == 2
    assert checked["utility"]["phase_diagram"]["n_max"] == repo_config()["utility"]["phase_diagram"]["n_max"]
    # the quick profile's other coarse grids: lists replaced, the sibling keys kept from config.yaml
    default = repo_config()
    assert checked["utility"]["equal_guarantee"]["n_users"] == [1000, 100000]
    assert (
        checked["utility"]["equal_guarantee"]["datasets"] == default["utility"]["equal_guarantee"]["datasets"]
    )
    assert checked["utility"]["crossover"]["epsilon_local"] == [2.0, 4.0]
    assert checked["utility"]["crossover"]["accountants"] == default["utility"]["crossover"]["accountants"]
    comparison = checked["accounting"]["epsilon_comparison"]
    assert comparison["against_n"]["n_users"] == [100, 1000, 10000, 100000]
    assert (
        comparison["against_n"]["epsilon_local"]
        == default["accounting"]["epsilon_comparison"]["against_n"]["epsilon_local"]
    )
    panels = checked["balle"]["panels"]
    assert [panels[p]["reference_every"] for p in ("i", "ii", "iii", "iv")] == [99, 99, 99, 49]
    assert panels["ii"]["n"] == default["balle"]["panels"]["ii"]["n"]  # the published points stay
    # every paper figure judged against published values keeps config.yaml's grid
    for key in ("koskela", "girgis"):
        assert checked[key] == default[key]
    for key in ("table2", "table4", "fig1"):
        assert checked["accounting"][key] == default["accounting"][key]
    for key in ("table5", "fig2", "gowalla", "synthetic"):
        assert checked["utility"][key] == default["utility"][key]


def test_data_source_accepts_auto_snap_local_and_local_needs_files():
    for source in ("auto", "snap"):
        assert validate_config(with_change("data.source", source), SCHEMA)["data"]["source"] == source
    config = with_change("data.source", "local")
    with pytest.raises(ConfigError, match=r"`data.source` is 'local' but `data.local_files` is empty"):
        validate_config(config, SCHEMA)
    config["data"]["local_files"] = [{"path": "x.txt", "format": "snap"}]
    assert validate_config(config, SCHEMA)["data"]["source"] == "local"


def test_bundled_files_are_validated_like_local_files():
    config = repo_config()
    config["data"]["bundled"]["files"][0]["format"] = "tsv"
    with pytest.raises(
        ConfigError, match=r"`data.bundled.files\[0\].format` must be one of 'snap', 'csv'; got 'tsv'\."
    ):
        validate_config(config, SCHEMA)
    config = repo_config()
    config["data"]["bundled"]["files"] = []
    with pytest.raises(ConfigError, match=r"`data.bundled.files` must have at least 1 item\(s\); got 0\."):
        validate_config(config, SCHEMA)
    with pytest.raises(ConfigError, match=r"`grid_profile` must match the pattern"):
        validate_config(with_change("grid_profile", "Quick Grids"), SCHEMA)


@pytest.mark.parametrize(
    "path, value, message",
    [
        # inverted bounding box
        (
            "regions.paris.lat_max",
            48.0,
            r"`regions.paris.lat_max` must be greater than `regions.paris.lat_min` \(48.8286\); got 48.0. The bounding box is inverted",
        ),
        (
            "regions.san_francisco.lon_min",
            -122.0,
            r"`regions.san_francisco.lon_max` must be greater than `regions.san_francisco.lon_min` \(-122.0\); got -122.3789",
        ),
        # a grid of 0 cells
        ("regions.san_francisco.grid.n_lon", 0, r"`regions.san_francisco.grid.n_lon` must be >= 1; got 0\."),
        ("regions.paris.grid.n_lat", 0, r"`regions.paris.grid.n_lat` must be >= 1; got 0\."),
        # out-of-range coordinates
        ("regions.paris.lat_min", -95, r"`regions.paris.lat_min` must be >= -90; got -95\."),
        # unknown key
        (
            "data.sorce",
            "snap",
            r"unknown key `sorce` under `data`\. Allowed keys: bundled, duplicates, local_files, max_bad_fraction, snap, source\.",
        ),
        (
            "data.snap.retry",
            3,
            r"unknown key `retry` under `data.snap`\. Allowed keys: backoff_seconds, connect_timeout_seconds, expected_rows",
        ),
        (
            "regions.paris.grid.rows",
            3,
            r"unknown key `rows` under `regions.paris.grid`\. Allowed keys: n_lat, n_lon\.",
        ),
        # bad enum
        ("data.source", "ftp", r"`data.source` must be one of 'auto', 'snap', 'local'; got 'ftp'\."),
        # seed < 0
        ("seed", -1, r"`seed` must be >= 0; got -1\."),
        ("seed", 1.5, r"`seed` must be of type integer; got 1.5 \(float\)\."),
        # other data keys
        ("data.max_bad_fraction", 1.5, r"`data.max_bad_fraction` must be <= 1; got 1.5\."),
        ("data.snap.retries", 0, r"`data.snap.retries` must be >= 1; got 0\."),
        ("data.snap.timeout_seconds", 0, r"`data.snap.timeout_seconds` must be > 0; got 0\."),
        (
            "data.snap.url",
            "ftp://example.org/x.gz",
            r"`data.snap.url` must match the pattern .*; got 'ftp://example.org/x.gz'\.",
        ),
        ("data.snap.backoff_seconds", DELETE, r"`data.snap` is missing required key `backoff_seconds`\."),
    ],
)
def test_bad_values_name_key_range_and_value(path, value, message):
    with pytest.raises(ConfigError, match=message):
        validate_config(with_change(path, value), SCHEMA)


def test_bad_local_file_entries():
    config = repo_config()
    config["data"]["local_files"] = [{"path": "x.txt", "format": "tsv"}]
    with pytest.raises(
        ConfigError, match=r"`data.local_files\[0\].format` must be one of 'snap', 'csv'; got 'tsv'\."
    ):
        validate_config(config, SCHEMA)
    config["data"]["local_files"] = [{"path": "x.txt"}]
    with pytest.raises(ConfigError, match=r"`data.local_files\[0\]` is missing required key `format`\."):
        validate_config(config, SCHEMA)


def test_region_names_must_be_identifiers():
    config = repo_config()
    config["regions"]["New York"] = copy.deepcopy(config["regions"]["paris"])
    with pytest.raises(
        ConfigError,
        match=r"unknown key `New York` under `regions`\..*Names must match \^\[a-z\]\[a-z0-9_\]\*\$",
    ):
        validate_config(config, SCHEMA)


def test_validation_returns_a_copy():
    config = repo_config()
    checked = validate_config(config, SCHEMA)
    checked["seed"] = 1
    assert config["seed"] != 1


# --------------------------------------------------------------------- through Snakemake itself


def dry_run(tmp_path, *extra):
    work = tmp_path / "work"
    shutil.copytree(REPO / "config", work / "config")
    return run_workflow(work, ["-n", "--cores", "1", *extra], timeout=300)


@pytest.mark.slow  # a Snakemake dry run
def test_snakemake_stops_with_one_line_before_building_the_dag(tmp_path):
    result = dry_run(tmp_path, "--config", "seed=-1")
    output = result.stdout + result.stderr
    assert result.returncode != 0
    lines = [line for line in output.splitlines() if "`seed`" in line]
    assert lines == ["config: `seed` must be >= 0; got -1."], output
    assert "Traceback" not in output and "jsonschema" not in output


@pytest.mark.slow  # a Snakemake dry run
def test_snakemake_local_source_without_files_directory_is_clear(tmp_path):
    overlay = {
        "data": {
            "source": "local",
            "local_files": [{"path": "loc-gowalla_totalCheckins_Paris-area.txt", "format": "snap"}],
        }
    }
    (tmp_path / "local.yaml").write_text(yaml.safe_dump(overlay))
    result = dry_run(tmp_path, "--configfile", "config/config.yaml", str(tmp_path / "local.yaml"))
    output = result.stdout + result.stderr
    assert result.returncode != 0
    assert (
        "config: `data.local_files` names 'loc-gowalla_totalCheckins_Paris-area.txt', not found as "
        "loc-gowalla_totalCheckins_Paris-area.txt (relative paths are resolved against the working directory "
        "(local_data_dir is null)). Set --config local_data_dir=/path/to/gowalla or fix the path."
    ) in output, output


# ------------------------------------------------------------------ NaN and infinities, --config types


def _numeric_paths(node, path=()):
    """Dotted paths of every number (not bool) in a config, lists included (e.g. `a.b[0]`)."""
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _numeric_paths(value, (*path, key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _numeric_paths(value, (*path, index))
    elif isinstance(node, (int, float)) and not isinstance(node, bool):
        yield path


def _set(config, path, value):
    node = config
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return config


NUMERIC_PATHS = list(_numeric_paths(repo_config()))


def test_every_numeric_key_is_found():
    # The parametrisation below must cover the numbers of every section, not a hand-picked few.
    sections = {path[0] for path in NUMERIC_PATHS}
    assert {"seed", "data", "regions", "utility", "accounting"} <= sections
    assert len(NUMERIC_PATHS) > 30


@pytest.mark.parametrize("value", [float("nan"), float("inf"), float("-inf")], ids=["nan", "inf", "-inf"])
@pytest.mark.parametrize("path", NUMERIC_PATHS, ids=[".".join(map(str, p)) for p in NUMERIC_PATHS])
def test_nan_and_infinities_are_rejected_for_every_numeric_key(path, value):
    from shuffledp.config import dotted

    config = _set(repo_config(), path, value)
    with pytest.raises(
        ConfigError,
        match=rf"^config: `{_re_escape(dotted(path))}` must be a finite number "
        rf"\(not NaN or infinity\); got {_re_escape(repr(value))}\.$",
    ):
        validate_config(config, SCHEMA)


def _re_escape(text):
    import re

    return re.escape(text)


# One value through Snakemake: its --config parser reads "nan", "inf" and "-inf" alike with float(), and the
# same check in workflow/rules/common.smk stops the run; the three values at every numeric key are the
# in-process test above, and a YAML .nan through Snakemake is the next test. -inf is the one whose range
# check (>= 0) would also fail: the one line must still be the finiteness message.
@pytest.mark.parametrize("value", ["-inf"])
@pytest.mark.slow  # a Snakemake dry run
def test_snakemake_rejects_non_finite_config_values_in_one_line(tmp_path, value):
    result = dry_run(tmp_path, "--config", f"seed={value}")
    output = result.stdout + result.stderr
    assert result.returncode != 0
    assert [line for line in output.splitlines() if "`seed`" in line] == [
        f"config: `seed` must be a finite number (not NaN or infinity); got {float(value)!r}."
    ], output
    assert "Traceback" not in output


@pytest.mark.slow  # a Snakemake dry run
def test_snakemake_rejects_yaml_nan_in_a_config_file(tmp_path):
    overlay = tmp_path / "nan.yaml"
    overlay.write_text("utility:\n  delta_floor: .nan\n")
    result = dry_run(tmp_path, "--configfile", "config/config.yaml", str(overlay))
    output = result.stdout + result.stderr
    assert result.returncode != 0
    assert (
        "config: `utility.delta_floor` must be a finite number (not NaN or infinity); got nan." in output
    ), output


@pytest.mark.parametrize(
    "overrides, expected",
    [
        (
            {"utility": {"delta_floor": "1e-12", "gowalla": {"runs": "3"}}},
            {"utility": {"delta_floor": 1e-12, "gowalla": {"runs": 3}}},
        ),
        (
            {"report": {"stages": ["accounting"], "title": "Offline run"}},
            {"report": {"stages": ["accounting"], "title": "Offline run"}},
        ),
        (
            {"data": {"snap": {"url": "file:///x.gz"}, "flag": "true", "none": "null"}},
            {"data": {"snap": {"url": "file:///x.gz"}, "flag": True, "none": None}},
        ),
        (
            {"seed": 7, "local_data_dir": "/data"},
            {"seed": 7, "local_data_dir": "/data"},
        ),  # top level: typed by Snakemake
    ],
    ids=["numbers", "strings-stay", "bool-null", "top-level-untouched"],
)
def test_retype_overrides_types_nested_values_like_top_level_ones(overrides, expected):
    from shuffledp.config import retype_overrides

    assert retype_overrides(overrides) == expected


@pytest.mark.slow  # a Snakemake dry run
def test_snakemake_accepts_nested_numeric_config_values(tmp_path):
    # Before: `utility.delta_floor` must be of type number; got '1e-12' (str).
    result = dry_run(
        tmp_path / "a",
        "--config",
        'utility={"delta_floor": 1e-12}',
        'report={"stages": ["accounting"], "title": "T"}',
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    result = dry_run(tmp_path / "b", "--config", 'utility={"delta_floor": 2}')
    assert (
        result.returncode != 0
        and "config: `utility.delta_floor` must be < 1; got 2." in result.stdout + result.stderr
    )
