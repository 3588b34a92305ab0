"""Workflow jobs forked from one warm interpreter per run, instead of each importing the library anew.

A run of the workflow starts 60 to 90 Python jobs. Each one is a new interpreter that imports numpy, pandas,
scipy, the library and often matplotlib before its work begins: about a second of CPU per job on a 2-core
machine, a third of the quick profile's CPU (docs/decisions/workflow.md, "Jobs forked from a warm
interpreter"). This module lets the jobs share that start-up:

* :func:`start`, called once by the workflow's ``onstart`` handler, starts a *warm server*: a Python process
  that imports every module the job scripts import at their top, then listens on a Unix socket. The
  socket's address goes to the jobs through the environment variable :data:`ENVIRONMENT` (with the process
  ID of the Snakemake process that started it).
* :func:`hand_over`, the first statement of every job script, runs before the script's imports. In a job
  that Snakemake started, below the Snakemake process that started the server, it sends the job's script
  (the file Snakemake wrote: its preamble and the script's text), argument list, folder, environment and
  standard streams to the server, and waits. The server forks; the fork becomes the job (its own process
  group, the job's folder, environment and streams) and runs the same file as ``__main__``, where
  :func:`hand_over` returns at once and the imports find their modules already loaded. The waiting process
  exits with the fork's status, so Snakemake sees the job end as it would have.
* Anywhere else -- no server (a dry run, ``--no-hooks``, the variable set to ``0`` by the user), a job that
  a cluster's scheduler started (it does not descend from that Snakemake process), the server not yet
  listening or gone -- :func:`hand_over` returns and the job runs in its own process, as before. Only the
  start-up differs: the job runs the same code on the same inputs.

What differs in a fork: its modules were imported once, in the server's folder and environment, so an
environment variable read at import (``OPENBLAS_NUM_THREADS``, say) is the run's, not the job's; the process
running the work is the fork, so Snakemake's benchmark file measures the waiting process's CPU and memory and
the job's wall time. The fork's own CPU and peak memory, measured exactly by the kernel, are appended to the
job's first log file. If the waiting process ends (a job cancelled, Snakemake interrupted), the fork's
process group is killed.
"""

from __future__ import annotations

import ast
import atexit
import builtins
import contextlib
import gc
import importlib
import importlib.machinery
import io
import json
import os
import resource
import select
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import warnings
from collections.abc import Iterable, Sequence
from os import _exit  # documented: ends a process without cleanup, as a fork should
from pathlib import Path
from types import ModuleType
from typing import Any, BinaryIO, NoReturn

from shuffledp._allocator import keep_freed_memory

__all__ = [
    "ENVIRONMENT",
    "WarmServer",
    "hand_over",
    "script_imports",
    "serve",
    "start",
]

ENVIRONMENT = "SHUFFLEDP_WARM_JOBS"
"""``<Snakemake's process ID>:<socket path>`` for the jobs; set it to ``0`` before a run to switch the warm
server off."""

_SOCKET = "socket"  # the socket's name in the server's folder
_HEADER = struct.Struct("!Q")  # the request's length, sent with the three standard streams
_IN_FORK = False  # set in the fork before it runs the job, so that its own hand_over returns


def script_imports(scripts: Iterable[Path]) -> list[str]:
    """The absolute modules the scripts import at their top level, sorted: what the warm server imports.

    ``from package import name`` gives ``package.name``: importing it imports ``package`` first, and then
    fails where ``name`` is a function or a class rather than a module, which the server ignores.

    Args:
        scripts: the job scripts' paths.

    Returns:
        The modules' dotted names, each once.

    Raises:
        OSError: a script cannot be read.
        SyntaxError: a script does not parse.
    """
    names: set[str] = set()
    for path in scripts:
        tree = ast.parse(Path(path).read_text(encoding="utf-8"), filename=str(path))
        for node in tree.body:
            if isinstance(node, ast.Import):
                names.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module is not None:
                names.update(f"{node.module}.{alias.name}" for alias in node.names if alias.name != "*")
    return sorted(names)


def _exit_status(code: object) -> int:
    """The status Python exits with for ``SystemExit(code)``."""
    if code is None:
        return 0
    return code if isinstance(code, int) else 1


