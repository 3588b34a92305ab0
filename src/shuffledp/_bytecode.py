"""Byte-compiling the package once for the many Python processes that import it.

Python caches what it compiles at import (``__pycache__``) unless ``PYTHONDONTWRITEBYTECODE`` is set, as in
CI and in many containers. A workflow run starts 60 to 90 Python processes that import this package, and
the test suite hundreds; under that variable each of them compiled the same sources again, about 0.2 s of
CPU per process. :func:`compile_package` writes the missing or stale ``.pyc`` files once, where and as
Python's import would have written them (timestamp-checked); files already up to date are only read
(docs/decisions/workflow.md, "Byte-compiling the package once per run").
"""

from __future__ import annotations

import importlib.util
import os
import py_compile
from pathlib import Path

__all__ = ["compile_package"]


def _up_to_date(source: Path, cached: Path) -> bool:
    """Whether ``cached`` is the timestamp-checked cache that Python's import accepts for ``source``: its
    header holds the source's modification time and size (compileall checks the time only)."""
    try:
        with open(cached, "rb") as handle:
            header = handle.read(16)
        status = os.stat(source)
    except OSError:
        return False
    expected = (
        importlib.util.MAGIC_NUMBER
        + (0).to_bytes(4, "little")
        + (int(status.st_mtime) & 0xFFFFFFFF).to_bytes(4, "little")
        + (status.st_size & 0xFFFFFFFF).to_bytes(4, "little")
    )
    return header == expected


def compile_package(folder: Path | None = None) -> bool:
    """Write the missing or stale ``.pyc`` files of the package (or of ``folder``), in its ``__pycache__``.

    Nothing is printed, and nothing fails: a file that does not compile, or a folder that cannot be written
    (a read-only install), is left to the importing processes, which compile in memory as before.

    Args:
        folder: the package folder to compile; this package's own when None.

    Returns:
        Whether every source file is now compiled and up to date.
    """
    target = Path(__file__).resolve().parent if folder is None else Path(folder)
    complete = True
    for source in sorted(target.rglob("*.py")):
        cached = Path(importlib.util.cache_from_source(str(source)))
        if _up_to_date(source, cached):
            continue
        try:
            py_compile.compile(
                str(source),
                cfile=str(cached),
                doraise=True,
                invalidation_mode=py_compile.PycInvalidationMode.TIMESTAMP,
            )
        except (py_compile.PyCompileError, OSError):
            complete = False
    return complete
