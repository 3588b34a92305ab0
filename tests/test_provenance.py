"""Tests for shuffledp.provenance (manifests of results folders)."""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import os
import shutil
import subprocess

import pytest
import yaml
from packaging.requirements import Requirement

from shuffledp import provenance


@pytest.fixture
def config():
    return {
        "seed": 7,
        "data": {"source": "local", "local_files": [{"path": "a.txt", "format": "snap", "label": "A"}]},
        "local_data_dir": "/data",
        "utility": {"replicate_seed_offset": 3, "runs": 2},
    }


def test_file_sha256_matches_hashlib(tmp_path):
    # Reference: hashlib on the whole content (independent of the chunked reader); content spans chunks.
    payload = os.urandom(3 * (1 << 20) + 17)
    path = tmp_path / "blob.bin"
    path.write_bytes(payload)
    assert provenance.file_sha256(path) == hashlib.sha256(payload).hexdigest()


def test_config_hash_ignores_key_order_but_not_values(config):
    reordered = dict(reversed(list(config.items())))
    assert provenance.config_sha256(reordered) == provenance.config_sha256(config)
    changed = {**config, "seed": 8}
    assert provenance.config_sha256(changed) != provenance.config_sha256(config)


def test_config_yaml_round_trips_and_hash_is_of_that_text(config):
    text = provenance.config_yaml(config)
    assert yaml.safe_load(text) == config
    assert provenance.config_sha256(config) == hashlib.sha256(text.encode()).hexdigest()


def test_config_yaml_rejects_non_mapping():
    with pytest.raises(TypeError, match=r"`config` must be a mapping; got list\."):
        provenance.config_yaml([1, 2])


def test_find_seeds_collects_nested_seed_keys(config):
    assert provenance.find_seeds(config) == {"seed": 7, "utility.replicate_seed_offset": 3}


def test_package_versions_default_lists_every_pinned_requirement():
    versions = provenance.package_versions()
    requirements = importlib.metadata.requires("shuffledp")
    names = {Requirement(r).name for r in requirements}
    assert names <= set(versions)
    assert versions["numpy"] == importlib.metadata.version("numpy")
    assert versions["snakemake"] == importlib.metadata.version("snakemake")
    assert versions["shuffledp"]


def test_package_versions_reports_missing_package_as_none():
    assert provenance.package_versions(["no-such-package-xyz"]) == {"no-such-package-xyz": None}


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_git_state_reads_commit_and_dirty_flag(tmp_path):
    def git(*args):
        subprocess.run(["git", "-C", str(tmp_path), *args], check=True, capture_output=True)

    git("init", "-q")
    git("config", "user.email", "t@example.org")
    git("config", "user.name", "t")
    (tmp_path / "f.txt").write_text("one\n")
    git("add", "f.txt")
    git("commit", "-q", "-m", "one")
    head = subprocess.run(
        ["git", "-C", str(tmp_path), "rev-parse", "HEAD"], check=True, capture_output=True, text=True
    ).stdout.strip()
    state = provenance.git_state(tmp_path)
    assert state == {"commit": head, "dirty": False, "error": None}
    (tmp_path / "f.txt").write_text("two\n")
    assert provenance.git_state(tmp_path)["dirty"] is True


def test_git_state_tolerates_a_directory_outside_any_repository(tmp_path, monkeypatch):
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path.parent))
    state = provenance.git_state(tmp_path)
    assert state["commit"] is None and state["dirty"] is None
    assert state["error"]


def test_git_state_tolerates_missing_git(tmp_path, monkeypatch):
    monkeypatch.setattr(provenance.shutil, "which", lambda name: None)
    assert provenance.git_state(tmp_path) == {"commit": None, "dirty": None, "error": "git is not installed"}


def test_file_record_of_missing_file_says_so(tmp_path):
    record = provenance.file_record(tmp_path / "absent.csv", source="somewhere")
    assert record == {"path": str(tmp_path / "absent.csv"), "source": "somewhere", "exists": False}


