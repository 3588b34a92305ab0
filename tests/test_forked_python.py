"""tests/forked_python.py's forks, held to a real ``python -c`` and ``python -m``: the same ``sys.argv``,
``sys.path[0]``, working directory, environment, ``__main__`` globals, exit status and both streams, for
each way a run ends (an exit code, an exit message, an uncaught exception at the top or in a function, a
signal, an ``atexit`` function, a thread still running); a timeout kills the run's whole process group and
the server serves on; the address-space limit a run sets counts what it inherited; the warm-up modules'
``in_the_fork`` runs in every fork.

This file is also its own warm-up module: the server imports it (``WARM``), so its ``in_the_fork`` below is
the hook each fork calls.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest
from forked_python import warm_python
from processes import ended

#: numpy, for a warm-up the address-space limit must count; this file, for its hook
WARM = ("numpy", "test_forked_python")

#: the environment variable the runs read
PROBE = "FORKED_PYTHON_PROBE"

#: set by ``in_the_fork`` in each fork; None in the server and in the test process
HOOKED: tuple[str, str | None] | None = None


def in_the_fork() -> None:
    """The hook: the folder and the probe variable as the fork has them when its hook runs."""
    global HOOKED
    HOOKED = (os.getcwd(), os.environ.get(PROBE))


def _forked(argv: list[str], **options) -> subprocess.CompletedProcess[str]:
    return warm_python(*WARM).run(argv, **options)


#: what the run reports of itself, then each way it can end
REPORT = """\
import json, os, sys
print(json.dumps([sys.argv, sys.path[0], os.getcwd(), os.environ.get("FORKED_PYTHON_PROBE"), __name__,
                  sorted(globals()), sys.orig_argv]))
print("to standard error", file=sys.stderr)
"""
ENDINGS = {
    "an exit code": "sys.exit(3)",
    "an exit message": "sys.exit('stopped here')",
    "an exception": "raise ValueError('boom')",
    "an exception in a function": "def divide():\n    return 1 / 0\ndivide()",
    "a signal": "import signal; sys.stdout.flush(); os.kill(os.getpid(), signal.SIGTERM)",
    "an atexit function": "import atexit; atexit.register(print, 'at exit')",
    "a thread": "import threading, time; threading.Thread(target=lambda: (time.sleep(0.2), print('thread'))).start()",
}


@pytest.mark.parametrize("ending", ENDINGS.values(), ids=ENDINGS.keys())
@pytest.mark.parametrize("option", ["-c", "-m"])
def test_a_run_is_what_a_real_interpreter_does(tmp_path, option, ending):
    code = REPORT + ending + "\n"
    (tmp_path / "probe_run.py").write_text(code)
    argv = [option, code if option == "-c" else "probe_run", "first", "--second"]
    env = {**os.environ, PROBE: "given"}
    real = subprocess.run(
        [sys.executable, *argv], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60
    )
    forked = _forked(argv, cwd=tmp_path, env=env, timeout=60)
    assert forked.args == real.args
    assert (forked.returncode, forked.stdout, forked.stderr) == (real.returncode, real.stdout, real.stderr)
    assert '"given", "__main__"' in real.stdout  # the probe variable reached both
    assert PROBE not in os.environ  # the run's environment stayed the run's


def test_forked_python_is_python_c(tmp_path):
    """The run behaves as ``python -c``: argv, exit codes, both streams, the limit, timeouts."""
    script = "import sys; print(sys.argv[1:]); print('err', file=sys.stderr); sys.exit(int(sys.argv[1]))"
    for code in ("0", "2"):
        done = _forked(["-c", script, code, "x"], timeout=60)
        assert (done.returncode, done.stdout, done.stderr) == (int(code), f"['{code}', 'x']\n", "err\n")
    failed = _forked(["-c", "raise ValueError('boom')"], timeout=60)
    assert failed.returncode == 1 and "ValueError: boom" in failed.stderr and failed.stdout == ""
    # the limit a run sets counts what it inherited: numpy, imported by the server, is there before the
    # run imports anything, and 512 MB more than the run's address space at its start fail there, not here
    limited = (
        "import resource, sys; assert 'numpy' in sys.modules; "
        "size = next(int(line.split()[1]) << 10 for line in open('/proc/self/status') if line.startswith('VmSize:')); "
        "resource.setrlimit(resource.RLIMIT_AS, (size + (256 << 20),) * 2); "
        "import numpy; numpy.ones(1 << 16); numpy.ones(1 << 26)"
    )
    done = _forked(["-c", limited], timeout=60)
    assert done.returncode == 1 and "MemoryError" in done.stderr.splitlines()[-1], done.stderr
    # a timeout kills the run and every process it started, and returns what it had written
    started = time.monotonic()
    with pytest.raises(subprocess.TimeoutExpired) as stopped:
        _forked(
            [
                "-c",
                "import subprocess, time; print(subprocess.Popen(['sleep', '60']).pid, flush=True); time.sleep(60)",
            ],
            timeout=1,
        )
    assert stopped.value.timeout == 1 and time.monotonic() - started < 10
    sleeper = int(stopped.value.output)
    assert ended(sleeper), "a process the stopped run started is still running"
    assert _forked(["-c", "print('still serving')"], timeout=60).stdout == "still serving\n"


def test_the_hook_runs_in_the_fork_in_its_folder_and_environment(tmp_path):
    env = {**os.environ, PROBE: "hooked"}
    code = "import test_forked_python as probe; print(probe.HOOKED)"
    done = _forked(["-c", code], cwd=tmp_path, env=env, timeout=60)
    assert (done.returncode, done.stdout) == (0, f"{(str(tmp_path), 'hooked')}\n"), done.stderr
    assert HOOKED is None  # the test process's copy of this module was never a fork's


def test_a_warm_up_module_that_fails_to_import_is_a_clear_error():
    with pytest.raises(RuntimeError, match=r"fork server .*no_such_warm_up_module.* ended"):
        warm_python("no_such_warm_up_module").run(["-c", "pass"], timeout=60)


def test_argv_must_be_c_or_m():
    with pytest.raises(ValueError, match="argv must be"):
        _forked(["script.py"], timeout=60)
