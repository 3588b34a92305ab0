""".ci/run's control flow with stand-in programs: the newest Python's environment installs in the
background and its tests (the second platform: without numpy's AVX-512 paths) start as soon as it is in place,
beside the lint step and the README's test command; the documentation site builds beside the suite once the
README's install is done; every step's failure fails CI
-- a failed pip install of the README's command included (set -e does not stop inside an && list, so it
would pass unnoticed) -- and an early exit stops the steps still running in the background.
Debian's chromium, chromium-driver, slurm-wlm and munge (.ci/system-packages) install in the
background too, are waited for before the first pytest, and a failed apt install fails CI."""

from __future__ import annotations

import os
import shutil
import signal
import stat
import subprocess
import time
from pathlib import Path

import pytest
from processes import ended

REPO = Path(__file__).resolve().parents[1]

NEWEST_STUB = """#!/usr/bin/env bash
# stand-in for .ci/newest-python: records the step; the install takes a moment, so a missing wait shows;
# the test step takes NEWEST_TEST_SECONDS (a step still running when CI stops must be stopped with it: the
# step's process id is in newest.pid) and records which of numpy's CPU features it was told to switch off
echo $$ > newest.pid
[[ "$1" == install ]] && sleep 0.5
[[ "$1" == test ]] && touch newest.testing && sleep "${NEWEST_TEST_SECONDS:-0}"
echo "newest $1${NPY_DISABLE_CPU_FEATURES:+ without $NPY_DISABLE_CPU_FEATURES}${SHUFFLEDP_NEWEST_WORKERS:+, workers $SHUFFLEDP_NEWEST_WORKERS}" >> calls.log
[[ "$1" == install ]] && echo "newest installs with ${SHUFFLEDP_UV#"$PWD/"}" >> calls.log
status_var="NEWEST_${1^^}_STATUS"
exit "${!status_var:-0}"
"""

# With AFTER_NEWEST_STARTS set, a stand-in ends only once the newest Python's tests have started (at most
# 30 s), so that a step failing then finds them running, however slowly the machine starts them.
WAIT_FOR_NEWEST = (
    'if [ -n "$AFTER_NEWEST_STARTS" ]; then i=0; while [ ! -e newest.testing ] && [ $i -lt 600 ]; '
    "do sleep 0.05; i=$((i + 1)); done; fi"
)

LINT_STUB = f"""#!/usr/bin/env bash
# stand-in for .ci/lint: records its call; it takes LINT_SECONDS, and LINT_STATUS fails it
echo "lint" >> calls.log
sleep "${{LINT_SECONDS:-0}}"
{WAIT_FOR_NEWEST}
exit "${{LINT_STATUS:-0}}"
"""

SYSTEM_STUB = """#!/usr/bin/env bash
# stand-in for .ci/system-packages: takes a moment (a missing wait shows), then records its call
sleep 0.5
echo "system-packages" >> calls.log
exit "${SYSTEM_PACKAGES_STATUS:-0}"
"""

APT_STUB = """#!/bin/sh
# stand-in for apt-get: records its arguments and the frontend; APT_UPDATE_STATUS / APT_INSTALL_STATUS fail a step
echo "apt-get $* [$DEBIAN_FRONTEND]" >> "$APT_LOG"
case "$1" in update) exit ${APT_UPDATE_STATUS:-0};; *) exit ${APT_INSTALL_STATUS:-0};; esac
"""

DOCS_STUB = f"""#!/usr/bin/env bash
# stand-in for .ci/docs (the site's strict build): takes a moment (a missing wait shows), records its call
sleep 0.5
echo "docs $*" >> calls.log
{WAIT_FOR_NEWEST}
exit "${{DOCS_STATUS:-0}}"
"""

