"""Assembling the report: the order of its sections and which reading, judgement or table goes
where (:func:`build_report`, one function per section, in the order they appear).

Room: picks the reading of each section beyond the paper by its name in :mod:`~shuffledp.report.inputs`;
calls :mod:`~shuffledp.report.read`, :mod:`~shuffledp.report.readings` and
:mod:`~shuffledp.report.judge`, and returns a list of :mod:`~shuffledp.report.blocks`; rendering is
left to :mod:`shuffledp.report.render`.
"""

from __future__ import annotations

import datetime as _dt
import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import pandas as pd

from shuffledp.experiments.utility_tables import STRENGTH_FACTOR
from shuffledp.report.balle import read_balle_verdicts
from shuffledp.report.beyond import (
    read_delta_floor,
    read_equal_guarantee,
    read_koskela_verdicts,
    read_phase_diagram,
    read_three_calibrations,
)
from shuffledp.report.girgis import read_girgis_verdicts
from shuffledp.report.blocks import BulletList, Figure, Heading, Paragraph, Table
from shuffledp.report.inputs import (
    BALLE_FIGURE,
    CROSSOVER,
    DELTA_FLOOR,
    DELTA_SWEEPS,
    EPSILON_AT_FIXED_DELTA,
    EQUAL_GUARANTEE,
    GIRGIS_FIGURE,
    KOSKELA_FIGURES,
    PHASE_DIAGRAM,
    THREE_CALIBRATIONS,
    WORST_CASE_BRACKET,
)
from shuffledp.report.findings import (
    extra_anchor,
    finding_bracket,
    finding_equal_guarantee,
    finding_koskela,
    finding_phase_diagram,
    findings,
)
from shuffledp.report.judge import _errata, read_data_counts, read_empty_cells, read_verdict_strength, strength_table
from shuffledp.report.paper import FIGURES, FPS_NOT_VISIBLE, FPS_TO_ARXIV, PAPER_TABLES
from shuffledp.report.read import (
    ReportInputs,
    _existing,
    _format_number,
    _relative,
    _stale_stages,
    _trace,
    read_comparisons,
    verdict_counts,
)
from shuffledp.report.readings import (
    read_bracket,
    read_crossover,
    read_delta_surface,
    read_epsilon_comparison,
    read_heatmap_summary,
    read_method_comparison,
    read_sweep,
)
from shuffledp.tables import REPRODUCED


def _comparison_table(rows: pd.DataFrame) -> Table:
    columns = ["row", "column", "paper", "ours (as printed)", "ours (exact)", "rel. diff.", "verdict", "reason"]
    body = [
        [
            r.row,
            r.column,
            str(r.paper),
            _format_number(r.ours_as_printed),
            _format_number(r.ours_exact),
            _format_number(r.relative_difference),
            f"**{r.verdict}**" if r.verdict == REPRODUCED else r.verdict,
            r.note,
        ]
        for r in rows.itertuples(index=False)
    ]
    return Table(columns, body)


def _stage_section(inputs: ReportInputs) -> list:
    blocks = [Heading(2, "Provenance", "provenance")]
    blocks.append(
        Paragraph(
            f"Configuration SHA-256 `{inputs.config_sha256}` (the full YAML is in every manifest); "
            f"git commit `{inputs.git.get('commit') or 'unknown'}`"
            + (" with uncommitted changes" if inputs.git.get("dirty") else "")
            + (f" ({inputs.git.get('error')})" if inputs.git.get("error") else "")
            + f"; seed {inputs.config.get('seed')} (each job derives its stream from the seed and its identity)."
        )
    )
    rows = []
    for stage in inputs.expected_stages:
        path = inputs.manifests.get(stage)
        if path is not None and Path(path).is_file():
            from shuffledp.provenance import read_manifest

            manifest = read_manifest(path)
            sources = [
                f"{Path(r['path']).name} ({(r.get('sha256') or 'missing')[:12]})"
                for r in manifest.get("inputs", [])
            ]
            rows.append(
                [
                    stage,
                    f"[{_relative(path, inputs.report_dir)}]({_relative(path, inputs.report_dir)})",
                    str(len(manifest.get("outputs", []))),
                    "; ".join(sources) or "–",
                    str((manifest.get("git") or {}).get("commit") or "–")[:12],
                    manifest["config"]["sha256"][:12],
                ]
            )
        else:
            rows.append([stage, "absent from this run", "–", "–", "–", "–"])
    blocks.append(Table(["stage", "manifest", "outputs", "inputs (sha256 prefix)", "commit", "config sha256"], rows))
    return blocks


