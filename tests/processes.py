"""Whether a process the tests started (directly or not) has ended, for the tests that check that a stopped
run, a timed-out fork or an interrupted CI leaves nothing running."""

from __future__ import annotations

import time
from pathlib import Path


def alive(pid: int) -> bool:
    """Whether process ``pid`` runs (a zombie, which has ended but not been reaped, counts as ended).

    Args:
        pid: the process ID.

    Returns:
        True while the process exists and is not a zombie.
    """
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def ended(pid: int, seconds: float = 10.0) -> bool:
    """Whether process ``pid`` has ended within ``seconds`` (polled every 0.05 s).

    Args:
        pid: the process ID.
        seconds: how long to wait for it.

    Returns:
        True once the process has ended; False if it still runs after ``seconds``.
    """
    deadline = time.monotonic() + seconds
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not alive(pid)
