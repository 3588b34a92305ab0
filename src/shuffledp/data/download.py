"""Retrying download of the SNAP Gowalla file, with verification and atomic placement.

:func:`download` fetches a URL (``http(s)://`` or ``file://``) into a temporary file beside the
destination, verifies it (:func:`verify_snap_gzip`: gzip integrity, column format, row count), and
only then renames it into place. A partial, corrupt or wrong-sized download is deleted and reported;
nothing half-written ever sits at the destination.

When the server cannot be reached at all, :class:`NetworkUnreachableError` carries one line saying
so and how to run the pipeline without the download. With ``connect_timeout``, a connection to the
server (or to the configured proxy) is opened first: a name that does not resolve, a network that is
down or a refused connection fails at once, without retries or back-off.
"""

from __future__ import annotations

import errno
import gzip
import socket
import time
import urllib.error
import urllib.parse
import urllib.request
import zlib
from collections.abc import Callable
from http.client import HTTPException
from pathlib import Path

from shuffledp._progress import progress
from shuffledp._validation import check_integer, check_real
from shuffledp.io import atomic_output

__all__ = [
    "DownloadError",
    "NetworkUnreachableError",
    "VerificationError",
    "CorruptDownloadError",
    "OFFLINE_HINT",
    "download",
    "probe_connection",
    "verify_snap_gzip",
]

#: how to run without the network (the config keys and the README section)
OFFLINE_HINT = (
    "Without the network, set data.source: auto (the bundled subsets of data/bundled/SOURCE.md are used "
    "when SNAP cannot be reached), or data.source: local with your own files under data.local_files "
    "(e.g. --config local_data_dir=/path/to/gowalla)."
)

_CHUNK = 1 << 22
_UNREACHABLE_ERRNOS = {
    errno.ENETUNREACH,
    errno.EHOSTUNREACH,
    errno.ECONNREFUSED,
    errno.ENETDOWN,
    errno.EHOSTDOWN,
}


class DownloadError(RuntimeError):
    """The file could not be downloaded or did not pass verification (nothing was kept)."""


class NetworkUnreachableError(DownloadError):
    """The server could not be reached at all (offline, DNS failure, connection refused)."""


class VerificationError(DownloadError):
    """The downloaded file is corrupt or not what the SNAP page describes."""


class CorruptDownloadError(VerificationError):
    """The gzip stream is truncated or damaged (worth retrying, unlike a wrong row count)."""


def verify_snap_gzip(path, *, expected_rows: int | None, n_columns: int = 5) -> int:
    """Check a gzip SNAP file end to end and return its number of rows.

    Decompresses the whole stream (CRC and length are checked by :mod:`gzip`), counts lines, and
    checks the column format: every line has ``n_columns`` tab-separated fields (the total number
    of tabs is ``(n_columns - 1) * rows``) and the first line's latitude/longitude are numbers.
    Raises :class:`VerificationError` naming what is wrong.
    """
    path = Path(path)
    rows = tabs = 0
    first = b""
    last_byte = b"\n"
    try:
        with gzip.open(path, "rb") as stream:
            while chunk := stream.read(_CHUNK):
                if not first:
                    first = chunk.split(b"\n", 1)[0]
                rows += chunk.count(b"\n")
                tabs += chunk.count(b"\t")
                last_byte = chunk[-1:]
    except (OSError, EOFError, zlib.error) as error:
        raise CorruptDownloadError(f"{path.name} is not a complete gzip file ({error}).") from error
    if last_byte != b"\n":
        rows += 1  # a last line without a newline
    fields = first.decode("utf-8", errors="replace").split("\t")
    try:
        numeric = len(fields) == n_columns and all(abs(float(fields[i])) <= 180 for i in (2, 3))
    except ValueError:
        numeric = False
    if not numeric:
        raise VerificationError(
            f"{path.name} is not in SNAP check-in format (user, time, latitude, longitude, location id "
            f"separated by tabs); its first line is {first[:120]!r}."
        )
    if tabs != (n_columns - 1) * rows:
        raise VerificationError(
            f"{path.name} has {tabs} tabs in {rows} rows; every row must have {n_columns} tab-separated fields."
        )
    if expected_rows is not None and rows != expected_rows:
        raise VerificationError(
            f"{path.name} has {rows} rows; the SNAP page states {expected_rows} "
            "(data.snap.expected_rows). The download is incomplete or a different file."
        )
    return rows


def _unreachable(error: BaseException) -> bool:
    reason = getattr(error, "reason", error)
    if isinstance(reason, (socket.gaierror, ConnectionRefusedError, socket.timeout, TimeoutError)):
        return True
    return isinstance(reason, OSError) and reason.errno in _UNREACHABLE_ERRNOS


def _probe_address(url: str) -> tuple[str, int] | None:
    """Host and port a download of ``url`` connects to first (the proxy's, if one is configured)."""
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return None
    proxy = urllib.request.getproxies().get(parts.scheme)
    if proxy and not urllib.request.proxy_bypass(parts.hostname):
        parts = urllib.parse.urlsplit(proxy if "://" in proxy else f"http://{proxy}")
    host = parts.hostname
    if not host:
        return None
    default = 443 if parts.scheme == "https" else 80
    try:
        port = parts.port or default
    except ValueError:
        port = default
    return host, port