def _report_uncaught(error: BaseException) -> None:
    """Print the traceback Python prints for an uncaught exception (through ``sys.excepthook``, so a job's
    own hook runs), without this module's frames, which a job run on its own would not have."""
    traceback = error.__traceback__
    while traceback is not None and traceback.tb_frame.f_code.co_filename == __file__:
        traceback = traceback.tb_next
    sys.excepthook(type(error), error.with_traceback(traceback), traceback)


def _answer(connection: socket.socket, ending: dict[str, int]) -> None:
    """The fork's last ``atexit`` function: its status, CPU and peak memory to the waiting process, then the
    end of the process, without the interpreter's teardown of its modules. The job's own threads have been
    joined and its ``atexit`` functions run by then; what the teardown would add is a reference-count write to
    every object the fork shares with the server, each a page copied (about a second of CPU per job)."""
    ending["answered"] = 1
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(BaseException):
            stream.flush()
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    answer = {
        "status": ending["status"] & 0xFF,
        "cpu_seconds": own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime,
        "max_rss_kib": max(own.ru_maxrss, children.ru_maxrss),
    }
    with contextlib.suppress(OSError):
        connection.sendall(json.dumps(answer).encode() + b"\n")
    _exit(ending["status"] & 0xFF)


def _run_script(argv: Sequence[str]) -> None:
    """``python SCRIPT ARGS`` in this process: the script run as a fresh ``__main__`` module, with the
    ``sys.argv`` and ``sys.path[0]`` the interpreter gives it."""
    path = argv[0]
    main = ModuleType("__main__")
    main.__file__ = path
    main.__cached__ = None  # type: ignore[attr-defined]
    main.__builtins__ = builtins  # type: ignore[attr-defined]
    main.__loader__ = importlib.machinery.SourceFileLoader("__main__", path)
    sys.modules["__main__"] = main
    sys.argv = list(argv)
    sys.path[0] = os.path.dirname(os.path.abspath(path))
    with open(path, "rb") as handle:
        source = handle.read()
    exec(compile(source, path, "exec"), main.__dict__)  # the job's own script


def _watch_the_waiter(connection: socket.socket, ending: dict[str, int]) -> None:
    """In a thread of the fork: if the waiting process is gone before the fork has answered (its end of the
    socket closed: a job cancelled, Snakemake interrupted), kill the fork's process group, as the waiting
    process's end would have ended a job it ran itself."""
    with contextlib.suppress(OSError):
        while connection.recv(4096):
            pass
    if "answered" not in ending:
        os.killpg(0, signal.SIGKILL)


def _job(
    connection: socket.socket, request: dict[str, Any], streams: Sequence[int], closing: Sequence[int]
) -> NoReturn:
    """The fork's whole life: become the job, run its script, and end as the interpreter ends a script
    (``SystemExit`` leaves through the interpreter: its threads joined, its ``atexit`` functions run, its
    streams flushed), the last ``atexit`` function telling the waiting process how it ended. Never returns
    to the server's loop."""
    global _IN_FORK
    try:
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)  # the server's automatic reaping is the server's
        for descriptor in closing:
            os.close(descriptor)
        os.setpgid(0, 0)
        for target, descriptor in zip((0, 1, 2), streams, strict=True):
            os.dup2(descriptor, target)
            os.close(descriptor)
        if isinstance(sys.stdout, io.TextIOWrapper):
            sys.stdout.reconfigure(line_buffering=os.isatty(1))  # as a new process would buffer it
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        importlib.invalidate_caches()  # files written since the server started are found
        ending = {"status": 1}
        atexit.register(_answer, connection, ending)  # registered first, so it runs last
        connection.sendall(json.dumps({"pid": os.getpid()}).encode() + b"\n")
    except BaseException:  # nothing of the job ran, and without the line above the job runs itself
        _exit(1)
    threading.Thread(target=_watch_the_waiter, args=(connection, ending), daemon=True).start()
    _IN_FORK = True
    try:
        _run_script(request["argv"])
    except SystemExit as end:
        ending["status"] = _exit_status(end.code)
        raise
    except BaseException as error:
        _report_uncaught(error)
        raise SystemExit(1) from None
    ending["status"] = 0
    raise SystemExit(0)


def _read_exactly(connection: socket.socket, data: bytes, size: int) -> bytes:
    """``data`` completed to ``size`` bytes from the connection."""
    while len(data) < size:
        more = connection.recv(min(1 << 20, size - len(data)))
        if not more:
            raise ConnectionError("the request ended early")
        data += more
    return data


