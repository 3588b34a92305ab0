"""Verdicts in levels, and one verdict line per seed paper.

Room: frames in, frames and short text out; computes no privacy quantity. A comparison cell of the
paper (rows of :func:`shuffledp.report.read.read_comparisons`) gets one *level*:

* ``reproduced`` -- the stage's verdict (our value rounds to the printed one, or a Monte-Carlo draw lies
  inside our single-draw interval);
* ``reproduced (the printed value; not a guarantee)`` -- a cell of the paper's own δ (Table IV, Table II's
  "Our δ") that our evaluation of eq. (6) *as printed* rounds to where eq. (6) is not the exact single-bin
  δ (more than 1 % apart): the paper's number is recomputed, but that number is not a DP guarantee
  (eq. (6) understates the exact δ of its own pair of datasets, itself a lower bound on the worst case),
  so it is a level of its own, never counted as reproduced. Where eq. (6) equals the exact δ (both 0
  at ε ≥ ε0, say) the cell stays *reproduced*;
* ``matches if truncated`` -- it does not round to the printed value, but cutting our value after the
  printed last digit gives the printed value (the authors may have truncated instead of rounding);
* ``within 1 %`` -- neither, but within 1 % of the printed value;
* ``off`` -- further off (:func:`how_far` says by how much);
* ``not comparable`` -- the paper's cell describes nothing we can compute the same way (a Table VI cell
  without any check-in under our numbering: ``x0_count`` = 0);
* ``not reproducible as specified`` -- the paper does not give what is needed.

A row printed in two blocks of one table (Table IV prints its base setting in each of its three
blocks) is counted once (:func:`unique_cells`). Koskela, Balle and Girgis et al. are counted from the
``verdict`` column of their verdict tables, whatever rows those hold (:func:`seed_counts`): a row that
is "not reproduced" but carries a ``known_cause`` is *explained*.
"""

from __future__ import annotations

import math
import re
from decimal import Decimal, InvalidOperation

import numpy as np
import pandas as pd

from shuffledp.accounting import BoundKind, accountant_class
from shuffledp.tables import NOT_REPRODUCED, NOT_REPRODUCIBLE, REPRODUCED

__all__ = [
    "LEVELS",
    "PRINTED_ONLY",
    "TRUNCATED",
    "WITHIN",
    "OFF",
    "NOT_COMPARABLE",
    "EXPLAINED",
    "truncates_to",
    "compared_value",
    "cell_level",
    "how_far",
    "unique_cells",
    "graded_cells",
    "level_counts",
    "seed_counts",
    "counts_phrase",
    "own_delta_cells",
    "is_own_delta",
    "is_guarantee",
    "is_tight_reference",
]

#: a cell of the paper's own δ that reproduces eq. (6) as printed: the printed number, not a guarantee
PRINTED_ONLY = "reproduced (the printed value; not a guarantee)"
TRUNCATED = "matches if truncated"
WITHIN = "within 1 %"
OFF = "off"
NOT_COMPARABLE = "not comparable"
EXPLAINED = "explained"
#: the levels, best first
LEVELS = (REPRODUCED, PRINTED_ONLY, TRUNCATED, WITHIN, OFF, NOT_COMPARABLE, NOT_REPRODUCIBLE)
#: relative difference called "within 1 %"
WITHIN_TOLERANCE = 0.01


def truncates_to(printed: str, ours: float) -> bool:
    """True when ``ours`` cut after the last printed digit of ``printed`` equals it ("2.08E-20" and
    2.0899e-20); False for a printed 0, a negative or missing value, or text that is not a number."""
    try:
        paper = Decimal(str(printed).strip().replace("E", "e"))
    except InvalidOperation:
        return False
    if ours is None or not math.isfinite(float(ours)) or paper <= 0 or float(ours) <= 0:
        return False
    exponent = paper.as_tuple().exponent
    if not isinstance(exponent, int):  # "Infinity" or "NaN" printed: no last digit
        return False
    unit = Decimal(1).scaleb(exponent)
    digits = Decimal(repr(float(ours))) / unit
    return int(digits) == int(paper / unit)  # int() cuts toward zero: truncation


def compared_value(row) -> float:
    """The value the stage's verdict compared with the paper: the paper's formula as printed where
    there is one, else our exact value."""
    printed = pd.to_numeric(pd.Series([row.get("ours_as_printed")]), errors="coerce").iloc[0]
    exact = pd.to_numeric(pd.Series([row.get("ours_exact")]), errors="coerce").iloc[0]
    return float(printed) if pd.notna(printed) else float(exact)


