"""Suite-wide test configuration.

Hypothesis runs derandomized by default, so CI sees the same examples on every run (a red CI is
then a real regression, not a new random draw). Explore with fresh random examples locally:
``pytest --hypothesis-profile=explore`` (more examples, randomized).

``tiny_workflow_run``: the real workflow on the tiny .test configuration, run once per session and
shared by tests/test_workflow.py and tests/test_workflow_report.py (issue 24: it was run twice).
"""

import fcntl
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import settings

settings.register_profile("ci", derandomize=True, deadline=None, print_blob=True)
settings.register_profile("explore", max_examples=500, deadline=None, print_blob=True)
settings.load_profile("ci")


# --- one real run of the tiny .test workflow, shared by tests/test_workflow.py and tests/test_workflow_report.py

REPO = Path(__file__).resolve().parents[1]


def _session_dir(tmp_path_factory) -> Path:
    """This pytest session's temporary folder, the same for every pytest-xdist worker (a worker's own
    basetemp is <session folder>/popen-gwN)."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def _snakemake(work: Path, *arguments: str):
    command = [sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"), "--directory", str(work), *arguments]
    try:
        result = subprocess.run(command, capture_output=True, text=True, timeout=900, cwd=work)
    except subprocess.TimeoutExpired as error:
        return f"snakemake {' '.join(arguments)} timed out after {error.timeout} s"
    if result.returncode != 0:
        return f"snakemake {' '.join(arguments)} failed:\n{result.stdout[-4000:]}\n{result.stderr[-4000:]}"
    return None


def _build_tiny_run(work: Path) -> str | None:
    """The real workflow on a copy of .test/ (all stages, --cores 2), then `snakemake --report report.zip`
    (it reads the finished run and writes only report.zip). Returns the failure message, or None."""
    shutil.copytree(REPO / ".test", work, ignore=shutil.ignore_patterns("results", "logs", "benchmarks", ".snakemake"))
    return _snakemake(work, "--cores", "2") or _snakemake(work, "--cores", "1", "--report", "report.zip")


@pytest.fixture(scope="session")
def tiny_workflow_run(tmp_path_factory) -> Path:
    """The finished tiny run, built ONCE per pytest session even under xdist (the first worker to ask
    builds it while holding a file lock; the others wait and reuse it, or fail with its message).
    Read-only for tests: a test that writes must work on its own copy."""
    shared = _session_dir(tmp_path_factory)
    work, failed = shared / "tiny-workflow-run", shared / "tiny-workflow-run.failed"
    with open(shared / "tiny-workflow-run.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            if not failed.exists() and not (shared / "tiny-workflow-run.done").exists():
                shutil.rmtree(work, ignore_errors=True)
                message = _build_tiny_run(work)
                (failed if message else shared / "tiny-workflow-run.done").write_text(message or "")
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
    if failed.exists():
        pytest.fail(failed.read_text(), pytrace=False)
    return work
