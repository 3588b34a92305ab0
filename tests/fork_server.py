"""The warm interpreter of tests/forked_python.py, run as a script: ``python fork_server.py MODULE...``.

It imports the warm-up modules named on its command line once, then serves runs: for each request, one
JSON line on its standard input (``argv``, ``cwd``, ``env``, ``stdout``, ``stderr``), it forks, and the
fork becomes what ``python ARGV`` would be in that folder and environment (``ARGV`` is ``["-c", CODE,
*ARGS]`` or ``["-m", MODULE, *ARGS]``), with its standard output and error in the two files, and exits with
that command's status. The server answers each request with two JSON lines: the fork's process ID at once,
then its exit status (negative: the signal that ended it, as ``subprocess`` reports it). It ends when its
standard input closes.

A warm-up module may define ``in_the_fork()``: each fork calls it once its session, folder, environment and
streams are the run's and before the command runs, for what a module records when it is imported (a real
process would have imported it in the run's folder and environment). Nothing here knows any particular
module.
"""

from __future__ import annotations

import atexit
import builtins
import contextlib
import importlib
import importlib.machinery
import json
import linecache
import os
import runpy
import sys
import threading
import warnings
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import Any, NoReturn


def _become_the_run(request: dict[str, Any], hooks: Sequence[Callable[[], object]]) -> None:
    """In the fork: the run's session, folder, environment, standard streams and interpreter state, then
    the warm-up modules' hooks."""
    os.setsid()  # a process group of its own: a timeout stops the run and every process it started
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    stdin = os.open(os.devnull, os.O_RDONLY)
    os.dup2(stdin, 0)
    os.close(stdin)
    for descriptor, path in ((1, request["stdout"]), (2, request["stderr"])):
        target = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.dup2(target, descriptor)
        os.close(target)
    importlib.invalidate_caches()  # files written since the server started are found, as in a new process
    sys.orig_argv = [sys.executable, *request["argv"]]
    for hook in hooks:
        hook()


def _run(argv: Sequence[str]) -> None:
    """``python ARGV`` in this process: ``-c CODE ARGS`` or ``-m MODULE ARGS``, with the ``sys.argv``,
    ``sys.path[0]`` and ``__main__`` module the interpreter gives each."""
    option, target, *arguments = argv
    main = ModuleType("__main__")  # what the interpreter's own __main__ holds before the command runs
    main.__annotations__ = {}
    main.__builtins__ = builtins  # type: ignore[attr-defined]
    main.__loader__ = importlib.machinery.BuiltinImporter
    sys.modules["__main__"] = main
    if option == "-c":
        sys.argv = ["-c", *arguments]
        sys.path[0] = ""  # the working directory, as ``python -c`` puts it
        if sys.version_info >= (3, 13):  # from 3.13 on, the command's lines, for its tracebacks to show
            lines = [line + "\n" for line in target.splitlines()]
            linecache.cache["<string>"] = (len(target), None, lines, "<string>")
        exec(compile(target, "<string>", "exec"), main.__dict__)
    elif option == "-m":
        sys.argv = ["-m", *arguments]  # argv[0] becomes the module's file once it is found
        sys.path[0] = os.getcwd()  # ``python -m`` puts the working directory's path first
        # what ``python -m`` itself calls: the module run in __main__, the same one-line message when it
        # cannot be found, the same frames in a traceback (runpy.run_module would differ in these three)
        runpy._run_module_as_main(target)  # type: ignore[attr-defined]
    else:
        raise ValueError(f"argv must start with -c or -m; got {option!r}")


def _exit_status(end: SystemExit) -> int:
    """The status Python exits with on an uncaught ``SystemExit``; a code that is not an integer is
    printed to standard error first."""
    if end.code is None:
        return 0
    if isinstance(end.code, int):
        return end.code
    print(end.code, file=sys.stderr)
    return 1


def _report_uncaught(error: BaseException) -> None:
    """The traceback Python prints for an uncaught exception (``sys.excepthook``), without this file's
    frames."""
    traceback = error.__traceback__
    while traceback is not None and traceback.tb_frame.f_code.co_filename == __file__:
        traceback = traceback.tb_next
    sys.excepthook(type(error), error.with_traceback(traceback), traceback)


def _child(
    request: dict[str, Any], hooks: Sequence[Callable[[], object]], protocol: Sequence[int]
) -> NoReturn:
    """The fork's whole life: become the run, run ``argv``, then end as the interpreter does (its
    threads joined, its ``atexit`` functions run, its streams flushed). Never returns: whatever happens,
    the fork exits here and never reaches the server's loop."""
    status = 1
    try:
        try:
            for descriptor in protocol:  # the server's pipes are the server's
                os.close(descriptor)
            _become_the_run(request, hooks)
            _run(request["argv"])
            status = 0
        except SystemExit as end:
            status = _exit_status(end)
        except BaseException as error:
            _report_uncaught(error)
        threading._shutdown()  # type: ignore[attr-defined]  # the interpreter's end, before atexit
        atexit._run_exitfuncs()
    finally:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(BaseException):
                stream.flush()
        os._exit(status & 0xFF)  # the status the operating system keeps, as for a real process


def serve(modules: Sequence[str]) -> None:
    """Import ``modules``, then fork a run per request until standard input closes.

    Args:
        modules: the warm-up modules, imported once; each one's ``in_the_fork``, if any, runs in every fork.
    """
    requests = os.fdopen(os.dup(0), "r")
    answers = os.fdopen(os.dup(1), "w")
    stdin = os.open(os.devnull, os.O_RDONLY)
    os.dup2(stdin, 0)
    os.close(stdin)
    os.dup2(2, 1)  # what a warm-up module prints goes to standard error, not into the answers
    hooks = []
    for name in modules:
        hook = getattr(importlib.import_module(name), "in_the_fork", None)
        if hook is not None:
            hooks.append(hook)
    for line in requests:
        request = json.loads(line)
        sys.stdout.flush()
        sys.stderr.flush()
        with warnings.catch_warnings():
            # a fork while threads exist (numpy's BLAS threads): the fork runs on one thread; the filter
            # is the server's only, the fork leaves this block before its run starts
            warnings.filterwarnings("ignore", message=".*fork.*", category=DeprecationWarning)
            pid = os.fork()
        if pid == 0:
            _child(request, hooks, (requests.fileno(), answers.fileno()))
        answers.write(json.dumps({"pid": pid}) + "\n")
        answers.flush()
        _, wait_status = os.waitpid(pid, 0)
        answers.write(json.dumps({"status": os.waitstatus_to_exitcode(wait_status)}) + "\n")
        answers.flush()


if __name__ == "__main__":
    serve(sys.argv[1:])
