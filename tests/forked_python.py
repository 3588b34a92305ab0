"""``python -c CODE ARGS`` and ``python -m MODULE ARGS`` for the tests, each run forked from a warm interpreter.

A test that starts Python pays the interpreter's start-up and then its imports before the command does
anything: about 2.3 CPU s for Snakemake's command line (its imports and the collection of its plugins),
about 0.6 CPU s for numpy, scipy and the library. Where the suite starts the same command many times,
``warm_python(*MODULES).run(ARGV, ...)`` runs it instead in a process forked from a server that imported
``MODULES`` once (tests/fork_server.py). The fork gets the caller's working directory, environment and
arguments, its own session and process group (a timeout stops it and every process it started), standard
input from the null device, and its standard output and error go to files that come back as a
``subprocess.CompletedProcess``, as ``subprocess.run(..., capture_output=True, text=True)`` returns them.
``-c`` and ``-m`` set ``sys.argv``, ``sys.path[0]`` and the ``__main__`` module as the interpreter does; an
uncaught exception or ``SystemExit`` ends the run with Python's exit status, after the run's threads, its
``atexit`` functions and the flush of its streams. A warm-up module may define ``in_the_fork()``, called
in each fork once it is in the run's folder and environment (tests/snakemake_warm.py's sets what Snakemake
records when it is imported).

What differs from a real process: the interpreter was started once, for the server, so the run's environment
cannot change the interpreter's own options (``PYTHONWARNINGS``, ``PYTHONPATH``, ``PYTHONHASHSEED``...; the
processes the run starts do get them); the warm-up modules were imported in the server's folder and
environment; and the run's address space starts with the server's (its imports), as a new interpreter's
would once it had imported them. tests/test_forked_python.py holds the forks to a real ``python -c`` and
``python -m``, and tests/test_snakemake_runner.py to a real ``python -m snakemake``.

One server per test process and set of warm-up modules (``warm_python`` keeps them), started by its first
run and stopped when the test process exits (``atexit``): a server is shared by tests in several files and
fixtures (Snakemake's by a session fixture and by most of the workflow tests), so the end of the process is
the one moment no test needs it; an idle server costs no CPU.
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
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import NoReturn

SERVER = Path(__file__).with_name("fork_server.py")


class WarmPython:
    """A server that imported ``modules`` once, and the runs forked from it, one at a time.

    Args:
        modules: the warm-up modules the server imports (importable from tests/ or installed).
    """

    def __init__(self, modules: Sequence[str]) -> None:
        self.modules = tuple(modules)
        self._server: subprocess.Popen[bytes] | None = None
        self._lock = threading.Lock()

    def run(
        self,
        argv: Sequence[str],
        *,
        timeout: float,
        cwd: str | os.PathLike[str] | None = None,
        env: Mapping[str, str] | None = None,
    ) -> subprocess.CompletedProcess[str]:
        """``python ARGV`` in ``cwd`` and ``env``, run as a fork of the warm server.

        Args:
            argv: ``["-c", CODE, *ARGS]`` or ``["-m", MODULE, *ARGS]``, what follows the interpreter.
            timeout: seconds after which the run and every process in its group are killed.
            cwd: the run's working directory; the caller's when None.
            env: the run's environment; the caller's (``os.environ`` now) when None.

        Returns:
            The command (``[sys.executable, *argv]``), the exit status (negative: the signal that ended
            the run) and the captured standard output and error, as text.

        Raises:
            ValueError: ``argv`` does not start with ``-c`` or ``-m`` and its argument.
            subprocess.TimeoutExpired: the run took longer than ``timeout`` (it has been killed; the
                exception holds what it had written).
            RuntimeError: the server ended (a warm-up module that fails to import, for one).
        """
        argv = list(argv)
        if len(argv) < 2 or argv[0] not in ("-c", "-m"):
            raise ValueError(f"argv must be ['-c', CODE, ...] or ['-m', MODULE, ...]; got {argv!r}")
        command = [sys.executable, *argv]
        with self._lock, tempfile.TemporaryDirectory(prefix="forked-python-") as folder:
            stdout, stderr = Path(folder, "stdout"), Path(folder, "stderr")
            request = {
                "argv": argv,
                "cwd": os.path.abspath(os.getcwd() if cwd is None else cwd),
                "env": dict(os.environ if env is None else env),
                "stdout": str(stdout),
                "stderr": str(stderr),
            }
            server = self._started()
            assert server.stdin is not None and server.stdout is not None
            deadline = time.monotonic() + timeout
            try:
                server.stdin.write(json.dumps(request).encode() + b"\n")
                server.stdin.flush()
            except BrokenPipeError:
                self._ended()
            answers = server.stdout.fileno()
            pid = self._answer(answers, None)["pid"]
            ended = self._answer(answers, deadline)
            if ended is None:
                _kill_group(pid)
                self._answer(answers, None)  # the status of the killed run: the server has reaped it
                raise subprocess.TimeoutExpired(command, timeout, _read(stdout), _read(stderr))
            return subprocess.CompletedProcess(command, ended["status"], _read(stdout), _read(stderr))

    def close(self) -> None:
        """Stop the server (it ends when its standard input closes); the next run starts a new one."""
        server, self._server = self._server, None
        if server is None:
            return
        assert server.stdin is not None and server.stdout is not None
        with contextlib.suppress(OSError):
            server.stdin.close()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        server.stdout.close()

    def _started(self) -> subprocess.Popen[bytes]:
        """The running server, started (again, if the last one ended) when there is none."""
        if self._server is not None and self._server.poll() is not None:
            self.close()
        if self._server is None:
            self._server = subprocess.Popen(
                [sys.executable, str(SERVER), *self.modules], stdin=subprocess.PIPE, stdout=subprocess.PIPE
            )
        return self._server

    def _answer(self, answers: int, deadline: float | None) -> dict | None:
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
                self._ended()
            line += byte
        return json.loads(line)

    def _ended(self) -> NoReturn:
        """The server has ended: forget it (the next run starts another) and say so."""
        server, self._server = self._server, None
        assert server is not None and server.stdin is not None and server.stdout is not None
        status = server.wait()
        with contextlib.suppress(OSError):
            server.stdin.close()
        server.stdout.close()
        raise RuntimeError(
            f"the fork server ({SERVER.name} {' '.join(self.modules)}) ended (exit status {status}) "
            "without answering; what it wrote is in the test's standard error"
        )


_warm: dict[tuple[str, ...], WarmPython] = {}


def warm_python(*modules: str) -> WarmPython:
    """The test process's ``WarmPython`` for these warm-up modules: one per set, stopped at exit.

    Args:
        modules: the warm-up modules, in the order the server imports them.

    Returns:
        The same object for the same modules on every call; its server starts with its first run.
    """
    if modules not in _warm:
        _warm[modules] = WarmPython(modules)
        atexit.register(_warm[modules].close)
    return _warm[modules]


def _kill_group(pid: int) -> None:
    """Kill the run ``pid`` and its process group; the run alone if it has no group of its own yet (it
    was killed before its ``setsid``)."""
    try:
        os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def _read(path: Path) -> str:
    return path.read_text(errors="replace") if path.exists() else ""
