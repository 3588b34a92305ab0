"""Atomic file output: write to a temporary file beside the target, rename only on success."""

from __future__ import annotations

import os
import tempfile
from contextlib import contextmanager
from pathlib import Path

__all__ = ["atomic_output"]


@contextmanager
def atomic_output(path):
    """Yield a temporary path next to ``path``; on normal exit rename it to ``path``, else delete it.

    For writers that take a file name (``DataFrame.to_parquet``, ``Figure.savefig``); text goes
    through :func:`shuffledp.tables.atomic_write_text`. The temporary name keeps ``path``'s suffix so
    that writers choosing a format by extension still work.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.stem}.", suffix=path.suffix)
    os.close(handle)
    temporary = Path(name)
    try:
        yield temporary
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
