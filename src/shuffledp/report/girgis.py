"""The report's reading of Girgis et al.'s Section 4 comparison (``results/girgis/girgis_verdicts.csv``,
rows of :func:`shuffledp.experiments.girgis.verdicts`): one sentence per curve and per checked claim.

Room: text from one frame; wired into :mod:`shuffledp.report.build` as the reader of the section
:data:`shuffledp.report.inputs.GIRGIS_FIGURE`.
"""

from __future__ import annotations

import pandas as pd

__all__ = ["read_girgis_verdicts"]

_NEEDED = ("curve", "accountant", "claim", "points", "verdict", "note", "known_cause")


def read_girgis_verdicts(frame: pd.DataFrame) -> str:
    """Curves first (verdict and its cause), then the claims of the text our curves check."""
    missing = [c for c in _NEEDED if c not in frame.columns]
    if missing:
        raise ValueError(
            f"`Girgis verdict data` must have columns {', '.join(_NEEDED)}; missing {', '.join(missing)}."
        )
    frame = frame.astype(object).where(frame.notna(), "")
    curves = frame[frame["claim"] == ""]
    claims = frame[frame["claim"] != ""]
    sentences = []
    if len(curves):
        causes = sorted({str(c) for c in curves["known_cause"] if str(c)})
        names = ", ".join(
            str(r.curve) + (" (`" + str(r.accountant) + "`)" if r.accountant else "")
            for r in curves.itertuples()
        )
        verdicts = sorted(set(curves["verdict"]))
        sentences.append(
            f"Curves {names}: {' / '.join(verdicts)}" + (f" -- {'; '.join(causes)}" if causes else "") + "."
        )
    for row in claims.itertuples():
        sentences.append(f"{row.claim}: {row.verdict} ({row.note}).")
    return " ".join(sentences) if sentences else "No verdict row in this run."
