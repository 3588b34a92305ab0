"""The report's opening answer: a few one-sentence findings, each with the numbers that back it and a
link to the section that holds them ("the report leads with the answer").

Room: functions ``finding_<topic>(frame | None) -> str`` on stage CSVs already read into frames (the
comparison rows of :func:`shuffledp.report.read.read_comparisons`, ``bracket.csv``,
``equal_guarantee_ratio.csv``, ``phase_diagram.csv`` / ``phase_diagram_boundary.csv``,
``koskela_verdicts.csv``, ``results/data/summary.csv``). Every number is computed from its frame;
a missing frame (``None``) or one without the needed columns gives a sentence saying what is
missing, never an exception. :func:`findings` returns the bullets in order; the anchors are those
:mod:`shuffledp.report.build` gives its headings.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import cast

import numpy as np
import pandas as pd

from shuffledp.experiments.guarantees import (  # the bracket goals, defined once (also drawn in the figure)
    BRACKET_BLANKET_USERS,
    BRACKET_GOAL,
    BRACKET_GOAL_BLANKET,
    BRACKET_GOAL_LARGE,
    BRACKET_LARGE_EPS0,
)
from shuffledp.report.beyond import rounds_lines
from shuffledp.report.read import format_cell
from shuffledp.report.readings import NO_AMPLIFICATION_TOLERANCE, amplified
from shuffledp.report.verdicts import (
    LEVELS,
    counts_phrase,
    is_guarantee,
    is_tight_reference,
    own_delta_cells,
    seed_counts,
)

__all__ = [
    "extra_anchor",
    "missing",
    "finding_eq6",
    "bracket_goals",
    "finding_bracket",
    "NO_AMPLIFICATION_TOLERANCE",
    "amplified",
    "bracket_grid",
    "finding_equal_guarantee",
    "finding_phase_diagram",
    "finding_rounds",
    "finding_koskela",
    "OURS_ONLY",
    "below_certified_lower",
    "lower_bound_sentence",
    "file_added",
    "finding_data",
    "GRID_PROFILES",
    "opening_data",
    "grid_summary",
    "finding_balle",
    "balle_looseness",
    "finding_balle_claims",
    "finding_delta_floor",
    "finding_geometric",
    "verdict_lines",
    "findings",
]


def extra_anchor(name: str) -> str:
    """The anchor of the section beyond the paper called ``name`` (as :mod:`~shuffledp.report.build` writes it)."""
    return f"extra-{name.replace(' ', '-')}"


def missing(what: str, path: str, anchor: str) -> str:
    """The sentence of a finding whose input is absent or unreadable."""
    return f"{what}: not available in this run (`{path}` is missing or lacks the needed columns; [section](#{anchor}))."


def _table_anchor(table: str) -> str:
    """The anchor of a comparison table's section; rows of the paper's text ("text") are in "text-values"
    (:mod:`~shuffledp.report.build`), not "table-text" (found by tools/check_report_browser.py)."""
    return "text-values" if table.lower() == "text" else f"table-{table.lower()}"


def _lacks(frame: pd.DataFrame, columns: Sequence[str]) -> bool:
    return not all(c in frame.columns for c in columns) or frame.empty


def _table_list(tables: Sequence[str]) -> str:
    """'Table II', 'Tables II, IV and VI and the text': the paper's tables named in one phrase."""
    named = [t for t in tables if t != "text"]
    parts = []
    if named:
        listed = named[0] if len(named) == 1 else f"{', '.join(named[:-1])} and {named[-1]}"
        parts.append(f"Table{'s' if len(named) > 1 else ''} {listed}")
    if "text" in tables:
        parts.append("the text")
    return " and ".join(parts)


def finding_eq6(rows: pd.DataFrame | None) -> str:
    """By how many orders of magnitude δ from eq. (6) as printed understates the exact single-bin δ, over
    the unique cells of the paper's own δ (:func:`~shuffledp.report.verdicts.own_delta_cells`: Table II's
    "Our δ", Table IV) where eq. (6) gives a positive value; the cells where it gives 0 are counted apart."""
    what = "How wrong eq. (6) as printed is"
    if rows is None or _lacks(rows, ("table", "column", "paper", "ours_as_printed", "ours_exact")):
        return missing(what, "results/accounting/table2_comparison.csv, table4_comparison.csv", "table-iv")
    own = own_delta_cells(rows)
    printed = pd.to_numeric(own["ours_as_printed"], errors="coerce")
    exact = pd.to_numeric(own["ours_exact"], errors="coerce")
    both = (printed > 0) & (exact > 0)
    if not both.any():
        return missing(what, "results/accounting/table2_comparison.csv, table4_comparison.csv", "table-iv")
    # a ufunc of a Series is a Series (numpy's stubs type the result as an array)
    orders = cast(pd.Series, np.log10(exact[both] / printed[both]))
    zero = int(((printed == 0) & (exact > 0)).sum())
    worst = own.loc[orders.idxmax()]
    tables = sorted(own["table"].astype(str).unique())
    links = ", ".join(f"[Table {t}](#{_table_anchor(t)})" for t in tables)
    return (
        f"Eq. (6) as printed understates the exact single-bin δ in {int((orders > 0).sum())} of {int(both.sum())} "
        f"cells of {_table_list(tables)} where it is positive (median {float(orders.median()):.1f}, up to "
        f"{float(orders.max()):.1f} orders of magnitude: Table {worst['table']}, {worst['block']}, {worst['row']}, "
        f"{worst['column']}, where eq. (6) gives {format_cell(float(printed[orders.idxmax()]))}, the exact δ is "
        f"{format_cell(float(exact[orders.idxmax()]))} and the paper printed {worst['paper']})"
        + (
            f"; in {zero} more cell{'s' if zero > 1 else ''} it gives δ = 0 where the exact δ is positive"
            if zero
            else ""
        )
        + f" ({links})."
    )