def test_benchmark_seconds_sums_and_counts_unreadable(tmp_path):
    good = tmp_path / "a.tsv"
    good.write_text("s\th:m:s\tmax_rss\n1.5\t0:00:01\t10\n")
    second = tmp_path / "b.tsv"
    second.write_text("s\th:m:s\n2.25\t0:00:02\n")
    bad = tmp_path / "c.tsv"
    bad.write_text("no seconds column\n")
    result = provenance.benchmark_seconds([good, second, bad, tmp_path / "missing.tsv"])
    assert result["benchmarked_job_seconds"] == pytest.approx(3.75)
    assert result["benchmarked_jobs"] == 2
    assert result["unreadable"] == [str(bad), str(tmp_path / "missing.tsv")]


def test_output_time_span(tmp_path):
    first, last = tmp_path / "1", tmp_path / "2"
    first.write_text("x")
    last.write_text("y")
    os.utime(first, (1_000_000_000, 1_000_000_000))
    os.utime(last, (1_000_000_090, 1_000_000_090))
    span = provenance.output_time_span([first, last, tmp_path / "missing"])
    assert span == {
        "outputs_first_written": "2001-09-09T01:46:40+00:00",
        "outputs_last_written": "2001-09-09T01:48:10+00:00",
        "span_seconds": 90.0,
    }
    assert provenance.output_time_span([])["span_seconds"] is None


@pytest.mark.parametrize(
    ("data", "base", "expected"),
    [
        pytest.param(
            {"source": "snap", "snap": {"url": "https://snap.example/x.gz"}, "local_files": []},
            None,
            [{"path": "data/raw/x.gz", "source": {"kind": "download", "url": "https://snap.example/x.gz"}}],
            id="snap",
        ),
        pytest.param(
            {"source": "local", "local_files": [{"path": "p.txt", "format": "snap", "label": "Paris"}]},
            "/base",
            [
                {
                    "path": "/base/p.txt",
                    "source": {
                        "kind": "local file",
                        "format": "snap",
                        "label": "Paris",
                        "configured_path": "p.txt",
                    },
                }
            ],
            id="local-relative",
        ),
        pytest.param(
            {"source": "local", "local_files": [{"path": "/abs/s.csv", "format": "csv"}]},
            "/base",
            [
                {
                    "path": "/abs/s.csv",
                    "source": {
                        "kind": "local file",
                        "format": "csv",
                        "label": None,
                        "configured_path": "/abs/s.csv",
                    },
                }
            ],
            id="local-absolute",
        ),
    ],
)
def test_data_sources(data, base, expected):
    config = {"data": data, "local_data_dir": base}
    assert provenance.data_sources(config, raw_path="data/raw/x.gz") == expected


def test_data_sources_follow_the_fetch_record_not_the_config():
    record = {
        "source": "bundled",
        "files": [
            {
                "path": "/repo/data/bundled/p.txt.gz",
                "format": "snap",
                "label": "snap_paris_area",
                "url": None,
            },
            {"path": "/repo/data/bundled/sf.csv.gz", "format": "csv", "label": "oya"},
        ],
    }
    config = {"data": {"source": "auto", "snap": {"url": "https://snap.example/x.gz"}, "local_files": []}}
    assert provenance.data_sources(config, raw_path="data/raw/x.gz", record=record) == [
        {
            "path": "/repo/data/bundled/p.txt.gz",
            "source": {"kind": "bundled with the repository", "format": "snap", "label": "snap_paris_area"},
        },
        {
            "path": "/repo/data/bundled/sf.csv.gz",
            "source": {"kind": "bundled with the repository", "format": "csv", "label": "oya"},
        },
    ]
    # without a record, auto names the SNAP download (what it tries first)
    assert provenance.data_sources(config, raw_path="data/raw/x.gz")[0]["source"]["kind"] == "download"


def test_manifest_records_the_data_used(tmp_path, config):
    label = {
        "requested": "auto",
        "source": "bundled",
        "reason": "SNAP could not be downloaded",
        "label": "Data: bundled Gowalla subsets (not the full SNAP file): Paris 11,190 check-ins (paper: 10,260)",
        "files": [{"file_name": "p.txt.gz", "path": "/x/p.txt.gz", "format": "snap", "sha256": "ab" * 32}],
        "regions": {"paris": {"label": "Paris", "kept": 11190, "paper_count": 10260}},
    }
    manifest = provenance.build_manifest(
        stage="utility", config=config, repo_dir=tmp_path, packages=[], data=label
    )
    assert manifest["data"]["source"] == "bundled" and manifest["data"]["label"] == label["label"]
    assert manifest["data"]["files"] == [
        {"file_name": "p.txt.gz", "format": "snap", "label": None, "bytes": None, "sha256": "ab" * 32}
    ]
    assert manifest["data"]["regions"]["paris"]["kept"] == 11190
    assert "data" not in provenance.build_manifest(
        stage="utility", config=config, repo_dir=tmp_path, packages=[]
    )


