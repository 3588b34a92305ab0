"""Retrying download of the SNAP Gowalla file, with verification and atomic placement.

:func:`download` fetches a URL (``http(s)://`` or ``file://``) into a temporary file beside the
destination, verifies it (:func:`verify_snap_gzip`: gzip integrity, column format, row count), and
only then renames it into place. A partial, corrupt or wrong-sized download is deleted and reported;
nothing half-written ever sits at the destination.

When the server cannot be reached at all, :class:`NetworkUnreachableError` carries one line saying
so and how to run the pipeline on local files instead.
"""

from __future__ import annotations

import errno
import gzip
import socket
import time
import urllib.error
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
    "verify_snap_gzip",
]

#: how to run without the network (the config keys and the README section)
OFFLINE_HINT = (
    "To use local files instead, set data.source: local and list them under data.local_files "
    "(e.g. --configfile config/config.yaml config/standins.yaml --config local_data_dir=/path/to/gowalla; "
    "README: 'Gowalla data: download or local files')."
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
) -> Path:
    """Download ``url`` to ``destination`` with up to ``retries`` attempts, verify, rename atomically.

    Waits ``backoff * 2**(attempt - 1)`` seconds between attempts. Network errors, HTTP 5xx/429,
    truncated transfers and corrupt gzip streams are retried; a wrong row count or a wrong format is
    not (the server is sending a different file). Returns ``destination``.

    Raises :class:`NetworkUnreachableError` (one line, with :data:`OFFLINE_HINT`) when every attempt
    failed to reach the server, :class:`VerificationError` when the file is not the SNAP file, and
    :class:`DownloadError` otherwise. In every failure the partial file is deleted.
    """
    retries = check_integer(retries, "retries", low=1)
    timeout = check_real(timeout, "timeout", low=0.0, low_open=True)
    backoff = check_real(backoff, "backoff", low=0.0)
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
