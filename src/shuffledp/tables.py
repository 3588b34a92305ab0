"""Writing result tables (CSV + LaTeX + Markdown) and judging paper values against ours.

A paper value is transcribed as the string printed in the paper (e.g. "2.08E-20", "0.97", "12E-4").
:func:`printed_precision_verdict` says whether our value rounds to it at the printed precision:
|ours - paper| <= half a unit in the last printed digit.
"""

from __future__ import annotations

import math
import re
from decimal import Decimal, InvalidOperation

import pandas as pd

from shuffledp.io import atomic_write_text as _atomic_write_text  # the one atomic writer

__all__ = [
    "REPRODUCED",
    "NOT_REPRODUCED",
    "NOT_REPRODUCIBLE",
    "COMPARISON_COLUMNS",
    "CURVE_VERDICT_COLUMNS",
    "not_reproducible_row",
    "parse_printed",
    "printed_half_unit",
    "printed_precision_verdict",
    "write_table",
    "format_number",
]

REPRODUCED = "reproduced"
NOT_REPRODUCED = "not reproduced"
NOT_REPRODUCIBLE = "not reproducible as specified"

#: tidy columns of every ``*_comparison.csv`` (read by the reproduction report)
COMPARISON_COLUMNS = [
    "table",  # "II", "IV", "V", "VI", "text" ...
    "block",  # sub-table, e.g. "n=100" or "varying epsilon_local"
    "row",  # row label as in the paper
    "column",  # column label as in the paper
    "paper",  # value as printed (string)
    "ours_as_printed",  # our evaluation of the paper's formula as printed (NaN if not applicable)
    "ours_exact",  # our corrected / exact value (NaN if not applicable)
    "relative_difference",  # (ours_as_printed - paper) / paper, or vs ours_exact where no printed formula
    "verdict",  # REPRODUCED / NOT_REPRODUCED / NOT_REPRODUCIBLE
    "note",  # the reason, in words
]

#: columns of every per-curve verdict table (Koskela's curves, the shuffled Gaussian's Figure 4): one curve
#: of a paper's figure judged against ours, read by the reproduction report with one reader
CURVE_VERDICT_COLUMNS = [
    "figure",
    "curve",
    "accountant",
    "compositions",
    "points",
    "compared",
    "max_relative_difference",
    "median_relative_difference",
    "tolerance",
    "verdict",  # REPRODUCED / NOT_REPRODUCED / NOT_REPRODUCIBLE
    "note",
    "known_cause",
    "guarantee",
]


def not_reproducible_row(
    *,
    figure: int,
    curve: str,
    accountant: str,
    compositions: int | str,
    note: str,
    known_cause: str,
    guarantee: str,
) -> dict:
    """A row of a curve-verdict table (:data:`CURVE_VERDICT_COLUMNS`) for a curve that cannot be compared:
    no point compared, no difference, verdict :data:`NOT_REPRODUCIBLE`.

    Args:
        figure: the paper's figure number.
        curve: the curve's label.
        accountant: what computed our curve (an accountant's or an estimator's name).
        compositions: the number of rounds composed, or "" where it does not apply.
        note: why the curve cannot be compared, in words.
        known_cause: the known cause of the difference.
        guarantee: what the curve is (a guarantee or an estimate).

    Returns:
        The row, keyed by :data:`CURVE_VERDICT_COLUMNS` in their order.
    """
    return {
        "figure": figure,
        "curve": curve,
        "accountant": accountant,
        "compositions": compositions,
        "points": 0,
        "compared": 0,
        "max_relative_difference": math.nan,
        "median_relative_difference": math.nan,
        "tolerance": math.nan,
        "verdict": NOT_REPRODUCIBLE,
        "note": note,
        "known_cause": known_cause,
        "guarantee": guarantee,
    }


_NUMBER = re.compile(r"^\s*([-+]?\d*\.?\d*)(?:[eE]([-+]?\d+))?\s*$")


