"""The one atomic writer (shuffledp.io): nothing half-written, ordinary permissions, SIGTERM clean-up."""

from __future__ import annotations

import importlib.util
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import pandas as pd
import pytest

from shuffledp import io, tables
from shuffledp.data import download


def test_one_implementation_everywhere():
    # tables and download use the one writer (no private copies), and shuffledp.io is its one import path.
    assert download.atomic_output is io.atomic_output
    assert "atomic_write_text" not in tables.__all__ and not hasattr(tables, "atomic_write_text")
    assert (
        importlib.util.find_spec("shuffledp._io") is None
        and importlib.util.find_spec("shuffledp.data.io") is None
    )
    for module in (tables, download):
        assert "mkstemp" not in Path(module.__file__).read_text()


def _write_png(path):
    figure, ax = plt.subplots()
    ax.plot([0, 1])
    figure.savefig(path)
    plt.close(figure)


def _write_parquet(path):
    pd.DataFrame({"a": [1, 2]}).to_parquet(path)


@pytest.mark.parametrize("umask", [0o022, 0o027, 0o077, 0o002])
@pytest.mark.parametrize("writer", [_write_png, _write_parquet], ids=["png", "parquet"])
def test_outputs_get_the_permissions_of_a_new_file(tmp_path, umask, writer):
    previous = os.umask(umask)
    try:
        reference = tmp_path / "reference"
        reference.write_text("x")  # what open(path, "w") gives under this umask
        target = tmp_path / f"out.{writer.__name__[7:]}"
        with io.atomic_output(target) as temporary:
            assert temporary.suffix == target.suffix and temporary.parent == tmp_path
            writer(temporary)
        text_target = tmp_path / "out.txt"
        io.atomic_write_text(text_target, "x")
    finally:
        os.umask(previous)
    expected = reference.stat().st_mode & 0o777
    assert expected == 0o666 & ~umask
    assert target.stat().st_mode & 0o777 == expected
    assert text_target.stat().st_mode & 0o777 == expected


def test_csv_rows_are_written_as_the_csv_module_writes_them_and_never_half(tmp_path):
    # the reference-transcription tools write their CSVs through this one function
    target = tmp_path / "ref.csv"
    io.atomic_write_csv(target, ["a", "b"], [[1, "x, y"], [repr(0.1), "é"]])
    assert target.read_bytes() == 'a,b\n1,"x, y"\n0.1,é\n'.encode()

    def rows():
        yield [2, "z"]
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom"):
        io.atomic_write_csv(target, ["a", "b"], rows())
    assert target.read_bytes() == 'a,b\n1,"x, y"\n0.1,é\n'.encode()
    assert sorted(path.name for path in tmp_path.iterdir()) == ["ref.csv"]


def test_failure_leaves_old_file_and_no_temporary(tmp_path):
    target = tmp_path / "out.parquet"
    target.write_text("old")
    with pytest.raises(RuntimeError, match="boom"), io.atomic_output(target) as temporary:
        temporary.write_text("half")
        raise RuntimeError("boom")
    assert target.read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.parquet"]
    with pytest.raises(TypeError, match=r"`text` must be a str; got int\."):
        io.atomic_write_text(target, 12345)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.parquet"]


_KILLED_WRITER = textwrap.dedent(
    """
    import signal, sys, time
    from pathlib import Path
    from shuffledp.io import atomic_output
    {install}
    target = Path(sys.argv[1])
    with atomic_output(target) as temporary:
        temporary.write_bytes(b"half" * 1000)
        print(temporary, flush=True)
        for _ in range(1200):  # short sleeps: a signal landing just before a long sleep's system call
            time.sleep(0.05)   # would wait out the whole sleep before Python runs the handler
    """
)


def _killed(tmp_path, install=""):
    target = tmp_path / "figure.png"
    process = subprocess.Popen(
        [sys.executable, "-c", _KILLED_WRITER.format(install=install), str(target)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    temporary = Path(process.stdout.readline().strip())
    assert temporary.is_file() and temporary.parent == tmp_path  # the write is under way
    process.send_signal(signal.SIGTERM)
    process.wait(timeout=30)
    return process, target


def test_sigterm_deletes_the_temporary_file_and_the_process_still_dies_of_it(tmp_path):
    process, target = _killed(tmp_path)
    assert process.returncode == -signal.SIGTERM
    assert not target.exists()
    assert list(tmp_path.iterdir()) == []


def test_sigterm_calls_a_previously_installed_handler(tmp_path):
    install = "signal.signal(signal.SIGTERM, lambda s, f: sys.exit(7))"
    process, target = _killed(tmp_path, install)
    assert process.returncode == 7
    assert not target.exists() and list(tmp_path.iterdir()) == []


def test_a_full_disk_is_one_line_naming_the_output_and_leaves_nothing(tmp_path, monkeypatch):
    import errno

    def full(self, *args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(Path, "write_text", full)
    target = tmp_path / "out" / "table.csv"
    with pytest.raises(OSError) as raised:
        io.atomic_write_text(target, "a\n")
    assert isinstance(raised.value, io.FileAccessError) and raised.value.errno == errno.ENOSPC
    assert str(raised.value) == f"cannot write {target}: No space left on device"
    assert list(target.parent.iterdir()) == []


def test_an_error_about_another_file_inside_the_block_is_not_relabelled(tmp_path):
    with pytest.raises(FileNotFoundError) as raised, io.atomic_output(tmp_path / "out.csv"):
        (tmp_path / "missing.csv").read_bytes()
    assert not isinstance(raised.value, io.FileAccessError)
    assert (
        io.describe_os_error(raised.value)
        == f"cannot open {tmp_path / 'missing.csv'}: No such file or directory"
    )


@pytest.mark.parametrize(
    "error",
    [
        __import__("urllib.error").error.URLError(ConnectionRefusedError(111, "Connection refused")),
        ConnectionResetError(104, "Connection reset by peer"),
        TimeoutError("timed out"),
    ],
)
def test_a_network_error_inside_the_block_is_not_called_a_write_failure(tmp_path, error):
    """A download writes through atomic_output: a refused connection (an OSError naming no file) must
    reach the downloader as itself, so it can say 'offline', and leave no temporary file."""
    with pytest.raises(OSError) as raised, io.atomic_output(tmp_path / "g.txt.gz"):
        raise error
    assert raised.value is error
    assert list(tmp_path.iterdir()) == []
