# Report stage: one provenance manifest per results folder (results/<stage>/MANIFEST.json), then the
# reproduction report (results/report/reproduction-report.md and a self-contained .html).
# Library: shuffledp.provenance, shuffledp.report (read -> readings/judge -> build -> render).
# Included last, so ALL_TARGETS already holds the final outputs of every other stage; the report
# depends on the stages listed in config report.stages.
# Which outputs the report reads, and in which role, is decided in shuffledp.report.inputs from
# plain lists of paths; this file only hands it what needs Snakemake (the rules, their producers).
import shutil as _shutil

from shuffledp.provenance import data_sources as _data_sources_for_manifest
from shuffledp.report.inputs import (
    benchmark_globs as _benchmark_globs_of,
    classify_report_reads as _classify_report_reads,
    manifest_stages as _manifest_stages,
    plain_outputs as _plain_outputs,
    stage_inputs as _stage_inputs_of,
    stage_outputs as _stage_outputs,
)

REPORT_SETTINGS = {
    "stages": ["data", "accounting", "utility"],
    "title": "Reproduction report",
    **config.get("report", {}),
}
REPORT_OUTPUTS = {
    "markdown": "results/report/reproduction-report.md",
    "html": "results/report/reproduction-report.html",
}
# The browser check (tools/check_report_browser.py): the first screen as a reader sees it, and the JSON of
# broken images, anchors and overflowing tables, beside the report. config report.browser_check: "auto"
# checks where Debian's chromium and chromium-driver are installed, else writes only the JSON, saying
# "checked": false and why (no PNG: nothing pretends to have looked); "required" stops the workflow here
# when they are absent; "off" drops the rule. docs/decisions/workflow.md.
BROWSER_CHECK = REPORT_SETTINGS.get("browser_check", "auto")
BROWSER_PROGRAMS = {name: _shutil.which(name) for name in ("chromium", "chromedriver")}
BROWSER_ABSENT = sorted(name for name, found in BROWSER_PROGRAMS.items() if not found)
if BROWSER_CHECK == "required" and BROWSER_ABSENT:
    raise WorkflowError(
        f"config: `report.browser_check` is 'required' but {', '.join(BROWSER_ABSENT)} is not "
        "on PATH (Debian: apt-get install chromium chromium-driver); use 'auto' to record "
        "the check as not done instead."
    )
FIRST_SCREEN = {"json": "results/report/first_screen.json"}
# Table II's n = 1,000 "Our delta" cells under fixed hypotheses (shuffledp.report.hypotheses), when the
# accounting stage is reported
HYPOTHESES = ["results/report/table2_hypotheses.csv"] if "accounting" in REPORT_SETTINGS["stages"] else []
if not BROWSER_ABSENT:
    FIRST_SCREEN["screenshot"] = "results/report/first_screen.png"
KNOWN_OUTPUTS = _plain_outputs(ALL_TARGETS, [item for rule_ in workflow.rules for item in rule_.output])
STAGE_OUTPUTS = _stage_outputs(ALL_TARGETS)
MANIFEST_STAGES = _manifest_stages(STAGE_OUTPUTS, REPORT_SETTINGS["stages"])
STAGE_OUTPUTS["report"] = (
    list(REPORT_OUTPUTS.values())
    + HYPOTHESES
    + (list(FIRST_SCREEN.values()) if BROWSER_CHECK != "off" else [])
)


def _producer(path):
    for rule_ in workflow.rules:
        try:
            if rule_.is_producer(path):
                return rule_.name
        except Exception:  # a rule whose patterns cannot match this path
            continue
    return None


REPORT_READS = _classify_report_reads(
    KNOWN_OUTPUTS,
    ALL_TARGETS,
    data_outputs=STAGE_OUTPUTS["data"],
    report_stages=REPORT_SETTINGS["stages"],
    config=config,
    produced=lambda path: _producer(path) is not None,
)


def _benchmark_globs(stage):
    return _benchmark_globs_of([(rule_.benchmark, rule_.output) for rule_ in workflow.rules], stage)


