# Report stage: one provenance manifest per results folder (results/<stage>/MANIFEST.json), then the
# reproduction report (results/report/reproduction-report.md and a self-contained .html).
# Library: shuffledp.provenance, shuffledp.report (read -> readings/judge -> build -> render).
# Included last, so ALL_TARGETS already holds the final outputs of every other stage; the report
# depends on the stages listed in config report.stages.
import re as _re

from shuffledp.provenance import data_sources as _data_sources_for_manifest

REPORT_SETTINGS = {
    "stages": ["data", "accounting", "utility"],
    "title": "Reproduction report",
    **config.get("report", {}),
}
RESULT_STAGES = ["data", "accounting", "utility", "koskela"]
REPORT_OUTPUTS = {
    "markdown": "results/report/reproduction-report.md",
    "html": "results/report/reproduction-report.html",
}


def _stage_of(path):
    parts = Path(str(path)).parts
    return parts[1] if len(parts) > 2 and parts[0] == "results" else None


def _plain_outputs():
    """Final targets plus every wildcard-free output of every rule (e.g. comparison CSVs)."""
    paths = {str(target) for target in ALL_TARGETS}
    for rule_ in workflow.rules:
        for item in rule_.output:
            if "{" not in str(item):
                paths.add(str(item))
    return sorted(paths)


KNOWN_OUTPUTS = _plain_outputs()
STAGE_OUTPUTS = {
    stage: sorted(
        {str(t) for t in ALL_TARGETS if _stage_of(t) == stage and not str(t).endswith("MANIFEST.json")}
    )
    for stage in RESULT_STAGES
}
# A stage with no final outputs (not in this workflow, or not requested) gets no manifest; the
# report then states that the stage is absent.
MANIFEST_STAGES = [s for s in RESULT_STAGES if s in REPORT_SETTINGS["stages"] and STAGE_OUTPUTS[s]]
STAGE_OUTPUTS["report"] = list(REPORT_OUTPUTS.values())


def _producer(path):
    for rule_ in workflow.rules:
        try:
            if rule_.is_producer(path):
                return rule_.name
        except Exception:  # a rule whose patterns cannot match this path
            continue
    return None


def _benchmark_globs(stage):
    """Glob patterns of the benchmark files of the rules that write into results/<stage>/."""
    patterns = []
    for rule_ in workflow.rules:
        if rule_.benchmark is None:
            continue
        if any(_stage_of(item) == stage for item in rule_.output):
            patterns.append(_re.sub(r"\{[^}]+\}", "*", str(rule_.benchmark)))
    return sorted(set(patterns))


def _stage_inputs(stage):
    """Inputs of a stage that come from outside it, with their sources (checksummed in the manifest)."""
    if stage == "data":
        return _data_sources_for_manifest(config, raw_path=globals().get("SNAP_RAW", "data/raw/loc-gowalla_totalCheckins.txt.gz"))
    if stage == "utility":
        return [
            {"path": path, "source": {"kind": "data stage output"}}
            for path in STAGE_OUTPUTS["data"]
            if path.endswith("cell_counts.csv")
        ]
    if stage == "report":
        return [
            {"path": f"results/{s}/MANIFEST.json", "source": {"kind": "stage manifest"}} for s in MANIFEST_STAGES
        ] + [{"path": path, "source": {"kind": "read by the report"}} for path in _report_reads()]
    return []


def _report_stage_outputs():
    return [p for p in KNOWN_OUTPUTS if _stage_of(p) in REPORT_SETTINGS["stages"]]


def _figure_number(path, *, data):
    match = _re.match(r"^fig(?:ure)?_?(\d+)", Path(path).name)
    if not match:
        return None
    is_image = Path(path).suffix.lower() in (".png", ".svg", ".jpg", ".jpeg", ".pdf")
    is_data = Path(path).suffix.lower() == ".csv"
    return int(match.group(1)) if (is_data if data else is_image) else None


