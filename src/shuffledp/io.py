"""The one atomic file writer: write beside the target, rename into place only on success.

Every output of the library and the workflow goes through :func:`atomic_output` (or
:func:`atomic_write_text`, built on it), so no half-written file is ever left at an output path:

- on an exception (including ``KeyboardInterrupt``) the temporary file is deleted and the exception
  re-raised;
- on ``SIGTERM`` (Snakemake cancelling a job, SLURM ending one) every pending temporary file of the
  process is deleted before the process dies of the signal as it would have (a handler installed
  before ours is still called);
- the finished file has the permissions of any newly created file, ``0o666`` minus the umask, not
  the owner-only ``0o600`` that :func:`tempfile.mkstemp` gives the temporary file.

``SIGKILL`` cannot be caught: a killed process may leave a ``.<name>.<random><suffix>`` file beside
the target, never a truncated file at the target itself.

A write that fails with an ``OSError`` (a full disk, a read-only file system) is re-raised as
:class:`FileAccessError`, whose message is one line naming the output and the cause ("cannot write
results/x.csv: No space left on device"); :func:`describe_os_error` gives the same one line for any
``OSError`` that names a file (an unreadable input: "cannot open data/x.csv: Permission denied").
"""

from __future__ import annotations

import contextlib
import csv
import errno
import os
import signal
import tempfile
import threading
from contextlib import contextmanager
from pathlib import Path

__all__ = [
    "atomic_output",
    "atomic_write_text",
    "atomic_write_csv",
    "new_file_mode",
    "FileAccessError",
    "describe_os_error",
]

_PENDING: set[Path] = set()
_LOCK = threading.Lock()
_previous_sigterm = None
_handler_installed = False


class FileAccessError(OSError):
    """An input that could not be read or an output that could not be written; ``str`` is one line."""

    def __init__(self, action: str, filename, cause: OSError):
        super().__init__(cause.errno, cause.strerror or str(cause), str(filename))
        self.action = action

    def __str__(self) -> str:
        return f"cannot {self.action} {self.filename}: {self.strerror}"


def describe_os_error(error: OSError) -> str:
    """One line naming the file and the cause of ``error`` (its own message when it names no file)."""
    if isinstance(error, FileAccessError):
        return str(error)
    cause = error.strerror or (os.strerror(error.errno) if error.errno else str(error))
    if error.filename is None:
        return cause
    action = "write" if error.errno in (errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EFBIG) else "open"
    return f"cannot {action} {error.filename}: {cause}"


def _umask() -> int:
    """The process umask (read without changing it where /proc allows)."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def new_file_mode() -> int:
    """Permission bits of a newly created ordinary file: ``0o666`` minus the umask."""
    return 0o666 & ~_umask()


def _on_sigterm(signum, frame) -> None:
    with _LOCK:
        pending = list(_PENDING)
        _PENDING.clear()
    for path in pending:
        with contextlib.suppress(OSError):
            path.unlink(missing_ok=True)
    previous = _previous_sigterm
    if callable(previous):
        previous(signum, frame)
        return
    if previous == signal.SIG_IGN:
        return
    signal.signal(signum, signal.SIG_DFL)  # die of the signal, as without our handler
    os.kill(os.getpid(), signum)


def _install_sigterm_handler() -> None:
    """Install the clean-up handler once, from the main thread (signals can only be set there)."""
    global _handler_installed, _previous_sigterm
    if _handler_installed or threading.current_thread() is not threading.main_thread():
        return
    _previous_sigterm = signal.getsignal(signal.SIGTERM)
    signal.signal(signal.SIGTERM, _on_sigterm)
    _handler_installed = True


#: errno values of a write that failed for the file system's sake when the error names no file
_WRITE_ERRNOS = frozenset(
    {errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EFBIG, errno.EIO, errno.EACCES, errno.EPERM}
)


def _is_about_writing(error: OSError, temporary: Path, path: Path) -> bool:
    """Whether an OSError raised inside :func:`atomic_output` is the write's own failure: it names the
    temporary or the target, or it names no file and is a file-system errno (a full disk). A network error
    (``urllib.error.URLError``, a refused connection: also OSErrors) or an error naming another file is not."""
    if error.filename is not None:
        return str(error.filename) in (str(temporary), str(path))
    return error.errno in _WRITE_ERRNOS


@contextmanager
def atomic_output(path, *, suffix: str | None = None):
    """Yield a temporary path beside ``path``; on normal exit rename it to ``path``, else delete it.

    For writers that take a file name (``DataFrame.to_parquet``, ``Figure.savefig``, a download).
    The temporary name keeps ``path``'s suffix (or ``suffix``) so that writers choosing a format by
    extension still work. The parent directory is created if needed.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    _install_sigterm_handler()
    handle, name = tempfile.mkstemp(
        dir=path.parent, prefix=f".{path.stem}.", suffix=path.suffix if suffix is None else suffix
    )
    os.close(handle)
    temporary = Path(name)
    with _LOCK:
        _PENDING.add(temporary)
    try:
        yield temporary
        os.chmod(temporary, new_file_mode())
        os.replace(temporary, path)
    except OSError as error:
        temporary.unlink(missing_ok=True)
        if isinstance(error, FileAccessError) or not _is_about_writing(error, temporary, path):
            raise  # already described, about another file (an input read inside the block) or the network
        raise FileAccessError("write", path, error) from error
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
    finally:
        with _LOCK:
            _PENDING.discard(temporary)


def atomic_write_text(path, text: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` through :func:`atomic_output`."""
    if not isinstance(text, str):
        raise TypeError(f"`text` must be a str; got {type(text).__name__}.")
    with atomic_output(path) as temporary:
        temporary.write_text(text, encoding="utf-8")


def atomic_write_csv(path, columns, rows) -> None:
    """Write a header and ``rows`` as CSV (UTF-8, "\n" line ends) to ``path`` through :func:`atomic_output`."""
    with atomic_output(path) as temporary, open(temporary, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(columns)
        writer.writerows(rows)