def _bracket_goal(frame: pd.DataFrame, mask, limit: float, label: str, extra=None) -> str:
    """ "label in m of t settings" plus the widest miss (ratio and setting), for the rows ``mask``."""
    rows = frame[mask]
    if rows.empty:
        return f"{label}: no setting"
    ratio = pd.to_numeric(rows["ratio"], errors="coerce")
    met = (ratio <= limit) if extra is None else (ratio <= limit) & extra[mask]
    text = f"{label} in {int(met.sum())} of {len(rows)} settings"
    if (~met).any():
        missed = rows[~met]
        worst = missed.loc[pd.to_numeric(missed["ratio"], errors="coerce").fillna(np.inf).idxmax()]
        text += (
            f" (missed by {int((~met).sum())}, widest {float(worst['ratio']):.5f} at n = {int(worst['n_users']):,}, "
            f"k = {int(worst['k'])}, ε0 = {worst['epsilon_local']:g}, δ = {worst['delta']:g})"
        )
    return text


def bracket_goals(frame: pd.DataFrame) -> str:
    """Where the bracket goals hold and where not, counted from ``bracket.csv``."""
    e0 = frame["epsilon_local"].astype(float)
    large = e0 >= BRACKET_LARGE_EPS0
    blanket = 2.0 * frame["n_users"].astype(float) / (np.exp(e0) + frame["k"].astype(float) - 1.0)
    parts = [
        _bracket_goal(frame, ~large, BRACKET_GOAL, f"ratio ≤ {BRACKET_GOAL:g} (ε0 < {BRACKET_LARGE_EPS0:g})"),
        _bracket_goal(
            frame,
            ~large & (blanket >= BRACKET_BLANKET_USERS),
            BRACKET_GOAL_BLANKET,
            f"≤ {BRACKET_GOAL_BLANKET:g} where n·γ·2/k ≥ {BRACKET_BLANKET_USERS:g}",
        ),
        _bracket_goal(
            frame,
            large,
            BRACKET_GOAL_LARGE,
            f"≤ {BRACKET_GOAL_LARGE:g} with the upper ε below ε0 (ε0 ≥ {BRACKET_LARGE_EPS0:g})",
            extra=frame["eps_upper"].astype(float) < e0,
        ),
    ]
    return "The bracket goals: " + "; ".join(parts) + "."


def _values(values) -> str:
    return "{" + ", ".join(f"{v:,g}" if float(v) < 1e5 else f"{v:.0e}" for v in sorted(set(values))) + "}"


def bracket_grid(frame: pd.DataFrame, grid_profile: str | None = None) -> str:
    """The grid the bracket ran on, from its rows: the values of n, k, ε0 and δ of the product (the rows
    with ε0 below the large-ε0 ends) and the count of large-ε0 ends, with the grid profile's name.

    Args:
        frame: rows of ``bracket.csv``.
        grid_profile: the configuration's ``grid_profile`` (``None``: not stated).

    Returns:
        A phrase such as "the quick grid: n ∈ {2, 10, 1,000, 10,000} × k ∈ {3, 4, 10} × ...".
    """
    large = frame["epsilon_local"].astype(float) >= BRACKET_LARGE_EPS0
    grid = frame[~large]
    text = (
        f"the {grid_profile or 'default'} grid: n ∈ {_values(grid['n_users'].astype(int))} × k ∈ "
        f"{_values(grid['k'].astype(int))} × ε0 ∈ {_values(grid['epsilon_local'].astype(float))} × δ ∈ "
        f"{{{', '.join(f'{d:g}' for d in sorted(set(grid['delta'].astype(float))))}}}"
    )
    if large.any():
        text += f", and {int(large.sum())} large-ε0 end{'s' if large.sum() > 1 else ''}"
    return text


