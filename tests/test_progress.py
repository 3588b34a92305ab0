"""Progress bars: tqdm on stderr, shown on a terminal only (or when forced), for parsing, download, sweeps."""

from __future__ import annotations

import gzip
import io

import pytest

from shuffledp._progress import progress
from shuffledp.data.download import download
from shuffledp.data.gowalla import read_snap
from shuffledp.experiments.accounting_grids import sweep_frame


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_bar_is_drawn_on_a_terminal_and_silent_otherwise(monkeypatch):
    monkeypatch.delenv("SHUFFLEDP_PROGRESS", raising=False)
    terminal, pipe = Terminal(), io.StringIO()
    for stream in (terminal, pipe):
        with progress(total=4, desc="parsing x.txt", file=stream) as bar:
            bar.update(4)
    assert "parsing x.txt" in terminal.getvalue() and "4/4" in terminal.getvalue()
    assert pipe.getvalue() == ""


@pytest.mark.parametrize(
    "setting, shown_on_pipe, shown_on_terminal", [("1", True, True), ("0", False, False)]
)
def test_environment_forces_bars_on_or_off(monkeypatch, setting, shown_on_pipe, shown_on_terminal):
    monkeypatch.setenv("SHUFFLEDP_PROGRESS", setting)
    for stream, shown in ((io.StringIO(), shown_on_pipe), (Terminal(), shown_on_terminal)):
        with progress(total=2, desc="sweep", file=stream) as bar:
            bar.update(2)
        assert ("sweep" in stream.getvalue()) == shown


ROWS = "1\t2010-07-25T11:40:18Z\t48.86337875\t2.333328717\t1500177\n" * 50


@pytest.mark.parametrize("name", ["c.txt", "c.txt.gz"])
def test_parsing_shows_progress_over_the_file_bytes(tmp_path, monkeypatch, capsys, name):
    path = tmp_path / name
    path.write_bytes(gzip.compress(ROWS.encode()) if name.endswith(".gz") else ROWS.encode())
    monkeypatch.setenv("SHUFFLEDP_PROGRESS", "1")
    forced = read_snap(path)
    shown = capsys.readouterr().err
    assert f"parsing {name}" in shown and "100%" in shown
    monkeypatch.setenv("SHUFFLEDP_PROGRESS", "0")
    quiet = read_snap(path)
    assert capsys.readouterr().err == ""
    assert forced.checkins.equals(quiet.checkins) and forced.rows_read == quiet.rows_read == 50


def test_download_shows_progress(tmp_path, monkeypatch, capsys):
    source = tmp_path / "loc.txt.gz"
    source.write_bytes(gzip.compress(ROWS.encode()))
    monkeypatch.setenv("SHUFFLEDP_PROGRESS", "1")
    download(source.as_uri(), tmp_path / "out" / "loc.txt.gz", expected_rows=50, log=lambda message: None)
    assert "downloading loc.txt.gz" in capsys.readouterr().err


def test_sweep_shows_progress(monkeypatch, capsys):
    monkeypatch.setenv("SHUFFLEDP_PROGRESS", "1")
    sweep = {
        "accountants": ["biswas-printed"],
        "n_users": [100, 200],
        "k": [10],
        "epsilon_local": [1.0],
        "n_x0_fraction": [0.5],
        "epsilon": [0.1, 0.2],
        "x": "n_users",
    }
    frame = sweep_frame("demo", sweep)
    assert len(frame) == 4
    assert "sweep demo" in capsys.readouterr().err
