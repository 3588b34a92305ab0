"""The allocator setting of the computing processes (shuffledp._allocator): fewer page faults, nothing else."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from shuffledp import _allocator, _warm, cli

GLIBC = _allocator.on_glibc()

# Ten rounds of eight 16-MiB arrays alive at once, then freed: the pattern of the type view's blocks.
_ROUNDS = textwrap.dedent(
    """
    import resource, sys
    import numpy as np
    from shuffledp._allocator import keep_freed_memory
    tuned = keep_freed_memory() if sys.argv[1] == "tuned" else None
    x = np.linspace(0.0, 1.0, 2**21)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    total = 0.0
    for _ in range(10):
        arrays = [np.exp(x * i) for i in range(8)]
        total += sum(float(a.sum()) for a in arrays)
        del arrays
    print(tuned, resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before, total.hex())
    """
)


def _run_rounds(mode: str) -> tuple[str, int, str]:
    done = subprocess.run(
        [sys.executable, "-c", _ROUNDS, mode], capture_output=True, text=True, check=True, timeout=120
    )
    tuned, faults, total = done.stdout.split()
    return tuned, int(faults), total


@pytest.mark.skipif(not GLIBC, reason="the setting is glibc's")
def test_freed_memory_is_reused_instead_of_faulted_in_again():
    _, plain, plain_total = _run_rounds("plain")
    tuned, kept, kept_total = _run_rounds("tuned")
    assert tuned == "True"
    # plain glibc gives the freed blocks back and faults them in again each round (about 47,000 faults
    # where measured); kept, only the first round faults (about 4,700)
    assert kept <= plain / 3, (kept, plain)
    assert kept_total == plain_total  # where memory comes from changes no value


def test_another_c_library_is_left_alone(monkeypatch):
    monkeypatch.setattr(_allocator, "_DONE", None)
    monkeypatch.setattr(_allocator.os, "confstr", lambda name: "musl libc")
    assert _allocator.keep_freed_memory() is False
    monkeypatch.setattr(_allocator.os, "confstr", lambda name: None)
    monkeypatch.setattr(_allocator, "_DONE", None)
    assert _allocator.keep_freed_memory() is False


@pytest.mark.skipif(not GLIBC, reason="the setting is glibc's")
def test_set_once_per_process(monkeypatch):
    calls = []
    monkeypatch.setattr(_allocator, "_DONE", None)
    monkeypatch.setattr(_allocator, "_set", lambda: calls.append(1) or True)
    assert _allocator.keep_freed_memory() and _allocator.keep_freed_memory()
    assert calls == [1]


def test_the_command_and_a_job_run_in_its_own_process_set_it(monkeypatch, capsys, tmp_path):
    calls = []
    monkeypatch.setattr(cli, "keep_freed_memory", lambda: calls.append("command"))
    monkeypatch.setattr(_warm, "keep_freed_memory", lambda: calls.append("job"))
    assert cli.main(["accountants"]) == 0
    capsys.readouterr()
    assert calls == ["command"]
    monkeypatch.delenv(_warm.ENVIRONMENT, raising=False)
    _warm.hand_over(None)  # no server: the job runs in this process
    assert calls == ["command", "job"]
    # a server named for this job (it descends from the process named) that does not answer: the job runs here too
    monkeypatch.setenv(_warm.ENVIRONMENT, f"{os.getppid()}:{tmp_path / 'no-socket'}")
    _warm.hand_over(None)
    assert calls == ["command", "job", "job"]