def _address(folder: str) -> str:
    """The path of the Unix socket of the server whose folder is ``folder``."""
    return os.path.join(folder, _SOCKET)


def _receive(connection: socket.socket) -> tuple[dict[str, Any], list[int]]:
    """One request: its header with the three standard streams, then its JSON body."""
    header, streams, _, _ = socket.recv_fds(connection, _HEADER.size, 3)
    try:
        (length,) = _HEADER.unpack(_read_exactly(connection, header, _HEADER.size))
        body = _read_exactly(connection, b"", length)
        if len(streams) != 3:
            raise ConnectionError("a request carries three standard streams")
        return json.loads(body), streams
    except BaseException:
        for descriptor in streams:
            os.close(descriptor)
        raise


def serve(address: str, parent_pipe: int) -> None:
    """The warm server's loop, once its modules are imported: listen at ``address``, fork one job per
    request, and end when the process that started it closes ``parent_pipe`` (or ends).

    Args:
        address: the Unix socket's path; created here, so that jobs find it only once the server is warm,
            and removed at the end with its folder.
        parent_pipe: the read end of a pipe whose write end only the starting process holds.
    """
    server = os.getpid()
    gc.freeze()  # the warm objects stay out of the forks' collections, which would write to all their pages
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(address + ".part")
    listener.listen(64)
    os.replace(address + ".part", address)  # the jobs find the address only once it answers
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # the forks are reaped by the kernel
    try:
        while True:
            readable, _, _ = select.select([listener.fileno(), parent_pipe], [], [])
            if parent_pipe in readable:
                return
            connection, _ = listener.accept()
            try:
                request, streams = _receive(connection)
            except (OSError, ValueError):
                connection.close()
                continue
            for stream in (sys.stdout, sys.stderr):  # nothing buffered is written twice
                stream.flush()
            with warnings.catch_warnings():
                # numpy's BLAS threads exist in the server; the fork runs on one thread
                warnings.filterwarnings("ignore", message=".*fork.*", category=DeprecationWarning)
                pid = os.fork()
            if pid == 0:
                _job(connection, request, streams, (listener.fileno(), parent_pipe))
            connection.close()
            for descriptor in streams:
                os.close(descriptor)
    finally:
        if os.getpid() == server:  # a fork leaves through here too, on its way out of the interpreter
            with contextlib.suppress(OSError):
                os.unlink(address)
            with contextlib.suppress(OSError):
                os.rmdir(os.path.dirname(address))


class WarmServer:
    """The warm server of one workflow run, as started by :func:`start`."""

    def __init__(self, process: subprocess.Popen, folder: str, pipe: int) -> None:
        self.process = process
        self.folder = folder
        self._pipe = pipe

    @property
    def address(self) -> str:
        """The path of the server's Unix socket."""
        return _address(self.folder)

    def stop(self) -> None:
        """Stop the server (the jobs it forked run on to their end) and remove its folder."""
        if self._pipe >= 0:
            os.close(self._pipe)
            self._pipe = -1
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout=10)
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        for path in (self.address, self.address + ".part"):
            with contextlib.suppress(OSError):
                os.unlink(path)
        with contextlib.suppress(OSError):
            os.rmdir(self.folder)
        if os.environ.get(ENVIRONMENT, "").endswith(":" + self.address):
            del os.environ[ENVIRONMENT]


_SERVER: WarmServer | None = None


