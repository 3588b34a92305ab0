"""The report's opening answer: a few one-sentence findings, each with the numbers that back it and a
link to the section that holds them (issue 20, item 6: "the report leads with the answer").

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
from collections.abc import Sequence

import numpy as np
import pandas as pd

from shuffledp.report.read import _format_number

__all__ = [
    "extra_anchor",
    "missing",
    "finding_eq6",
    "finding_bracket",
    "finding_equal_guarantee",
    "finding_phase_diagram",
    "finding_koskela",
    "finding_data",
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


def _lacks(frame: pd.DataFrame | None, columns: Sequence[str]) -> bool:
    return frame is None or not all(c in frame.columns for c in columns) or frame.empty


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
    """By how many orders of magnitude δ from eq. (6) as printed understates the exact single-bin δ,
    over the comparison rows whose "as printed" value is eq. (6) (Table II's own column, Table IV)."""
    what = "How wrong eq. (6) as printed is"
    if _lacks(rows, ("table", "ours_as_printed", "ours_exact", "note")):
        return missing(what, "results/accounting/table2_comparison.csv, table4_comparison.csv", "table-iv")
    eq6 = rows[rows["note"].astype(str).str.contains("eq. (6)", regex=False)].copy()
    printed = pd.to_numeric(eq6["ours_as_printed"], errors="coerce")
    exact = pd.to_numeric(eq6["ours_exact"], errors="coerce")
    both = (printed > 0) & (exact > 0)
    if not both.any():
        return missing(what, "results/accounting/table2_comparison.csv, table4_comparison.csv", "table-iv")
    orders = np.log10(exact[both] / printed[both])
    under = orders > 0
    zero = int(((printed == 0) & (exact > 0)).sum())
    worst = eq6.loc[orders.idxmax()]
    tables = sorted(eq6["table"].astype(str).unique())
    links = ", ".join(f"[Table {t}](#{_table_anchor(t)})" for t in tables)
    return (
        f"Eq. (6) as printed understates the exact δ in {int(under.sum())} of {int(both.sum())} cells of "
        f"{_table_list(tables)} (median {float(orders.median()):.1f}, up to "
        f"{float(orders.max()):.1f} orders of magnitude: Table {worst['table']}, {worst['block']}, {worst['row']}, "
        f"{worst['column']}, printed {_format_number(float(printed[orders.idxmax()]))} vs exact "
        f"{_format_number(float(exact[orders.idxmax()]))})"
        + (f", and gives δ = 0 where the exact δ is positive in {zero} more" if zero else "")
        + f" ({links})."
    )


def finding_bracket(frame: pd.DataFrame | None, anchor: str) -> str:
    """How tight the worst-case guarantee is: the widest ratio ε(upper) / ε(lower) of ``bracket.csv`` and where."""
    what = "The tight worst-case guarantee"
    if _lacks(frame, ("n_users", "k", "epsilon_local", "delta", "eps_lower", "eps_upper", "ratio", "upper")):
        return missing(what, "results/accounting/bracket.csv", anchor)
    ratio = pd.to_numeric(frame["ratio"], errors="coerce")
    widest = frame.loc[ratio.idxmax()]
    lower = frame["lower"].iloc[0] if "lower" in frame.columns else "the lower bound"
    return (
        f"The worst-case ε is pinned down: `{frame['upper'].iloc[0]}` (a guarantee for every dataset) is within "
        f"a factor {ratio.max():.4f} of `{lower}` (attained) over {len(frame)} settings (median "
        f"{float(ratio.median()):.4f}), widest at n = {int(widest['n_users']):,}, k = {int(widest['k'])}, "
        f"ε0 = {widest['epsilon_local']:g}, δ = {widest['delta']:g} (ε {widest['eps_lower']:.4g} to "
        f"{widest['eps_upper']:.4g}) ([section](#{anchor}))."
    )


def finding_equal_guarantee(frame: pd.DataFrame | None, anchor: str) -> str:
    """Who wins at an equal (ε, δ) guarantee (``equal_guarantee_ratio.csv``) and what the shuffle costs."""
    what = "Who wins at an equal guarantee"
    if _lacks(frame, ("dataset", "k", "n_users", "epsilon", "delta_rule", "ratio", "winner_upper", "certain")):
        return missing(what, "results/utility/equal_guarantee_ratio.csv", anchor)
    total = len(frame)
    central = int((frame["winner_upper"] == "central").sum())
    shuffle = frame[frame["winner_upper"] == "shuffle"]
    ratio = pd.to_numeric(frame["ratio"], errors="coerce")
    where = "; ".join(f"{r.dataset}, n = {int(r.n_users):,}, ε = {r.epsilon:g}, k = {int(r.k)}, δ {r.delta_rule}"
                      for r in shuffle.head(3).itertuples())
    return (
        f"At an equal (ε, δ) guarantee the trusted curator's Gaussian gives the lower TV in {central} of {total} "
        f"settings and shuffle+INV in {len(shuffle)}" + (f" ({where}{'; …' if len(shuffle) > 3 else ''})" if len(shuffle) else "")
        + (f", neither beyond Monte-Carlo error in {total - central - len(shuffle)}" if total > central + len(shuffle) else "")
        + f"; not trusting a curator costs a TV ratio shuffle+INV / Gaussian of {ratio.min():.2f} to {ratio.max():.2f} "
        f"(median {float(ratio.median()):.2f}), and {int(frame['certain'].astype(bool).sum())} of {total} verdicts are "
        f"certain under both accountants ([section](#{anchor}))."
    )


def _boundary_text(boundary: pd.DataFrame | None) -> str:
    """Where shuffle+INV stops winning at the largest n of the boundary (ε below the crossing), per k."""
    if _lacks(boundary, ("delta_rule", "k", "n_users", "epsilon", "shuffle_wins_below")):
        return "; the boundary file `results/utility/phase_diagram_boundary.csv` is missing"
    rule = boundary["delta_rule"].iloc[0]
    rows = boundary[(boundary["delta_rule"] == rule) & boundary["shuffle_wins_below"].astype(bool)]
    if rows.empty:
        return f"; at δ {rule} no crossing has shuffle+INV winning below it"
    largest = rows[rows["n_users"] == rows["n_users"].max()]
    parts = ", ".join(f"ε < {float(r.epsilon):.3g} for k = {int(r.k)}" for r in largest.sort_values("k").itertuples())
    return f"; at δ {rule} and n = {int(largest['n_users'].iloc[0]):,} it wins for {parts}"


def finding_phase_diagram(grid: pd.DataFrame | None, boundary: pd.DataFrame | None, anchor: str) -> str:
    """Where shuffle+INV wins in the exact phase diagram (share of grid points, boundary at the largest n)."""
    what = "Where shuffle+INV wins (phase diagram)"
    if _lacks(grid, ("delta_rule", "k", "n_users", "epsilon", "log_ratio")):
        return missing(what, "results/utility/phase_diagram.csv", anchor)
    ratio = pd.to_numeric(grid["log_ratio"], errors="coerce")
    known = ratio.notna()
    wins = int((ratio[known] < 0).sum())
    return (
        f"In the exact phase diagram (k = {', '.join(str(int(k)) for k in sorted(grid['k'].unique()))}; "
        f"n = {int(grid['n_users'].min()):,} to {int(grid['n_users'].max()):,}; ε = {grid['epsilon'].min():.3g} to "
        f"{grid['epsilon'].max():.3g}; {grid['delta_rule'].nunique()} δ rule(s)) shuffle+INV has the lower expected "
        f"error at {wins} of {int(known.sum())} points" + _boundary_text(boundary) + f" ([section](#{anchor}))."
    )


def finding_koskela(frame: pd.DataFrame | None, anchor: str) -> str:
    """The Koskela et al. verdicts (``koskela_verdicts.csv``): how many curves are reproduced, which are not."""
    what = "Koskela et al.'s Figures 1-3"
    if _lacks(frame, ("figure", "curve", "verdict")):
        return missing(what, "results/koskela/koskela_verdicts.csv", anchor)
    reproduced = frame["verdict"] == "reproduced"
    compared = pd.to_numeric(frame.get("compared", pd.Series(1, index=frame.index)), errors="coerce").fillna(0) > 0
    failed = frame[~reproduced & compared]
    largest = pd.to_numeric(frame.get("max_relative_difference", pd.Series(dtype=float)), errors="coerce")
    # the largest difference of the reproduced curves, and separately how far off the others are: one
    # maximum over both read as if a reproduced curve were that far off
    text = (f"Koskela et al.'s Figures 1-3: {int(reproduced.sum())} of {len(frame)} published curves reproduced"
            + (f" (largest relative difference among them {largest[reproduced].max():.2%})"
               if largest[reproduced].notna().any() else "")
            + (f", {int((~compared).sum())} not computed in this run" if (~compared).any() else ""))
    if len(failed):
        causes = failed.get("known_cause", pd.Series("", index=failed.index)).fillna("").astype(str)
        curves = {}
        for row, cause in zip(failed.itertuples(), causes):
            curves.setdefault(f"Fig. {int(row.figure)} {row.curve}", set()).update([cause] if cause else [])
        documented = sum(1 for c in curves.values() if c)
        off = largest[failed.index]
        text += (f"; not reproduced: {'; '.join(list(curves)[:3])}{'; …' if len(curves) > 3 else ''}"
                 + (f", up to {off.max():.0%} off" if off.notna().any() else "")
                 + (f" (a documented cause for {documented} of these {len(curves)} curves)" if documented else ""))
    return text + f" ([section](#{anchor}))."


def finding_balle(frame: pd.DataFrame | None, anchor: str) -> str:
    """Balle et al.'s Figure 3 (``balle_verdicts.csv``): curves reproduced against each version of their
    code, the curves that are not and the loosest analytic bound against its tight reference."""
    what = "Balle et al.'s Figure 3"
    if _lacks(frame, ("panel", "curve", "code", "verdict", "max_relative_difference", "looseness_max")):
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
    loosest = frame.loc[pd.to_numeric(frame["looseness_max"], errors="coerce").idxmax()]
    return (f"Balle et al.'s Figure 3: {'; '.join(parts)}; the loosest bound is {loosest['curve']} "
            f"(panel {loosest['panel']}), up to {float(loosest['looseness_max']):.1f} x its tight reference "
            f"([section](#{anchor})).")


def finding_data(summary: pd.DataFrame | None) -> str:
    """The data caveat: which sources were read and the region counts against the paper's."""
    what = "The data"
    if _lacks(summary, ("level", "kept")):
        return missing(what, "results/data/summary.csv", "figure-3")
    name = "label" if "label" in summary.columns else "name"
    sources = summary[summary["level"] == "source"][name].astype(str).tolist()
    regions = summary[summary["level"] == "region"]
    parts, differences = [], []
    for row in regions.itertuples():
        paper = getattr(row, "paper_count", math.nan)
        if pd.notna(paper) and float(paper) > 0:
            differences.append(abs(float(row.kept) - float(paper)) / float(paper))
            parts.append(f"{getattr(row, name)} {int(row.kept):,} check-ins vs the paper's {int(paper):,} "
                         f"({(float(row.kept) - float(paper)) / float(paper):+.1%})")
        else:
            parts.append(f"{getattr(row, name)} {int(row.kept):,} check-ins (no paper count)")
    verdict = ("so the Gowalla results come from stand-ins, not the paper's data" if differences and max(differences) > 0
               else "matching the paper's counts" if differences else "with no paper count to compare")
    return (f"The Gowalla check-ins come from {', '.join(f'`{s}`' for s in sources) or 'no source'}: "
            f"{'; '.join(parts) or 'no region'}, {verdict} ([Figure 3](#figure-3))."
            )


def findings(rows: pd.DataFrame | None, *, bracket=None, equal=None, grid=None, boundary=None, koskela=None,
             balle=None, summary=None, anchors: dict[str, str]) -> list[str]:
    """The Findings bullets in order (``anchors``: section name -> anchor, keys ``bracket``, ``equal``,
    ``phase``, ``koskela`` and, when the Balle stage ran, ``balle``)."""
    return [
        finding_eq6(rows),
        finding_bracket(bracket, anchors["bracket"]),
        finding_equal_guarantee(equal, anchors["equal"]),
        finding_phase_diagram(grid, boundary, anchors["phase"]),
        finding_koskela(koskela, anchors["koskela"]),
        *([finding_balle(balle, anchors["balle"])] if "balle" in anchors else []),
        finding_data(summary),
    ]
