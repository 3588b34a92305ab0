"""Judging the paper's claims: verdict strength of single-draw comparisons, empty cells, the
Gaussian-calibration checks, the data counts and the errata list.

Room: takes frames from :mod:`shuffledp.report.read` and returns text or :mod:`blocks
<shuffledp.report.blocks>`; computes no privacy or utility quantity itself.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from shuffledp.experiments.utility_tables import STRENGTH_FACTOR
from shuffledp.report.blocks import BulletList, Heading, Table
from shuffledp.report.read import VERDICTS, ReportInputs, first_column, format_cell
from shuffledp.report.verdicts import NOT_COMPARABLE, cell_level, own_delta_cells, unique_cells
from shuffledp.tables import REPRODUCED


def _interval_rows(rows: pd.DataFrame) -> pd.DataFrame:
    """Comparison rows whose verdict is a single-draw interval test (they carry an interval)."""
    if rows.empty or "interval_high" not in rows.columns:
        return rows.iloc[0:0]
    return rows[pd.to_numeric(rows["interval_high"], errors="coerce").notna()]


def _width(low: float, high: float) -> str:
    if not (low > 0):
        return "from 0"
    return f"×{format_cell(high / low)} ({math.log10(high / low):.1f} decades)"


def strength_table(rows: pd.DataFrame) -> Table | None:
    """Per single-draw interval verdict: the interval, its width and the probability that a value
    3× larger or smaller than ours would still be called reproduced (None if no such row)."""
    tests = _interval_rows(rows)
    if tests.empty:
        return None
    factor = f"{STRENGTH_FACTOR:g}×"
    columns = [
        "row",
        "column",
        "verdict",
        "95% single-draw interval",
        "width",
        f"P(pass) if {factor} larger",
        f"P(pass) if {factor} smaller",
    ]
    body = [
        [
            r.row,
            r.column,
            r.verdict,
            f"[{format_cell(r.interval_low)}, {format_cell(r.interval_high)}]",
            _width(float(r.interval_low), float(r.interval_high)),
            f"{float(r.p_pass_3x_larger):.2f}",
            f"{float(r.p_pass_3x_smaller):.2f}",
        ]
        for r in tests.itertuples(index=False)
    ]
    return Table(columns, body)


def read_verdict_strength(rows: pd.DataFrame) -> str:
    """How weak the single-draw verdicts are: interval widths and the pass probability of a value 3× off.

    ``rows``: comparison rows (with :data:`shuffledp.experiments.utility_tables.STRENGTH_COLUMNS`); only the rows
    judged by a single-draw interval are read.
    """
    tests = _interval_rows(unique_cells(rows) if len(rows) else rows)
    if tests.empty:
        return ""
    low, high = tests["interval_low"].astype(float), tests["interval_high"].astype(float)
    positive = low > 0
    decades = np.log10(high[positive] / low[positive])
    larger, smaller = tests["p_pass_3x_larger"].astype(float), tests["p_pass_3x_smaller"].astype(float)
    levels = pd.Series([cell_level(r) for r in tests.to_dict("records")], index=tests.index, dtype=object)
    reproduced = int((levels == REPRODUCED).sum())
    apart = int((levels == NOT_COMPARABLE).sum())
    factor = f"{STRENGTH_FACTOR:g}×"
    text = (
        f"{len(tests)} cells (Tables V, VI and the text's TV values; {reproduced} of them “reproduced”"
        + (f", {apart} “{NOT_COMPARABLE}” though their draw passed" if apart else "")
        + ") compare one printed Monte-Carlo draw with our central 95% interval of a single draw. Such a test "
        "is weak: "
    )
    if len(decades):
        text += (
            f"the intervals span {decades.min():.1f} to {decades.max():.1f} decades of the value (median "
            f"{float(np.median(decades)):.1f})"
        )
        if (~positive).any():
            text += f", and {int((~positive).sum())} start at 0"
        text += "; "
    else:
        text += f"all {len(tests)} intervals start at 0; "
    text += (
        f"a value {factor} ours would still be called reproduced with probability {larger.min():.2f} to "
        f"{larger.max():.2f} (median {float(np.median(larger)):.2f}), one {factor} smaller with "
        f"{smaller.min():.2f} to {smaller.max():.2f} (median {float(np.median(smaller)):.2f}). "
        "A “reproduced” here says the printed value is plausible as one draw, not that it agrees with ours "
        "to any printed precision; the per-cell interval, width and pass probabilities are listed under each table."
    )
    return text


def read_empty_cells(rows: pd.DataFrame) -> str:
    """Which Table VI cells x0 hold no check-in under our numbering (``x0_count`` = 0)."""
    if rows.empty or "x0_count" not in rows.columns:
        return ""
    counts = pd.to_numeric(rows["x0_count"], errors="coerce")
    empty = rows[counts == 0]
    if empty.empty:
        return ""
    parts = []
    for block, group in empty.groupby("block", sort=False):
        cells = list(dict.fromkeys(str(r).removeprefix("x0=") for r in group["row"]))
        parts.append(f"{block}: x0 = {', '.join(cells)}")
    return (
        "Cells without any check-in under our row-major numbering (" + "; ".join(parts) + "): there is no "
        "individual at x0, its true probability is 0 and the as-printed δ is that of a lone holder (n_x0 = 0). The "
        "paper speaks of the individual at x0, so its cells of these numbers presumably held check-ins: its cell "
        "numbering (not stated) probably differs from ours, and these rows compare different cells."
    )


#: relative gap between our sigma and diffprivlib's that the report calls a difference
_SIGMA_REPORT_TOLERANCE = 0.01


def read_gaussian_checks(frames: Sequence[pd.DataFrame]) -> str:
    """Facts from rows carrying ``sigma`` (ours, used) and ``sigma_diffprivlib``.

    Counts the calibrations where diffprivlib's σ is more than 1 % below ours (under-noised) or
    above ours (over-noised), with the δ range of each, and the σ ratio range.
    """
    rows = [f for f in frames if {"sigma", "sigma_diffprivlib"} <= set(f.columns)]
    if not rows:
        return "No calibration with both σ values is present in this run."
    table = pd.concat(rows, ignore_index=True)
    ratio = table["sigma"] / table["sigma_diffprivlib"]  # > 1: diffprivlib adds less noise than needed
    delta = first_column(table, ("delta_used", "delta"))
    under = ratio > 1 + _SIGMA_REPORT_TOLERANCE
    over = ratio < 1 - _SIGMA_REPORT_TOLERANCE
    parts = [f"Of {len(table)} Gaussian calibrations in this run's utility data"]

    def describe(mask, words) -> str:
        text = f"diffprivlib's σ is {words} in {int(mask.sum())}"
        if mask.any():
            text += f" (σ ours / σ diffprivlib {format_cell(ratio[mask].min())} to {format_cell(ratio[mask].max())}"
            if delta:
                text += f", at δ {format_cell(table.loc[mask, delta].min())} to {format_cell(table.loc[mask, delta].max())}"
            text += ")"
        return text

    parts.append(describe(under, "more than 1% below ours (under-noised)"))
    parts.append(describe(over, "more than 1% above ours"))
    within = ~(under | over)
    if delta and within.any():
        parts.append(
            f"elsewhere they agree within 1% (δ {format_cell(table.loc[within, delta].min())} to "
            f"{format_cell(table.loc[within, delta].max())})"
        )
    return parts[0] + ", " + "; ".join(parts[1:]) + "."


def read_data_counts(summary: pd.DataFrame | None, cell_counts: Mapping[str, pd.DataFrame]) -> str:
    """Facts from the data stage: rows read and malformed per source, kept check-ins per region vs the
    paper's count (``results/data/summary.csv``), and occupied cells (``cell_counts.csv``)."""
    sentences = []
    if summary is not None and len(summary) and "kept" in summary.columns:
        level = summary["level"] if "level" in summary.columns else pd.Series("region", index=summary.index)
        name = first_column(summary, ("label", "name", "region"))
        for _, row in summary[level == "source"].iterrows():
            malformed = row.get("malformed")
            repeats = sum(
                int(row[c])
                for c in ("duplicates_in_file", "duplicates_of_earlier_source")
                if pd.notna(row.get(c))
            )
            dropped = row.get("duplicates_dropped")
            duplicates = (
                f"{repeats:,} exact duplicate rows ({'dropped' if pd.notna(dropped) and int(dropped) else 'kept'}), "
                if repeats
                else ""
            )
            sentences.append(
                f"Source {row[name]}: {int(row['rows_read']):,} rows read, "
                f"{int(malformed) if pd.notna(malformed) else 0:,} malformed, {duplicates}{int(row['kept']):,} kept."
            )
        for _, row in summary[level == "region"].iterrows():
            text = f"{row[name]}: {int(row['kept']):,} check-ins in the bounding box"
            paper = row.get("paper_count")
            if paper is not None and pd.notna(paper) and float(paper) > 0:
                difference = (float(row["kept"]) - float(paper)) / float(paper)
                text += f" vs {int(paper):,} in the paper ({difference:+.1%})"
            sentences.append(text + ".")
    for region, counts in cell_counts.items():
        if "count" in counts.columns and len(counts):
            occupied = int((counts["count"] > 0).sum())
            top = counts["count"].max() / max(1, counts["count"].sum())
            sentences.append(
                f"{region}: {occupied} of {len(counts)} cells hold at least one check-in; "
                f"the fullest cell holds {top:.1%} of the region's check-ins."
            )
    return " ".join(sentences) if sentences else "The data stage's summary is absent from this run."