def build_report(inputs: ReportInputs) -> list:
    """The report as a list of blocks (render with :func:`render_markdown` / :func:`render_html`)."""
    rows, problems = read_comparisons(inputs.comparisons)
    summary_frame = pd.read_csv(inputs.data_summary) if inputs.data_summary and Path(inputs.data_summary).is_file() else None
    gaussian = [pd.read_csv(path) for path in _existing(inputs.gaussian_checks)]
    blocks: list = _opening_section(inputs)
    blocks += _findings_section(inputs, rows, summary_frame)
    blocks += _summary_section(inputs, rows, problems)
    blocks += _paper_tables_section(inputs, rows)
    blocks += _text_values_section(inputs, rows)
    blocks += _figures_section(inputs, summary_frame)
    blocks += _extras_section(inputs)
    blocks += _errata(inputs, rows, summary_frame, gaussian)
    blocks += _fps_map_section()
    blocks += _stage_section(inputs)
    return blocks


def _opening_section(inputs: ReportInputs) -> list:
    """Title, what is reproduced (with the time of writing), what the verdicts mean, and warnings of
    stale or missing stages."""
    blocks: list = [Heading(1, inputs.title)]
    created = _dt.datetime.now(tz=_dt.timezone.utc).isoformat(timespec="seconds")
    blocks.append(
        Paragraph(
            "Biswas, Jung, Palamidessi, *Tight Differential Privacy Guarantees for the Shuffle Model with "
            "k-Randomized Response* (arXiv 2022; FPS 2023, LNCS 14551), reproduced by the `shuffledp` workflow. "
            f"Written {created}. Numbering follows the arXiv version (see the map to the FPS version below)."
        )
    )
    blocks.append(
        Paragraph(
            "Verdicts: **reproduced** — our value rounds to the printed one at the printed precision (half a unit "
            "in the last printed digit); **not reproduced** — it does not; **not reproducible as specified** — "
            "the paper does not give what is needed to compute the cell. For the paper's single Monte-Carlo draws "
            "(Tables V, VI and the TV values of its text) **reproduced** means only that the printed value lies inside "
            "our central 95% interval of one draw, a far weaker test (see the verdict strength below). "
            "\u201cAs printed\u201d evaluates the paper's "
            "formula exactly as printed; \u201cexact\u201d is the corrected value. Each table lists the file, the rule "
            "and the checksum it comes from; the stage manifests hold the configuration and input checksums."
        )
    )
    present = sorted({s for s in inputs.expected_stages if inputs.manifests.get(s) and Path(inputs.manifests[s]).is_file()})
    absent = [s for s in inputs.expected_stages if s not in present]
    stale = _stale_stages(inputs, present)
    if stale:
        blocks.append(
            Paragraph(
                "**Stale results:** the manifest of stage(s) "
                + "; ".join(f"{stage} (differs in {', '.join(f'`{k}`' for k in keys[:5])}{', ...' if len(keys) > 5 else ''})"
                            for stage, keys in stale.items())
                + " records a configuration that differs from this run's in keys that matter to the stage; "
                "its tables and figures may come from the older configuration. Rerun the stage "
                "(e.g. `snakemake --cores 2 --forcerun manifest`, or delete its results folder)."
            )
        )
    if absent:
        blocks.append(
            Paragraph(
                f"**Incomplete run:** no manifest for stage(s) {', '.join(absent)}; their tables and figures are "
                "reported as absent below."
            )
        )
    return blocks


def _read_extra(inputs: ReportInputs, name: str, file_name: str | None = None) -> pd.DataFrame | None:
    """The first data file of the section beyond the paper ``name`` (named ``file_name`` if given),
    or None when it is absent or unreadable."""
    for path in _existing((inputs.extras.get(name) or {}).get("data", ())):
        if file_name is None or path.name == file_name:
            try:
                return pd.read_csv(path)
            except (ValueError, OSError):
                return None
    return None


