"""Snakemake's command line for the tests, each run forked from one warm process.

A test that runs ``python -m snakemake ARGS`` pays Snakemake's start-up every time: its imports (pandas
among them, through the SLURM executor plugin) and the collection of its plugins, which imports every
installed plugin, about 2 CPU s on a 2-core machine, more than a dry run of a small workflow itself. The
suite starts Snakemake dozens of times.

``run_snakemake(ARGS, cwd=..., timeout=...)`` runs ``python -m snakemake ARGS`` as a fork of a server that
imported Snakemake's command line and collected its plugins once: tests/forked_python.py's runner with the
warm-up module tests/snakemake_warm.py (which also sets, in each fork, the working directory Snakemake
records at import). ``run_workflow(WORK, ARGS, ...)`` runs the repository's Snakefile on the folder
``WORK``. The tests that need a process of their own (an interrupted run, the SLURM cluster) keep starting
one. tests/test_snakemake_runner.py holds this runner to a real ``python -m snakemake`` process.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path

from forked_python import warm_python

REPO = Path(__file__).resolve().parents[1]

#: the warm-up module of Snakemake's fork server
WARM = "snakemake_warm"


def run_snakemake(
    arguments: Sequence[str],
    *,
    cwd: str | os.PathLike[str],
    timeout: float,
    env: Mapping[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    """``python -m snakemake ARGUMENTS`` in ``cwd``, run as a fork of the warm Snakemake.

    Args:
        arguments: Snakemake's command-line arguments (without the program).
        cwd: the working directory of the run.
        timeout: seconds after which the run and its jobs are killed.
        env: the run's environment; the test process's own (``os.environ`` now) when None.

    Returns:
        The command (``python -m snakemake ARGUMENTS``), the exit status and the captured standard output
        and error, as text.

    Raises:
        subprocess.TimeoutExpired: the run took longer than ``timeout`` (it has been killed).
    """
    return warm_python(WARM).run(["-m", "snakemake", *arguments], cwd=cwd, env=env, timeout=timeout)


def workflow_arguments(work: str | os.PathLike[str], arguments: Sequence[str] = ()) -> list[str]:
    """Snakemake's arguments that run the repository's Snakefile on the folder ``work``.

    Args:
        work: the workflow's working directory (its config/, results/...).
        arguments: what follows (targets, options).

    Returns:
        ``-s REPO/Snakefile --directory WORK ARGUMENTS``.
    """
    return ["-s", str(REPO / "Snakefile"), "--directory", str(work), *arguments]


def run_workflow(
    work: str | os.PathLike[str],
    arguments: Sequence[str],
    *,
    timeout: float,
    env: Mapping[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    """The repository's Snakefile run on the folder ``work``, from ``work`` (``run_snakemake``).

    Args:
        work: the workflow's working directory, also the run's.
        arguments: Snakemake's arguments after the Snakefile and the directory.
        timeout: seconds after which the run and its jobs are killed.
        env: the run's environment; the test process's own when None.

    Returns:
        What ``run_snakemake`` returns.

    Raises:
        subprocess.TimeoutExpired: the run took longer than ``timeout`` (it has been killed).
    """
    return run_snakemake(workflow_arguments(work, arguments), cwd=work, timeout=timeout, env=env)