def probe_connection(url: str, timeout: float) -> None:
    """Open (and close) a TCP connection to the server of ``url`` within ``timeout`` seconds.

    Args:
        url: the ``http(s)://`` address to be downloaded; other schemes (``file://``) are not probed.
        timeout: seconds allowed for name resolution and the connection together.

    Raises:
        NetworkUnreachableError: the name does not resolve, the network is down, the connection is
            refused or does not open within ``timeout`` (one line, with :data:`OFFLINE_HINT`).
    """
    address = _probe_address(url)
    if address is None:
        return
    try:
        socket.create_connection(address, timeout=timeout).close()
    except OSError as error:
        raise NetworkUnreachableError(
            f"Network unreachable: could not connect to {address[0]}:{address[1]} for {url} "
            f"within {timeout:g} s ({error}). {OFFLINE_HINT}"
        ) from None


def _fetch_once(url: str, target: Path, timeout: float) -> None:
    """Copy ``url`` to ``target``; raise ``DownloadError`` if fewer bytes than announced arrive."""
    with urllib.request.urlopen(url, timeout=timeout) as response, open(target, "wb") as sink:
        announced = response.headers.get("Content-Length") if hasattr(response, "headers") else None
        written = 0
        total = int(announced) if announced and announced.isdigit() else None
        with progress(total=total, desc=f"downloading {url.rsplit('/', 1)[-1]}", unit="B") as bar:
            while chunk := response.read(_CHUNK):
                sink.write(chunk)
                written += len(chunk)
                bar.update(len(chunk))
    if announced is not None and written != int(announced):
        raise DownloadError(f"received {written} of {announced} bytes")


def download(
    url: str,
    destination,
    *,
    expected_rows: int | None,
    retries: int = 3,
    timeout: float = 120.0,
    backoff: float = 2.0,
    verify: Callable[..., int] | None = verify_snap_gzip,
    log: Callable[[str], None] = print,
    sleep: Callable[[float], None] = time.sleep,
    connect_timeout: float | None = None,
) -> Path:
    """Download ``url`` to ``destination`` with up to ``retries`` attempts, verify, rename atomically.

    Waits ``backoff * 2**(attempt - 1)`` seconds between attempts. Network errors, HTTP 5xx/429,
    truncated transfers and corrupt gzip streams are retried; a wrong row count or a wrong format is
    not (the server is sending a different file). Returns ``destination``.

    With ``connect_timeout`` (seconds), :func:`probe_connection` runs first: an unreachable server fails
    at once, without the attempts and their back-off.

    Raises :class:`NetworkUnreachableError` (one line, with :data:`OFFLINE_HINT`) when the probe or
    every attempt failed to reach the server, :class:`VerificationError` when the file is not the
    SNAP file, and :class:`DownloadError` otherwise. In every failure the partial file is deleted.
    """
    retries = check_integer(retries, "retries", low=1)
    timeout = check_real(timeout, "timeout", low=0.0, low_open=True)
    backoff = check_real(backoff, "backoff", low=0.0)
    if connect_timeout is not None:
        probe_connection(url, check_real(connect_timeout, "connect_timeout", low=0.0, low_open=True))
    destination = Path(destination)
    destination.parent.mkdir(parents=True, exist_ok=True)
    failures: list[BaseException] = []
    for attempt in range(1, retries + 1):
        rows = None
        try:
            # atomic_output deletes the partial file on any failure (and on SIGTERM) and renames it
            # into place only after verification.
            with atomic_output(destination, suffix=".part") as partial:
                _fetch_once(url, partial, timeout)
                rows = verify(partial, expected_rows=expected_rows) if verify is not None else None
        except urllib.error.HTTPError as error:
            failures.append(error)
            log(f"attempt {attempt}/{retries}: HTTP {error.code} {error.reason} from {url}")
            if error.code < 500 and error.code != 429:
                raise DownloadError(f"HTTP {error.code} {error.reason} for {url}; not retrying.") from None
        except VerificationError as error:
            failures.append(error)
            log(f"attempt {attempt}/{retries}: verification failed, partial file deleted: {error}")
            if not isinstance(error, CorruptDownloadError):
                raise
        except (urllib.error.URLError, HTTPException, OSError, DownloadError) as error:
            failures.append(error)
            log(f"attempt {attempt}/{retries}: {type(error).__name__}: {getattr(error, 'reason', error)}")
        else:
            log(
                f"downloaded {url} -> {destination}"
                + (f" ({rows} rows verified)" if rows is not None else "")
            )
            return destination
        if attempt < retries:
            sleep(backoff * 2 ** (attempt - 1))
    raise _final_error(url, retries, failures)


def _final_error(url: str, retries: int, failures: list[BaseException]) -> DownloadError:
    """The one error :func:`download` raises after every attempt failed: unreachable, or the last failure."""
    last = failures[-1]
    if all(_unreachable(error) for error in failures):
        reason = getattr(last, "reason", last)
        return NetworkUnreachableError(
            f"Network unreachable: could not download {url} after {retries} attempt(s) ({reason}). {OFFLINE_HINT}"
        )
    if isinstance(last, VerificationError):
        return DownloadError(
            f"Download of {url} failed verification {retries} time(s); deleted. Last: {last}"
        )
    return DownloadError(
        f"Download of {url} failed after {retries} attempt(s); nothing kept. Last error: {last}"
    )