def finding_bracket(frame: pd.DataFrame | None, anchor: str, grid_profile: str | None = None) -> str:
    """How tight the worst-case guarantee is, over the settings with amplification (:func:`amplified`): the
    median and widest ratio ε(upper) / ε(lower) of ``bracket.csv`` and where, with the settings left out and
    the grid that ran."""
    what = "The tight worst-case guarantee"
    if frame is None or _lacks(
        frame, ("n_users", "k", "epsilon_local", "delta", "eps_lower", "eps_upper", "ratio", "upper")
    ):
        return missing(what, "results/accounting/bracket.csv", anchor)
    kept = frame[amplified(frame)]
    left = len(frame) - len(kept)
    lower = frame["lower"].iloc[0] if "lower" in frame.columns else "the lower bound"
    rule = (
        f"{left} setting{'s' if left != 1 else ''} without amplification left out (upper ε ≥ "
        f"{1 - NO_AMPLIFICATION_TOLERANCE:g}·ε0: a ratio near 1 there says nothing about tightness)"
    )
    if kept.empty:
        return (
            f"The worst-case bracket: no setting with amplification on {bracket_grid(frame, grid_profile)} "
            f"({rule}). " + bracket_goals(frame) + f" ([section](#{anchor}))."
        )
    ratio = pd.to_numeric(kept["ratio"], errors="coerce")
    widest = kept.loc[ratio.idxmax()]
    return (
        f"The worst-case ε is bracketed: `{frame['upper'].iloc[0]}` (a guarantee for every dataset) is within "
        f"a factor {ratio.max():.5f} of `{lower}` (attained) over the {len(kept)} settings with amplification "
        f"(median {float(ratio.median()):.5f}; {rule}), widest at n = {int(widest['n_users']):,}, "
        f"k = {int(widest['k'])}, ε0 = {widest['epsilon_local']:g}, δ = {widest['delta']:g} (ε "
        f"{widest['eps_lower']:.4g} to {widest['eps_upper']:.4g}); {bracket_grid(frame, grid_profile)}. "
        + bracket_goals(frame)
        + f" ([section](#{anchor}))."
    )


def finding_equal_guarantee(frame: pd.DataFrame | None, anchor: str) -> str:
    """Who wins at an equal (ε, δ) guarantee (``equal_guarantee_ratio.csv``) and what the shuffle costs."""
    what = "Who wins at an equal guarantee"
    if frame is None or _lacks(
        frame, ("dataset", "k", "n_users", "epsilon", "delta_rule", "ratio", "winner_upper", "certain")
    ):
        return missing(what, "results/utility/equal_guarantee_ratio.csv", anchor)
    total = len(frame)
    central = int((frame["winner_upper"] == "central").sum())
    shuffle = frame[frame["winner_upper"] == "shuffle"]
    ratio = pd.to_numeric(frame["ratio"], errors="coerce")
    where = "; ".join(
        f"{r.dataset}, n = {int(r.n_users):,}, ε = {r.epsilon:g}, k = {int(r.k)}, δ {r.delta_rule}"
        for r in shuffle.head(3).itertuples()
    )
    return (
        f"At an equal (ε, δ) guarantee the trusted curator's Gaussian gives the lower ½L1 error in {central} of {total} "
        f"settings and shuffle+INV in {len(shuffle)}"
        + (f" ({where}{'; …' if len(shuffle) > 3 else ''})" if len(shuffle) else "")
        + (
            f", neither beyond Monte-Carlo error in {total - central - len(shuffle)}"
            if total > central + len(shuffle)
            else ""
        )
        + f"; not trusting a curator costs a ½L1 ratio shuffle+INV / Gaussian of {ratio.min():.2f} to {ratio.max():.2f} "
        f"(median {float(ratio.median()):.2f}), and {int(frame['certain'].astype(bool).sum())} of {total} verdicts are "
        f"certain under both accountants ([section](#{anchor}))."
    )


def _boundary_text(boundary: pd.DataFrame | None) -> str:
    """Where shuffle+INV stops winning at the largest n of the boundary (ε below the crossing), per k."""
    if boundary is None or _lacks(boundary, ("delta_rule", "k", "n_users", "epsilon", "shuffle_wins_below")):
        return "; the boundary file `results/utility/phase_diagram_boundary.csv` is missing"
    rule = boundary["delta_rule"].iloc[0]
    rows = boundary[(boundary["delta_rule"] == rule) & boundary["shuffle_wins_below"].astype(bool)]
    if "neither_useful" in rows.columns:  # a crossing between two useless points is nobody's win
        rows = rows[~rows["neither_useful"].astype(bool)]
    if rows.empty:
        return f"; at δ {rule} no crossing has shuffle+INV winning below it"
    largest = rows[rows["n_users"] == rows["n_users"].max()]
    parts = ", ".join(
        f"ε < {float(r.epsilon):.3g} for k = {int(r.k)}" for r in largest.sort_values("k").itertuples()
    )
    return f"; at δ {rule} and n = {int(largest['n_users'].iloc[0]):,} it wins for {parts}"


