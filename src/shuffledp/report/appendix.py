"""The report's appendix: every cell of the paper's tables with its level and distance, every row of the
seed papers' verdict tables, the rest of each reading whose first sentence the main part shows, the
sources read, and the map from the FPS numbering to the arXiv one.

Room: tables rather than paragraphs where the content is one item per cell or curve; calls
:mod:`~shuffledp.report.sections` for the readings it continues and returns
:mod:`~shuffledp.report.blocks`.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from shuffledp.experiments.utility_tables import STRENGTH_FACTOR
from shuffledp.report.blocks import Heading, Paragraph, Table
from shuffledp.report.findings import extra_anchor, file_added
from shuffledp.report.judge import read_empty_cells, read_verdict_strength, strength_table
from shuffledp.report.paper import FIGURES, FPS_NOT_VISIBLE, FPS_TO_ARXIV, PAPER_TABLES
from shuffledp.report.read import ReportInputs, existing_files, format_cell, trace
from shuffledp.report.sections import (
    SEED_ANCHORS,
    SEED_SECTIONS,
    cell_counts_of,
    extra_readings,
    figure_reading,
    read_hypotheses,
    split_first_sentence,
)
from shuffledp.tables import REPRODUCED

__all__ = ["appendix"]

#: columns of a seed paper's verdict table shown in the appendix, in this order, when present
_SEED_COLUMNS = (
    "figure",
    "panel",
    "curve",
    "code",
    "claim",
    "accountant",
    "compositions",
    "points",
    "compared",
    "max_relative_difference",
    "max_epsilon_difference",
    "tolerance",
    "verdict",
    "known_cause",
    "note",
)


def _closest(hypotheses: pd.DataFrame | None) -> dict:
    """(table II block, printed value) -> 'closest hypothesis: name (10^x)' for the cells the hypotheses cover."""
    if hypotheses is None or hypotheses.empty:
        return {}
    gap = pd.to_numeric(hypotheses["log10_ours_over_paper"], errors="coerce")
    best = hypotheses.assign(gap=gap.abs()).sort_values("gap").drop_duplicates("paper")
    return {
        str(r["paper"]): f"; closest of {hypotheses['hypothesis'].nunique()} hypotheses: {r['hypothesis']} "
        f"(10^{r['log10_ours_over_paper']:+.1f}, [all](#appendix-hypotheses))"
        for r in best.to_dict("records")
    }


def _cells_table(rows: pd.DataFrame, closest: dict) -> Table:
    columns = [
        "row",
        "column",
        "paper",
        "ours (compared)",
        "ours (exact)",
        "level",
        "how far (ours vs printed)",
        "note",
    ]
    body = []
    for r in rows.to_dict("records"):
        compared = r["ours_as_printed"] if pd.notna(r["ours_as_printed"]) else r["ours_exact"]
        tried = closest.get(str(r["paper"]), "") if r["table"] == "II" and r["level"] != REPRODUCED else ""
        body.append(
            [
                r["row"],
                r["column"],
                str(r["paper"]),
                format_cell(compared),
                format_cell(r["ours_exact"]),
                f"**{r['level']}**" if r["level"] == REPRODUCED else r["level"],
                r["how_far"] + tried,
                r["note"],
            ]
        )
    return Table(columns, body)


def _cells_section(inputs: ReportInputs, rows: pd.DataFrame, cells: pd.DataFrame) -> list:
    """Per table and block, every unique cell with its level; then the single-draw strength tables."""
    blocks: list = [Heading(3, "Cells of the paper's tables", "appendix-cells")]
    if cells.empty:
        return blocks + [Paragraph("No comparison rows in this run.")]
    closest = _closest(read_hypotheses(inputs))
    strength = read_verdict_strength(rows)
    if strength:
        blocks.append(Paragraph("**Verdict strength.** " + strength))
    for table in cells["table"].unique():
        subset = cells[cells["table"] == table]
        title = PAPER_TABLES.get(table, f"Values quoted in the paper's text ({table})")
        blocks.append(Heading(4, title, "text-values" if table == "text" else f"table-{str(table).lower()}"))
        blocks.append(
            Paragraph(
                f"Source of {title.split(':')[0]}: "
                + "; ".join(trace(s, inputs) for s in subset["source"].unique())
                + "."
            )
        )
        empty = read_empty_cells(subset)
        if empty:
            blocks.append(Paragraph("**Not comparable.** " + empty))
        for block_name, group in subset.groupby("block", sort=False):
            if block_name:
                blocks.append(Paragraph(f"*Table {table}, {block_name}*"))
            blocks.append(_cells_table(group, closest))
            single = strength_table(group)
            if single is not None:
                blocks.append(
                    Paragraph(
                        f"Single-draw strength, Table {table} {block_name}: interval, width, and "
                        f"the chance a value {STRENGTH_FACTOR:g}× off would pass."
                    )
                )
                blocks.append(single)
    return blocks


def _hypotheses(inputs: ReportInputs) -> list:
    frame = read_hypotheses(inputs)
    if frame is None:
        return []
    columns = [
        "hypothesis",
        "reason",
        "n_x0",
        "epsilon_local",
        "epsilon",
        "paper",
        "ours",
        "log10_ours_over_paper",
    ]
    body = [
        [
            str(r["hypothesis"]),
            str(r["reason"]),
            str(r["n_x0"]),
            f"{r['epsilon_local']:g}",
            f"{r['epsilon']:g}",
            str(r["paper"]),
            str(r["ours"]),
            f"{r['log10_ours_over_paper']:+.1f}",
        ]
        for r in frame.to_dict("records")
    ]
    return [
        Heading(
            3, "Table II, n = 1,000, \u201cOur δ\u201d: every hypothesis at every cell", "appendix-hypotheses"
        ),
        Paragraph(
            f"From {trace(inputs.hypotheses, inputs)}; k = {int(frame['k'].iloc[0])}, n = "
            f"{int(frame['n_users'].iloc[0]):,}; log10(ours / printed) of each cell:"
        ),
        Table(columns, body),
    ]


#: long text columns of the verdict tables: a value equal to the row above is shown as "as above"
_TEXT_COLUMNS = ("note", "known_cause")


def _seed_table(frame: pd.DataFrame) -> Table:
    columns = [c for c in _SEED_COLUMNS if c in frame.columns]
    rows: list[list] = []
    previous: dict = {}
    for record in frame[columns].astype(object).where(frame[columns].notna(), "").to_dict("records"):
        row = []
        for column in columns:
            value = record[column]
            text = format_cell(value) if isinstance(value, float) else str(value)
            repeated = column in _TEXT_COLUMNS and len(text) > 40 and previous.get(column) == text
            row.append("as above" if repeated else text)
            previous[column] = text
        rows.append(row)
    return Table(columns, rows)


def _seed_tables(inputs: ReportInputs) -> list:
    blocks: list = []
    for name, title in SEED_SECTIONS.items():
        paths = existing_files((inputs.extras.get(name) or {}).get("data", ()))
        blocks.append(
            Heading(3, f"{title.split(':')[0]}: every verdict row", f"appendix-{SEED_ANCHORS[name]}")
        )
        if not paths:
            blocks.append(Paragraph(f"No verdict table of {title.split(':')[0]} in this run."))
        for path in paths:
            blocks.append(Paragraph(f"{trace(path, inputs)}:"))
            frame = pd.read_csv(path)
            blocks.append(_seed_table(file_added(frame) if path.name == "koskela_verdicts.csv" else frame))
    return blocks


def _continued(heading: str, anchor: str, text: str, *, whole: bool = False) -> list:
    rest = text if whole else split_first_sentence(text)[1]
    return [
        Heading(3, heading, anchor),
        Paragraph(rest or f"{heading}: nothing beyond the sentence in the main part."),
    ]


def _readings(inputs: ReportInputs, summary) -> list:
    blocks: list = []
    counts = cell_counts_of(inputs)
    for number in FIGURES:
        blocks += _continued(
            f"Figure {number}, our reading continued",
            f"appendix-figure-{number}",
            figure_reading(number, inputs, summary, counts),
        )
    for name, extra in inputs.extras.items():
        if name in SEED_SECTIONS or not existing_files(extra.get("data", ())):
            continue
        blocks += _continued(
            f"{name[0].upper()}{name[1:]}, our reading continued",
            f"appendix-{extra_anchor(name)}",
            extra_readings(inputs, name),
        )
    return blocks


def _sources(inputs: ReportInputs, paths: Sequence) -> list:
    rows = [
        [f"`{p}`", inputs.producers.get(str(p), "–"), (inputs.checksums.get(str(p)) or "–")[:16]]
        for p in paths
    ]
    return [Heading(3, "Files read", "appendix-sources"), Table(["file", "rule", "sha256 (prefix)"], rows)]


def appendix(
    inputs: ReportInputs, rows: pd.DataFrame, cells: pd.DataFrame, summary, problems: Sequence[str]
) -> list:
    """The appendix blocks, after the main part's last section."""
    blocks: list = [Heading(2, "Appendix", "appendix")]
    if problems:
        blocks.append(Paragraph("Input problems: " + " ".join(problems)))
    blocks += _cells_section(inputs, rows, cells)
    blocks += _hypotheses(inputs)
    blocks += _seed_tables(inputs)
    blocks += _readings(inputs, summary)
    reads = sorted(
        {
            *map(str, inputs.comparisons),
            *(str(p) for extra in inputs.extras.values() for paths in extra.values() for p in paths),
            *(str(p) for paths in inputs.figure_data.values() for p in paths),
        }
    )
    blocks += _sources(inputs, [p for p in reads if existing_files([p])])
    blocks += [
        Heading(3, "FPS 2023 numbering vs arXiv 2022 numbering", "fps-map"),
        Table(["FPS 2023", "arXiv 2022", "evidence in the FPS text"], [list(r) for r in FPS_TO_ARXIV]),
        Paragraph(FPS_NOT_VISIBLE),
    ]
    return blocks
