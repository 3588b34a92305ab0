"""Progress bars the way the ecosystem shows them: ``tqdm`` on stderr, off when stderr is not a TTY.

Workflow jobs started from a terminal show a live bar; in CI, under SLURM or with output redirected
(stderr not a terminal) nothing is printed, so logs hold no carriage-return noise. The job log gets
one line per finished step from the caller instead. Set ``SHUFFLEDP_PROGRESS=0`` to turn bars off
everywhere, ``=1`` to force them on.
"""

from __future__ import annotations

import os
import sys

from tqdm import tqdm

__all__ = ["progress"]


def progress(*, total=None, desc: str, unit: str = "it", file=None, **options) -> tqdm:
    """A ``tqdm`` bar on ``file`` (default stderr), disabled unless ``file`` is a terminal.

    ``unit="B"`` scales to kB/MB. Use as a context manager and call ``update(n)``.
    """
    stream = sys.stderr if file is None else file
    setting = os.environ.get("SHUFFLEDP_PROGRESS", "").strip()
    disable = {"0": True, "1": False}.get(setting)  # None: tqdm decides (off unless a TTY)
    return tqdm(
        total=total,
        desc=desc,
        unit=unit,
        unit_scale=unit == "B",
        file=stream,
        disable=disable,
        mininterval=0.5,
        dynamic_ncols=True,
        **options,
    )