def finding_phase_diagram(grid: pd.DataFrame | None, boundary: pd.DataFrame | None, anchor: str) -> str:
    """Where shuffle+INV wins in the exact phase diagram, counted only over the panels whose ε0 comes from
    a guarantee (``calibration`` or ``accountant`` column: an upper-bound accountant); the panels calibrated
    by anything else are named, and no region of theirs is quoted."""
    what = "Where shuffle+INV wins (phase diagram)"
    if grid is None or _lacks(grid, ("delta_rule", "k", "n_users", "epsilon", "log_ratio")):
        return missing(what, "results/utility/phase_diagram.csv", anchor)
    column = next((c for c in ("calibration", "accountant") if c in grid.columns), None)
    names = grid[column].astype(str) if column else pd.Series("unknown", index=grid.index)
    certified = names.map(is_guarantee)
    ratio = pd.to_numeric(grid["log_ratio"], errors="coerce")
    known = ratio.notna() & certified
    useless = (
        (grid["verdict"] == "neither") if "verdict" in grid.columns else pd.Series(False, index=grid.index)
    )
    wins = int((ratio[known & ~useless] < 0).sum())
    text = (
        f"In the exact phase diagram (n = {int(grid['n_users'].min()):,} to {int(grid['n_users'].max()):,}; "
        f"ε = {grid['epsilon'].min():.3g} to {grid['epsilon'].max():.3g}; {grid['delta_rule'].nunique()} δ "
        f"rule(s)), over the panels whose ε0 is certified by an upper bound "
        f"(k = {', '.join(str(int(k)) for k in sorted(grid.loc[certified, 'k'].unique())) or 'none'}) "
        f"shuffle+INV has the lower expected error at {wins} of {int(known.sum())} points"
        + (
            f" (at {int((known & useless).sum())} neither is useful: both errors at least 1 − 1/k, that of "
            "guessing the uniform distribution; not counted as wins)"
            if "verdict" in grid.columns
            else ""
        )
    )
    uncertified = grid[~certified]
    if len(uncertified):
        panels = "; ".join(
            f"k = {int(k)} by `{name}`"
            for (k, name), _ in uncertified.groupby([uncertified["k"], names[~certified]], sort=True)
        )
        text += (
            f"; the other panels are calibrated by an accountant that is not a guarantee ({panels}), so no "
            "region of theirs is quoted"
        )
    if certified.any():
        text += _boundary_text(
            boundary[boundary["k"].isin(grid.loc[certified, "k"].unique())]
            if boundary is not None and "k" in boundary.columns
            else boundary
        )
    return text + f" ([section](#{anchor}))."


def finding_rounds(grid: pd.DataFrame | None, anchor: str) -> str:
    """How the verdict (shuffle+INV or the Gaussian, on the average of T rounds against one total (ε, δ))
    moves with T: the lines (k, q, n, ε) of ``phase_diagram_rounds.csv`` counted by their winner at the
    smallest and at the largest T."""
    what = "How the verdict moves with T rounds"
    if grid is None or _lacks(grid, ("k", "subsample", "n_users", "epsilon", "compositions", "log_ratio")):
        return missing(what, "results/utility/phase_diagram_rounds.csv", anchor)
    lines = rounds_lines(grid)
    if lines.empty:
        return missing(what, "results/utility/phase_diagram_rounds.csv", anchor)
    to_shuffle = int(((lines["first"] == "gaussian") & (lines["last"] == "shuffle")).sum())
    to_gaussian = int(((lines["first"] == "shuffle") & (lines["last"] == "gaussian")).sum())
    return (
        f"Over T rounds against one total (ε, δ) (T = {int(lines['first_T'].min())} to "
        f"{int(lines['last_T'].max())}; q = {', '.join(f'{q:g}' for q in sorted(lines['subsample'].unique()))}; "
        f"k = {', '.join(str(k) for k in sorted(lines['k'].unique()))}), the winner on the average of the T "
        f"rounds moves from the Gaussian to shuffle+INV on {to_shuffle} and from shuffle+INV to the Gaussian on "
        f"{to_gaussian} of {len(lines)} lines (k, q, n, ε); shuffle+INV wins {int((lines['first'] == 'shuffle').sum())} "
        f"at the smallest T and {int((lines['last'] == 'shuffle').sum())} at the largest ([section](#{anchor}))."
    )


def finding_koskela(frame: pd.DataFrame | None, anchor: str) -> str:
    """Koskela et al.'s curves (``koskela_verdicts.csv``), counted from the ``verdict`` column: reproduced,
    explained (a known cause), not reproduced; the groups (figure, curve) of those not reproduced; the
    largest difference only in ε (``max_epsilon_difference``) when the table has it, never a relative
    difference of a δ near 0."""
    what = "Koskela et al.'s Figures 1-3"
    if frame is None or _lacks(frame, ("figure", "curve", "verdict")):
        return missing(what, "results/koskela/koskela_verdicts.csv", anchor)
    frame, added = split_published(frame)
    counts = seed_counts(frame)
    failed = frame[frame["verdict"].astype(str) != "reproduced"]
    text = f"Koskela et al.'s Figures 1-3: {len(frame)} published curves, {counts_phrase(counts)}"
    if len(failed):
        groups = list(dict.fromkeys(f"Fig. {int(r.figure)} {r.curve}" for r in failed.itertuples()))
        cause = (
            failed.get("known_cause", pd.Series("", index=failed.index)).fillna("").astype(str).str.strip()
        )
        text += (
            f"; the {len(failed)} not reproduced fall in {len(groups)} group(s) ({'; '.join(groups[:4])}"
            f"{'; …' if len(groups) > 4 else ''}), {int(cause.ne('').sum())} of them with a documented cause"
        )
        if "max_epsilon_difference" in failed.columns:
            gap = pd.to_numeric(failed["max_epsilon_difference"], errors="coerce")
            if gap.notna().any():
                text += f", up to {float(gap.max()):.3g} apart in ε"
    if len(added):
        text += f"; {len(added)} curves of ours are drawn beside them with no published values to compare"
    below = lower_bound_sentence(frame)
    if below:
        text += ". " + below
    return text + f" ([section](#{anchor}))."