def _findings_section(inputs: ReportInputs, rows: pd.DataFrame, summary_frame: pd.DataFrame | None) -> list:
    """The answer first: one sentence per finding, each with its numbers and a link to its section."""
    bullets = findings(
        rows,
        bracket=_read_extra(inputs, WORST_CASE_BRACKET),
        equal=_read_extra(inputs, EQUAL_GUARANTEE),
        grid=_read_extra(inputs, PHASE_DIAGRAM, "phase_diagram.csv"),
        boundary=_read_extra(inputs, PHASE_DIAGRAM, "phase_diagram_boundary.csv"),
        koskela=_read_extra(inputs, KOSKELA_FIGURES),
        balle=_read_extra(inputs, BALLE_FIGURE),
        summary=summary_frame,
        anchors={"bracket": extra_anchor(WORST_CASE_BRACKET), "equal": extra_anchor(EQUAL_GUARANTEE),
                 "phase": extra_anchor(PHASE_DIAGRAM), "koskela": extra_anchor(KOSKELA_FIGURES),
                 **({"balle": extra_anchor(BALLE_FIGURE)} if "balle" in inputs.expected_stages else {})},
    )
    return [
        Heading(2, "Findings", "findings"),
        Paragraph("Should you collect through a shuffler with k-RR or trust a curator adding Gaussian noise, and "
                  "how far can the paper's numbers be trusted? Each finding is computed from this run's outputs."),
        BulletList(bullets),
    ]


def _summary_section(inputs: ReportInputs, rows: pd.DataFrame, problems: Sequence[str]) -> list:
    """Verdicts per table, the comparison files read, the verdict strength and input problems."""
    blocks: list = [Heading(2, "Reproduced cells per table", "summary")]
    counts = verdict_counts(rows)
    if len(counts):
        blocks.append(Table(list(counts.columns), [[str(v) for v in r] for r in counts.itertuples(index=False)]))
    else:
        blocks.append(Paragraph("No comparison table is present in this run."))
    if inputs.comparisons:
        per_file = rows["source"].value_counts() if len(rows) else pd.Series(dtype=int)
        blocks.append(Paragraph("Comparison files read (every verdict below comes from one of them):"))
        blocks.append(
            BulletList(
                [f"{_trace(path, inputs)}: {int(per_file.get(str(path), 0))} row(s)" for path in inputs.comparisons]
            )
        )
    strength = read_verdict_strength(rows)
    if strength:
        blocks.append(Paragraph("**Verdict strength.** " + strength))
    if problems:
        blocks.append(BulletList([f"Input problem: {p}" for p in problems]))
    return blocks


def _paper_tables_section(inputs: ReportInputs, rows: pd.DataFrame) -> list:
    """One section per table of the paper: its sources, empty cells and the comparison cell by cell."""
    blocks: list = []
    for table, title in PAPER_TABLES.items():
        blocks.append(Heading(2, title, f"table-{table.lower()}"))
        subset = rows[rows["table"] == table] if len(rows) else rows
        if subset.empty:
            blocks.append(Paragraph(f"Table {table}: no comparison rows in this run (the stage's output is absent)."))
            continue
        for source in subset["source"].unique():
            blocks.append(Paragraph("Source: " + _trace(source, inputs) + "."))
        empty_cells = read_empty_cells(subset)
        if empty_cells:
            blocks.append(Paragraph("**Empty cells.** " + empty_cells))
        for block_name, group in subset.groupby("block", sort=False):
            if block_name:
                blocks.append(Heading(3, f"Table {table}, {block_name}"))
            blocks.append(_comparison_table(group))
            _append_strength(blocks, group)
    return blocks


def _text_values_section(inputs: ReportInputs, rows: pd.DataFrame) -> list:
    """Values the paper quotes in its text (comparison rows of no paper table), if any."""
    others = rows[~rows["table"].isin(list(PAPER_TABLES))] if len(rows) else rows
    if not len(others):
        return []
    blocks: list = [Heading(2, "Other values quoted in the paper's text", "text-values")]
    for (table, block_name), group in others.groupby(["table", "block"], sort=False):
        blocks.append(Heading(3, f"{table}: {block_name}" if block_name else str(table)))
        blocks.append(Paragraph("Source: " + ", ".join(_trace(s, inputs) for s in group["source"].unique()) + "."))
        blocks.append(_comparison_table(group))
        _append_strength(blocks, group)
    return blocks