PYTHON3_STUB = """#!/bin/sh
# stand-in for `python3 -m pip install ... --target .ci-uv uv==...` (a uv that only records its call;
# UV_INSTALL_STATUS fails the install, UV_STATUS the uv) and for `python3 -m venv .venv` (a venv whose pip and
# python only record their call; the suite's pytest records its ignored signals, takes SUITE_SECONDS, its process ID in
# suite.pid)
if [ "$2" = pip ]; then
    echo "python3 $*" >> calls.log
    mkdir -p .ci-uv/bin
    printf '#!/bin/sh\\necho "uv $*" >> calls.log\\nexit ${UV_STATUS:-0}\\n' > .ci-uv/bin/uv
    chmod +x .ci-uv/bin/uv
    exit ${UV_INSTALL_STATUS:-0}
fi
mkdir -p .venv/bin
printf '#!/bin/sh\\necho "pip $*" >> calls.log\\nexit ${PIP_STATUS:-0}\\n' > .venv/bin/pip
printf '#!/bin/sh\\necho "python $*${NPY_DISABLE_CPU_FEATURES:+ without $NPY_DISABLE_CPU_FEATURES}" >> calls.log\\necho "site built by $SHUFFLEDP_SITE_BUILT" >> calls.log\\necho "bytecode written: ${PYTHONDONTWRITEBYTECODE:-yes}" >> calls.log\\ncase "$*" in *"-n 2"*) echo $$ > suite.pid; grep SigIgn /proc/$$/status >> calls.log; sleep ${SUITE_SECONDS:-0};; esac\\n%s\\nexit ${PYTEST_STATUS:-0}\\n' '@WAIT_FOR_NEWEST@' > .venv/bin/python
chmod +x .venv/bin/pip .venv/bin/python
""".replace("@WAIT_FOR_NEWEST@", WAIT_FOR_NEWEST)


def _executable(path: Path, text: str) -> None:
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)


@pytest.fixture
def checkout(tmp_path) -> Path:
    work = tmp_path / "repo"
    (work / ".ci").mkdir(parents=True)
    shutil.copy2(REPO / ".ci" / "run", work / ".ci" / "run")
    shutil.copy2(REPO / ".ci" / "second-platform", work / ".ci" / "second-platform")
    _executable(work / ".ci" / "newest-python", NEWEST_STUB)
    _executable(work / ".ci" / "system-packages", SYSTEM_STUB)
    _executable(work / ".ci" / "docs", DOCS_STUB)
    _executable(work / ".ci" / "lint", LINT_STUB)
    (tmp_path / "bin").mkdir()
    _executable(tmp_path / "bin" / "python3", PYTHON3_STUB)
    return work


def _ci(work: Path, **statuses: int):
    env = {
        **os.environ,
        "PATH": f"{work.parent / 'bin'}:{os.environ['PATH']}",
        **{k: str(v) for k, v in statuses.items()},
    }
    # the stand-ins record this variable (the second platform): the outer run's own value (the suite itself
    # run without AVX-512) must not leak into them
    env.pop("NPY_DISABLE_CPU_FEATURES", None)
    run = subprocess.run(["bash", ".ci/run"], cwd=work, env=env, capture_output=True, text=True, timeout=60)
    log = work / "calls.log"
    return run.returncode, log.read_text().splitlines() if log.exists() else []