#: how the report files a curve of ours that has no published values (``points`` = 0): not a failed
#: reproduction, so never "not reproducible as specified"
OURS_ONLY = "ours only (nothing published to compare)"

#: the phrase of ``known_cause`` that records a published curve below a certified lower bound, and its points
_BELOW_LOWER = re.compile(r"below (?:a|our) certified lower bound.*? at ((?:n_c = \d+ \([^)]*\)(?:, )?)+)")
_BELOW_POINT = re.compile(r"n_c = (\d+) \(([-+.\deE]+) < ([-+.\deE]+)\)")


def below_certified_lower(frame: pd.DataFrame | None) -> list[tuple[int, int, str, str, str]]:
    """Where a published Koskela et al. curve lies below a certified lower bound, as the verdict table
    records it in ``known_cause``: (figure, n_c, curve, published ε, lower bound) per point, in order.

    Args:
        frame: ``koskela_verdicts.csv`` (columns ``figure``, ``curve``, ``known_cause``), or None.

    Returns:
        The points (empty when the frame is None or records none).
    """
    if frame is None or _lacks(frame, ("figure", "curve", "known_cause")):
        return []
    found: dict[tuple[int, int, str], tuple[str, str]] = {}
    for row in frame.itertuples():
        match = _BELOW_LOWER.search(str(row.known_cause))
        for point in _BELOW_POINT.finditer(match.group(1) if match else ""):
            found.setdefault((int(row.figure), int(point.group(1)), str(row.curve)), point.group(2, 3))
    return [(f, n, c, *found[(f, n, c)]) for f, n, c in found]


def lower_bound_sentence(frame: pd.DataFrame | None) -> str:
    """The sentence on a published Koskela et al. curve below a certified lower bound ("" when none)."""
    points = below_certified_lower(frame)
    if not points:
        return ""
    figures = dict.fromkeys((f, c) for f, _, c, _, _ in points)
    parts = []
    for figure, curve in figures:
        at = [f"n_c = {n} (ε {t} < {lo})" for f, n, c, t, lo in points if (f, c) == (figure, curve)]
        parts.append(
            f"their published Fig. {figure} {curve} curve lies below a certified lower bound at {', '.join(at)}"
        )
    return (
        "; ".join(parts)[0].upper()
        + "; ".join(parts)[1:]
        + ": no valid upper bound can lie there, so at those points the published curve is not a privacy "
        "guarantee"
    )


def file_added(frame: pd.DataFrame) -> pd.DataFrame:
    """The Koskela verdict table with the curves of ours that have no published values (``points`` = 0)
    filed as :data:`OURS_ONLY` in ``verdict`` instead of "not reproducible as specified"."""
    if "points" not in frame.columns or "verdict" not in frame.columns:
        return frame
    none = pd.to_numeric(frame["points"], errors="coerce").fillna(0) <= 0
    return frame.assign(verdict=frame["verdict"].astype(object).where(~none, OURS_ONLY))


def split_published(frame: pd.DataFrame | None):
    """(rows with published values, rows of curves we draw that have none): the Koskela stage marks the latter
    with ``points`` = 0 (such curves: Feldman et al.'s method, the certified lower bound, Balle
    et al.'s Thm 3.1). Without a ``points`` column every row counts as published."""
    if frame is None or "points" not in frame.columns:
        return frame, (frame.iloc[0:0] if frame is not None else None)
    none = pd.to_numeric(frame["points"], errors="coerce").fillna(0) <= 0
    return frame[~none], frame[none]


def finding_balle(frame: pd.DataFrame | None, anchor: str) -> str:
    """Balle et al.'s Figure 3 (``balle_verdicts.csv``): curves reproduced against each version of their
    code, the curves that are not and the loosest analytic bound against its tight reference."""
    what = "Balle et al.'s Figure 3"
    if frame is None or _lacks(
        frame, ("panel", "curve", "code", "verdict", "max_relative_difference", "looseness_max")
    ):
        return missing(what, "results/balle/balle_verdicts.csv", anchor)
    parts = []
    for code, rows in frame.groupby("code", sort=False):
        reproduced = rows["verdict"] == "reproduced"
        failed = rows[~reproduced]
        part = f"{int(reproduced.sum())} of {len(rows)} curves reproduced against their {code} code"
        if len(failed):
            largest = pd.to_numeric(failed["max_relative_difference"], errors="coerce").max()
            names = "; ".join(f"panel {r.panel} {r.curve}" for r in failed.head(3).itertuples())
            part += f" (not: {names}{'; …' if len(failed) > 3 else ''}; up to {largest:.0%} off)"
        parts.append(part)
    return f"Balle et al.'s Figure 3: {'; '.join(parts)}; {balle_looseness(frame)} ([section](#{anchor}))."


