"""The main part of the report after its opening: one section per seed paper (Biswas; Koskela; Balle;
Girgis), each showing that stage's figures and its verdicts counted, then our own work beyond the papers
(the first sentence of each reading and its figures). Long readings and per-cell or per-curve tables are left to
:mod:`~shuffledp.report.appendix`, which continues each reading where the main part stops.

Room: picks each section's data by its name in :mod:`~shuffledp.report.inputs`; calls
:mod:`~shuffledp.report.readings`, :mod:`~shuffledp.report.beyond`, :mod:`~shuffledp.report.judge`,
:mod:`~shuffledp.report.verdicts`, :mod:`~shuffledp.report.findings` and returns
:mod:`~shuffledp.report.blocks`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from pathlib import Path

import pandas as pd

from shuffledp.experiments.guarantees import BRACKET_GOAL
from shuffledp.report.balle import read_balle_verdicts
from shuffledp.report.beyond import (
    read_delta_floor,
    read_equal_guarantee,
    read_koskela_verdicts,
    read_phase_diagram,
    read_rounds,
    read_three_calibrations,
)
from shuffledp.report.blocks import Figure, Heading, Paragraph, Table
from shuffledp.report.findings import OURS_ONLY, extra_anchor, file_added, lower_bound_sentence
from shuffledp.report.girgis import read_girgis_verdicts
from shuffledp.report.hypotheses import closest_hypotheses
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
    PHASE_DIAGRAM_ROUNDS,
    THREE_CALIBRATIONS,
    WHICH_RANDOMIZER,
    WORST_CASE_BRACKET,
)
from shuffledp.report.judge import read_data_counts
from shuffledp.report.paper import FIGURES, PAPER_TABLES
from shuffledp.report.randomizers import read_randomizers
from shuffledp.report.read import ReportInputs, existing_files, relative_link
from shuffledp.report.readings import (
    read_bracket,
    read_crossover,
    read_delta_surface,
    read_epsilon_comparison,
    read_heatmap_summary,
    read_method_comparison,
    read_sweep,
)
from shuffledp.report.verdicts import EXPLAINED, is_guarantee, level_counts, seed_counts

__all__ = [
    "SEED_SECTIONS",
    "SEED_ANCHORS",
    "IMAGE_CAPTIONS",
    "split_first_sentence",
    "read_extra",
    "read_extra_all",
    "extra_reader",
    "figure_reading",
    "biswas_section",
    "seed_section",
    "beyond_section",
    "extra_readings",
    "cell_counts_of",
    "read_hypotheses",
    "hypotheses_sentence",
]

#: the sections beyond the paper that are another seed paper's (name -> its section's title)
SEED_SECTIONS = {
    KOSKELA_FIGURES: "Koskela et al.: Figures 1-4 (shuffled Gaussian and compositions)",
    BALLE_FIGURE: "Balle et al.: Figure 3 (the privacy blanket)",
    GIRGIS_FIGURE: "Girgis et al.: Figure 2 (Rényi DP of shuffling)",
}
#: anchors of the four seed papers' sections
SEED_ANCHORS = {
    "Biswas": "biswas",
    KOSKELA_FIGURES: "koskela",
    BALLE_FIGURE: "balle",
    GIRGIS_FIGURE: "girgis",
}


def split_first_sentence(text: str) -> tuple[str, str]:
    """(first sentence, the rest): the first full stop followed by a space ends it, except after "Fig",
    "eq", "et al", "vs", "e.g" and "i.e"."""
    match = re.search(r"(?<!Fig)(?<!eq)(?<!Eq)(?<!al)(?<!vs)(?<!e\.g)(?<!i\.e)\.\s+(?=\S)", text)
    if match is None:
        return text, ""
    return text[: match.start() + 1], text[match.end() :].strip()


def read_extra(inputs: ReportInputs, name: str, file_name: str | None = None) -> pd.DataFrame | None:
    """The first data file of the section ``name`` (named ``file_name`` if given), or None when it is
    absent or unreadable."""
    for path in existing_files((inputs.extras.get(name) or {}).get("data", ())):
        if file_name is None or path.name == file_name:
            try:
                return pd.read_csv(path)
            except (ValueError, OSError):
                return None
    return None


def read_extra_all(inputs: ReportInputs, name: str) -> pd.DataFrame | None:
    """Every data file of the section ``name`` concatenated (each row keeps its file in ``source``), or
    None when there is none."""
    frames = []
    for path in existing_files((inputs.extras.get(name) or {}).get("data", ())):
        try:
            frames.append(pd.read_csv(path).assign(source=str(path)))
        except (ValueError, OSError):
            continue
    return pd.concat(frames, ignore_index=True) if frames else None


def extra_reader(name: str, config: Mapping) -> Callable[[pd.DataFrame], str]:
    """The reading of a section beyond the paper (:data:`shuffledp.report.inputs.EXTRA_SECTIONS`);
    a method comparison for any other name."""
    utility = config.get("utility") or {}
    readers = {
        CROSSOVER: lambda frame: read_crossover(
            frame, upper=utility.get("accountant"), lower=utility.get("lower_accountant")
        ),
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
        PHASE_DIAGRAM_ROUNDS: read_rounds,
        WHICH_RANDOMIZER: read_randomizers,
    }
    return readers.get(name, read_method_comparison)


def extra_readings(inputs: ReportInputs, name: str) -> str:
    """The full reading of the section ``name``, one per data file."""
    paths = existing_files((inputs.extras.get(name) or {}).get("data", ()))
    reader, readings = extra_reader(name, inputs.config), []
    if (
        name == PHASE_DIAGRAM
    ):  # the boundary leaves out the panels the grid says are not calibrated by a guarantee
        grid = read_extra(inputs, name, "phase_diagram.csv")
        column = next(
            (c for c in ("calibration", "accountant") if grid is not None and c in grid.columns), None
        )
        uncertified = (
            {int(k) for k, n in zip(grid["k"], grid[column]) if not is_guarantee(n)}
            if column and grid is not None
            else set()
        )
        reader = lambda frame: read_phase_diagram(frame, uncertified_k=uncertified)
    for path in paths:
        try:
            text = reader(pd.read_csv(path))
        except ValueError as error:
            text = f"the data file `{path}` could not be read ({error})"
        readings.append(text if len(paths) == 1 else f"[{path.name}] {text}")
    return " ".join(readings)


#: captions of the seed papers' figures by file name (workflow/report/*.rst, shortened): each names the
#: paper and the figure its file draws (tests/report check the number against the file name)
IMAGE_CAPTIONS = {
    "koskela_fig1": (
        "Koskela et al. Fig. 1: δ(ε) of the clones pair after n_c compositions, one panel per n_c; lines "
        "ours (PLD, numerical RDP, Feldman et al.'s method), open markers the values stored in their code"
    ),
    "koskela_fig2": (
        "Koskela et al. Fig. 2: ε at δ = 1/n of the subsampled shuffler against n_c; lines ours (PLD, "
        "Girgis et al.'s RDP bound, a certified lower bound), open markers their stored values"
    ),
    "koskela_fig3": (
        "Koskela et al. Fig. 3: ε(δ) of shuffled k-RR, one panel per n_c; lines ours, open markers their "
        "stored values; curves that coincide are named in a note on the panel"
    ),
    "koskela_fig4": (
        "Koskela et al. Fig. 4 setting: δ(ε) of shuffled Gaussian noise by importance sampling with its "
        "confidence band; σ, d and the ε grid are ours (the paper states none), so nothing is compared"
    ),
    "balle_fig3": (
        "Balle et al. Fig. 3, four panels: lines ours, open markers the authors' code at the same points, "
        "grey our reference curves (the k-RR worst case at k = 2 is tight; feldman-numerical and "
        "worst-case-upper at k ≥ 4 are upper bounds that need not be)"
    ),
    "balle_fig2": (
        "Balle et al. Fig. 2: the ε0-LDP Laplace randomizer split into the privacy blanket γω shared by "
        "every input and the data-dependent densities ω_x (ε0 and the inputs are ours)"
    ),
    "girgis_fig2": (
        "Girgis et al. Fig. 2 setting: Rényi-DP ε(λ) of the shuffle against the order λ, one panel per ε0; "
        "solid the upper bounds of Thm 3.1 and 3.3, dashed the lower bound of Thm 3.4, dotted the trivial "
        "ε(λ) ≤ ε0 (n and ε0 are ours)"
    ),
}
#: captions of the images of sections beyond the paper (workflow/report/*.rst, shortened); default: the name
_EXTRA_CAPTIONS = {
    WORST_CASE_BRACKET: (
        "Worst-case bracket against n, one panel per k: ε_upper / ε_lower − 1 (log scale), markers per "
        f"ε0 and δ, joined only between n at most 10× apart; solid line the goal ratio {BRACKET_GOAL:g}, "
        "stars the large-ε0 ends (every value in "
        "bracket.csv)"
    ),
    PHASE_DIAGRAM: (
        "Phase diagram, {stem}: exact ratio of the expected ½L1 error of shuffled k-RR + INV to that of the "
        "analytic Gaussian (both unprojected) at the same (ε, δ), over the computed n and ε, one panel per k "
        "(the accountant of each panel is in its title and in phase_diagram.csv); grey: neither is useful"
    ),
    PHASE_DIAGRAM_ROUNDS: (
        "Phase diagram over T rounds: exact ratio of the expected ½L1 error of the average of T rounds, "
        "shuffled k-RR + INV to the Gaussian (both unprojected), each calibrated to one total (ε, δ), "
        "against the computed T; one series per (q, n, ε), one panel per k"
    ),
}


def _numbered_caption(number, image: Path) -> str:
    return f"Figure {number} ({image.name})"


def _caption(name: str, image: Path) -> str:
    if image.stem in IMAGE_CAPTIONS:
        return IMAGE_CAPTIONS[image.stem]
    stem = (
        image.stem.replace("phase_diagram_", "δ rule ").replace("n_pow_", "1/n^").replace("fixed_", "fixed ")
    )
    return _EXTRA_CAPTIONS.get(name, f"{name}: {image.stem}").format(stem=stem)


def _figures(inputs: ReportInputs, images: Sequence[Path], caption: Callable[[Path], str]) -> list:
    return [Figure(image, caption(image), relative_link(image, inputs.report_dir)) for image in images]


#: the sections beyond the papers drawn from the utility stage's grids (their captions say which grid ran)
_UTILITY_EXTRAS = frozenset(
    {CROSSOVER, THREE_CALIBRATIONS, EQUAL_GUARANTEE, DELTA_FLOOR, PHASE_DIAGRAM, PHASE_DIAGRAM_ROUNDS}
)


def _with_grid(caption: Callable[[Path], str], words: str, image: Path) -> str:
    return f"{caption(image)}; {words}"


def grid_words(config) -> str:
    """Which grid ran, for the captions of the utility figures: "grid: default profile (config/config.yaml)"
    or "grid: quick profile (a coarse stand-in grid, not config/config.yaml's)".

    Args:
        config: the run's configuration (its ``grid_profile``; absent: "default").

    Returns:
        The words, without punctuation around them.
    """
    profile = str((config or {}).get("grid_profile") or "default")
    if profile == "default":
        return "grid: default profile (config/config.yaml)"
    return f"grid: {profile} profile (a coarse stand-in grid, not config/config.yaml's)"


def figure_reading(number: int, inputs: ReportInputs, summary, cell_counts) -> str:
    """Our reading of the paper's Figure ``number`` from its data files."""
    data_paths = existing_files(inputs.figure_data.get(number, ()))
    if number == 3:
        return read_data_counts(summary, cell_counts)
    if not data_paths:
        return "no data file for this figure in this run, so no reading is given."
    readings = []
    for path in data_paths:
        try:
            frame = pd.read_csv(path)
            text = (
                read_delta_surface(frame)
                if number == 1
                else read_heatmap_summary(frame)
                if "l1_half_gaussian" in frame.columns
                else read_method_comparison(frame)
            )
        except ValueError as error:
            text = f"the data file `{path}` could not be read ({error})"
        readings.append(text if len(data_paths) == 1 else f"[{path.name}] {text}")
    return " ".join(readings)


