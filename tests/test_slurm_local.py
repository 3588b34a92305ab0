"""tools/slurm_local.sh: a real single-node SLURM cluster on localhost runs a small
target set through ``snakemake --profile profiles/slurm``; its outputs must be byte-identical to a local
run. Runs only as root with Debian's slurm-wlm and munge installed (slurmd must start as root), and
not when a slurmctld already listens on the script's port; skipped otherwise, with the reason. Also
skipped, quoting SLURM's own diagnostics, when the script finds this machine cannot run SLURM jobs
(exit 3: a daemon does not start, the node is not idle, or a job stays PENDING/RUNNING over 240 s,
where each takes seconds). About 1-2 minutes on 2 cores."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _skip_reason() -> str | None:
    missing = [p for p in ("slurmctld", "slurmd", "sinfo", "sbatch", "munged") if shutil.which(p) is None]
    if missing:
        return f"SLURM/munge not installed ({', '.join(missing)} missing; Debian: apt-get install slurm-wlm munge)"
    if os.geteuid() != 0:
        return "slurmd must start as root; tools/slurm_local.sh runs only as root"
    try:
        import snakemake_executor_plugin_slurm  # noqa: F401
    except ImportError:
        return "snakemake-executor-plugin-slurm is not installed"
    with socket.socket() as s:
        if s.connect_ex(("127.0.0.1", 16817)) == 0:
            return "port 16817 is in use (another slurmctld)"
    return None


@pytest.mark.slow  # a SLURM cluster and two Snakemake runs
@pytest.mark.skipif(_skip_reason() is not None, reason=str(_skip_reason()))
def test_slurm_run_is_byte_identical_to_the_local_run(tmp_path):
    env = {**os.environ, "PYTHON": sys.executable}
    # every step of the script has its own time limit (snakemake runs 900 + 600 s at most); this is the last resort
    run = subprocess.run(
        ["bash", str(ROOT / "tools" / "slurm_local.sh"), str(tmp_path / "work")],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=1700,
    )
    print(run.stdout[-4000:], run.stderr[-2000:])
    if run.returncode == 3:  # the script's "environment:" exit: this machine cannot host the cluster
        reason = [line for line in run.stdout.splitlines() if line.startswith("[slurm_local] environment:")]
        pytest.skip(f"{reason[-1] if reason else 'environment'}; diagnostics: {run.stdout[-1500:]}")
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    assert "output files byte-identical" in run.stdout and "DIFFERENT" not in run.stdout
    assert "has been submitted with SLURM jobid" in run.stdout  # the jobs really went through SLURM
