"""Logging for workflow jobs: every script's messages *and its failure* go to the job's log file.

Snakemake points the user at a job's ``log:`` file when the job fails, but an uncaught exception is
printed only to the job's stderr (mixed into Snakemake's own output). :func:`setup_job_log` sends
the ``logging`` records of the script to its log file and installs a :data:`sys.excepthook` that
first writes the exception there -- one line ``FAILED: <type>: <message>`` followed by the
traceback -- and then prints it to stderr as usual.
"""

from __future__ import annotations

import logging
import sys

__all__ = ["setup_job_log", "LOG_FORMAT"]

LOG_FORMAT = "%(asctime)s %(message)s"


def setup_job_log(snakemake, *, level: int = logging.INFO) -> logging.Logger:
    """Log to ``snakemake.log[0]`` (stderr if the rule has no log) and log uncaught exceptions there.

    Returns the root logger. Call once, at the top of a workflow script.
    """
    logs = list(getattr(snakemake, "log", []) or [])
    if logs:
        logging.basicConfig(filename=logs[0], level=level, format=LOG_FORMAT, force=True)
    else:
        logging.basicConfig(level=level, format=LOG_FORMAT, force=True)
    previous = sys.excepthook

    def log_then_print(kind, value, traceback) -> None:
        if not issubclass(kind, KeyboardInterrupt):
            logging.getLogger("job").error(
                "FAILED: %s: %s", kind.__name__, str(value).splitlines()[0] if str(value) else "",
                exc_info=(kind, value, traceback),
            )
            logging.shutdown()  # flush the file before the interpreter exits
        previous(kind, value, traceback)

    sys.excepthook = log_then_print
    return logging.getLogger()