def cell_counts_of(inputs: ReportInputs) -> dict:
    return {path.parent.name: pd.read_csv(path) for path in existing_files(inputs.cell_counts)}


def biswas_section(inputs: ReportInputs, cells: pd.DataFrame, summary) -> list:
    """Biswas et al.: the levels per table (cells counted once), then each figure: the paper's claim, the
    first sentence of our reading (the rest in the appendix) and the images."""
    blocks: list = [Heading(2, "Biswas et al.: tables and figures", SEED_ANCHORS["Biswas"])]
    counts = level_counts(cells) if len(cells) else pd.DataFrame()
    if len(counts):
        blocks.append(
            Paragraph(
                "Cells per table by level (a cell printed in two blocks counted once; each cell with "
                "its values, level and distance is in the [appendix](#appendix-cells)):"
            )
        )
        named = {
            t: PAPER_TABLES[t].split(":")[0] if t in PAPER_TABLES else f"{t} (values in the text)"
            for t in counts["table"]
        }
        blocks.append(
            Table(
                list(counts.columns),
                [[named[r[0]], *(str(v) for v in r[1:])] for r in counts.itertuples(index=False)],
            )
        )
    else:
        blocks.append(Paragraph("No comparison table is present in this run."))
    absent = [PAPER_TABLES[t].split(":")[0] for t in PAPER_TABLES if t not in set(cells.get("table", ()))]
    if absent:
        blocks.append(
            Paragraph(
                f"No comparison rows in this run for {', '.join(absent)} (their stage's output is absent)."
            )
        )
    hypotheses = hypotheses_sentence(inputs)
    if hypotheses:
        blocks.append(Paragraph(hypotheses))
    counts_by_region = cell_counts_of(inputs)
    for number, spec in FIGURES.items():
        blocks.append(Heading(3, f"Figure {number}: {spec.title}", f"figure-{number}"))
        first, _ = split_first_sentence(figure_reading(number, inputs, summary, counts_by_region))
        blocks.append(
            Paragraph(f"Paper: {spec.claim} Ours: {first}" + f" ([more](#appendix-figure-{number}))")
        )
        images = existing_files(inputs.figures.get(number, ()))
        if spec.stage == "utility":
            words = grid_words(inputs.config)
            blocks += _figures(inputs, images, partial(_with_grid, partial(_numbered_caption, number), words))
        else:
            blocks += _figures(inputs, images, partial(_numbered_caption, number))
        if not images:
            blocks.append(Paragraph(f"Figure {number} is absent from this run (stage `{spec.stage}`)."))
    return blocks


