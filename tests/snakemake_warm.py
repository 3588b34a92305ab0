"""Snakemake's warm-up module for tests/forked_python.py (the server of tests/snakemake_runner.py).

Imported once by the fork server: Snakemake's command line, and the collection of its plugins (each plugin
registry is a singleton that keeps what it collected), about 2.3 CPU s that each fork then skips.
"""

from __future__ import annotations

from pathlib import Path

from snakemake import cli, workflow

cli.get_argument_parser()  # the plugins, collected once


def in_the_fork() -> None:
    """In each fork, in the run's folder: what Snakemake records when it is imported, the working
    directory (``Workflow._rundir``, its header's "Run directory"), set as a process started there would
    have it."""
    workflow.Workflow._rundir = str(Path.cwd().absolute())