def _figures(*, data):
    found = {}
    for path in _report_stage_outputs():
        number = _figure_number(path, data=data)
        if number is not None:
            found.setdefault(number, []).append(path)
    return found


def _gowalla_figure_data():
    """Figures 4-7 are drawn per region from files named by the utility config (heat-map summary,
    community TV runs); map each figure number to those files when a rule of the workflow makes them."""
    found = {}
    if "utility" not in REPORT_SETTINGS["stages"]:
        return found
    regions = ((config.get("utility") or {}).get("gowalla") or {}).get("regions") or {}
    for region, entry in regions.items():
        for key, data in (("heatmap_figure", "heatmap_summary.csv"), ("boxplot_figure", "community.csv")):
            number = _figure_number(f"{entry.get(key, '')}.png", data=False)
            path = f"results/utility/gowalla/{region}/{data}"
            if number is not None and _producer(path) is not None:
                found.setdefault(number, []).append(path)
    return found


REPORT_FIGURES = _figures(data=False)
REPORT_FIGURE_DATA = _figures(data=True)
for _number, _paths in _gowalla_figure_data().items():
    REPORT_FIGURE_DATA.setdefault(_number, []).extend(p for p in _paths if p not in REPORT_FIGURE_DATA[_number])
REPORT_COMPARISONS = [p for p in _report_stage_outputs() if p.endswith("_comparison.csv")]
# Calibrations of the Gaussian (sigma used vs diffprivlib's) are columns of the utility stage's data
# files; the report reads every utility CSV it is given and keeps those with both sigma columns.
REPORT_GAUSSIAN_CHECKS = sorted(
    {p for paths in REPORT_FIGURE_DATA.values() for p in paths if _stage_of(p) == "utility"}
    | {p for p in _report_stage_outputs() if _stage_of(p) == "utility" and Path(p).name in ("text_tv.csv", "crossover.csv")}
)
# Outputs beyond the paper that the report shows in their own section (name -> images, data).
_SWEEP_OUTPUTS = sorted(
    {
        path
        for path in {str(t) for t in ALL_TARGETS}
        if _stage_of(path) in REPORT_SETTINGS["stages"] and Path(path).parent.name == "sweeps"
    }
)
def _accounting_outputs(prefix):
    return [p for p in _report_stage_outputs() if p.startswith("results/accounting/" + prefix)]


REPORT_EXTRAS = {
    "delta sweeps": {
        "images": [p for p in _SWEEP_OUTPUTS if p.endswith(".png")],
        "data": [p for p in _SWEEP_OUTPUTS if p.endswith(".csv")],
    },
    # issue 8: epsilon at a fixed delta (figure + data) and the worst-case bracket (table)
    "epsilon at a fixed delta": {
        "images": [p for p in _accounting_outputs("epsilon_comparison") if p.endswith(".png")],
        "data": [p for p in _accounting_outputs("epsilon_comparison") if p.endswith(".csv")],
    },
    "worst-case bracket": {
        "images": [],
        "data": [p for p in _accounting_outputs("bracket") if p.endswith(".csv")],
    },
    "crossover": {
        "images": [p for p in _report_stage_outputs() if Path(p).name.startswith("crossover") and p.endswith(".png")],
        "data": [p for p in _report_stage_outputs() if Path(p).name.startswith("crossover") and p.endswith(".csv")],
    },
    # issue 12: the paper's comparisons under three calibrations of the Gaussian, and what the delta floor decides
    "three calibrations": {
        "images": [],
        "data": [p for p in _report_stage_outputs() if p == "results/utility/fig2.csv"]
        + sorted({p for paths in REPORT_FIGURE_DATA.values() for p in paths if p.endswith("/community.csv")}),
    },
    # issue 11: Koskela et al.'s Figures 1-3 (compositions) with one verdict per published curve
    "Koskela et al. Figures 1-3": {
        "images": sorted(p for p in _report_stage_outputs() if p.startswith("results/koskela/") and p.endswith(".png")),
        "data": [p for p in _report_stage_outputs() if p == "results/koskela/koskela_verdicts.csv"],
    },
    # issue 12: which mechanism at an equal (epsilon, delta) guarantee
    "equal guarantee": {
        "images": [p for p in _report_stage_outputs() if Path(p).name.startswith("equal_guarantee") and p.endswith(".png")],
        "data": [p for p in _report_stage_outputs() if Path(p).name == "equal_guarantee_ratio.csv"],
    },
    "delta floor": {
        "images": [],
        "data": [p for p in _report_stage_outputs() if p.startswith("results/utility/") and Path(p).name.startswith("delta_floor")],
    },
}
REPORT_CELL_COUNTS = [p for p in STAGE_OUTPUTS["data"] if p.endswith("cell_counts.csv")] if "data" in REPORT_SETTINGS["stages"] else []
REPORT_DATA_SUMMARY = ["results/data/summary.csv"] if "results/data/summary.csv" in STAGE_OUTPUTS["data"] and "data" in REPORT_SETTINGS["stages"] else []