def balle_looseness(frame: pd.DataFrame) -> str:
    """How far Balle et al.'s bounds are from our reference curves, with each reference named for what it
    is: against a tight reference (:func:`is_tight_reference`) "up to x× the worst case"; against an upper
    bound that need not be tight, the range of the factor, below 1 where a bound beats that reference."""
    if _lacks(frame, ("reference", "looseness_min", "looseness_max")):
        return "no reference curve named in `balle_verdicts.csv`"
    low = pd.to_numeric(frame["looseness_min"], errors="coerce")
    high = pd.to_numeric(frame["looseness_max"], errors="coerce")
    known = high.notna() & frame["reference"].astype(str).str.strip().ne("") & frame["reference"].notna()
    tight = known & frame["reference"].map(is_tight_reference)
    parts = []
    if tight.any():
        worst = frame.loc[high[tight].idxmax()]
        parts.append(
            f"against a tight reference (the k-RR worst case, `worst-case-upper` at k = 2) the loosest is "
            f"{worst['curve']} (panel {worst['panel']}), up to {float(high[tight].max()):.1f}× the worst case"
        )
    loose = known & ~tight
    for reference, rows in frame[loose].groupby(frame.loc[loose, "reference"].astype(str), sort=False):
        top, bottom = rows.loc[high[rows.index].idxmax()], rows.loc[low[rows.index].idxmin()]
        parts.append(
            f"against “{reference}”, an upper bound that need not be tight, the factor runs from "
            f"{float(low[rows.index].min()):.2f} ({bottom['curve']}, panel {bottom['panel']}) to "
            f"{float(high[rows.index].max()):.1f} ({top['curve']}, panel {top['panel']}), so it measures "
            "no distance from the worst case"
        )
    return "; ".join(parts) if parts else "no reference curve to measure the bounds against"


def finding_balle_claims(frame: pd.DataFrame | None, anchor: str) -> str:
    """Balle et al.'s claims about their Figure 3 that the corrected Bennett code overturns (``balle_claims.csv``,
    counted by the Balle stage from ``balle_fig3.csv``): per claim, at how many of its points it holds."""
    what = "Balle et al.'s claims about their Figure 3"
    if frame is None or _lacks(frame, ("panel", "claim", "better", "points", "claim_holds", "verdict")):
        return missing(what, "results/balle/balle_claims.csv", anchor)
    parts = []
    for row in frame.itertuples():
        holds, points = int(row.claim_holds), int(row.points)
        parts.append(
            f"panel ({row.panel}) \u201c{row.claim}\u201d: {row.better} is better at {holds} of {points} "
            f"points ({row.verdict})"
        )
    return (
        f"With the corrected Bennett code, two of Balle et al.'s statements about their Figure 3 change: "
        f"{'; '.join(parts)} ([section](#{anchor}))."
    )


def finding_data(summary: pd.DataFrame | None) -> str:
    """The data caveat: which sources were read and the region counts against the paper's."""
    what = "The data"
    if summary is None or _lacks(summary, ("level", "kept")):
        return missing(what, "results/data/summary.csv", "figure-3")
    name = "label" if "label" in summary.columns else "name"
    sources = summary[summary["level"] == "source"][name].astype(str).tolist()
    regions = summary[summary["level"] == "region"]
    parts, differences = [], []
    for row in regions.itertuples():
        paper = getattr(row, "paper_count", math.nan)
        if pd.notna(paper) and float(paper) > 0:
            differences.append(abs(float(row.kept) - float(paper)) / float(paper))
            parts.append(
                f"{getattr(row, name)} {int(row.kept):,} check-ins vs the paper's {int(paper):,} "
                f"({(float(row.kept) - float(paper)) / float(paper):+.1%})"
            )
        else:
            parts.append(f"{getattr(row, name)} {int(row.kept):,} check-ins (no paper count)")
    verdict = (
        "so the Gowalla results come from stand-ins, not the paper's data"
        if differences and max(differences) > 0
        else "matching the paper's counts"
        if differences
        else "with no paper count to compare"
    )
    return (
        f"The Gowalla check-ins come from {', '.join(f'`{s}`' for s in sources) or 'no source'}: "
        f"{'; '.join(parts) or 'no region'}, {verdict} ([Figure 3](#figure-3))."
    )


#: what each grid profile is, in the report's words (another name is reported as it is)
GRID_PROFILES = {
    "default": "the default grids (config/config.yaml)",
    "quick": "the quick grids (config/quick.yaml: coarse grids for the sweeps beyond the papers -- the "
    "worst-case bracket, the phase diagram and its composed version, the equal-guarantee, randomizer, "
    "crossover and ε comparisons -- and Balle et al.'s reference curves at both ends of each n grid only; "
    "every value the papers publish is still computed and judged at their own points)",
}


def _region_counts(regions: Mapping) -> str:
    parts = []
    for region in regions.values():
        kept = f"{int(region['kept']):,}" if region.get("kept") is not None else "?"
        paper = region.get("paper_count")
        parts.append(
            f"{region['label']} {kept} check-ins in the crop"
            + (f" against the paper's {int(paper):,}" if paper is not None else "")
        )
    return "; ".join(parts)


