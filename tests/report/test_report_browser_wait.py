"""tools/check_report_browser.py's wait for chromedriver: a wall-clock deadline (READY_SECONDS), so a slow
start on a loaded machine is waited for, and a driver that never answers fails in one line naming the time.
Runs without chromium (the driver's status call is replaced)."""

from __future__ import annotations

import importlib.util
import time
import urllib.error
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _tool():
    spec = importlib.util.spec_from_file_location(
        "check_report_browser_wait", ROOT / "tools" / "check_report_browser.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


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