def _stage_inputs(stage):
    """Inputs of a stage that come from outside it, with their sources (checksummed in the manifest)."""
    if stage == "data":
        return _data_sources_for_manifest(
            config, raw_path=globals().get("SNAP_RAW", "data/raw/loc-gowalla_totalCheckins.txt.gz")
        )
    return _stage_inputs_of(
        stage,
        data_outputs=STAGE_OUTPUTS["data"],
        manifest_stages=MANIFEST_STAGES,
        report_reads=REPORT_READS.paths(),
    )


rule manifest:
    input:
        outputs=lambda wildcards: STAGE_OUTPUTS[wildcards.stage],
    output:
        "results/{stage}/MANIFEST.json",
    log:
        "logs/report/manifest_{stage}.log",
    wildcard_constraints:
        stage="data|accounting|utility|koskela|girgis|balle|report",
    params:
        stage=lambda wildcards: wildcards.stage,
        inputs=lambda wildcards: _stage_inputs(wildcards.stage),
        benchmarks=lambda wildcards: _benchmark_globs(wildcards.stage),
        repo=str(REPO),
        data_label=SOURCE_LABEL,
    script:
        "../scripts/manifest.py"


rule table2_hypotheses:
    input:
        comparison="results/accounting/table2_comparison.csv",
    output:
        csv="results/report/table2_hypotheses.csv",
    log:
        "logs/report/table2_hypotheses.log",
    benchmark:
        "results/benchmarks/report/table2_hypotheses.tsv"
    params:
        table2=config["accounting"]["table2"],
    script:
        "../scripts/table2_hypotheses.py"


rule reproduction_report:
    input:
        manifests=expand("results/{stage}/MANIFEST.json", stage=MANIFEST_STAGES),
        reads=REPORT_READS.paths(),
        hypotheses=HYPOTHESES,
        # which Gowalla data the run used (the report's first screen)
        data_source=[SOURCE_LABEL] if "data" in REPORT_SETTINGS["stages"] else [],
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
    log:
        "logs/report/reproduction_report.log",
    benchmark:
        "results/benchmarks/report/reproduction_report.tsv"
    params:
        title=REPORT_SETTINGS["title"],
        stages=REPORT_SETTINGS["stages"],
        manifests={stage: f"results/{stage}/MANIFEST.json" for stage in MANIFEST_STAGES},
        comparisons=REPORT_READS.comparisons,
        figures=REPORT_READS.figures,
        figure_data=REPORT_READS.figure_data,
        gaussian_checks=REPORT_READS.gaussian_checks,
        extras=REPORT_READS.extras,
        cell_counts=REPORT_READS.cell_counts,
        data_summary=REPORT_READS.data_summary,
        producers={path: _producer(path) for path in [*REPORT_READS.paths(), *HYPOTHESES]},
        repo=str(REPO),
    script:
        "../scripts/reproduction_report.py"


if BROWSER_CHECK != "off":

    rule report_first_screen:
        input:
            html=REPORT_OUTPUTS["html"],
        output:
            **FIRST_SCREEN,
        log:
            "logs/report/report_first_screen.log",
        benchmark:
            "results/benchmarks/report/first_screen.tsv"
        params:
            tool=str(REPO / "tools" / "check_report_browser.py"),
            width=1280,
            height=900,
            absent_reason=f"{', '.join(BROWSER_ABSENT)} not found on PATH (Debian: apt-get install chromium "
            "chromium-driver)",
        script:
            "../scripts/report_first_screen.py"

    localrules:
        report_first_screen,


# Manifests (checksums) and the report read small files: run them where Snakemake runs.
localrules:
    manifest,
    reproduction_report,


ALL_TARGETS.extend(
    [
        *REPORT_OUTPUTS.values(),
        *HYPOTHESES,
        *(FIRST_SCREEN.values() if BROWSER_CHECK != "off" else []),
        *expand("results/{stage}/MANIFEST.json", stage=MANIFEST_STAGES),
        "results/report/MANIFEST.json",
    ]
)