def grid_summary(config: Mapping | None) -> str:
    """The grids of the three costly sweeps as the configuration gives them: the worst-case bracket's values,
    the phase diagram's n × ε points, the composed phase diagram's T ("" when the configuration names none).

    Args:
        config: the run's configuration (keys ``accounting.bracket``, ``utility.phase_diagram``,
            ``utility.phase_diagram_rounds``), or None.

    Returns:
        A phrase such as "bracket n ∈ {2, 10} × k ∈ {3} × ε0 ∈ {1} × δ ∈ {1e-06} and 1 large-ε0 end; ...".
    """
    config = config or {}
    parts = []
    bracket = (config.get("accounting") or {}).get("bracket") or {}
    if all(bracket.get(key) for key in ("n_users", "k", "epsilon_local", "delta")):
        extra = len(bracket.get("extra") or [])
        parts.append(
            f"worst-case bracket n ∈ {_values(int(n) for n in bracket['n_users'])} × k ∈ "
            f"{_values(int(k) for k in bracket['k'])} × ε0 ∈ {_values(float(e) for e in bracket['epsilon_local'])} "
            f"× δ ∈ {{{', '.join(f'{float(d):g}' for d in bracket['delta'])}}}"
            + (f" and {extra} large-ε0 end{'s' if extra > 1 else ''}" if extra else "")
        )
    utility = config.get("utility") or {}
    phase = utility.get("phase_diagram") or {}
    if phase.get("n_points") and phase.get("epsilon_points"):
        joined = (utility.get("equal_guarantee") or {}).get("n_users")
        parts.append(
            f"phase diagram {int(phase['n_points'])} n × {int(phase['epsilon_points'])} ε per panel"
            + (", with the equal-guarantee grid's n and ε inside its ranges added" if joined else "")
        )
    rounds = utility.get("phase_diagram_rounds") or {}
    if rounds.get("compositions"):
        parts.append(f"composed phase diagram T ∈ {_values(int(t) for t in rounds['compositions'])}")
    return "; ".join(parts)


def opening_data(label: Mapping | None, grid_profile: str | None, config: Mapping | None = None) -> str:
    """The first screen's line on the data and the grids: which Gowalla data the run used, with the crop
    counts against the paper's, and which grid profile ran.

    Args:
        label: ``results/data/source_label.json`` (``source``, ``reason``, ``files``, ``regions``);
            ``None`` when the data stage is not part of the run.
        grid_profile: the configuration's ``grid_profile`` (``None``: not stated).
        config: the run's configuration, whose sweep grids are named (:func:`grid_summary`); None: not named.

    Returns:
        One Markdown paragraph.
    """
    profile = grid_profile or "default"
    grids = f"**Grids:** this report ran {GRID_PROFILES.get(profile, f'the `{profile}` grids')}"
    summary = grid_summary(config)
    grids += f": {summary}." if summary else "."
    if label is None:
        return f"**Data:** no Gowalla data in this run (the data stage is not in `report.stages`). {grids}"
    counts = _region_counts(label.get("regions") or {})
    files = label.get("files") or []
    if label["source"] == "bundled":
        text = (
            "**Data: the bundled Gowalla subsets, not the full SNAP file** "
            f"({label.get('reason', 'SNAP was not used')}): {counts}. San Francisco is the data of Oya et al. "
            "(CCS 2017), processed and without timestamps; Paris is SNAP's own rows near Paris "
            "(data/bundled/SOURCE.md). Every Gowalla figure and table says so."
        )
    elif label["source"] == "snap":
        digest = (files[0].get("sha256") or "")[:12] if files else ""
        text = (
            f"**Data: the SNAP file loc-gowalla_totalCheckins.txt.gz** (sha256 `{digest}`, "
            f"{label.get('reason', '')}): {counts}."
        )
    else:
        names = ", ".join(f"`{item.get('label') or item.get('file_name')}`" for item in files)
        text = f"**Data: local files** {names}: {counts}."
    return f"{text} {grids}"


def finding_delta_floor(frame: pd.DataFrame | None, anchor: str) -> str:
    """How many of the utility settings have δ = 0 under the configured accountant, so that the Gaussian
    they are compared with is calibrated at an arbitrary floor (``delta_floor.csv``)."""
    what = "The δ floor"
    if frame is None or _lacks(
        frame, ("calibration", "delta_floored", "epsilon", "epsilon_local", "n_users")
    ):
        return missing(what, "results/utility/delta_floor_fig2.csv, gowalla/<region>/delta_floor.csv", anchor)
    rows = (
        frame[frame["calibration"] == "configured"] if (frame["calibration"] == "configured").any() else frame
    )
    floored = rows["delta_floored"].astype(str).str.lower().eq("true")
    settings = "; ".join(
        sorted({f"ε = {e:g}, ε0 = {e0:g}" for e, e0 in zip(rows["epsilon"], rows["epsilon_local"])})
    )
    where = f"{', '.join(dict.fromkeys(rows['region'].astype(str)))}; " if "region" in rows.columns else ""
    floor = (
        f" δ = {format_cell(float(rows.loc[floored, 'delta_floor'].min()))}"
        if floored.any() and "delta_floor" in rows.columns
        else " a floor"
    )
    accountant = f" of `{rows['accountant'].iloc[0]}`" if "accountant" in rows.columns else ""
    return (
        f"In {int(floored.sum())} of {len(rows)} utility settings ({where}{settings}) the shuffle's δ{accountant} "
        f"is exactly 0, so the Gaussian it is compared with is calibrated at{floor}: an arbitrary choice, and "
        f"every such comparison rests on it ([section](#{anchor}))."
    )