def _paper_value(text) -> float:
    try:
        return float(Decimal(str(text).strip().replace("E", "e")))
    except (InvalidOperation, ValueError):
        return math.nan


def _interval_test(row) -> bool:
    return pd.notna(pd.to_numeric(pd.Series([row.get("interval_high")]), errors="coerce").iloc[0])


def is_own_delta(table, column) -> bool:
    """True for a cell of the paper's own δ: every Table IV cell and Table II's "Our δ" column (not its
    columns [10]-[12], the prior bounds' rates)."""
    table, column = str(table), str(column)
    return table == "IV" or (table == "II" and re.fullmatch(r"\[\d+\]", column) is None)


def _reproduces_eq6(row) -> bool:
    """True when the row is a cell of the paper's own δ compared with eq. (6) as printed, and eq. (6) is not
    the exact single-bin δ there (they differ by more than :data:`WITHIN_TOLERANCE`; both 0 is the same)."""
    printed = pd.to_numeric(pd.Series([row.get("ours_as_printed")]), errors="coerce").iloc[0]
    exact = pd.to_numeric(pd.Series([row.get("ours_exact")]), errors="coerce").iloc[0]
    if pd.isna(printed) or not is_own_delta(row.get("table"), row.get("column")):
        return False
    if pd.isna(exact):
        return True
    return bool(
        abs(float(exact) - float(printed)) > WITHIN_TOLERANCE * max(abs(float(exact)), abs(float(printed)))
    )


def cell_level(row) -> str:
    """The level of one comparison row (a mapping or a pandas row), see the module text."""
    count = pd.to_numeric(pd.Series([row.get("x0_count")]), errors="coerce").iloc[0]
    if pd.notna(count) and count == 0:
        return NOT_COMPARABLE
    if row["verdict"] not in (REPRODUCED, NOT_REPRODUCED):  # not reproducible as specified, or a row the
        return str(row["verdict"])  # reader marked invalid: kept as it is, counted apart
    if row["verdict"] == REPRODUCED:
        return PRINTED_ONLY if _reproduces_eq6(row) else REPRODUCED
    if _interval_test(row):  # a single Monte-Carlo draw: no printed precision to truncate at
        return OFF
    ours, paper = compared_value(row), _paper_value(row["paper"])
    if truncates_to(row["paper"], ours):
        return TRUNCATED
    if paper != 0 and math.isfinite(ours) and abs(ours - paper) <= WITHIN_TOLERANCE * abs(paper):
        return WITHIN
    return OFF


def how_far(row) -> str:
    """How far our compared value is from the printed one: a percentage up to a factor 10, orders of
    magnitude beyond; for a single draw, how far outside the interval."""
    ours, paper = compared_value(row), _paper_value(row["paper"])
    if _interval_test(row):
        low, high = float(row["interval_low"]), float(row["interval_high"])
        if paper > high > 0:
            return f"printed draw {paper / high:.3g}× above our 95% interval"
        if 0 < paper < low:
            return f"printed draw {low / paper:.3g}× below our 95% interval"
        return "printed draw outside our 95% interval"
    if not (math.isfinite(ours) and math.isfinite(paper)):
        return "no value to compare"
    if paper == 0:
        return f"printed 0, ours {ours:.3g}"
    if ours <= 0:
        return f"ours {ours:.3g}, printed {row['paper']}"
    ratio = ours / paper
    if 0.1 <= ratio <= 10:
        return f"{ratio - 1:+.1%}"
    return f"10^{math.log10(ratio):+.1f}"


def _row_signature(group: pd.DataFrame) -> tuple:
    values = group[["paper", "ours_as_printed", "ours_exact"]].astype(str)
    return tuple(map(tuple, values.to_numpy()))


def unique_cells(rows: pd.DataFrame) -> pd.DataFrame:
    """The comparison rows with a printed row that the paper repeats in another block kept once (the
    first): Table IV prints its base setting (ε0 = 2, n = 100, k = 10) as a row of each of its three
    blocks. Two rows of one table are the same when they print the same values in the same order and we
    compute the same values for them; a row printing only zeros is never merged (zeros of different
    settings look alike). Then an exact duplicate cell (same table, row, column, value) is dropped."""
    if rows.empty:
        return rows
    keep: list = []
    seen: set = set()
    for (table, _block, _row), group in rows.groupby(["table", "block", "row"], sort=False):
        signature = (table, _row_signature(group))
        printed = pd.to_numeric(group["paper"].map(_paper_value), errors="coerce")
        if signature in seen and (printed.fillna(0) != 0).any():
            continue
        seen.add(signature)
        keep.extend(group.index)
    return rows.loc[sorted(keep)].drop_duplicates(
        subset=["table", "block", "row", "column", "paper"], keep="first"
    )


