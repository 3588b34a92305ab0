"""Logging for workflow jobs: every script's messages *and its failure* go to the job's log file.

Snakemake points the user at a job's ``log:`` file when the job fails, but an uncaught exception is
printed only to the job's stderr (mixed into Snakemake's own output). :func:`setup_job_log` sends
the ``logging`` records of the script to its log file and installs a :data:`sys.excepthook` that
first writes the exception there -- one line ``FAILED: <type>: <message>`` followed by the
traceback -- and then prints it to stderr as usual. A file that could not be read or written (an
``OSError`` naming a file: permission denied, a full disk) is printed to stderr as one line naming
the file and the cause (:func:`shuffledp.io.describe_os_error`); its traceback is in the log file. If
the log file cannot be written either (the same full disk), that failure is not reported a second time.

A job that makes several outputs of one kind in one process (one interpreter start instead of one per
output) keeps one log file per output: :func:`item_logs` pairs each item with its log file and
sends the records -- and a failure -- of that item's work to it.
"""

from __future__ import annotations

import logging
import sys

from shuffledp.io import FileAccessError, describe_os_error

__all__ = ["setup_job_log", "item_logs", "LOG_FORMAT"]

LOG_FORMAT = "%(asctime)s %(message)s"


def _log_to(path, level: int) -> None:
    if path is None:
        logging.basicConfig(level=level, format=LOG_FORMAT, force=True)
    else:
        logging.basicConfig(filename=path, level=level, format=LOG_FORMAT, force=True)


def setup_job_log(snakemake, *, level: int = logging.INFO) -> logging.Logger:
    """Log to ``snakemake.log[0]`` (stderr if the rule has no log) and log uncaught exceptions there.

    Returns the root logger. Call once, at the top of a workflow script.
    """
    logs = list(getattr(snakemake, "log", []) or [])
    _log_to(logs[0] if logs else None, level)
    previous = sys.excepthook

    def log_then_print(kind, value, traceback) -> None:
        if issubclass(kind, KeyboardInterrupt):
            previous(kind, value, traceback)
            return
        file_problem = isinstance(value, OSError) and (
            value.filename is not None or isinstance(value, FileAccessError)
        )
        raising, logging.raiseExceptions = logging.raiseExceptions, not file_problem
        try:
            logging.getLogger("job").error(
                "FAILED: %s: %s",
                kind.__name__,
                describe_os_error(value)
                if file_problem
                else str(value).splitlines()[0]
                if str(value)
                else "",
                exc_info=(kind, value, traceback),
            )
            logging.shutdown()  # flush the file before the interpreter exits
        finally:
            logging.raiseExceptions = raising
        if file_problem:
            print(f"error: {describe_os_error(value)}", file=sys.stderr)
        else:
            previous(kind, value, traceback)

    sys.excepthook = log_then_print
    return logging.getLogger()


def item_logs(items, logs, *, level: int = logging.INFO):
    """Yield each of ``items`` after pointing the job's log at its own file (``logs``, in the same order).

    For a job that makes one output per item in one process: the records logged while an item is worked
    on -- and, through :func:`setup_job_log`'s hook, an uncaught failure -- land in that item's log file,
    as they would if each item were its own job. Call :func:`setup_job_log` first.
    """
    items, logs = list(items), list(logs)
    if len(items) != len(logs):
        raise ValueError(f"{len(items)} items but {len(logs)} log files; give one log file per item.")
    for item, path in zip(items, logs):
        _log_to(path, level)
        yield item
