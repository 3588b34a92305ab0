"""Which workflow outputs the report reads, and in which role (comparison table, figure, figure data,
Gaussian check, a section beyond the paper, cell counts, the data summary).

Room: plain data in, plain data out. It takes lists of paths (the workflow's final targets and the
wildcard-free outputs of its rules), the stages the report covers and the config; it never opens a
file and never sees Snakemake's ``workflow`` object, so ``workflow/rules/report.smk`` keeps only
what needs Snakemake (the rules, which rule produces a path) and hands the lists to
:func:`classify_report_reads`. The names of the sections beyond the paper (:data:`EXTRA_SECTIONS`)
are the keys :mod:`~shuffledp.report.build` picks each section's reading by.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

__all__ = [
    "RESULT_STAGES",
    "DELTA_SWEEPS",
    "EPSILON_AT_FIXED_DELTA",
    "WORST_CASE_BRACKET",
    "CROSSOVER",
    "THREE_CALIBRATIONS",
    "KOSKELA_FIGURES",
    "GIRGIS_FIGURE",
    "BALLE_FIGURE",
    "EQUAL_GUARANTEE",
    "DELTA_FLOOR",
    "PHASE_DIAGRAM",
    "PHASE_DIAGRAM_ROUNDS",
    "WHICH_RANDOMIZER",
    "EXTRA_SECTIONS",
    "ReportReads",
    "stage_of",
    "plain_outputs",
    "stage_outputs",
    "manifest_stages",
    "benchmark_globs",
    "figure_number",
    "classify_report_reads",
    "stage_inputs",
]

#: the stages that write into ``results/<stage>/`` and get a manifest (the report stage aside)
RESULT_STAGES = ("data", "accounting", "utility", "koskela", "girgis", "balle")

# Sections beyond the paper, in the order the report shows them (name -> images, data).
DELTA_SWEEPS = "delta sweeps"
EPSILON_AT_FIXED_DELTA = "epsilon at a fixed delta"  # figure + data
WORST_CASE_BRACKET = "worst-case bracket"  # table and its figure
CROSSOVER = "crossover"
THREE_CALIBRATIONS = "three calibrations"  # the paper's comparisons under three Gaussian calibrations
KOSKELA_FIGURES = "Koskela et al. Figures 1-3"  # compositions, one verdict per published curve
GIRGIS_FIGURE = "Girgis et al. Figure 2"  # RDP upper vs lower bounds, one verdict per curve and claim
BALLE_FIGURE = "Balle et al. Figure 3"  # four panels against the authors' code
EQUAL_GUARANTEE = "equal guarantee"  # which mechanism at an equal (epsilon, delta) guarantee
DELTA_FLOOR = "delta floor"  # what the delta floor decides
PHASE_DIAGRAM = "phase diagram"  # where shuffle+INV and the Gaussian have equal expected error
PHASE_DIAGRAM_ROUNDS = "phase diagram over rounds"  # how the verdict moves with T rounds
WHICH_RANDOMIZER = "which randomizer to shuffle"  # every shuffled randomizer at its certified eps0
EXTRA_SECTIONS = (
    DELTA_SWEEPS,
    EPSILON_AT_FIXED_DELTA,
    WORST_CASE_BRACKET,
    CROSSOVER,
    THREE_CALIBRATIONS,
    KOSKELA_FIGURES,
    GIRGIS_FIGURE,
    BALLE_FIGURE,
    EQUAL_GUARANTEE,
    PHASE_DIAGRAM,
    PHASE_DIAGRAM_ROUNDS,
    WHICH_RANDOMIZER,
    DELTA_FLOOR,
)
#: data files of the phase-diagram section (the Monte-Carlo markers are drawn on its figures)
_PHASE_DIAGRAM_DATA = ("phase_diagram.csv", "phase_diagram_boundary.csv")

_IMAGE_SUFFIXES = (".png", ".svg", ".jpg", ".jpeg", ".pdf")
_FIGURE_NAME = re.compile(r"^fig(?:ure)?_?(\d+)")
#: utility files that carry both sigma columns besides the figure data (Gaussian calibration checks)
_GAUSSIAN_CHECK_NAMES = ("text_tv.csv", "crossover.csv")
#: Figures 4-7 are drawn per Gowalla region; config key of the figure's name -> the data file it draws
_GOWALLA_FIGURE_FILES = (("heatmap_figure", "heatmap_summary.csv"), ("boxplot_figure", "community.csv"))


@dataclass(frozen=True)
class ReportReads:
    """The outputs the report reads, by role (paths as strings, relative to the workflow directory)."""

    comparisons: list[str] = field(default_factory=list)
    figures: dict[int, list[str]] = field(default_factory=dict)  # figure number -> images
    figure_data: dict[int, list[str]] = field(default_factory=dict)  # figure number -> data files
    gaussian_checks: list[str] = field(default_factory=list)
    extras: dict[str, dict[str, list[str]]] = field(default_factory=dict)  # section -> images, data
    cell_counts: list[str] = field(default_factory=list)
    data_summary: str | None = None

    def paths(self) -> list[str]:
        """Every path read, sorted, once."""
        paths = [*self.comparisons, *self.gaussian_checks, *self.cell_counts]
        paths += [self.data_summary] if self.data_summary else []
        for group in (self.figures, self.figure_data):
            paths += [p for items in group.values() for p in items]
        paths += [p for extra in self.extras.values() for items in extra.values() for p in items]
        return sorted(set(paths))


def stage_of(path) -> str | None:
    """``results/<stage>/...`` -> ``<stage>``; None for any other path."""
    parts = Path(str(path)).parts
    return parts[1] if len(parts) > 2 and parts[0] == "results" else None


def plain_outputs(targets: Iterable, rule_outputs: Iterable) -> list[str]:
    """Final targets plus every wildcard-free rule output (e.g. comparison CSVs), sorted, once."""
    paths = {str(target) for target in targets}
    paths.update(str(item) for item in rule_outputs if "{" not in str(item))
    return sorted(paths)


def stage_outputs(targets: Iterable, stages: Sequence[str] = RESULT_STAGES) -> dict[str, list[str]]:
    """Stage -> its final targets under ``results/<stage>/`` (manifests excluded), sorted."""
    targets = {str(t) for t in targets}
    return {
        stage: sorted(t for t in targets if stage_of(t) == stage and not t.endswith("MANIFEST.json"))
        for stage in stages
    }


def manifest_stages(outputs: Mapping[str, Sequence[str]], report_stages: Sequence[str]) -> list[str]:
    """The result stages that get a manifest: covered by the report and with final outputs (a stage
    with none is not in this workflow or not requested; the report then states that it is absent)."""
    return [s for s in RESULT_STAGES if s in report_stages and outputs.get(s)]


def benchmark_globs(rules: Iterable[tuple[object, Sequence]], stage: str) -> list[str]:
    """Glob patterns of the benchmark files of the rules that write into ``results/<stage>/``.

    ``rules``: one (benchmark pattern or None, output patterns) pair per rule; wildcards become ``*``.
    """
    patterns = {
        re.sub(r"\{[^}]+\}", "*", str(benchmark))
        for benchmark, outputs in rules
        if benchmark is not None and any(stage_of(item) == stage for item in outputs)
    }
    return sorted(patterns)


def figure_number(path, *, data: bool) -> int | None:
    """The paper's figure number of ``fig<N>...`` / ``figure_<N>...``: of an image (``data=False``)
    or of a CSV (``data=True``); None for any other file."""
    match = _FIGURE_NAME.match(Path(path).name)
    if not match:
        return None
    suffix = Path(path).suffix.lower()
    is_image, is_data = suffix in _IMAGE_SUFFIXES, suffix == ".csv"
    return int(match.group(1)) if (is_data if data else is_image) else None


def _figures(paths: Iterable[str], *, data: bool) -> dict[int, list[str]]:
    found: dict[int, list[str]] = {}
    for path in paths:
        number = figure_number(path, data=data)
        if number is not None:
            found.setdefault(number, []).append(path)
    return found


def _gowalla_figure_data(config: Mapping, produced: Callable[[str], bool]) -> dict[int, list[str]]:
    """Figures 4-7 are drawn per region from files named by the utility config (heat-map summary,
    community TV runs); map each figure number to those files when a rule of the workflow makes them."""
    found: dict[int, list[str]] = {}
    regions = ((config.get("utility") or {}).get("gowalla") or {}).get("regions") or {}
    for region, entry in regions.items():
        for key, data in _GOWALLA_FIGURE_FILES:
            number = figure_number(f"{entry.get(key, '')}.png", data=False)
            path = f"results/utility/gowalla/{region}/{data}"
            if number is not None and produced(path):
                found.setdefault(number, []).append(path)
    return found


def _images_and_data(paths: Iterable[str]) -> dict[str, list[str]]:
    paths = list(paths)
    return {
        "images": [p for p in paths if p.endswith(".png")],
        "data": [p for p in paths if p.endswith(".csv")],
    }


def _extras(outputs: list[str], sweeps: list[str], figure_data: Mapping[int, list[str]]) -> dict:
    """Outputs beyond the paper that the report shows in their own section (name -> images, data)."""

    def named(prefix):
        return [p for p in outputs if Path(p).name.startswith(prefix)]

    def under(prefix):
        return [p for p in outputs if p.startswith(prefix)]

    community = sorted({p for paths in figure_data.values() for p in paths if p.endswith("/community.csv")})
    return {
        DELTA_SWEEPS: _images_and_data(sweeps),
        EPSILON_AT_FIXED_DELTA: _images_and_data(under("results/accounting/epsilon_comparison")),
        WORST_CASE_BRACKET: _images_and_data(under("results/accounting/bracket")),  # table and figure
        CROSSOVER: _images_and_data(named("crossover")),
        THREE_CALIBRATIONS: {
            "images": [],
            "data": [p for p in outputs if p == "results/utility/fig2.csv"] + community,
        },
        KOSKELA_FIGURES: {
            "images": sorted(p for p in outputs if p.startswith("results/koskela/") and p.endswith(".png")),
            # Figs 1-3 first (the Findings read the first file), then Fig. 4's own table
            "data": [p for p in outputs if p == "results/koskela/koskela_verdicts.csv"]
            + [p for p in outputs if p == "results/koskela/koskela_fig4_verdicts.csv"],
        },
        GIRGIS_FIGURE: {
            "images": sorted(p for p in outputs if p.startswith("results/girgis/") and p.endswith(".png")),
            "data": [p for p in outputs if p == "results/girgis/girgis_verdicts.csv"],
        },
        BALLE_FIGURE: {
            "images": sorted(p for p in outputs if p.startswith("results/balle/") and p.endswith(".png")),
            # the verdicts first (the Findings read the first file), then the claims the corrected code overturns
            "data": [p for p in outputs if p == "results/balle/balle_verdicts.csv"]
            + [p for p in outputs if p == "results/balle/balle_claims.csv"],
        },
        EQUAL_GUARANTEE: {
            "images": [p for p in named("equal_guarantee") if p.endswith(".png")],
            "data": [p for p in outputs if Path(p).name == "equal_guarantee_ratio.csv"],
        },
        PHASE_DIAGRAM: {
            "images": sorted(
                p
                for p in named("phase_diagram_")
                if p.endswith(".png") and not Path(p).name.startswith("phase_diagram_rounds")
            ),
            "data": [p for p in under("results/utility/") if Path(p).name in _PHASE_DIAGRAM_DATA],
        },
        PHASE_DIAGRAM_ROUNDS: {
            "images": [p for p in named("phase_diagram_rounds") if p.endswith(".png")],
            "data": [p for p in under("results/utility/") if Path(p).name == "phase_diagram_rounds.csv"],
        },
        WHICH_RANDOMIZER: {
            "images": [p for p in under("results/utility/") if Path(p).name == "randomizers.png"],
            "data": [p for p in under("results/utility/") if Path(p).name == "randomizers.csv"],
        },
        DELTA_FLOOR: {
            "images": [],
            "data": [p for p in under("results/utility/") if Path(p).name.startswith("delta_floor")],
        },
    }


def classify_report_reads(
    known_outputs: Sequence[str],
    targets: Iterable,
    *,
    data_outputs: Sequence[str],
    report_stages: Sequence[str],
    config: Mapping,
    produced: Callable[[str], bool],
) -> ReportReads:
    """What the report reads, by role.

    ``known_outputs``: the workflow's plain outputs (:func:`plain_outputs`); ``targets``: its final
    targets; ``data_outputs``: the data stage's final outputs; only outputs of ``report_stages`` are
    read. ``produced(path)`` says whether a rule of the workflow makes ``path`` (Figures 4-7 data).
    """
    outputs = [p for p in known_outputs if stage_of(p) in report_stages]
    figure_data = _figures(outputs, data=True)
    if "utility" in report_stages:
        for number, paths in _gowalla_figure_data(config, produced).items():
            known = figure_data.setdefault(number, [])
            known.extend(p for p in paths if p not in known)
    # Calibrations of the Gaussian (sigma used vs diffprivlib's) are columns of the utility stage's data
    # files; the report reads every utility CSV it is given and keeps those with both sigma columns.
    gaussian_checks = sorted(
        {p for paths in figure_data.values() for p in paths if stage_of(p) == "utility"}
        | {p for p in outputs if stage_of(p) == "utility" and Path(p).name in _GAUSSIAN_CHECK_NAMES}
    )
    sweeps = sorted(
        {
            p
            for p in {str(t) for t in targets}
            if stage_of(p) in report_stages and Path(p).parent.name == "sweeps"
        }
    )
    with_data = "data" in report_stages
    extras = _extras(outputs, sweeps, figure_data)
    # a comparison with the paper is a *_comparison.csv that no section beyond the paper reads as its data
    # (epsilon_comparison.csv compares our accountants with each other, not with the paper)
    beyond = {p for extra in extras.values() for p in extra.get("data", ())}
    return ReportReads(
        comparisons=[p for p in outputs if p.endswith("_comparison.csv") and p not in beyond],
        figures=_figures(outputs, data=False),
        figure_data=figure_data,
        gaussian_checks=gaussian_checks,
        extras=extras,
        cell_counts=[p for p in data_outputs if p.endswith("cell_counts.csv")] if with_data else [],
        data_summary="results/data/summary.csv"
        if with_data and "results/data/summary.csv" in data_outputs
        else None,
    )


def stage_inputs(
    stage: str, *, data_outputs: Sequence[str], manifest_stages: Sequence[str], report_reads: Sequence[str]
) -> list[dict]:
    """Inputs of the utility or report stage that come from outside it, with their sources (checksummed
    in the stage's manifest); the data stage's sources come from :func:`shuffledp.provenance.data_sources`."""
    if stage == "utility":
        return [
            {"path": path, "source": {"kind": "data stage output"}}
            for path in data_outputs
            if path.endswith("cell_counts.csv")
        ]
    if stage == "report":
        return [
            {"path": f"results/{s}/MANIFEST.json", "source": {"kind": "stage manifest"}}
            for s in manifest_stages
        ] + [{"path": path, "source": {"kind": "read by the report"}} for path in report_reads]
    return []