def graded_cells(rows: pd.DataFrame) -> pd.DataFrame:
    """Unique cells with two more columns: ``level`` and ``how_far`` (empty where reproduced)."""
    cells = unique_cells(rows).copy()
    if len(cells):  # the paper's order: Tables II, IV, V, VI, then the text (stable inside a table)
        order = {t: i for i, t in enumerate(("I", "II", "III", "IV", "V", "VI"))}
        cells = cells.iloc[
            sorted(range(len(cells)), key=lambda i: order.get(str(cells["table"].iloc[i]), len(order)))
        ]
    if cells.empty:
        return cells.assign(level=pd.Series(dtype=str), how_far=pd.Series(dtype=str))
    records = cells.to_dict("records")
    cells["level"] = [cell_level(r) for r in records]
    cells["how_far"] = [
        how_far(r) if level in (OFF, WITHIN, TRUNCATED) else "" for r, level in zip(records, cells["level"])
    ]
    return cells


def level_counts(cells: pd.DataFrame) -> pd.DataFrame:
    """Per table: unique cells and the count of each level (columns: table, cells, *LEVELS)."""
    levels = [
        *LEVELS,
        *sorted(set(cells["level"]) - set(LEVELS)),
    ]  # e.g. "invalid row", counted, never dropped
    records = []
    for table, group in cells.groupby("table", sort=False):
        counts = group["level"].value_counts()
        records.append({"table": table, "cells": len(group), **{v: int(counts.get(v, 0)) for v in levels}})
    return pd.DataFrame(records, columns=["table", "cells", *levels])


def seed_counts(frame: pd.DataFrame | None) -> dict[str, int]:
    """Rows of a seed paper's verdict table by verdict, counted from its ``verdict`` column; a row that
    is "not reproduced" but has a ``known_cause`` counts as :data:`EXPLAINED` (a row "not reproducible
    as specified" keeps that verdict, cause or not). Empty for no frame."""
    if frame is None or "verdict" not in frame.columns or frame.empty:
        return {}
    verdict = frame["verdict"].fillna("").astype(str)
    cause = frame["known_cause"] if "known_cause" in frame.columns else pd.Series("", index=frame.index)
    has_cause = cause.fillna("").astype(str).str.strip().ne("")
    label = np.where((verdict == NOT_REPRODUCED) & has_cause, EXPLAINED, verdict)
    counts = pd.Series(label).value_counts()
    order = [REPRODUCED, EXPLAINED] + sorted(v for v in counts.index if v not in (REPRODUCED, EXPLAINED))
    return {v: int(counts[v]) for v in order if v in counts.index}


def counts_phrase(counts: dict[str, int]) -> str:
    """'3 reproduced, 1 explained, 2 not reproduced' (zero counts left out)."""
    return ", ".join(f"{count} {label}" for label, count in counts.items() if count)


def own_delta_cells(rows: pd.DataFrame) -> pd.DataFrame:
    """The unique cells of the paper's own δ: every Table IV cell and Table II's "Our δ" column (not its
    columns [10]-[12], the prior bounds' rates); Monte-Carlo tables and the text are left out."""
    if rows.empty:
        return rows
    own = [is_own_delta(t, c) for t, c in zip(rows["table"], rows["column"])]
    return unique_cells(rows[own])


def is_guarantee(accountant) -> bool:
    """True when the registry's accountant ``accountant`` is an upper bound (a guarantee for every dataset
    in its scope); False for a lower bound, a formula as printed, a rate or an unknown name."""
    try:
        return accountant_class(str(accountant)).kind is BoundKind.UPPER
    except (KeyError, ValueError):
        return False


def is_tight_reference(label) -> bool:
    """True for a Balle reference curve that is the worst case itself: the one whose label starts "worst
    case" (``worst-case-upper`` at k = 2, the certified maximum over every dataset); the others
    (``feldman-numerical``, a generic upper bound; ``worst-case-upper`` at k ≥ 4, the weak adversary's bound)
    are upper bounds that need not be tight."""
    return str(label).strip().lower().startswith("worst case")