def test_every_step_runs_and_the_install_is_waited_for(checkout):
    status, calls = _ci(checkout, PYTHONDONTWRITEBYTECODE=1)  # as in CI's environment
    assert status == 0
    # the newest Python's tests run once its environment is installed (in the background, beside the rest),
    # and once only: without numpy's AVX-512 paths (the second platform), in one process
    second = "newest test without X86_V4 AVX512_ICL AVX512_SPR, workers 0"
    assert [call for call in calls if call.startswith("newest test")] == [second]
    assert calls.index("newest install") < calls.index(second)
    # a pinned uv, installed first, installs CI's two environments from the lock (the README's own pip
    # install runs as written, below)
    assert calls[0] == "python3 -m pip install -q --no-compile --target .ci-uv uv==0.13.9"
    assert "newest installs with .ci-uv/bin/uv" in calls
    first_pip = "uv pip install --python .venv/bin/python -c requirements.lock -e .[test,docs]"
    pip = "pip install -c requirements.lock -e .[test]"
    suite = "python -m pytest -n 2 --dist loadfile"
    assert calls.count(suite) == 1
    # the suite runs with INT and QUIT as a command started by hand has them (not ignored, as bash leaves them
    # for a background command): a test that interrupts a process it starts gets a KeyboardInterrupt there
    ignored = int(next(call for call in calls if call.startswith("SigIgn:")).split()[1], 16)
    assert not ignored & (1 << 1 | 1 << 2), f"the suite starts with INT or QUIT ignored: {ignored:#x}"
    # The README's environment installs from the start with the docs extra, beside the apt install (which
    # takes a moment in the stand-in), not after it; the README's command then runs its own pip install, as
    # written, once
    assert calls.count(first_pip) == 1 and calls.count(pip) == 1
    assert calls.index(first_pip) < calls.index("system-packages")
    assert calls.index(first_pip) < calls.index(pip) < calls.index(suite)
    # the apt install is waited for before the first pytest (which then runs the browser and SLURM tests)
    assert calls.index("system-packages") < calls.index(suite)
    # the documentation site is built once, after the README's install (the last step that writes into .venv),
    # beside the suite, which is told not to build it again and runs with numpy's own CPU features
    assert calls.count("docs build") == 1 and calls.index(pip) < calls.index("docs build")
    assert {call for call in calls if call.startswith("site built by")} == {"site built by .ci/docs"}
    assert calls.index(suite) < len(calls) - 1 and calls[calls.index(suite) + 1] == "site built by .ci/docs"
    # one collection caches the suite's bytecode (pip did not compile), after the README's install and before
    # the suite; CI's steps run with PYTHONDONTWRITEBYTECODE unset, so that Python may cache
    warm = "python -m pytest --collect-only -q -p no:cacheprovider"
    assert calls.count(warm) == 1 and calls.index(pip) < calls.index(warm) < calls.index(suite)
    assert {call for call in calls if call.startswith("bytecode written")} == {"bytecode written: yes"}
    # the lint step (.ci/lint) runs once, on the installed environment (in the background: it is waited for
    # after the suite, test_any_failing_step_fails_ci)
    assert calls.count("lint") == 1 and calls.index(first_pip) < calls.index("lint")


@pytest.mark.parametrize(
    "failing",
    [
        "UV_INSTALL_STATUS",
        "UV_STATUS",
        "PIP_STATUS",
        "LINT_STATUS",
        "PYTEST_STATUS",
        "DOCS_STATUS",
        "NEWEST_INSTALL_STATUS",
        "NEWEST_TEST_STATUS",
        "SYSTEM_PACKAGES_STATUS",
    ],
)
def test_any_failing_step_fails_ci(checkout, failing):
    status, calls = _ci(checkout, **{failing: 3})
    assert status != 0, (failing, calls)
    if failing == "NEWEST_INSTALL_STATUS":
        assert "newest test" not in calls, calls  # no tests on a failed install
    if failing == "UV_INSTALL_STATUS":  # nothing is installed without the installer
        assert calls == ["python3 -m pip install -q --no-compile --target .ci-uv uv==0.13.9"], calls
    if failing == "UV_STATUS":  # nothing of .venv runs after a failed install into it
        assert not any(call.startswith(("python -m pytest", "docs", "lint")) for call in calls), calls
    if failing == "PIP_STATUS":  # nor after the README's own install fails (lint has started beside it)
        assert not any(call.startswith(("python -m pytest", "docs")) for call in calls), calls
    if failing == "SYSTEM_PACKAGES_STATUS":  # the suite needs the browser and SLURM (its collection does not)
        assert not any(call.startswith("python -m pytest -n") for call in calls), calls


@pytest.mark.parametrize("failing", ["LINT_STATUS", "PYTEST_STATUS", "DOCS_STATUS"])
def test_an_early_exit_stops_the_steps_still_running(checkout, failing):
    """The newest Python's steps (its tests here 60 s long) are still running when another step fails: CI
    fails and stops them (without the trap they would go on after CI has ended)."""

    status, calls = _ci(checkout, NEWEST_TEST_SECONDS=60, AFTER_NEWEST_STARTS=1, **{failing: 3})
    assert status != 0 and "newest test" not in calls, calls
    pid = int((checkout / "newest.pid").read_text())
    assert ended(pid), f"the newest Python's step (process {pid}) outlived CI"