def start(scripts: Iterable[Path], entry: Path) -> WarmServer | None:
    """Start the run's warm server for these job scripts and point this process's future jobs at it.

    Does nothing (returns None) when the user set :data:`ENVIRONMENT` to ``0``, when a server of this
    process already runs, off Linux (a job finds its ancestry in ``/proc``), or when the server cannot be
    started (a script that does not parse, no writable temporary folder): the jobs then run in their own
    processes, and a broken script fails its own job, as without the server.

    Args:
        scripts: the workflow's job scripts; the server imports what they import at their top.
        entry: the server's script, run as ``python ENTRY ADDRESS PIPE MODULE...``: it imports the modules,
            then calls :func:`serve` (the workflow's ``workflow/warm_server.py``).

    Returns:
        The server, or None when none was started.
    """
    global _SERVER
    if os.environ.get(ENVIRONMENT) == "0" or not os.path.isdir("/proc/self") or _SERVER is not None:
        return None
    try:
        # the preamble Snakemake writes above each script imports these two
        modules = sorted({*script_imports(scripts), "snakemake.iocontainers", "snakemake.logging"})
        folder = tempfile.mkdtemp(prefix="shuffledp-warm-")
    except (OSError, SyntaxError, ValueError):
        return None
    read_end, write_end = os.pipe()  # not inherited by the jobs: only this process holds the write end
    try:
        process = subprocess.Popen(
            [sys.executable, str(entry), _address(folder), str(read_end), *modules],
            pass_fds=(read_end,),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
    except OSError:
        os.close(write_end)
        os.rmdir(folder)
        return None
    finally:
        os.close(read_end)
    _SERVER = WarmServer(process, folder, write_end)
    os.environ[ENVIRONMENT] = f"{os.getpid()}:{_SERVER.address}"
    return _SERVER


def stop() -> None:
    """Stop the warm server :func:`start` started in this process, if any."""
    global _SERVER
    if _SERVER is not None:
        _SERVER.stop()
        _SERVER = None


def _descends_from(ancestor: int) -> bool:
    """Whether this process descends from ``ancestor`` (read from ``/proc``: False where it cannot be)."""
    pid = os.getppid()
    for _ in range(64):
        if pid == ancestor:
            return True
        if pid <= 1:
            return False
        try:
            with open(f"/proc/{pid}/stat", "rb") as handle:
                stat = handle.read()
        except OSError:
            return False
        pid = int(stat[stat.rindex(b")") + 2 :].split()[1])
    return False


def _append_usage(log: str, answer: dict[str, Any]) -> None:
    """Append the fork's CPU and peak memory to the job's log file (what the benchmark file cannot see)."""
    line = (
        f"warm-server fork: {answer['cpu_seconds']:.2f} CPU s (the job and its subprocesses), "
        f"peak resident memory {answer['max_rss_kib'] / 1024:.1f} MiB (pages shared with the server included)\n"
    )
    with contextlib.suppress(OSError), open(log, "a", encoding="utf-8") as handle:
        handle.write(line)


def _forked(address: str) -> BinaryIO | None:
    """Ask the warm server at ``address`` (:data:`ENVIRONMENT`'s value) to fork this job.

    Args:
        address: ``<Snakemake's process ID>:<socket path>``, or anything else where there is no server.

    Returns:
        The stream of the server's answers once the fork has started (its next line is the job's end), or
        None when this job runs in its own process: no server for this job (an empty or malformed address, a
        job that does not descend from that Snakemake process), or a server that does not answer.
    """
    ancestor, _, path = address.partition(":")
    if not path or not ancestor.isdigit() or not _descends_from(int(ancestor)):
        return None
    connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        connection.connect(path)
        body = json.dumps({"argv": sys.argv, "cwd": os.getcwd(), "env": dict(os.environ)}).encode()
        socket.send_fds(connection, [_HEADER.pack(len(body))], [0, 1, 2])
        connection.sendall(body)
        answers = connection.makefile("rb")
        started = answers.readline()
    except OSError:
        started = b""
    if not started:  # nothing forked
        connection.close()
        return None
    return answers


def hand_over(snakemake: Any = None) -> None:
    """Run this job in the run's warm server, if it has one, and exit with its status; otherwise return.

    The first statement of a job script, before its imports. In the fork that runs the job it returns at
    once.

    Args:
        snakemake: the job's Snakemake object; the fork's CPU and peak memory go to its first log file.
    """
    if _IN_FORK:  # the server set the allocator before forking
        return
    answers = _forked(os.environ.get(ENVIRONMENT, ""))
    if answers is None:
        keep_freed_memory()  # the job runs in this process
        return
    ended = answers.readline()  # an interruption ends this process, and the fork's watcher then kills it
    if not ended:
        raise SystemExit(
            "the job's fork in the warm server ended without a status (killed by a signal?); "
            f"rerun with {ENVIRONMENT}=0 to run each job in its own process"
        )
    answer = json.loads(ended)
    logs = list(getattr(snakemake, "log", None) or [])
    if logs:
        _append_usage(str(logs[0]), answer)
    raise SystemExit(int(answer["status"]))
