"""tests/snakemake_runner.py (tests/forked_python.py's forks of a warm Snakemake, tests/snakemake_warm.py),
held to a real ``python -m snakemake`` process: the same exit status and the same output for a run that
fails in one line and for a real run (Snakemake's whole header, its command line and run directory
included, and every job's lines); the test's working directory and environment reach the run; a run that
outlives its timeout is stopped with every job it started."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from processes import ended
from snakemake_runner import run_snakemake, workflow_arguments

# Every test here runs Snakemake: `slow` (the marker in pyproject.toml).
pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[1]

#: a workflow of two jobs; the Snakefile's own code reads the environment and the working directory
SNAKEFILE = """\
import os

rule all:
    input: "b.txt"

rule a:
    output: "a.txt"
    params: marker=os.environ.get("RUNNER_MARKER", "unset"), cwd=os.getcwd()
    shell: "echo {params.marker} {params.cwd} > {output}"

rule b:
    input: "a.txt"
    output: "b.txt"
    shell: "cat {input} > {output}"
"""

#: what differs between any two runs of Snakemake: the start time, the workflow's random ID, the time
#: stamps of the jobs, the log file's name and the elapsed time
_VARYING = re.compile(
    r"(?<=  Date: ).*|(?<=  Workflow ID: ).*|^\[\w{3} \w{3} +\d+ [\d:]+ \d{4}\]$"
    r"|(?<=\.snakemake/log/)[\dT:.-]+(?=\.snakemake\.log)|(?<=Elapsed time: ).*"
)


def _normalised(text: str, folder: Path) -> list[str]:
    return [_VARYING.sub("<varies>", line).replace(str(folder), "<folder>") for line in text.splitlines()]


def _real(
    arguments: list[str], cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "snakemake", *arguments],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )


def _same(
    real: subprocess.CompletedProcess[str],
    forked: subprocess.CompletedProcess[str],
    real_folder: Path,
    forked_folder: Path,
) -> None:
    """The same exit status, and the same output line for line but for what differs between any two runs
    (``_VARYING``) and the folder each ran in."""
    assert forked.returncode == real.returncode
    assert _normalised(forked.stdout, forked_folder) == _normalised(real.stdout, real_folder)
    assert _normalised(forked.stderr, forked_folder) == _normalised(real.stderr, real_folder)


def _workflow(folder: Path) -> Path:
    folder.mkdir()
    (folder / "Snakefile").write_text(SNAKEFILE)
    return folder


def test_a_config_error_is_the_same_one_line_and_status(tmp_path):
    work = tmp_path / "work"
    shutil.copytree(REPO / "config", work / "config")
    arguments = workflow_arguments(work, ["-n", "--cores", "1", "--config", "seed=-1"])
    real, forked = _real(arguments, work), run_snakemake(arguments, cwd=work, timeout=300)
    assert real.returncode == 1
    assert "config: `seed` must be >= 0; got -1." in real.stdout + real.stderr
    _same(real, forked, work, work)


def test_a_run_sees_the_tests_folder_and_environment_and_writes_the_same_files(tmp_path):
    arguments = ["--cores", "1", "--workflow-profile", "none"]
    real_folder, forked_folder = _workflow(tmp_path / "real"), _workflow(tmp_path / "forked")
    env = {**os.environ, "RUNNER_MARKER": "given"}
    real = _real(arguments, real_folder, env)
    forked = run_snakemake(arguments, cwd=forked_folder, timeout=300, env=env)
    _same(real, forked, real_folder, forked_folder)
    assert (real_folder / "b.txt").read_text() == f"given {real_folder}\n"
    assert (forked_folder / "b.txt").read_text() == f"given {forked_folder}\n"
    assert "RUNNER_MARKER" not in os.environ  # the run's environment stayed the run's


def test_the_exit_status_of_a_failed_job_is_snakemakes(tmp_path):
    folder = tmp_path / "failing"
    folder.mkdir()
    (folder / "Snakefile").write_text('rule a:\n    output: "a.txt"\n    shell: "exit 3"\n')
    arguments = ["--cores", "1", "--workflow-profile", "none"]
    forked = run_snakemake(arguments, cwd=folder, timeout=300)
    assert forked.returncode == 1 and "Error in rule a" in forked.stdout + forked.stderr


def test_a_run_past_its_timeout_is_stopped_with_its_jobs(tmp_path):
    folder = tmp_path / "slow"
    folder.mkdir()
    (folder / "Snakefile").write_text(
        'rule a:\n    output: "a.txt"\n    shell: "echo $$ > job.pid; sleep 120; touch {output}"\n'
    )
    started = time.monotonic()
    with pytest.raises(subprocess.TimeoutExpired) as stopped:
        run_snakemake(["--cores", "1", "--workflow-profile", "none"], cwd=folder, timeout=4)
    assert stopped.value.timeout == 4 and time.monotonic() - started < 30
    job = int((folder / "job.pid").read_text())
    assert ended(job), "the job of a stopped run is still running"
