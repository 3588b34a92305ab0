"""tools/check_report_browser.py: a small report rendered by shuffledp.report.render is
opened in headless Chromium; it must pass, and a broken image, a broken anchor, a missing file link
and an overflowing table must each be caught (skipped without chromium and chromedriver). Its wait for
chromedriver is a wall-clock deadline (READY_SECONDS), so a slow start on a loaded machine is waited for,
and a driver that never answers fails in one line naming the time and the last error (these run without
chromium: the driver's status call is replaced)."""

from __future__ import annotations

import importlib.util
import shutil
import struct
import time
import urllib.error
import zlib
from pathlib import Path

import pytest

from shuffledp import report
from shuffledp.report.blocks import Figure, Heading, Paragraph, Table

ROOT = Path(__file__).resolve().parents[2]
needs_chromium = pytest.mark.skipif(
    not (shutil.which("chromium") and shutil.which("chromedriver")),
    reason="needs Debian's chromium and chromium-driver (chromedriver on PATH)",
)


def _tool():
    spec = importlib.util.spec_from_file_location(
        "check_report_browser", ROOT / "tools" / "check_report_browser.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _png(path: Path, width: int = 40, height: int = 20) -> Path:
    """A valid RGB PNG written with zlib alone."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (
            struct.pack(">I", len(data))
            + kind
            + data
            + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
        )

    rows = b"".join(b"\x00" + bytes([200, 30, 30]) * width for _ in range(height))
    path.write_bytes(
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
        + chunk(b"IDAT", zlib.compress(rows))
        + chunk(b"IEND", b"")
    )
    return path


def _blocks(tmp_path: Path, extra=()):
    (tmp_path / "data.csv").write_text("a,b\n1,2\n")
    return [
        Heading(1, "Small report", "top"),
        Paragraph("See [the table](#numbers), [the figure](#figure) and [its data](data.csv)."),
        Heading(2, "Numbers", "numbers"),
        Table(["n", "delta"], [["100", "1e-6"], ["1000", "1e-9"]]),
        Heading(2, "Figure", "figure"),
        Figure(_png(tmp_path / "figure.png"), "A red rectangle", "figure.png"),
        *extra,
    ]


@needs_chromium
def test_a_rendered_report_passes_and_keeps_a_screenshot(tmp_path):
    page = tmp_path / "report.html"
    page.write_text(report.render_html(_blocks(tmp_path), title="small"))
    result = _tool().check(page, tmp_path / "first_screen.png")
    assert result["ok"], result
    assert (result["images"], result["anchors"], result["tables"]) == (1, 2, 1)
    assert (tmp_path / "first_screen.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@needs_chromium
def test_each_failure_is_caught(tmp_path):
    extra = [Paragraph("Broken: [nowhere](#no-such-section) and [lost](missing.csv).")]
    page = tmp_path / "report.html"
    html = report.render_html(_blocks(tmp_path, extra), title="broken")
    # the renderer wraps each table in a scrolling box, so the overflowing table is written by hand
    cells = "".join(f"<td>value-{i}-without-breaks</td>" for i in range(40))
    wide = f"<table><tr><th>column 0</th>{cells}</tr></table>"
    html = html.replace("</body>", f'<img alt="broken" src="data:image/png;base64,AAAA">{wide}</body>')
    page.write_text(html)
    result = _tool().check(page, tmp_path / "shot.png")
    assert not result["ok"]
    assert [i["alt"] for i in result["broken_images"]] == ["broken"]
    assert result["broken_anchors"] == ["#no-such-section"]
    assert result["missing_files"] == ["missing.csv"]
    assert [t["first_cell"] for t in result["overflowing_tables"]] == ["column 0"]


@needs_chromium
def test_command_line_refuses_a_missing_report(tmp_path, capsys):
    assert _tool().main([str(tmp_path / "none.html")]) == 2
    assert "`report` must be an existing HTML file" in capsys.readouterr().err


@needs_chromium
def test_a_wide_rendered_table_scrolls_in_its_box_instead_of_widening_the_page(tmp_path):
    wide = Table([f"column {i}" for i in range(40)], [[f"value-{i}-without-breaks" for i in range(40)]])
    page = tmp_path / "report.html"
    page.write_text(report.render_html(_blocks(tmp_path, [wide]), title="wide"))
    result = _tool().check(page, tmp_path / "shot.png")
    assert result["ok"], result
    assert not result["page_wider_than_viewport"] and result["overflowing_tables"] == []


# --- the wait for chromedriver (no browser needed)


def _driver(module, answers):
    """A WebDriver without a process whose status calls take ``answers`` in turn (an exception is raised)."""
    driver = object.__new__(module.WebDriver)
    calls = iter(answers)

    def call(method, path, body=None):
        answer = next(calls)
        if isinstance(answer, BaseException):
            raise answer
        return answer

    driver._call = call
    return driver


def test_a_slow_start_is_waited_for():
    module = _tool()
    refused = urllib.error.URLError("connection refused")
    driver = _driver(module, [refused] * 20 + [{"ready": False}] * 5 + [{"ready": True}])
    driver._wait_ready()  # 26 polls, about 2.5 s: more than the old count of polls would allow at slow calls


def test_a_driver_that_never_answers_fails_after_the_deadline(monkeypatch):
    module = _tool()
    monkeypatch.setattr(module, "READY_SECONDS", 0.3)
    driver = _driver(module, [urllib.error.URLError("Network is unreachable")] * 1000)
    driver.base = "http://127.0.0.1:9"
    start = time.monotonic()
    with pytest.raises(RuntimeError, match=r"did not become ready in 0 s \(last: Network is unreachable\)"):
        driver._wait_ready()
    assert 0.3 <= time.monotonic() - start < 5.0


def test_the_deadline_is_wall_clock_not_a_count_of_polls(monkeypatch):
    """Each poll takes 0.2 s: a deadline of 0.5 s ends after a few polls, where 100 polls would take 20 s."""
    module = _tool()
    monkeypatch.setattr(module, "READY_SECONDS", 0.5)
    driver = _driver(module, [])
    driver.base = "http://127.0.0.1:9"

    def slow(method, path, body=None):
        time.sleep(0.2)
        raise urllib.error.URLError("refused")

    driver._call = slow
    start = time.monotonic()
    with pytest.raises(RuntimeError):
        driver._wait_ready()
    assert time.monotonic() - start < 3.0
