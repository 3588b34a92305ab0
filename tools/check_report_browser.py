#!/usr/bin/env python3
"""Open the self-contained HTML report in headless Chromium and check what a reader sees.

    python tools/check_report_browser.py [REPORT.html] [--screenshot PNG] [--width 1280] [--height 900]

Drives Debian's ``chromium`` through ``chromedriver`` (package ``chromium-driver``; the W3C WebDriver
protocol is plain HTTP + JSON, so only the standard library is needed). The page is loaded from its
``file://`` address at the given window size and the check fails (exit status 1) when

* an image did not load (``<img>`` not complete, or ``naturalWidth`` 0);
* an internal link is broken: a ``#anchor`` with no element of that id (or name), or a relative link to
  a file that does not exist beside the report;
* a table overflows the page: its right edge lies beyond the viewport and no ancestor clips or scrolls
  it, or the document itself is wider than the viewport.

A screenshot of the first screen is written to ``--screenshot`` (default: ``first_screen.png`` beside
the report). The findings are printed as JSON. Exit status 2: no chromium / chromedriver, or the
browser could not be driven. REPORT defaults to ``results/report/reproduction-report.html``.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import json
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from urllib.parse import unquote, urlsplit

DEFAULT_REPORT = Path("results/report/reproduction-report.html")
#: how long chromedriver may take to start (wall clock): room for a slow start on a loaded 2-core machine
READY_SECONDS = 120.0

#: runs in the page; returns what the checks need (no decision is taken in the browser)
_PROBE = r"""
const viewport = document.documentElement.clientWidth;
const images = Array.from(document.images).map((img, i) => ({
  index: i, alt: (img.alt || '').slice(0, 80), complete: img.complete, naturalWidth: img.naturalWidth,
  src: img.currentSrc.startsWith('data:') ? img.currentSrc.slice(0, 30) + '...' : img.currentSrc}));
const links = Array.from(document.querySelectorAll('a[href]')).map(a => a.getAttribute('href'));
const anchors = links.filter(h => h.startsWith('#') && h.length > 1).map(h => {
  const id = decodeURIComponent(h.slice(1));
  return {href: h, found: !!(document.getElementById(id) || document.getElementsByName(id).length)};});
function clipper(el) {
  for (let p = el.parentElement; p && p !== document.body && p !== document.documentElement; p = p.parentElement) {
    const o = getComputedStyle(p).overflowX;
    if (o === 'auto' || o === 'scroll' || o === 'hidden' || o === 'clip') return p;
  }
  return null;
}
const tables = Array.from(document.querySelectorAll('table')).map((t, i) => {
  const r = t.getBoundingClientRect(), c = clipper(t);
  const box = c ? c.getBoundingClientRect() : r;
  const head = t.querySelector('th, td');
  return {index: i, first_cell: head ? head.textContent.trim().slice(0, 60) : '', left: r.left, right: r.right,
          width: r.width, clipped_by_scroller: !!c, visible_right: box.right, viewport: viewport};});
return {title: document.title, readyState: document.readyState, viewport: viewport,
        document_width: document.documentElement.scrollWidth, images: images, anchors: anchors,
        links: links, tables: tables};