def finding_geometric(frame: pd.DataFrame | None, anchor: str) -> str:
    """In how many equal-guarantee settings the pure-ε geometric mechanism (an (ε, 0) guarantee, stronger
    than (ε, δ)) has a lower expected ½L1 error than shuffle+INV (``ratio_geometric`` = that error of shuffle+INV
    over the geometric's)."""
    what = "The geometric mechanism"
    if frame is None or _lacks(frame, ("ratio_geometric",)):
        return missing(what, "results/utility/equal_guarantee_ratio.csv", anchor)
    ratio = pd.to_numeric(frame["ratio_geometric"], errors="coerce")
    known = ratio.notna()
    return (
        f"The pure-ε geometric mechanism of a trusted curator (a stronger (ε, 0) guarantee) has a lower expected ½L1 error than "
        f"shuffle+INV in {int((ratio[known] > 1).sum())} of {int(known.sum())} equal-guarantee settings "
        f"([section](#{anchor}))."
    )


def verdict_lines(
    cells: pd.DataFrame | None,
    *,
    koskela=None,
    koskela_fig4=None,
    balle=None,
    girgis=None,
    anchors: dict[str, str],
) -> list[str]:
    """One line per seed paper: Biswas et al. by level over the unique cells
    (:func:`~shuffledp.report.verdicts.graded_cells`), Koskela, Balle and Girgis et al. counted from the
    ``verdict`` column of their verdict tables (Balle et al. once per version of their code)."""
    lines = []
    if cells is not None and len(cells):
        levels = cells["level"].value_counts()
        tables = _table_list(list(dict.fromkeys(cells["table"].astype(str))))
        lines.append(
            f"**Biswas, Jung & Palamidessi** ({len(cells)} printed cells of {tables}): "
            + ", ".join(
                f"{int(levels[v])} {v}"
                for v in [*LEVELS, *sorted(set(levels.index) - set(LEVELS))]
                if v in levels.index
            )
            + f" ([section](#{anchors['biswas']}))."
        )
    else:
        lines.append(
            f"**Biswas, Jung & Palamidessi**: no comparison table in this run ([section](#{anchors['biswas']}))."
        )

    def line(title: str, frame, unit: str, key: str) -> str:
        counts = seed_counts(frame)
        if not counts:
            return f"**{title}**: not run here (no verdict table) ([section](#{anchors[key]}))."
        return f"**{title}** ({sum(counts.values())} {unit}): {counts_phrase(counts)}"

    published, added = split_published(koskela)
    text = line("Koskela et al.", published, "published curves of Figs. 1-3", "koskela")
    if added is not None and len(added):
        text += f"; {len(added)} curves of ours drawn beside them (no published values to compare)"
    if seed_counts(koskela_fig4):
        text += f"; Fig. 4 (nothing published to compare): {counts_phrase(seed_counts(koskela_fig4))}"
    lines.append(text + (f" ([section](#{anchors['koskela']}))." if not text.endswith(".") else ""))
    if balle is not None and "code" in balle.columns and len(balle):
        parts = [
            f"against their {code} code {counts_phrase(seed_counts(rows))}"
            for code, rows in balle.groupby(balle["code"].astype(str), sort=False)
        ]
        lines.append(
            f"**Balle et al.** ({balle.groupby(balle['code'].astype(str)).size().iloc[0]} curves of Fig. 3, "
            f"each against each version of their code): {'; '.join(parts)} ([section](#{anchors['balle']}))."
        )
    else:
        lines.append(line("Balle et al.", balle, "curves", "balle"))
    text = line("Girgis et al.", girgis, "curves and claims of Sec. 4", "girgis")
    lines.append(text + (f" ([section](#{anchors['girgis']}))." if not text.endswith(".") else ""))
    return lines


def findings(
    rows: pd.DataFrame | None,
    *,
    bracket=None,
    equal=None,
    grid=None,
    boundary=None,
    koskela=None,
    balle=None,
    balle_claims=None,
    floor=None,
    summary=None,
    rounds=None,
    grid_profile: str | None = None,
    anchors: dict[str, str],
) -> list[str]:
    """The Findings bullets in order (``anchors``: section name -> anchor, keys ``bracket``, ``equal``,
    ``phase``, ``koskela``; ``rounds`` when the composed phase diagram is configured; when the Balle stage ran,
    ``balle``)."""
    return [
        finding_eq6(rows),
        finding_bracket(bracket, anchors["bracket"], grid_profile),
        finding_equal_guarantee(equal, anchors["equal"]),
        finding_phase_diagram(grid, boundary, anchors["phase"]),
        *([finding_rounds(rounds, anchors["rounds"])] if "rounds" in anchors else []),
        finding_koskela(koskela, anchors["koskela"]),
        *([finding_delta_floor(floor, anchors["floor"])] if "floor" in anchors else []),
        *(
            [finding_geometric(equal, anchors["equal"])]
            if equal is not None and "ratio_geometric" in equal
            else []
        ),
        *([finding_balle(balle, anchors["balle"])] if "balle" in anchors else []),
        *(
            [finding_balle_claims(balle_claims, anchors["balle"])]
            if "balle" in anchors and balle_claims is not None
            else []
        ),
        finding_data(summary),
    ]