def errata(
    inputs: ReportInputs, rows: pd.DataFrame, data_summary: pd.DataFrame | None, gaussian: list
) -> list:
    """The Errata: what the paper prints wrong, each with the counts of the cells it affects (``rows``: the
    comparison rows, or the graded unique cells, whose levels are then counted)."""
    items = []

    def counts(mask) -> str:
        subset = rows[mask]
        if subset.empty:
            return "no comparison rows in this run"
        if "level" in subset.columns:  # graded cells (shuffledp.report.verdicts.graded_cells)
            return ", ".join(f"{n} {v}" for v, n in subset["level"].value_counts().items())
        c = subset["verdict"].value_counts()
        return ", ".join(f"{int(c.get(v, 0))} {v}" for v in VERDICTS)

    table = rows["table"] if len(rows) else pd.Series(dtype=str)
    column = rows["column"] if len(rows) else pd.Series(dtype=str)
    block = rows["block"] if len(rows) else pd.Series(dtype=str)
    # 1. v_s
    vs = "**Theorem IV.1's v_s.** The printed closed form multiplies by (s−r)/(n−n_x0) but keeps C(n−1−n_x0, s−1−r) where the identity needs C(n−n_x0, s−r); it is not the log-ratio of Definition IV.1 (the same term is in the FPS version's eq. (11)). "
    # the paper's own delta (Table IV, Table II "Our delta"), each printed cell once
    own = own_delta_cells(rows)
    both = own[own["ours_as_printed"].notna() & own["ours_exact"].notna()] if len(own) else own
    positive = both[(both["ours_as_printed"] > 0) & (both["ours_exact"] > 0)] if len(both) else both
    if len(positive):
        ratio = np.log10(positive["ours_as_printed"].astype(float) / positive["ours_exact"].astype(float))
        vs += (
            f"Over {len(positive)} cells of the paper's own δ (Table IV, Table II \u201cOur δ\u201d), "
            f"log10(δ as printed / exact δ) ranges from {ratio.min():.2f} to {ratio.max():.2f}."
        )
    else:
        vs += "No cell of this run has both values."
    items.append(vs)
    # 2. Table II rates
    rate = (table == "II") & column.str.contains(
        r"\[1[012]\]|rate|Erlingsson|Balle|Feldman", case=False, regex=True
    )
    items.append(
        "**Table II's columns [11], [10], [12]** are asymptotic rates with constant 1 (not the cited bounds), "
        f"and the n = 1,000 block uses ε0 = 0.5 where the caption says 0.49. Verdicts: {counts(rate)}. "
        f"Its \u201cOur δ\u201d column against eq. (6) as printed: {counts((table == 'II') & ~rate)}."
    )
    # 3. Table IV varying n
    varying_n = (table == "IV") & block.str.lower().str.contains(r"(?:^|[^a-z_])n(?:$|[^a-z_])", regex=True)
    items.append(
        "**Table IV's \u201cvarying n\u201d block** uses n_x0 = 0.8·n, although the text says n_x0 = 80. "
        f"Verdicts in that block: {counts(varying_n)}."
    )
    # 4. Gaussian
    items.append(
        "**Gaussian baseline at tiny δ.** diffprivlib's GaussianAnalytic is miscalibrated at very small δ; "
        "the utility stage checks its σ against an independent log-space calibration and "
        "uses the correct σ. " + read_gaussian_checks(gaussian or [])
    )
    # 5. counts
    items.append(
        "**Data counts.** " + read_data_counts(data_summary, {})
        if data_summary is not None
        else "**Data counts.** The data stage's summary is absent from this run."
    )
    return [Heading(2, "Errata", "errata"), BulletList(items)]