"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class WebDriver:
    """The few WebDriver commands used here, over urllib."""

    def __init__(self, chromedriver: str, chromium: str, width: int, height: int):
        self.port = _free_port()
        self.process = subprocess.Popen(
            [chromedriver, f"--port={self.port}"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        self.base = f"http://127.0.0.1:{self.port}"
        self._wait_ready()
        options = {
            "binary": chromium,
            "args": [
                "--headless=new",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-dev-shm-usage",
                "--hide-scrollbars",
                f"--window-size={width},{height}",
            ],
        }
        caps = {"capabilities": {"alwaysMatch": {"browserName": "chrome", "goog:chromeOptions": options}}}
        self.session = self._call("POST", "/session", caps)["sessionId"]

    def _wait_ready(self) -> None:
        """Poll chromedriver's status until it is ready, for up to :data:`READY_SECONDS` of wall clock (a
        deadline, not a count of polls: on a loaded machine each poll itself can take seconds). The failure
        names the last connection error (e.g. "Network is unreachable" where the loopback interface is down)."""
        deadline = time.monotonic() + READY_SECONDS
        last = "no answer"
        while True:
            try:
                if self._call("GET", "/status").get("ready"):
                    return
                last = "it answered, not ready"
            except (urllib.error.URLError, ConnectionError) as error:
                last = str(getattr(error, "reason", error))
            if time.monotonic() >= deadline:
                raise RuntimeError(
                    f"chromedriver did not become ready in {READY_SECONDS:.0f} s (last: {last}) at {self.base}"
                )
            time.sleep(0.1)

    def _call(self, method: str, path: str, body=None):
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(
            self.base + path, data=data, method=method, headers={"Content-Type": "application/json"}
        )
        try:
            with urllib.request.urlopen(request, timeout=120) as response:
                return json.loads(response.read())["value"]
        except urllib.error.HTTPError as error:
            raise RuntimeError(
                f"WebDriver {method} {path}: {error.read().decode(errors='replace')[:500]}"
            ) from None

    def command(self, method: str, path: str, body=None):
        return self._call(method, f"/session/{self.session}{path}", body)

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self._call("DELETE", f"/session/{self.session}")
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()


def _findings(probe: dict, report: Path) -> dict:
    """The failures from what the page reported."""
    images = [i for i in probe["images"] if not i["complete"] or i["naturalWidth"] == 0]
    anchors = [a["href"] for a in probe["anchors"] if not a["found"]]
    files = []
    for href in probe["links"]:
        parts = urlsplit(href)
        if parts.scheme or parts.netloc or href.startswith("#") or not parts.path:
            continue  # external (http, mailto, data) or an anchor
        if not (report.parent / unquote(parts.path)).exists():
            files.append(href)
    tables = [
        t
        for t in probe["tables"]
        if max(t["right"] if not t["clipped_by_scroller"] else 0.0, t["visible_right"]) > t["viewport"] + 1.0
    ]
    page = probe["document_width"] > probe["viewport"] + 1
    return {
        "broken_images": images,
        "broken_anchors": anchors,
        "missing_files": files,
        "overflowing_tables": tables,
        "page_wider_than_viewport": page,
    }


def check(
    report: Path,
    screenshot: Path,
    *,
    width: int = 1280,
    height: int = 900,
    chromium: str | None = None,
    chromedriver: str | None = None,
) -> dict:
    """Load ``report``, save the first screen to ``screenshot``; returns counts and failures."""
    chromium = chromium or shutil.which("chromium") or shutil.which("chromium-browser")
    chromedriver = chromedriver or shutil.which("chromedriver")
    if not chromium or not chromedriver:
        raise FileNotFoundError(
            "chromium and chromedriver are needed (Debian: apt-get install chromium chromium-driver)"
        )
    driver = WebDriver(chromedriver, chromium, width, height)
    try:
        driver.command("POST", "/url", {"url": report.resolve().as_uri()})
        for _ in range(200):  # images embedded as data URIs decode asynchronously
            probe = driver.command("POST", "/execute/sync", {"script": _PROBE, "args": []})
            if probe["readyState"] == "complete" and all(i["complete"] for i in probe["images"]):
                break
            time.sleep(0.1)
        screenshot.parent.mkdir(parents=True, exist_ok=True)
        screenshot.write_bytes(base64.b64decode(driver.command("GET", "/screenshot")))
        window = driver.command("GET", "/window/rect")
    finally:
        driver.close()
    failures = _findings(probe, report)
    return {
        "report": str(report),
        "screenshot": str(screenshot),
        "window": {"width": window["width"], "height": window["height"]},
        "title": probe["title"],
        "viewport": probe["viewport"],
        "document_width": probe["document_width"],
        "images": len(probe["images"]),
        "anchors": len(probe["anchors"]),
        "links": len(probe["links"]),
        "tables": len(probe["tables"]),
        "chromium": _version(chromium),
        **failures,
        "ok": not any(failures.values()),
    }


def _version(program: str) -> str:
    try:
        return subprocess.run(
            [program, "--version"], capture_output=True, text=True, timeout=60
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "?"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("report", nargs="?", type=Path, default=DEFAULT_REPORT)
    parser.add_argument(
        "--screenshot", type=Path, default=None, help="default: first_screen.png beside the report"
    )
    parser.add_argument("--width", type=int, default=1280)
    parser.add_argument("--height", type=int, default=900)
    args = parser.parse_args(argv)
    if not args.report.is_file():
        print(f"error: `report` must be an existing HTML file; got {str(args.report)!r}.", file=sys.stderr)
        return 2
    screenshot = args.screenshot or args.report.parent / "first_screen.png"
    try:
        result = check(args.report, screenshot, width=args.width, height=args.height)
    except (FileNotFoundError, RuntimeError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(json.dumps(result, indent=2))
    return 0 if result["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