def _gone(pid_file: Path) -> bool:
    """Whether the process whose ID ``pid_file`` holds has ended (within 10 s)."""
    return ended(int(pid_file.read_text()))


@pytest.mark.parametrize("failing", ["LINT_STATUS", "NEWEST_TEST_STATUS"])
def test_a_step_failing_during_the_suite_fails_ci_at_once(checkout, failing):
    """The lint step or the newest Python's tests fail 1 s into a suite that would take 60 s: CI fails then,
    with that step's name, and stops the suite (before, a lint finding showed only after the suite)."""
    started = time.monotonic()
    status, calls = _ci(checkout, SUITE_SECONDS=60, LINT_SECONDS=1, NEWEST_TEST_SECONDS=1, **{failing: 3})
    assert status == 1 and time.monotonic() - started < 30, (status, calls)
    assert "python -m pytest -n 2 --dist loadfile" in calls, calls  # it failed during the suite, not before
    assert _gone(checkout / "suite.pid"), "the suite outlived CI"


@pytest.mark.parametrize("signal_name", ["SIGTERM", "SIGINT"])
def test_an_interrupted_ci_stops_every_step(checkout, signal_name):
    """CI interrupted while the suite and the newest Python's tests run: it exits with the signal's status
    (128 + its number) and stops both (the trap is set before the first step starts)."""
    env = {
        **os.environ,
        "PATH": f"{checkout.parent / 'bin'}:{os.environ['PATH']}",
        "SUITE_SECONDS": "60",
        "NEWEST_TEST_SECONDS": "60",
    }
    env.pop("NPY_DISABLE_CPU_FEATURES", None)
    # INT as a shell started by hand has it, whatever this test process was started with (a background
    # command of a script, as the suite is in CI, starts with INT ignored, and bash cannot trap a signal it
    # started with ignored)
    ci = subprocess.Popen(
        ["env", "--default-signal=INT", "bash", ".ci/run"], cwd=checkout, env=env, stdout=subprocess.DEVNULL
    )
    try:
        deadline = time.monotonic() + 30
        while not (checkout / "suite.pid").exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert (checkout / "suite.pid").exists(), "the suite did not start"
        number = getattr(signal, signal_name)
        ci.send_signal(number)
        assert ci.wait(timeout=30) == 128 + number
    finally:
        ci.kill()
        ci.wait()
    assert _gone(checkout / "suite.pid") and _gone(checkout / "newest.pid"), "a step outlived CI"


def _system_packages(tmp_path, **statuses: int):
    (tmp_path / "bin").mkdir()
    _executable(tmp_path / "bin" / "apt-get", APT_STUB)
    log = tmp_path / "apt.log"
    env = {
        **os.environ,
        "PATH": f"{tmp_path / 'bin'}:{os.environ['PATH']}",
        "APT_LOG": str(log),
        **{k: str(v) for k, v in statuses.items()},
    }
    env.pop("DEBIAN_FRONTEND", None)
    run = subprocess.run(
        ["bash", str(REPO / ".ci" / "system-packages")], env=env, capture_output=True, text=True, timeout=60
    )
    return run.returncode, log.read_text().splitlines() if log.exists() else []


def test_system_packages_updates_then_installs_the_four_packages_non_interactively(tmp_path):
    status, calls = _system_packages(tmp_path)
    assert status == 0
    assert calls[0].startswith("apt-get update") and len(calls) == 2
    install = calls[1].split()
    assert install[:2] == ["apt-get", "install"] and "-y" in install and install[-1] == "[noninteractive]"
    assert {"chromium", "chromium-driver", "slurm-wlm", "munge"} <= set(install)


@pytest.mark.parametrize("failing", ["APT_UPDATE_STATUS", "APT_INSTALL_STATUS"])
def test_a_failed_apt_step_fails_system_packages(tmp_path, failing):
    status, calls = _system_packages(tmp_path, **{failing: 100})
    assert status != 0, calls
    if failing == "APT_UPDATE_STATUS":
        assert len(calls) == 1  # no install after a failed update


