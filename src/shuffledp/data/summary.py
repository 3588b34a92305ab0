"""The data summary table (``results/data/summary.csv``): one row per source file read and one per
region cropped, with malformed-row and duplicate counts and the paper's counts beside ours.

Room: joins the parsing side (:mod:`shuffledp.data.gowalla`, :mod:`shuffledp.data.duplicates`) and
the geometry side (:mod:`shuffledp.data.geometry`); computes counts only.
"""

from __future__ import annotations

import pandas as pd

from shuffledp.data.duplicates import Duplicates
from shuffledp.data.geometry import Region
from shuffledp.data.gowalla import MALFORMED_REASONS, ParsedCheckins

__all__ = [
    "SUMMARY_COLUMNS",
    "source_summary",
    "region_summary",
    "combine_summaries",
]


#: columns of ``results/data/summary.csv``: one row per source file and one per region
SUMMARY_COLUMNS = (
    "level",  # "source" (a file read) or "region" (a crop of all sources pooled)
    "name",  # source id or region name
    "label",  # provenance label / region label
    "rows_read",  # source: lines read; region: valid check-ins from all sources considered
    "malformed",  # source: malformed rows (total); region: empty
    *(f"malformed_{reason}" for reason in MALFORMED_REASONS),
    "duplicates_in_file",  # source: valid rows repeating an earlier row of the same file exactly
    "duplicates_of_earlier_source",  # source: valid rows repeating a row of a source listed earlier
    "duplicates_dropped",  # source: duplicates removed (all of them with data.duplicates: drop, else 0)
    "kept",  # source: rows kept (valid, minus dropped duplicates); region: check-ins inside the box
    "paper_count",  # region: the count the paper reports (empty if none)
    "relative_difference",  # region: (kept - paper_count) / paper_count
)


def source_summary(
    parsed: ParsedCheckins, *, name: str, label: str = "", duplicates: Duplicates | None = None
) -> pd.DataFrame:
    """One summary row (see :data:`SUMMARY_COLUMNS`) for a parsed source file.

    With ``duplicates`` (:func:`find_duplicates`), ``kept`` is what remains after its policy.
    """
    row = {
        "level": "source",
        "name": name,
        "label": label or name,
        "rows_read": parsed.rows_read,
        "malformed": parsed.malformed_total,
        **{f"malformed_{reason}": parsed.malformed[reason] for reason in MALFORMED_REASONS},
        "duplicates_in_file": duplicates.in_file if duplicates else None,
        "duplicates_of_earlier_source": duplicates.of_earlier_source if duplicates else None,
        "duplicates_dropped": duplicates.dropped if duplicates else None,
        "kept": len(duplicates.checkins) if duplicates else parsed.kept,
        "paper_count": None,
        "relative_difference": None,
    }
    return pd.DataFrame([row], columns=list(SUMMARY_COLUMNS))


def region_summary(region: Region, *, rows_considered: int, kept: int) -> pd.DataFrame:
    """One summary row for a region: check-ins kept by the crop next to the paper's count."""
    paper = region.paper_count
    row = {
        "level": "region",
        "name": region.name,
        "label": region.label,
        "rows_read": int(rows_considered),
        "malformed": None,
        **{f"malformed_{reason}": None for reason in MALFORMED_REASONS},
        "duplicates_in_file": None,
        "duplicates_of_earlier_source": None,
        "duplicates_dropped": None,
        "kept": int(kept),
        "paper_count": paper,
        "relative_difference": (kept - paper) / paper if paper else None,
    }
    return pd.DataFrame([row], columns=list(SUMMARY_COLUMNS))


def combine_summaries(rows) -> pd.DataFrame:
    """Concatenate summary rows (DataFrames with :data:`SUMMARY_COLUMNS`); counts as nullable ints."""
    frame = pd.concat(list(rows), ignore_index=True)[list(SUMMARY_COLUMNS)]
    for column in SUMMARY_COLUMNS:
        if column in ("rows_read", "malformed", "kept", "paper_count") or column.startswith(
            ("malformed_", "duplicates_")
        ):
            frame[column] = frame[column].astype("Int64")
    frame["relative_difference"] = frame["relative_difference"].astype(float)
    return frame
