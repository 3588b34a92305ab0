"""Job errors reach the job's log file (one line + traceback), through a real Snakemake script job."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

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
    result = subprocess.run(
        [sys.executable, "-m", "snakemake", "--cores", "1", "--workflow-profile", "none"],
        cwd=tmp_path, capture_output=True, text=True, timeout=300,
    )
    assert result.returncode != 0
    log = (tmp_path / "logs" / "fails.log").read_text()
    lines = log.splitlines()
    assert lines[0].endswith(" started")
    assert lines[1].endswith(" FAILED: ValueError: row 7 has no latitude")  # one line
    assert "Traceback (most recent call last):" in log and "in inner" in log
    assert log.rstrip().endswith("second line of detail")
    assert "row 7 has no latitude" in result.stderr  # still on stderr as before
    assert not (tmp_path / "out.txt").exists()
