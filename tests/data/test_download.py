"""Retrying, verified, atomic download (local http.server on 127.0.0.1 and file:// fixtures)."""

from __future__ import annotations

import gzip
import http.server
import socket
import threading
from pathlib import Path

import pytest

from shuffledp.data.download import (
    OFFLINE_HINT,
    CorruptDownloadError,
    DownloadError,
    NetworkUnreachableError,
    VerificationError,
    download,
    verify_snap_gzip,
)

ROWS = [
    "0\t2010-10-19T23:55:27Z\t30.2359091167\t-97.7951395833\t22847",
    "0\t2010-10-18T22:17:43Z\t30.2691029532\t-97.7493953705\t420315",
    "1\t2010-07-25T11:40:18Z\t48.86337875\t2.333328717\t1500177",
]
GOOD = gzip.compress(("\n".join(ROWS) + "\n").encode())


class Server:
    """Serve a scripted list of responses, one per request: (status, body bytes, headers)."""

    def __init__(self, responses):
        self.responses = list(responses)
        self.requests = 0
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                index = min(outer.requests, len(outer.responses) - 1)
                outer.requests += 1
                status, body, headers = outer.responses[index]
                self.send_response(status)
                for key, value in {"Content-Length": str(len(body)), **headers}.items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/loc-gowalla_totalCheckins.txt.gz"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()


def fetch(url, destination, **options):
    waits, messages = [], []
    options = {"expected_rows": 3, "retries": 3, "timeout": 5, "backoff": 0.5, **options}
    try:
        return download(url, destination, log=messages.append, sleep=waits.append, **options), waits, messages
    finally:
        fetch.waits, fetch.messages = waits, messages


def leftovers(directory: Path):
    return sorted(p.name for p in directory.iterdir())


def test_download_succeeds_and_verifies(tmp_path):
    with Server([(200, GOOD, {})]) as server:
        path, waits, messages = fetch(server.url, tmp_path / "raw" / "g.txt.gz")
    assert path.read_bytes() == GOOD and waits == [] and server.requests == 1
    assert "3 rows verified" in messages[-1]
    assert leftovers(tmp_path / "raw") == ["g.txt.gz"]


def test_server_errors_are_retried_with_backoff(tmp_path):
    with Server([(503, b"busy", {}), (500, b"oops", {}), (200, GOOD, {})]) as server:
        path, waits, messages = fetch(server.url, tmp_path / "g.txt.gz")
    assert server.requests == 3 and path.read_bytes() == GOOD
    assert waits == [0.5, 1.0]  # backoff doubles
    assert "HTTP 503" in messages[0] and "HTTP 500" in messages[1]


def test_truncated_transfer_is_retried(tmp_path):
    short = (200, GOOD[:10], {"Content-Length": str(len(GOOD))})  # announces more than it sends
    with Server([short, (200, GOOD, {})]) as server:
        path, _, _ = fetch(server.url, tmp_path / "g.txt.gz", timeout=2)
    assert server.requests == 2 and path.read_bytes() == GOOD
    assert leftovers(tmp_path) == ["g.txt.gz"]


def test_corrupt_gzip_is_deleted_and_reported(tmp_path):
    corrupt = GOOD[:-12] + b"\x00" * 12  # CRC and length trailer destroyed
    with (
        Server([(200, corrupt, {})]) as server,
        pytest.raises(
            DownloadError, match=r"failed verification 2 time\(s\); deleted. .*not a complete gzip file"
        ),
    ):
        fetch(server.url, tmp_path / "g.txt.gz", retries=2)
    assert server.requests == 2  # a corrupt stream is retried
    assert leftovers(tmp_path) == []  # nothing half-written survives
    assert any("partial file deleted" in m for m in fetch.messages)


def test_wrong_row_count_is_rejected_without_retry(tmp_path):
    with (
        Server([(200, GOOD, {})]) as server,
        pytest.raises(
            VerificationError, match=r"has 3 rows; the SNAP page states 6442890 \(data.snap.expected_rows\)"
        ),
    ):
        fetch(server.url, tmp_path / "g.txt.gz", expected_rows=6442890)
    assert server.requests == 1 and leftovers(tmp_path) == []


def test_client_error_is_not_retried(tmp_path):
    with (
        Server([(404, b"no", {})]) as server,
        pytest.raises(DownloadError, match=r"HTTP 404 .* not retrying"),
    ):
        fetch(server.url, tmp_path / "g.txt.gz")
    assert server.requests == 1 and leftovers(tmp_path) == []


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_offline_gives_one_line_with_the_local_files_hint(tmp_path):
    url = f"http://127.0.0.1:{_closed_port()}/loc-gowalla_totalCheckins.txt.gz"
    with pytest.raises(NetworkUnreachableError) as info:
        fetch(url, tmp_path / "g.txt.gz", retries=2)
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith(f"Network unreachable: could not download {url} after 2 attempt(s)")
    assert message.endswith(OFFLINE_HINT)
    assert "data.source: local" in message and "data.local_files" in message and "local_data_dir" in message
    assert fetch.waits == [0.5] and leftovers(tmp_path) == []


def test_file_url(tmp_path):
    source = tmp_path / "src.txt.gz"
    source.write_bytes(GOOD)
    path, _, _ = fetch(source.as_uri(), tmp_path / "out" / "g.txt.gz")
    assert path.read_bytes() == GOOD
    with pytest.raises(DownloadError, match="failed after 1 attempt"):
        fetch((tmp_path / "missing.gz").as_uri(), tmp_path / "out" / "h.gz", retries=1)
    assert leftovers(tmp_path / "out") == ["g.txt.gz"]


def test_download_rejects_bad_options(tmp_path):
    with pytest.raises(ValueError, match=r"`retries` must be an integer in \[1, inf\); got 0"):
        download("file:///x", tmp_path / "x", expected_rows=1, retries=0)
    with pytest.raises(ValueError, match=r"`timeout` must be in \(0, inf\); got 0.0"):
        download("file:///x", tmp_path / "x", expected_rows=1, timeout=0)


# ------------------------------------------------------------------------------- verification


def test_verify_counts_rows_with_and_without_final_newline(tmp_path):
    path = tmp_path / "a.gz"
    path.write_bytes(GOOD)
    assert verify_snap_gzip(path, expected_rows=3) == 3
    path.write_bytes(gzip.compress("\n".join(ROWS).encode()))
    assert verify_snap_gzip(path, expected_rows=None) == 3


@pytest.mark.parametrize(
    "text, message",
    [
        ("user,lat,lon\n1,2,3\n", "is not in SNAP check-in format"),
        (ROWS[0] + "\n" + "1\t2\t3\n", r"has 6 tabs in 2 rows; every row must have 5 tab-separated fields"),
    ],
)
def test_verify_rejects_wrong_format(tmp_path, text, message):
    path = tmp_path / "a.gz"
    path.write_bytes(gzip.compress(text.encode()))
    with pytest.raises(VerificationError, match=message):
        verify_snap_gzip(path, expected_rows=None)


def test_verify_rejects_plain_text(tmp_path):
    path = tmp_path / "a.gz"
    path.write_text("\n".join(ROWS))
    with pytest.raises(CorruptDownloadError, match="not a complete gzip file"):
        verify_snap_gzip(path, expected_rows=3)
