"""One Snakemake job per entry of ``accounting.sweeps``: adding or editing a sweep re-runs that
sweep only, never the paper's Tables II, IV and Figure 1 (rule accounting_paper), and the outputs keep
their paths (results/accounting/sweeps/<name>.{csv,png})."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
import yaml
from snakemake_runner import run_workflow

REPO = Path(__file__).resolve().parents[1]
TEST_DIR = REPO / ".test"
IGNORED = shutil.ignore_patterns("results", "logs", "benchmarks", ".snakemake")
PAPER = ["results/accounting/table2.csv", "results/accounting/fig1.png"]

# runs the accounting jobs of the tiny configuration (~10-20 s)
pytestmark = pytest.mark.slow


def _snakemake(work: Path, *args):
    return run_workflow(work, ["--configfile", "config/config.yaml", "overlay.yaml", *args], timeout=900)


def _jobs(output: str) -> dict[str, int]:
    """Job counts per rule from the "Job stats" table (up to the blank line that ends it) of a run's output."""
    table = output.split("Job stats:", 1)[1].strip("\n").split("\n\n", 1)[0] if "Job stats:" in output else ""
    return {
        rule: int(count)
        for rule, count in re.findall(r"^(\w+)\s+(\d+)$", table, flags=re.MULTILINE)
        if rule != "total"
    }


def _write_overlay(work: Path, sweeps: dict) -> None:
    (work / "overlay.yaml").write_text(yaml.safe_dump({"accounting": {"sweeps": sweeps}}))


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """The tiny config with two sweeps, its paper outputs and both sweeps built once, with the job counts
    of that build: the "Job stats" table a run prints (on stderr) before it starts, the one a dry run prints
    (on stdout), so no separate dry run is needed."""
    work = tmp_path_factory.mktemp("sweeps") / "run"
    shutil.copytree(TEST_DIR, work, ignore=IGNORED)
    tiny = yaml.safe_load((TEST_DIR / "config" / "config.yaml").read_text())["accounting"]["sweeps"]["tiny"]
    sweeps = {"tiny": tiny, "other": {**tiny, "epsilon": [0.3]}}
    _write_overlay(work, sweeps)
    targets = [
        *PAPER,
        *(f"results/accounting/sweeps/{name}.{ext}" for name in sweeps for ext in ("csv", "png")),
    ]
    result = _snakemake(work, "--cores", "1", *targets)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return work, sweeps, targets, _jobs(result.stderr)


def test_each_sweep_is_its_own_job_and_keeps_its_paths(built):
    work, sweeps, _, jobs = built
    assert jobs["accounting_sweep"] == len(sweeps) and jobs["accounting_paper"] == 1
    for name in sweeps:
        assert (work / "results" / "accounting" / "sweeps" / f"{name}.csv").stat().st_size > 0
        assert (work / "results" / "accounting" / "sweeps" / f"{name}.png").stat().st_size > 0
        assert (work / "logs" / "accounting" / "sweeps" / f"{name}.log").exists()


def test_changing_one_sweep_reruns_that_sweep_only(built):
    """Snakemake's params trigger: the edited sweep's job is out of date; the other sweep and the paper's
    tables are not (one job for every sweep would re-run them all)."""
    work, sweeps, targets, _ = built
    _write_overlay(work, {**sweeps, "other": {**sweeps["other"], "epsilon": [0.3, 0.4]}})
    try:
        dry = _snakemake(work, "-n", "--cores", "1", *targets)
        assert dry.returncode == 0, dry.stdout[-3000:] + dry.stderr[-3000:]
        assert _jobs(dry.stdout) == {"accounting_sweep": 1}
        (outputs,) = re.findall(r"^\s+output: (.+)$", dry.stdout, flags=re.MULTILINE)
        assert outputs == "results/accounting/sweeps/other.csv, results/accounting/sweeps/other.png"
    finally:
        _write_overlay(work, sweeps)


def test_adding_a_sweep_adds_one_job(built):
    work, sweeps, targets, _ = built
    added = {**sweeps, "third": {**sweeps["tiny"], "k": [4]}}
    _write_overlay(work, added)
    try:
        dry = _snakemake(work, "-n", "--cores", "1", *targets, "results/accounting/sweeps/third.png")
        assert dry.returncode == 0, dry.stdout[-3000:] + dry.stderr[-3000:]
        assert _jobs(dry.stdout) == {"accounting_sweep": 1}
        (outputs,) = re.findall(r"^\s+output: (.+)$", dry.stdout, flags=re.MULTILINE)
        assert outputs == "results/accounting/sweeps/third.csv, results/accounting/sweeps/third.png"
    finally:
        _write_overlay(work, sweeps)