def _report_reads():
    paths = [*REPORT_COMPARISONS, *REPORT_GAUSSIAN_CHECKS, *REPORT_CELL_COUNTS, *REPORT_DATA_SUMMARY]
    for group in (REPORT_FIGURES, REPORT_FIGURE_DATA, REPORT_EXTRAS):
        for items in group.values():
            paths.extend(items if isinstance(items, list) else [p for v in items.values() for p in v])
    return sorted(set(paths))


rule manifest:
    input:
        outputs=lambda wildcards: STAGE_OUTPUTS[wildcards.stage],
    output:
        "results/{stage}/MANIFEST.json",
    wildcard_constraints:
        stage="data|accounting|utility|koskela|report",
    params:
        stage=lambda wildcards: wildcards.stage,
        inputs=lambda wildcards: _stage_inputs(wildcards.stage),
        benchmarks=lambda wildcards: _benchmark_globs(wildcards.stage),
        repo=str(REPO),
    log:
        "logs/report/manifest_{stage}.log",
    script:
        "../scripts/manifest.py"


rule reproduction_report:
    input:
        manifests=expand("results/{stage}/MANIFEST.json", stage=MANIFEST_STAGES),
        reads=_report_reads(),
    output:
        markdown=report(
            REPORT_OUTPUTS["markdown"],
            caption="../report/reproduction_report.rst",
            category="Reproduction report",
        ),
        html=report(
            REPORT_OUTPUTS["html"],
            caption="../report/reproduction_report.rst",
            category="Reproduction report",
        ),
    params:
        title=REPORT_SETTINGS["title"],
        stages=REPORT_SETTINGS["stages"],
        manifests={stage: f"results/{stage}/MANIFEST.json" for stage in MANIFEST_STAGES},
        comparisons=REPORT_COMPARISONS,
        figures=REPORT_FIGURES,
        figure_data=REPORT_FIGURE_DATA,
        gaussian_checks=REPORT_GAUSSIAN_CHECKS,
        extras=REPORT_EXTRAS,
        cell_counts=REPORT_CELL_COUNTS,
        data_summary=REPORT_DATA_SUMMARY[0] if REPORT_DATA_SUMMARY else None,
        producers={path: _producer(path) for path in _report_reads()},
        repo=str(REPO),
    log:
        "logs/report/reproduction_report.log",
    script:
        "../scripts/reproduction_report.py"


# Manifests (checksums) and the report read small files: run them where Snakemake runs.
localrules:
    manifest,
    reproduction_report,


ALL_TARGETS.extend(
    [
        *REPORT_OUTPUTS.values(),
        *expand("results/{stage}/MANIFEST.json", stage=MANIFEST_STAGES),
        "results/report/MANIFEST.json",
    ]
)