def test_build_write_read_manifest(tmp_path, config):
    source = tmp_path / "in.txt"
    source.write_text("input\n")
    output = tmp_path / "out.csv"
    output.write_text("a,b\n1,2\n")
    bench = tmp_path / "bench.tsv"
    bench.write_text("s\n0.5\n")
    manifest = provenance.build_manifest(
        stage="data",
        config=config,
        inputs=[{"path": source, "source": {"kind": "local file"}}, tmp_path / "gone.txt"],
        outputs=[output],
        benchmarks=[bench],
        repo_dir=tmp_path,
        packages=["numpy"],
    )
    assert manifest["stage"] == "data"
    assert manifest["config"]["sha256"] == provenance.config_sha256(config)
    assert yaml.safe_load(manifest["config"]["yaml"]) == config
    assert manifest["seeds"] == {"seed": 7, "utility.replicate_seed_offset": 3}
    assert manifest["inputs"][0]["sha256"] == hashlib.sha256(b"input\n").hexdigest()
    assert manifest["inputs"][0]["source"] == {"kind": "local file"}
    assert manifest["missing_files"] == [str(tmp_path / "gone.txt")]
    assert manifest["outputs"][0]["sha256"] == hashlib.sha256(b"a,b\n1,2\n").hexdigest()
    assert manifest["run_time"]["benchmarked_job_seconds"] == pytest.approx(0.5)
    assert manifest["packages"] == {"numpy": importlib.metadata.version("numpy")}
    assert set(manifest["platform"]) >= {"python", "system", "machine"}
    path = tmp_path / "results" / "MANIFEST.json"
    provenance.write_manifest(path, manifest)
    assert json.loads(path.read_text()) == manifest
    assert provenance.read_manifest(path) == manifest
    assert not [p for p in path.parent.iterdir() if p.name.endswith(".tmp")]


def test_build_manifest_rejects_empty_stage(config):
    with pytest.raises(ValueError, match=r"`stage` must be a non-empty string; got ''\."):
        provenance.build_manifest(stage="", config=config)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{not json", r"is not a valid manifest: invalid JSON"),
        ('{"stage": "data"}', r"is not a valid manifest: key `manifest_schema_version` is missing\."),
    ],
)
def test_read_manifest_rejects_non_manifests(tmp_path, text, message):
    path = tmp_path / "MANIFEST.json"
    path.write_text(text)
    with pytest.raises(ValueError, match=message):
        provenance.read_manifest(path)


def test_manifest_gets_the_permissions_of_a_new_file(tmp_path):
    # atomic_write_text writes through mkstemp (owner-only 0o600); the result must be an ordinary
    # file (0o666 minus the umask), like one opened with open(path, "w").
    reference = tmp_path / "reference.txt"
    reference.write_text("x")
    path = tmp_path / "MANIFEST.json"
    provenance.write_manifest(path, {"manifest_schema_version": 1})
    assert (path.stat().st_mode & 0o777) == (reference.stat().st_mode & 0o777)


def test_stage_config_differences_names_relevant_keys_only():
    old = {
        "seed": 1,
        "data": {"source": "snap", "snap": {"retries": 3}},
        "accounting": {"a": [1]},
        "report": {"title": "x"},
    }
    manifest = {"config": {"yaml": provenance.config_yaml(old), "sha256": provenance.config_sha256(old)}}
    new = {
        **old,
        "data": {"source": "local", "snap": {"retries": 3}, "local_files": [{"path": "p"}]},
        "report": {"title": "y"},
    }
    assert provenance.stage_config_differences(manifest, new, "data") == ["data.local_files", "data.source"]
    assert provenance.stage_config_differences(manifest, new, "accounting") == []
    assert provenance.stage_config_differences(manifest, {**old, "seed": 2}, "utility") == ["seed"]
    assert provenance.stage_config_differences({"config": {"yaml": ": not yaml ["}}, old, "accounting") == [
        "accounting"
    ]
