"""Suite-wide test configuration.

Hypothesis runs derandomized by default, so CI sees the same examples on every run (a red CI is
then a real regression, not a new random draw). Explore with fresh random examples locally:
``pytest --hypothesis-profile=explore`` (more examples, randomized).

``tiny_workflow_run``: the real workflow on the tiny .test configuration, run once per session and
shared by tests/test_workflow.py and tests/test_workflow_report.py.

Scheduling under ``pytest -n 2 --dist loadfile``: pytest-xdist hands out whole files, by
default the files with the most tests first, so a slow file with one test (tests/test_slurm_local.py)
would run last while the other worker idled. Here the expensive files go first (``FILE_SECONDS``, longest
first; the rest after them in collection order), the longest-processing-time-first rule that keeps
both workers busy until the end.
"""

import fcntl
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import settings
from snakemake_runner import run_workflow

from shuffledp._allocator import keep_freed_memory
from shuffledp._bytecode import compile_package

# as the workflow's jobs and the command do (shuffledp._allocator); each test worker imports this file
keep_freed_memory()

settings.register_profile("ci", derandomize=True, deadline=None, print_blob=True)
settings.register_profile("explore", max_examples=500, deadline=None, print_blob=True)
settings.load_profile("ci")


# --- expensive files first under pytest-xdist --dist loadfile

# Seconds per file (setup included; Python 3.11): the per-test durations of a whole-suite run on 2 idle
# workers, scaled by that run's CPU over its summed durations (843 CPU s over 859 s), the files at 10 s or more.
# Only the order matters, so round numbers do; files not listed run after these. tests/test_wheel.py is listed
# because, unlisted, it ran last and one worker idled about 7 s while the other waited on its subprocesses.
# tests/test_workflow.py holds the tiny workflow run (about 85 s, its Snakemake on two cores), so its build
# starts at once.
# tests/test_workflow_report.py is listed low on purpose: it shares the tiny run, and on the other worker it
# would only wait for it.
FILE_SECONDS = {
    "tests/test_workflow.py": 100,
    "tests/accounting/test_k4_blocks.py": 53,
    "tests/accounting/test_exact_enumeration.py": 49,
    "tests/test_slurm_local.py": 43,
    "tests/accounting/test_validity_sweep.py": 29,
    "tests/accounting/test_extremes.py": 35,
    "tests/accounting/test_worst_case_accounting.py": 34,
    "tests/experiments/test_phase_diagram.py": 13,
    "tests/test_readme.py": 18,
    "tests/accounting/test_worst_case_upper.py": 18,
    "tests/accounting/test_cli_grid.py": 17,
    "tests/experiments/test_compare_rounds.py": 9,
    "tests/test_docs_examples.py": 12,
    "tests/test_workflow_sweeps.py": 11,
    "tests/test_config.py": 11,
    "tests/accounting/test_worst_case_exact.py": 10,
    "tests/accounting/test_safe_side.py": 10,
    "tests/test_wheel.py": 9,  # builds, installs and runs the wheel (~9 s of wall, little CPU)
    # two real Snakemake starts and a 4-s timeout; unlisted, it ran last while the other worker had ended
    "tests/test_snakemake_runner.py": 11,
    "tests/test_workflow_report.py": 5,
    # two dozen real interpreters beside their forks and a 1-s timeout
    "tests/test_forked_python.py": 4,
}

#: files handed out before the longest-first order: tests/test_slurm_local.py mostly waits on SLURM (its
#: executor checks 2 s after a submission, then 12 s later), so that the tiny run's second core and CI's
#: background steps (the newest Python's tests, mypy) fill the core it leaves idle
FIRST_FILES = ("tests/test_slurm_local.py",)


def pytest_sessionstart(session):
    """Once, before any worker starts: the package's sources compiled for the suite's hundreds of
    subprocesses (``shuffle-dp`` commands, Snakemake jobs), which under PYTHONDONTWRITEBYTECODE (as in CI)
    would each compile them again (shuffledp._bytecode)."""
    if not hasattr(session.config, "workerinput"):
        compile_package()


def pytest_configure(config):
    # xdist's own order (most tests per file first) would undo the order set below.
    if getattr(config.option, "dist", "no") == "loadfile":
        config.option.loadscopereorder = False


def pytest_collection_modifyitems(config, items):
    """On a pytest-xdist worker: the files of FILE_SECONDS first, longest first (a stable sort: the
    tests of a file keep their order, and so do the unlisted files). Every worker sorts the same
    collection the same way, so xdist still sees identical collections; the controller hands out
    files in this order (loadfile, reorder off above). A worker's own ``config.option.dist`` is
    always "no" (xdist resets it), so the worker is recognised by its ``workerinput``."""
    if hasattr(config, "workerinput"):
        items.sort(key=_file_order)


def _file_order(item) -> tuple[bool, float]:
    """The FIRST_FILES, then the files of FILE_SECONDS longest first, then the rest (a stable sort)."""
    path = item.nodeid.split("::", 1)[0]
    return path not in FIRST_FILES, -FILE_SECONDS.get(path, 0)


# --- one real run of the tiny .test workflow, shared by tests/test_workflow.py and tests/test_workflow_report.py

REPO = Path(__file__).resolve().parents[1]


def _session_dir(tmp_path_factory) -> Path:
    """This pytest session's temporary folder, the same for every pytest-xdist worker (a worker's own
    basetemp is <session folder>/popen-gwN)."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


#: the workflow scripts' own warnings fail the tiny run as pyproject.toml's filterwarnings fail a test
#: (docs/decisions/code.md): Snakemake runs each script as __main__ in a Python process of its own, so
#: the filter reaches it through the environment
SCRIPT_WARNINGS = "error::Warning:__main__"


def _script_warnings_env() -> dict[str, str]:
    given = os.environ.get("PYTHONWARNINGS")
    return {**os.environ, "PYTHONWARNINGS": f"{given},{SCRIPT_WARNINGS}" if given else SCRIPT_WARNINGS}


def _snakemake(work: Path, *arguments: str):
    try:
        result = run_workflow(work, arguments, timeout=900, env=_script_warnings_env())
    except subprocess.TimeoutExpired as error:
        return f"snakemake {' '.join(arguments)} timed out after {error.timeout} s"
    if result.returncode != 0:
        return f"snakemake {' '.join(arguments)} failed:\n{result.stdout[-4000:]}\n{result.stderr[-4000:]}"
    return None


def _build_tiny_run(work: Path) -> str | None:
    """The real workflow on a copy of .test/ (all stages, --cores 2), then `snakemake --report report.zip`
    (it reads the finished run and writes only report.zip). Returns the failure message, or None."""
    shutil.copytree(
        REPO / ".test", work, ignore=shutil.ignore_patterns("results", "logs", "benchmarks", ".snakemake")
    )
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
