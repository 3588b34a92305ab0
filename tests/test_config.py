"""Config validation: one clear message naming the key, the accepted range and the value received."""

from __future__ import annotations

import copy
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from snakemake.utils import update_config

from shuffledp.config import ConfigError, load_schema, validate_config

REPO = Path(__file__).resolve().parents[1]
SCHEMA = load_schema(REPO / "config" / "schema" / "config.schema.yaml")


def repo_config() -> dict:
    return yaml.safe_load((REPO / "config" / "config.yaml").read_text())


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


def test_standins_overlay_merges_deeply_and_is_valid():
    # Snakemake merges --configfile files with update_config (nested mappings merged, lists replaced).
    config = repo_config()
    update_config(config, yaml.safe_load((REPO / "config" / "standins.yaml").read_text()))
    checked = validate_config(config, SCHEMA)
    assert checked["data"]["source"] == "local"
    assert checked["data"]["snap"]["expected_rows"] == 6442890  # kept from config.yaml
    assert [entry["format"] for entry in checked["data"]["local_files"]] == ["snap", "csv"]
    assert all("/" not in entry["path"] for entry in checked["data"]["local_files"])  # file names only


@pytest.mark.parametrize(
    "path, value, message",
    [
        # inverted bounding box
        ("regions.paris.lat_max", 48.0,
         r"`regions.paris.lat_max` must be greater than `regions.paris.lat_min` \(48.8286\); got 48.0. The bounding box is inverted"),
        ("regions.san_francisco.lon_min", -122.0,
         r"`regions.san_francisco.lon_max` must be greater than `regions.san_francisco.lon_min` \(-122.0\); got -122.3789"),
        # a grid of 0 cells
        ("regions.san_francisco.grid.n_lon", 0, r"`regions.san_francisco.grid.n_lon` must be >= 1; got 0\."),
        ("regions.paris.grid.n_lat", 0, r"`regions.paris.grid.n_lat` must be >= 1; got 0\."),
        # out-of-range coordinates
        ("regions.paris.lat_min", -95, r"`regions.paris.lat_min` must be >= -90; got -95\."),
        # unknown key
        ("data.sorce", "snap", r"unknown key `sorce` under `data`\. Allowed keys: local_files, max_bad_fraction, snap, source\."),
        ("data.snap.retry", 3, r"unknown key `retry` under `data.snap`\. Allowed keys: backoff_seconds, expected_rows"),
        ("regions.paris.grid.rows", 3, r"unknown key `rows` under `regions.paris.grid`\. Allowed keys: n_lat, n_lon\."),
        # bad enum
        ("data.source", "ftp", r"`data.source` must be one of 'snap', 'local'; got 'ftp'\."),
        # seed < 0
        ("seed", -1, r"`seed` must be >= 0; got -1\."),
        ("seed", 1.5, r"`seed` must be of type integer; got 1.5 \(float\)\."),
        # other data keys
        ("data.max_bad_fraction", 1.5, r"`data.max_bad_fraction` must be <= 1; got 1.5\."),
        ("data.snap.retries", 0, r"`data.snap.retries` must be >= 1; got 0\."),
        ("data.snap.timeout_seconds", 0, r"`data.snap.timeout_seconds` must be > 0; got 0\."),
        ("data.snap.url", "ftp://example.org/x.gz", r"`data.snap.url` must match the pattern .*; got 'ftp://example.org/x.gz'\."),
        ("data.snap.backoff_seconds", DELETE, r"`data.snap` is missing required key `backoff_seconds`\."),
    ],
)
def test_bad_values_name_key_range_and_value(path, value, message):
    with pytest.raises(ConfigError, match=message):
        validate_config(with_change(path, value), SCHEMA)


def test_bad_local_file_entries():
    config = repo_config()
    config["data"]["local_files"] = [{"path": "x.txt", "format": "tsv"}]
    with pytest.raises(ConfigError, match=r"`data.local_files\[0\].format` must be one of 'snap', 'csv'; got 'tsv'\."):
        validate_config(config, SCHEMA)
    config["data"]["local_files"] = [{"path": "x.txt"}]
    with pytest.raises(ConfigError, match=r"`data.local_files\[0\]` is missing required key `format`\."):
        validate_config(config, SCHEMA)


def test_region_names_must_be_identifiers():
    config = repo_config()
    config["regions"]["New York"] = copy.deepcopy(config["regions"]["paris"])
    with pytest.raises(ConfigError, match=r"unknown key `New York` under `regions`\..*Names must match \^\[a-z\]\[a-z0-9_\]\*\$"):
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
    command = [sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"), "--directory", str(work),
               "-n", "--cores", "1", *extra]
    return subprocess.run(command, capture_output=True, text=True, timeout=300, cwd=work)


def test_snakemake_stops_with_one_line_before_building_the_dag(tmp_path):
    result = dry_run(tmp_path, "--config", "seed=-1")
    output = result.stdout + result.stderr
    assert result.returncode != 0
    lines = [line for line in output.splitlines() if "`seed`" in line]
    assert lines == ["config: `seed` must be >= 0; got -1."], output
    assert "Traceback" not in output and "jsonschema" not in output


def test_snakemake_local_source_without_files_directory_is_clear(tmp_path):
    result = dry_run(tmp_path, "--configfile", "config/config.yaml", "config/standins.yaml")
    output = result.stdout + result.stderr
    assert result.returncode != 0
    assert ("config: `data.local_files` names 'loc-gowalla_totalCheckins_Paris-area.txt', not found as "
            "loc-gowalla_totalCheckins_Paris-area.txt (relative paths are resolved against the working directory "
            "(local_data_dir is null)). Set --config local_data_dir=/path/to/gowalla or fix the path.") in output, output
