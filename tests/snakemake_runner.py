"""Snakemake's command line for the tests, each run forked from one warm process.

A test that runs ``python -m snakemake ARGS`` pays Snakemake's start-up every time: its imports (pandas
among them, through the SLURM executor plugin) and the collection of its plugins, which imports every
installed plugin, about 2 CPU s on a 2-core machine, more than a dry run of a small workflow itself. The
suite starts Snakemake dozens of times.

``run_snakemake(ARGS, cwd=..., timeout=...)`` runs the same thing, ``snakemake.cli.main(ARGS)`` (what
``python -m snakemake`` runs: snakemake/__main__.py), in a process forked from a server that imported
Snakemake's command line and collected its plugins once (tests/snakemake_server.py, one per test process,
started by the first run). The fork gets the test's working directory, environment and ``sys.argv``, its
own session and process group (a timeout stops it and every job it started), and its standard output and
error go to files that come back as a ``subprocess.CompletedProcess``, as ``subprocess.run(...,
capture_output=True, text=True)`` returns them. Its exit status is ``main``'s ``sys.exit`` status, its
``atexit`` handlers run before it exits, and a run that outlives its timeout raises
``subprocess.TimeoutExpired``.

What differs from a real process: the interpreter was started once, for the server, so a run's environment
cannot change the interpreter's own options (``PYTHONWARNINGS``, for instance, still reaches the jobs
Snakemake starts, which are processes of their own). The tests that need a process of their own (an
interrupted run, the SLURM cluster) keep starting one. tests/test_snakemake_runner.py holds this runner to a
real ``python -m snakemake`` process.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import select
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

SERVER = Path(__file__).with_name("snakemake_server.py")

_server: subprocess.Popen[bytes] | None = None


def _started_server() -> subprocess.Popen[bytes]:
    global _server
    if _server is None or _server.poll() is not None:
        _server = subprocess.Popen(
            [sys.executable, str(SERVER)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0
        )
        atexit.register(_stop, _server)
    return _server


def _stop(server: subprocess.Popen[bytes]) -> None:
    assert server.stdin is not None
    with contextlib.suppress(OSError):
        server.stdin.close()
    try:
        server.wait(timeout=10)
    except subprocess.TimeoutExpired:
        server.kill()
        server.wait()


def _answer(answers: int, deadline: float | None) -> dict | None:
    """The server's next answer, read from the file descriptor ``answers`` a byte at a time (so that
    nothing waits in a buffer where ``select`` cannot see it), or None if it did not come before
    ``deadline`` (``time.monotonic``)."""
    line = b""
    while not line.endswith(b"\n"):
        if deadline is not None:
            ready, _, _ = select.select([answers], [], [], max(deadline - time.monotonic(), 0.0))
            if not ready:
                return None
        byte = os.read(answers, 1)
        if not byte:
            raise RuntimeError(f"the Snakemake server ({SERVER.name}) ended without answering")
        line += byte
    return json.loads(line)


def run_snakemake(
    arguments: Sequence[str],
    *,
    cwd: str | os.PathLike[str],
    timeout: float,
    env: Mapping[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    """``python -m snakemake ARGUMENTS`` in ``cwd``, run as a fork of the warm server.

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
    command = [sys.executable, "-m", "snakemake", *arguments]
    server = _started_server()
    assert server.stdin is not None and server.stdout is not None
    with tempfile.TemporaryDirectory(prefix="snakemake-run-") as folder:
        stdout, stderr = Path(folder, "stdout"), Path(folder, "stderr")
        request = {
            "arguments": list(arguments),
            "cwd": os.path.abspath(cwd),
            "env": dict(os.environ if env is None else env),
            "stdout": str(stdout),
            "stderr": str(stderr),
        }
        deadline = time.monotonic() + timeout
        server.stdin.write(json.dumps(request).encode() + b"\n")
        answers = server.stdout.fileno()
        started = _answer(answers, None)
        assert started is not None
        ended = _answer(answers, deadline)
        if ended is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(started["pid"], signal.SIGKILL)
            _answer(answers, None)
            raise subprocess.TimeoutExpired(command, timeout, _read(stdout), _read(stderr))
        return subprocess.CompletedProcess(command, ended["status"], _read(stdout), _read(stderr))


def _read(path: Path) -> str:
    return path.read_text(errors="replace") if path.exists() else ""