def read_hypotheses(inputs: ReportInputs) -> pd.DataFrame | None:
    """``table2_hypotheses.csv`` of this run, or None."""
    path = inputs.hypotheses
    return pd.read_csv(path, dtype={"paper": str}) if path is not None and Path(path).is_file() else None


def hypotheses_sentence(inputs: ReportInputs) -> str:
    """Which fixed hypotheses were tried for Table II's n = 1,000 "Our δ" cells and how close the closest came."""
    frame = read_hypotheses(inputs)
    if frame is None or frame.empty:
        return ""
    summary = closest_hypotheses(frame)
    best = summary.iloc[0]
    return (
        f"Table II's n = 1,000 \u201cOur δ\u201d cells are off by orders of magnitude, so {len(summary)} readings of "
        f"the paper fixed in advance were each evaluated at all {int(best['cells'])} cells "
        f"({'; '.join(summary['hypothesis'])}); the closest, \u201c{best['hypothesis']}\u201d, is still a median "
        f"{best['median_orders']:.1f} and up to {best['largest_orders']:.1f} orders of magnitude from the printed "
        f"values ([every value](#appendix-hypotheses))."
    )


def _seed_counts_table(frame: pd.DataFrame | None, group: Sequence[str]) -> Table | None:
    if frame is None or "verdict" not in frame.columns or frame.empty:
        return None
    keys = [c for c in group if c in frame.columns]
    keyed = frame.assign(**{c: frame[c].astype(object).where(frame[c].notna(), "–") for c in keys})
    per_group = [
        (key if isinstance(key, tuple) else (key,), seed_counts(rows))
        for key, rows in (keyed.groupby(keys, sort=False) if keys else [((), keyed)])
    ]
    labels = list(dict.fromkeys(label for _, counts in per_group for label in counts))
    return Table(
        [*keys, "rows", *labels],
        [
            [*(str(k) for k in key), str(sum(counts.values())), *(str(counts.get(v, 0)) for v in labels)]
            for key, counts in per_group
        ],
    )