LINT_TOOL_STUB = """#!/bin/sh
# stand-in for ruff, snakefmt and mypy: records its call; <NAME>_STATUS fails it
name=$(basename "$0")
echo "$name $*" >> "$LINT_LOG"
eval "exit \\${$(echo "$name" | tr a-z A-Z)_STATUS:-0}"
"""


def _lint(tmp_path, **statuses: int):
    tools = tmp_path / "tools"
    tools.mkdir(exist_ok=True)
    for name in ("ruff", "snakefmt", "mypy"):
        _executable(tools / name, LINT_TOOL_STUB)
    log = tmp_path / "lint.log"
    log.unlink(missing_ok=True)
    env = {
        **os.environ,
        "LINT_BIN": str(tools),
        "LINT_LOG": str(log),
        **{k: str(v) for k, v in statuses.items()},
    }
    run = subprocess.run(
        ["bash", str(REPO / ".ci" / "lint")], env=env, capture_output=True, text=True, timeout=60
    )
    return run.returncode, log.read_text().splitlines() if log.exists() else []


def test_lint_runs_ruff_both_ways_snakefmt_and_mypy(tmp_path):
    status, calls = _lint(tmp_path)
    assert status == 0, calls
    assert [call.split()[:3] for call in calls] == [
        ["ruff", "check", "--no-cache"],
        ["ruff", "format", "--check"],
        ["snakefmt", "--check", "Snakefile"],
        ["mypy", "--cache-dir=/dev/null"],  # no cache written: CI's clone is new
    ]
    assert {"src", "tests", "workflow"} <= set(calls[0].split())


@pytest.mark.parametrize("failing", ["RUFF_STATUS", "SNAKEFMT_STATUS", "MYPY_STATUS"])
def test_a_lint_finding_fails_lint(tmp_path, failing):
    status, calls = _lint(tmp_path, **{failing: 1})
    assert status != 0, calls
    assert calls[-1].split()[0] == failing.removesuffix("_STATUS").lower()  # nothing runs after it


# --- the newest Python's subset (.ci/newest-python-tests)


def _listed(path: Path) -> list[str]:
    lines = path.read_text(encoding="utf-8").splitlines()
    return [line for line in lines if line.strip() and not line.startswith("#")]


def _missing(arguments: list[str]) -> list[str]:
    """The arguments that name no existing test file, or a test function their file does not define."""
    missing = []
    for argument in arguments:
        path, _, test = argument.partition("::")
        file = REPO / path
        defined = (
            file.is_file()
            and file.name.startswith("test_")
            and (not test or f"\ndef {test.partition('[')[0]}(" in file.read_text(encoding="utf-8"))
        )
        if not defined:
            missing.append(argument)
    return missing


def test_the_newest_python_runs_existing_tests_not_in_the_second_platform():
    chosen = _listed(REPO / ".ci" / "newest-python-tests")
    second = _listed(REPO / ".ci" / "second-platform")
    assert _missing(chosen) == []
    assert len(set(chosen)) == len(chosen) and not set(chosen) & set(second)  # each test runs once there
    # the interpreter-facing tests the decision names (docs/decisions/code.md, "CI")
    assert {"tests/test_imports.py", "tests/test_cli.py", "tests/test_warnings_policy.py"} <= set(chosen)
    # probe: a file, a test that is not there, or a file that is not a test file is found
    planted = ["tests/no_such_file.py", "tests/test_cli.py::test_no_such_test[1]", "tests/conftest.py"]
    assert _missing([*chosen, *planted]) == planted


def _newest_python(work: Path, step: str, env: dict[str, str] | None = None):
    """`bash .ci/newest-python STEP` in the checkout ``work``, in ``env`` (default: this process's environment
    without SHUFFLEDP_NEWEST_WORKERS, so that the step's own default shows)."""
    if env is None:
        env = {key: value for key, value in os.environ.items() if key != "SHUFFLEDP_NEWEST_WORKERS"}
    return subprocess.run(
        ["bash", ".ci/newest-python", step], cwd=work, env=env, capture_output=True, text=True, timeout=60
    )


