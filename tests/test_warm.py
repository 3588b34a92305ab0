"""shuffledp._warm and workflow/warm_server.py: jobs forked from one warm interpreter behave as jobs run in
their own process (status, streams, folder, environment, exit functions), fall back to their own process
wherever the server is not theirs, and die with the process that waits for them."""

from __future__ import annotations

import ast
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from shuffledp import _warm

REPO = Path(__file__).resolve().parents[1]
ENTRY = REPO / "workflow" / "warm_server.py"

# A job script as the workflow writes one: the hand-over first, then its imports and work. `colorsys` is a
# standard module nothing else here imports: loaded before the script's own import only in a warm fork.
JOB = textwrap.dedent(
    """
    import sys
    from shuffledp._warm import hand_over

    class Job:
        log = sys.argv[2:3]

    WARM = "colorsys" in sys.modules
    hand_over(Job())
    WARM = "colorsys" in sys.modules

    import atexit
    import colorsys
    import json
    import os

    atexit.register(lambda: print("atexit ran", flush=True))
    print(json.dumps({
        "warm": WARM, "pid": os.getpid(), "ppid": os.getppid(), "cwd": os.getcwd(),
        "marker": os.environ.get("WARM_TEST_MARKER"), "argv": sys.argv, "name": __name__,
    }))
    print("to stderr", file=sys.stderr)
    action = sys.argv[1]
    if action == "code":
        sys.exit(3)
    if action == "message":
        sys.exit("a one-line message")
    if action == "raise":
        raise ValueError("broken input")
    if action == "sleep":
        open(sys.argv[3], "w").write(str(os.getpid()))
        import time
        time.sleep(60)
    """
)


def _result_line(out: str) -> dict:
    return json.loads(next(line for line in out.splitlines() if line.startswith("{")))


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """One warm server started by this test process for the job script above."""
    folder = tmp_path_factory.mktemp("warm")
    script = folder / "job.py"
    script.write_text(JOB, encoding="utf-8")
    saved = os.environ.get(_warm.ENVIRONMENT)
    os.environ.pop(_warm.ENVIRONMENT, None)
    started = _warm.start([script], ENTRY)
    assert started is not None
    deadline = time.monotonic() + 60
    while not os.path.exists(started.address):  # the socket appears once the server is warm
        assert started.process.poll() is None, "the warm server ended while warming up"
        assert time.monotonic() < deadline, "the warm server did not start listening"
        time.sleep(0.05)
    try:
        yield started, script
    finally:
        _warm.stop()
        if saved is not None:
            os.environ[_warm.ENVIRONMENT] = saved


def _run(
    script: Path, *arguments: str, cwd: Path | None = None, env: dict | None = None, timeout: float = 60
):
    return subprocess.run(
        [sys.executable, str(script), *arguments],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=timeout,
    )


def test_script_imports_are_the_top_level_absolute_ones(tmp_path):
    script = tmp_path / "s.py"
    script.write_text(
        "import os, json as j\nfrom pandas import DataFrame\nfrom . import sibling\n"
        "def f():\n    import colorsys\nif True:\n    import wave\n",
        encoding="utf-8",
    )
    assert _warm.script_imports([script]) == ["json", "os", "pandas.DataFrame"]


def test_the_workflow_scripts_hand_over_before_any_other_import():
    scripts = sorted((REPO / "workflow" / "scripts").glob("*.py"))
    assert scripts
    for path in scripts:
        body = ast.parse(path.read_text(encoding="utf-8")).body
        docstring, imported, called = body[:3]
        assert isinstance(docstring, ast.Expr) and isinstance(docstring.value, ast.Constant), path.name
        assert ast.unparse(imported) == "from shuffledp._warm import hand_over", path.name
        assert ast.unparse(called) == "hand_over(snakemake)", path.name


def test_a_job_runs_in_a_fork_of_the_warm_server(server, tmp_path):
    started, script = server
    log = tmp_path / "job.log"
    env = {**os.environ, "WARM_TEST_MARKER": "the job's own"}
    result = _run(script, "ok", str(log), cwd=tmp_path, env=env)
    assert result.returncode == 0, result.stderr
    seen = _result_line(result.stdout)
    assert seen["warm"] is True  # its modules were there before its own imports
    assert seen["ppid"] == started.process.pid  # a fork of the server, not the process Snakemake started
    assert seen["cwd"] == str(tmp_path) and seen["marker"] == "the job's own"
    assert seen["argv"] == [str(script), "ok", str(log)] and seen["name"] == "__main__"
    assert result.stdout.rstrip().endswith("atexit ran")  # the job's exit functions run
    assert result.stderr == "to stderr\n"
    assert "warm-server fork:" in log.read_text(encoding="utf-8")  # its own CPU, which the waiter cannot see