def parse_printed(text: str) -> Decimal:
    """Parse a number as printed in the paper ("2.08E-20", "6.580E-7", "12E-4", "0")."""
    try:
        return Decimal(str(text).strip().replace("E", "e"))
    except InvalidOperation as error:
        raise ValueError(f"`paper value` must be a number as printed; got {text!r}.") from error


def printed_half_unit(text: str) -> float:
    """Half a unit in the last printed digit of ``text`` (0 for an exact printed zero)."""
    value = parse_printed(text)
    if value == 0 and "e" not in str(text).lower() and "." not in str(text):
        return 0.0
    exponent = value.as_tuple().exponent
    return 0.5 * 10.0 ** int(exponent)


def printed_precision_verdict(paper_text: str, ours: float) -> tuple[str, str]:
    """(verdict, note): is ``ours`` equal to ``paper_text`` at the paper's printed precision?"""
    paper = float(parse_printed(paper_text))
    if ours is None or (isinstance(ours, float) and math.isnan(ours)):
        return NOT_REPRODUCIBLE, "no value computed"
    half = printed_half_unit(paper_text)
    if half == 0.0:
        ok = ours == 0.0
        note = "paper prints exactly 0" + ("" if ok else f"; ours is {ours:.3g}")
        return (REPRODUCED if ok else NOT_REPRODUCED), note
    ok = abs(ours - paper) <= half * (1 + 1e-9)
    if ok:
        return REPRODUCED, f"rounds to the printed {paper_text}"
    ratio = ours / paper if paper else math.inf
    return NOT_REPRODUCED, f"ours {ours:.4g} vs printed {paper_text} (ratio {ratio:.3g})"


def format_number(value, *, missing: str = "") -> str:
    """Short display form of a table value: 4 significant digits, scientific when tiny or huge.

    Non-numbers are returned as text; NaN and None become ``missing``.
    """
    if value is None:
        return missing
    try:
        number = float(value)
    except (TypeError, ValueError):
        return str(value)
    if math.isnan(number):
        return missing
    if number == 0.0:
        return "0"
    if abs(number) < 1e-3 or abs(number) >= 1e5:
        return f"{number:.3e}"
    return f"{number:.4g}"


def _format_cell(value) -> str:
    if isinstance(value, float):
        return format_number(value)
    return str(value)


def write_table(frame: pd.DataFrame, *, csv=None, latex=None, markdown=None, caption: str = "") -> None:
    """Write ``frame`` as CSV (full precision), LaTeX and Markdown (3 significant digits), atomically."""
    if csv is not None:
        _atomic_write_text(csv, frame.to_csv(index=False))
    shown = frame.map(_format_cell)
    if latex is not None:
        columns = "l" * len(shown.columns)
        escape = lambda s: str(s).replace("_", r"\_").replace("%", r"\%").replace("&", r"\&")
        lines = [r"\begin{table}[ht]", r"\centering"]
        if caption:
            lines.append(rf"\caption{{{escape(caption)}}}")
        lines += [rf"\begin{{tabular}}{{{columns}}}", r"\hline"]
        lines.append(" & ".join(escape(c) for c in shown.columns) + r" \\ \hline")
        lines += [" & ".join(escape(v) for v in row) + r" \\" for row in shown.itertuples(index=False)]
        lines += [r"\hline", r"\end{tabular}", r"\end{table}", ""]
        _atomic_write_text(latex, "\n".join(lines))
    if markdown is not None:
        header = "| " + " | ".join(map(str, shown.columns)) + " |"
        rule = "|" + "|".join("---" for _ in shown.columns) + "|"
        body = ["| " + " | ".join(map(str, row)) + " |" for row in shown.itertuples(index=False)]
        text = (f"{caption}\n\n" if caption else "") + "\n".join([header, rule, *body]) + "\n"
        _atomic_write_text(markdown, text)