def _figures_section(inputs: ReportInputs, summary_frame: pd.DataFrame | None) -> list:
    """Each figure of the paper: its claim, our reading of its data, the images and the data files."""
    blocks: list = [Heading(2, "Figures", "figures")]
    cell_counts = {}
    for path in _existing(inputs.cell_counts):
        cell_counts[path.parent.name] = pd.read_csv(path)
    for number, spec in FIGURES.items():
        blocks.append(Heading(3, f"Figure {number}: {spec.title}", f"figure-{number}"))
        images = _existing(inputs.figures.get(number, ()))
        data_paths = _existing(inputs.figure_data.get(number, ()))
        blocks.append(Paragraph(f"Paper: {spec.claim}"))
        reading = _figure_reading(number, data_paths, summary_frame, cell_counts)
        blocks.append(Paragraph(f"Ours: {reading}"))
        if images:
            for image in images:
                blocks.append(
                    Figure(image, f"Figure {number} ({_trace(image, inputs)})", _relative(image, inputs.report_dir))
                )
        else:
            blocks.append(Paragraph(f"Figure {number} is absent from this run (stage `{spec.stage}`)."))
        if data_paths:
            blocks.append(Paragraph("Data: " + "; ".join(_trace(p, inputs) for p in data_paths) + "."))
    return blocks


def _extras_section(inputs: ReportInputs) -> list:
    """One section per output beyond the paper that is present: our reading, its images and data."""
    blocks: list = []
    for name, extra in inputs.extras.items():
        images, data_paths = _existing(extra.get("images", ())), _existing(extra.get("data", ()))
        if not images and not data_paths:
            continue
        blocks.append(Heading(2, f"Beyond the paper: {name}", extra_anchor(name)))
        blocks.append(Paragraph("**Answer.** " + _extra_answer(name, inputs, data_paths)))
        reader = _extra_reader(name, inputs.config)
        readings = []
        for path in data_paths:
            try:
                text = reader(pd.read_csv(path))
                readings.append(text if len(data_paths) == 1 else f"[{path.name}] {text}")
            except ValueError as error:
                readings.append(f"the data file `{path}` could not be read ({error})")
        blocks.append(Paragraph("Ours: " + (" ".join(readings) or "no data file, so no reading is given.")))
        for image in images:
            blocks.append(Figure(image, f"{_extra_caption(name, image)} ({_trace(image, inputs)})",
                                 _relative(image, inputs.report_dir)))
        if data_paths:
            blocks.append(Paragraph("Data: " + "; ".join(_trace(p, inputs) for p in data_paths) + "."))
    return blocks


def _first_sentence(text: str) -> str:
    """Up to the first full stop followed by a capital (so "eq. (6)" does not end a sentence)."""
    match = re.search(r"\.\s+(?=[A-Z`])", text)
    return text if match is None else text[: match.start() + 1]


#: captions of the images of sections beyond the paper (workflow/report/*.rst, shortened); default: the section name
_EXTRA_CAPTIONS = {
    BALLE_FIGURE: ("Balle et al. Fig. 3, four panels: lines ours, open markers the authors' code at the same points, "
                   "grey our reference curves (certified worst case for k-RR, feldman-numerical for any ε0-LDP "
                   "randomizer)"),
    PHASE_DIAGRAM: ("Phase diagram, {stem}: exact ratio of the expected TV of shuffled k-RR + INV (at the largest ε0 "
                    "the configured accountant allows) to that of the analytic Gaussian at the same (ε, δ), over n and "
                    "ε, one panel per k; blue: the shuffle is better; black line: equal expected error; markers: the "
                    "equal-guarantee Monte-Carlo verdicts"),
}