def test_the_newest_python_runs_both_lists_without_slow_tests(tmp_path):
    """.ci/newest-python's test step, run with a stand-in interpreter that records its arguments."""
    work = tmp_path / "repo"
    (work / ".ci").mkdir(parents=True)
    for name in ("newest-python", "newest-python-tests", "second-platform"):
        shutil.copy2(REPO / ".ci" / name, work / ".ci" / name)
    (work / ".venv-newest" / "bin").mkdir(parents=True)
    _executable(work / ".venv-newest" / "bin" / "python", '#!/bin/sh\nprintf "%s\\n" "$@" > args.log\n')
    both = _listed(REPO / ".ci" / "newest-python-tests") + _listed(REPO / ".ci" / "second-platform")
    for step, expected in (("test", both), ("test-all", [])):
        run = _newest_python(work, step)
        assert run.returncode == 0, run.stderr
        args = (work / "args.log").read_text().splitlines()
        assert args[:7] == ["-m", "pytest", "-n", "2", "--dist", "loadfile", "-m"] and args[7] == "not slow"
        assert args[8:] == expected
    # in one process where SHUFFLEDP_NEWEST_WORKERS=0 (CI, beside the suite)
    one = _newest_python(work, "test", {**os.environ, "SHUFFLEDP_NEWEST_WORKERS": "0"})
    assert one.returncode == 0, one.stderr
    assert (work / "args.log").read_text().splitlines() == [
        "-m",
        "pytest",
        "-n",
        "0",
        "-m",
        "not slow",
        *both,
    ]
    refused = _newest_python(work, "tests")
    assert refused.returncode == 2 and "test-all" in refused.stderr
    bad_workers = _newest_python(work, "test", {**os.environ, "SHUFFLEDP_NEWEST_WORKERS": "two"})
    assert bad_workers.returncode == 2
    assert bad_workers.stderr.strip().splitlines() == [
        "newest-python: SHUFFLEDP_NEWEST_WORKERS must be a whole number of workers (0: one process); got 'two'."
    ]


NEWEST_INTERPRETER_STUB = """#!/bin/sh
# stand-in for Python 3.13: passes .ci/newest-python's version check; `-m venv DIR` records its arguments
# and makes a venv whose pip records its arguments
if [ "$1" = -m ] && [ "$2" = venv ]; then
    echo "$*" >> installs.log
    mkdir -p "$3/bin"
    printf '#!/bin/sh\\necho "pip $*" >> installs.log\\n' > "$3/bin/pip"
    chmod +x "$3/bin/pip"
fi
exit 0
"""


@pytest.mark.parametrize("with_uv", [False, True])
@pytest.mark.parametrize("cached", [False, True])
def test_the_newest_python_installs_from_the_lock_with_pip_or_the_given_uv(tmp_path, with_uv, cached):
    """.ci/newest-python's install step: pip, or the uv that SHUFFLEDP_UV names, from requirements.lock;
    byte-compiled at install only where Python may not cache what it compiles (PYTHONDONTWRITEBYTECODE)."""
    work = tmp_path / "repo"
    (work / ".ci").mkdir(parents=True)
    shutil.copy2(REPO / ".ci" / "newest-python", work / ".ci" / "newest-python")
    _executable(tmp_path / "python3.13", NEWEST_INTERPRETER_STUB)
    _executable(tmp_path / "uv", '#!/bin/sh\necho "uv $*" >> installs.log\n')
    env = {**os.environ, "SHUFFLEDP_NEWEST_PYTHON": str(tmp_path / "python3.13")}
    env.pop("SHUFFLEDP_UV", None)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    if with_uv:
        env["SHUFFLEDP_UV"] = str(tmp_path / "uv")
    if not cached:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    run = _newest_python(work, "install", env)
    assert run.returncode == 0, run.stderr
    venv, call = (work / "installs.log").read_text().splitlines()
    assert venv == "-m venv .venv-newest"  # with pip, which the newest Python's tests run
    if with_uv:
        compile_flag = "" if cached else " --compile-bytecode"
        assert (
            call
            == f"uv pip install --python .venv-newest/bin/python{compile_flag} -c requirements.lock -e .[test]"
        )
    else:
        compile_flag = " --no-compile" if cached else ""
        assert call == f"pip install{compile_flag} -c requirements.lock -e .[test]"
