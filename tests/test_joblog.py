"""Job errors reach the job's log file (one line + traceback), through a real Snakemake script job."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from snakemake_runner import run_snakemake

REPO = Path(__file__).resolve().parents[1]

SNAKEFILE = textwrap.dedent(
    """
    rule fails:
        output: "out.txt"
        log: "logs/fails.log"
        script: "fails.py"
    """
)
SCRIPT = textwrap.dedent(
    """
    import logging
    from shuffledp.joblog import setup_job_log

    setup_job_log(snakemake)
    logging.info("started")
    def inner():
        raise ValueError("row 7 has no latitude\\nsecond line of detail")
    inner()
    """
)


def test_every_workflow_script_logs_through_the_shared_helper():
    scripts = sorted((REPO / "workflow" / "scripts").glob("*.py"))
    assert scripts
    for script in scripts:
        text = script.read_text()
        assert "setup_job_log(snakemake)" in text and "logging.basicConfig" not in text, script.name


@pytest.mark.slow
def test_uncaught_exception_is_written_to_the_job_log(tmp_path):
    (tmp_path / "Snakefile").write_text(SNAKEFILE)
    (tmp_path / "fails.py").write_text(SCRIPT)
    result = run_snakemake(["--cores", "1", "--workflow-profile", "none"], cwd=tmp_path, timeout=300)
    assert result.returncode != 0
    log = (tmp_path / "logs" / "fails.log").read_text()
    lines = log.splitlines()
    assert lines[0].endswith(" started")
    assert lines[1].endswith(" FAILED: ValueError: row 7 has no latitude")  # one line
    assert "Traceback (most recent call last):" in log and "in inner" in log
    assert log.rstrip().endswith("second line of detail")
    assert "row 7 has no latitude" in result.stderr  # still on stderr as before
    assert not (tmp_path / "out.txt").exists()


FILE_SCRIPT = textwrap.dedent(
    """
    import errno, pathlib, sys, types
    import pandas as pd
    from shuffledp.io import atomic_write_text
    from shuffledp.joblog import setup_job_log

    setup_job_log(types.SimpleNamespace(log=["logs/job.log"]))
    if sys.argv[1] == "full-disk":
        def full(self, *args, **kwargs):  # the write of a full disk
            raise OSError(errno.ENOSPC, "No space left on device")
        pathlib.Path.write_text = full
        atomic_write_text("results/table.csv", "a,b\\n1,2\\n")
    else:
        pathlib.Path("data").mkdir()
        pathlib.Path("data/in.csv").write_text("a\\n1\\n")
        real_open = open
        def unreadable(file, *args, **kwargs):  # what open() gives on a file without read permission
            if str(file).endswith("in.csv"):
                raise PermissionError(errno.EACCES, "Permission denied", str(file))
            return real_open(file, *args, **kwargs)
        import builtins
        builtins.open = unreadable
        pd.read_csv("data/in.csv")
    """
)


@pytest.mark.parametrize(
    "case, line",
    [
        ("full-disk", "error: cannot write results/table.csv: No space left on device"),
        ("unreadable", "error: cannot open data/in.csv: Permission denied"),
    ],
)
def test_a_file_that_cannot_be_written_or_read_gives_one_line_and_no_partial_output(tmp_path, case, line):
    (tmp_path / "logs").mkdir()
    (tmp_path / "job.py").write_text(FILE_SCRIPT)
    result = subprocess.run(
        [sys.executable, "job.py", case], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 1
    assert result.stderr.strip().splitlines() == [
        line
    ]  # one line naming the file and the cause, nothing else
    log = (tmp_path / "logs" / "job.log").read_text()
    assert "Traceback (most recent call last):" in log and line.removeprefix("error: ") in log
    if case == "full-disk":
        assert list((tmp_path / "results").iterdir()) == []  # neither the table nor a temporary file


ITEMS_SCRIPT = textwrap.dedent(
    """
    import logging, types
    from shuffledp.joblog import item_logs, setup_job_log

    job = types.SimpleNamespace(log=["logs/a.log", "logs/b.log", "logs/c.log"])
    setup_job_log(job)
    for item in item_logs(["a", "b", "c"], job.log):
        logging.info("working on %s", item)
        if item == "b":
            raise ValueError("item b has no rows")
    """
)


def test_item_logs_give_each_item_of_a_merged_job_its_own_log_and_its_failure(tmp_path):
    (tmp_path / "logs").mkdir()
    (tmp_path / "job.py").write_text(ITEMS_SCRIPT)
    result = subprocess.run(
        [sys.executable, "job.py"], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 1 and "item b has no rows" in result.stderr
    first = (tmp_path / "logs" / "a.log").read_text().splitlines()
    assert len(first) == 1 and first[0].endswith(" working on a")
    second = (tmp_path / "logs" / "b.log").read_text().splitlines()
    assert second[0].endswith(" working on b") and second[1].endswith(
        " FAILED: ValueError: item b has no rows"
    )
    assert not (tmp_path / "logs" / "c.log").exists()  # never started


def test_item_logs_want_one_log_per_item():
    from shuffledp.joblog import item_logs

    with pytest.raises(ValueError, match="2 items but 1 log files"):
        list(item_logs(["a", "b"], ["logs/a.log"]))