def _extra_caption(name: str, image: Path) -> str:
    stem = image.stem.replace("phase_diagram_", "δ rule ").replace("n_pow_", "1/n^").replace("fixed_", "fixed ")
    return _EXTRA_CAPTIONS.get(name, name).format(stem=stem)


def _extra_answer(name: str, inputs: ReportInputs, data_paths: Sequence[Path]) -> str:
    """The one-sentence answer a section beyond the paper opens with, computed from its data: the finding
    of the sections the Findings cite, else the first sentence of the section's reading."""
    answers = {
        WORST_CASE_BRACKET: lambda: finding_bracket(_read_extra(inputs, name), extra_anchor(name)),
        EQUAL_GUARANTEE: lambda: finding_equal_guarantee(_read_extra(inputs, name), extra_anchor(name)),
        PHASE_DIAGRAM: lambda: finding_phase_diagram(_read_extra(inputs, name, "phase_diagram.csv"),
                                                     _read_extra(inputs, name, "phase_diagram_boundary.csv"),
                                                     extra_anchor(name)),
        KOSKELA_FIGURES: lambda: finding_koskela(_read_extra(inputs, name), extra_anchor(name)),
    }
    if name in answers:
        return answers[name]().replace(f" ([section](#{extra_anchor(name)}))", "")
    if not data_paths:
        return "no data file in this run, so no answer is given."
    try:
        return _first_sentence(_extra_reader(name, inputs.config)(pd.read_csv(data_paths[0])))
    except ValueError as error:
        return f"the data file `{data_paths[0]}` could not be read ({error})."


def _extra_reader(name: str, config: Mapping) -> Callable[[pd.DataFrame], str]:
    """The reading of a section beyond the paper (:data:`shuffledp.report.inputs.EXTRA_SECTIONS`);
    a method comparison for any other name."""
    utility = config.get("utility") or {}
    readers = {
        CROSSOVER: lambda frame: read_crossover(
            frame, upper=utility.get("accountant"), lower=utility.get("lower_accountant")),
        DELTA_SWEEPS: read_sweep,
        EPSILON_AT_FIXED_DELTA: read_epsilon_comparison,
        WORST_CASE_BRACKET: lambda frame: read_bracket(frame, utility_accountant=utility.get("accountant")),
        THREE_CALIBRATIONS: read_three_calibrations,
        DELTA_FLOOR: read_delta_floor,
        EQUAL_GUARANTEE: read_equal_guarantee,
        KOSKELA_FIGURES: read_koskela_verdicts,
        GIRGIS_FIGURE: read_girgis_verdicts,
        BALLE_FIGURE: read_balle_verdicts,
        PHASE_DIAGRAM: read_phase_diagram,
    }
    return readers.get(name, read_method_comparison)


def _fps_map_section() -> list:
    """The FPS 2023 figure and table numbers against the arXiv 2022 ones."""
    return [
        Heading(2, "FPS 2023 numbering vs arXiv 2022 numbering", "fps-map"),
        Table(["FPS 2023", "arXiv 2022", "evidence in the FPS text"], [list(r) for r in FPS_TO_ARXIV]),
        Paragraph(FPS_NOT_VISIBLE),
    ]


def _append_strength(blocks: list, group: pd.DataFrame) -> None:
    table = strength_table(group)
    if table is not None:
        blocks.append(Paragraph(
            f"Strength of the single-draw verdicts above: the interval each printed draw was tested against, its "
            f"width, and the probability that a value {STRENGTH_FACTOR:g}× larger or smaller than our draws would "
            "still pass."))
        blocks.append(table)


def _figure_reading(number: int, data_paths: Sequence[Path], summary, cell_counts) -> str:
    if number == 3:
        return read_data_counts(summary, cell_counts)
    if not data_paths:
        return "no data file for this figure in this run, so no reading is given."
    readings = []
    for path in data_paths:
        frame = pd.read_csv(path)
        try:
            if number == 1:
                text = read_delta_surface(frame)
            elif "tv_gaussian" in frame.columns:
                text = read_heatmap_summary(frame)
            else:
                text = read_method_comparison(frame)
        except ValueError as error:
            text = f"the data file `{path}` could not be read ({error})"
        readings.append(text if len(data_paths) == 1 else f"[{path.name}] {text}")
    return " ".join(readings)