#: how each seed paper's verdict rows are grouped in its section's table (by file name, else by section)
_SEED_GROUPS = {
    KOSKELA_FIGURES: ("figure", "curve"),
    BALLE_FIGURE: ("code", "panel"),
    GIRGIS_FIGURE: ("claim",),
    "koskela_fig4_verdicts.csv": ("figure",),
}


def seed_section(inputs: ReportInputs, name: str) -> list:
    """A seed paper's section: its verdicts counted per group (rows explained by a known cause counted as
    such), the figures of its stage, and a link to its per-curve table in the appendix."""
    blocks: list = [Heading(2, SEED_SECTIONS[name], SEED_ANCHORS[name])]
    extra = inputs.extras.get(name) or {}
    images, data_paths = existing_files(extra.get("images", ())), existing_files(extra.get("data", ()))
    if not images and not data_paths:
        return blocks + [Paragraph("This stage did not run (no figure and no verdict table in this run).")]
    for path in data_paths:
        frame = pd.read_csv(path)
        if (
            path.name == "koskela_verdicts.csv"
        ):  # our curves without published values are no failed reproduction
            frame = file_added(frame)
            below = lower_bound_sentence(frame)
            if below:
                blocks.append(Paragraph(f"**Certified lower bound.** {below}."))
        table = _seed_counts_table(frame, _SEED_GROUPS.get(path.name, _SEED_GROUPS.get(name, ())))
        if table is not None:
            blocks.append(
                Paragraph(
                    f"Verdicts of `{path.name}` counted from its `verdict` column (\u201c{EXPLAINED}\u201d: "
                    f"not reproduced, with a known cause; "
                    + (
                        f"\u201c{OURS_ONLY}\u201d: a curve of ours drawn beside the published ones; "
                        if path.name == "koskela_verdicts.csv"
                        else ""
                    )
                    + "every row in the [appendix]"
                    f"(#appendix-{SEED_ANCHORS[name]})):"
                )
            )
            blocks.append(table)
    blocks += _figures(inputs, images, lambda image: _caption(name, image))
    return blocks


def beyond_section(inputs: ReportInputs) -> list:
    """Our work beyond the papers: per section, the one-sentence answer (the rest of its reading in the
    appendix) and its figures."""
    blocks: list = [Heading(2, "Beyond the papers", "beyond")]
    for name, extra in inputs.extras.items():
        if name in SEED_SECTIONS:
            continue
        images, data_paths = existing_files(extra.get("images", ())), existing_files(extra.get("data", ()))
        if not images and not data_paths:
            continue
        blocks.append(Heading(3, name[0].upper() + name[1:], extra_anchor(name)))
        first = split_first_sentence(extra_readings(inputs, name))[0] or "No data file in this run."
        blocks.append(Paragraph(first + f" ([more](#appendix-{extra_anchor(name)}))"))
        if name in _UTILITY_EXTRAS:
            words = grid_words(inputs.config)
            blocks += _figures(inputs, images, partial(_with_grid, partial(_caption, name), words))
        else:
            blocks += _figures(inputs, images, partial(_caption, name))
    return blocks