@pytest.mark.parametrize(
    ("action", "status", "stderr_end"),
    [
        ("code", 3, "to stderr\n"),
        ("message", 1, "a one-line message\n"),
        ("raise", 1, "ValueError: broken input\n"),
    ],
)
def test_a_fork_ends_as_the_job_would_on_its_own(server, tmp_path, action, status, stderr_end):
    _, script = server
    warm = _run(script, action, str(tmp_path / "warm.log"), cwd=tmp_path)
    env = {key: value for key, value in os.environ.items() if key != _warm.ENVIRONMENT}
    cold = _run(script, action, str(tmp_path / "cold.log"), cwd=tmp_path, env=env)
    assert _result_line(warm.stdout)["warm"] is True and _result_line(cold.stdout)["warm"] is False
    assert warm.returncode == cold.returncode == status
    assert warm.stderr.endswith(stderr_end) and cold.stderr.endswith(stderr_end)
    if action == "raise":  # the traceback the job's own process prints: the script's frames, not the server's
        assert "_warm.py" not in warm.stderr and "Traceback (most recent call last)" in warm.stderr
        assert warm.stderr.count('File "') == cold.stderr.count('File "')


def test_a_process_not_below_the_starting_one_runs_its_job_itself(server, tmp_path):
    started, script = server
    stranger = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        env = {**os.environ, _warm.ENVIRONMENT: f"{stranger.pid}:{started.address}"}
        result = _run(script, "ok", str(tmp_path / "job.log"), env=env)
    finally:
        stranger.kill()
        stranger.wait()
    seen = _result_line(result.stdout)
    assert result.returncode == 0 and seen["warm"] is False and seen["ppid"] != started.process.pid


def test_no_server_listening_means_the_job_runs_itself(tmp_path):
    script = tmp_path / "job.py"
    script.write_text(JOB, encoding="utf-8")
    env = {**os.environ, _warm.ENVIRONMENT: f"{os.getpid()}:{tmp_path / 'no-socket'}"}
    result = _run(script, "ok", str(tmp_path / "job.log"), env=env)
    assert result.returncode == 0 and _result_line(result.stdout)["warm"] is False


def test_the_fork_dies_with_the_process_that_waits_for_it(server, tmp_path):
    _, script = server
    marker = tmp_path / "pid"
    waiter = subprocess.Popen(
        [sys.executable, str(script), "sleep", str(tmp_path / "job.log"), str(marker)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 30
    while not (marker.exists() and marker.read_text()):
        assert time.monotonic() < deadline and waiter.poll() is None
        time.sleep(0.05)
    fork = int(marker.read_text())
    assert fork != waiter.pid
    waiter.send_signal(signal.SIGTERM)
    waiter.wait(timeout=30)
    deadline = time.monotonic() + 30
    while _alive(fork):
        assert time.monotonic() < deadline, "the fork outlived the process waiting for it"
        time.sleep(0.05)


def _alive(pid: int) -> bool:
    """Whether the process runs (a zombie, ended but not yet reaped, does not count)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_bytes().rsplit(b")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != b"Z"


def test_the_user_can_switch_the_server_off(tmp_path, monkeypatch):
    monkeypatch.setenv(_warm.ENVIRONMENT, "0")
    assert _warm.start([], ENTRY) is None


def test_a_script_that_does_not_parse_leaves_every_job_to_itself(tmp_path, monkeypatch):
    monkeypatch.delenv(_warm.ENVIRONMENT, raising=False)
    monkeypatch.setattr(_warm, "_SERVER", None)
    broken = tmp_path / "broken.py"
    broken.write_text("def f(:\n", encoding="utf-8")
    assert _warm.start([broken], ENTRY) is None and _warm.ENVIRONMENT not in os.environ


def test_stopping_ends_the_server_and_removes_its_folder(tmp_path, monkeypatch):
    monkeypatch.delenv(_warm.ENVIRONMENT, raising=False)
    monkeypatch.setattr(_warm, "_SERVER", None)  # the module's server (the fixture's) is put back after
    started = _warm.start([], ENTRY)
    assert started is not None and os.environ[_warm.ENVIRONMENT].endswith(started.address)
    _warm.stop()
    assert started.process.poll() is not None and not Path(started.folder).exists()
    assert _warm.ENVIRONMENT not in os.environ
