"""shuffledp.report.inputs: which workflow outputs the report reads, by role, from plain lists of paths."""

from __future__ import annotations

from pathlib import Path

import pytest

from shuffledp.report import inputs as report_inputs
from shuffledp.report.inputs import (
    BALLE_FIGURE,
    CROSSOVER,
    DELTA_FLOOR,
    DELTA_SWEEPS,
    EPSILON_AT_FIXED_DELTA,
    EQUAL_GUARANTEE,
    EXTRA_SECTIONS,
    KOSKELA_FIGURES,
    PHASE_DIAGRAM,
    THREE_CALIBRATIONS,
    WORST_CASE_BRACKET,
    ReportReads,
    benchmark_globs,
    classify_report_reads,
    figure_number,
    manifest_stages,
    plain_outputs,
    stage_inputs,
    stage_of,
    stage_outputs,
)

#: a small workflow's final targets (the comparison CSVs are rule outputs only, as in the workflow)
TARGETS = [
    "results/data/summary.csv",
    "results/data/paris/cell_counts.csv",
    "results/data/fig3.png",
    "results/data/MANIFEST.json",
    "results/accounting/fig1.png",
    "results/accounting/fig1.csv",
    "results/accounting/sweeps/delta_vs_n.png",
    "results/accounting/sweeps/delta_vs_n.csv",
    "results/accounting/epsilon_comparison.png",
    "results/accounting/epsilon_comparison.csv",
    "results/accounting/bracket.csv",
    "results/accounting/bracket.md",
    "results/accounting/bracket.png",
    "results/utility/fig2.png",
    "results/utility/fig2.csv",
    "results/utility/text_tv.csv",
    "results/utility/crossover.csv",
    "results/utility/crossover.png",
    "results/utility/delta_floor.csv",
    "results/utility/equal_guarantee_ratio.csv",
    "results/utility/equal_guarantee_tv.png",
    "results/utility/phase_diagram.csv",
    "results/utility/phase_diagram_boundary.csv",
    "results/utility/phase_diagram_monte_carlo.csv",
    "results/utility/phase_diagram_fixed_1e-06.png",
    "results/utility/phase_diagram_n_pow_1.1.png",
    "results/utility/gowalla/paris/community.csv",
    "results/koskela/koskela_fig1.png",
    "results/koskela/koskela_verdicts.csv",
    "results/balle/balle_fig3.png",
    "results/balle/balle_verdicts.csv",
]
RULE_OUTPUTS = [
    "results/accounting/table2_comparison.csv",
    "results/utility/table5_comparison.csv",
    "results/utility/gowalla/{region}/heatmap_summary.csv",  # a pattern: never a known output
]
CONFIG = {
    "utility": {"gowalla": {"regions": {"paris": {"heatmap_figure": "fig4", "boxplot_figure": "fig6"}}}}
}
ALL_STAGES = ["data", "accounting", "utility", "koskela", "girgis", "balle"]


def _classify(stages=ALL_STAGES, produced=lambda path: True, targets=TARGETS):
    outputs = stage_outputs(targets)
    return classify_report_reads(
        plain_outputs(targets, RULE_OUTPUTS),
        targets,
        data_outputs=outputs["data"],
        report_stages=stages,
        config=CONFIG,
        produced=produced,
    )


@pytest.mark.parametrize(
    "path, stage",
    [
        ("results/data/summary.csv", "data"),
        ("results/utility/gowalla/paris/community.csv", "utility"),
        ("results/report", None),  # a stage folder itself is no output of it
        ("logs/data/x.log", None),
        ("data/raw/file.gz", None),
    ],
)
def test_stage_of(path, stage):
    assert stage_of(path) == stage


@pytest.mark.parametrize(
    "path, data, number",
    [
        ("results/accounting/fig1.png", False, 1),
        ("results/accounting/fig1.csv", True, 1),
        ("results/accounting/fig1.csv", False, None),  # data file asked as image
        ("results/accounting/fig1.png", True, None),
        ("results/utility/figure_5.PDF", False, 5),
        ("results/utility/fig12_gowalla.svg", False, 12),
        ("results/koskela/koskela_fig1.png", False, None),  # not the paper's figure
        ("results/utility/config.png", False, None),
    ],
)
def test_figure_number(path, data, number):
    assert figure_number(path, data=data) == number


def test_plain_outputs_are_targets_and_wildcard_free_rule_outputs_sorted_once():
    outputs = plain_outputs(["b", "a"], ["a", "c/{x}.csv", "d"])
    assert outputs == ["a", "b", "d"]


def test_stage_outputs_leave_out_manifests_and_other_stages():
    outputs = stage_outputs(TARGETS)
    assert list(outputs) == ALL_STAGES
    assert outputs["data"] == [
        "results/data/fig3.png",
        "results/data/paris/cell_counts.csv",
        "results/data/summary.csv",
    ]
    assert all(not p.endswith("MANIFEST.json") for paths in outputs.values() for p in paths)


def test_manifest_stages_are_covered_and_non_empty_result_stages_in_order():
    outputs = {"data": ["x"], "accounting": [], "utility": ["y"], "koskela": ["z"]}
    assert manifest_stages(outputs, ["utility", "data", "accounting"]) == ["data", "utility"]


def test_benchmark_globs_of_the_rules_writing_into_a_stage():
    rules = [
        ("benchmarks/utility/{region}_{n}.tsv", ["results/utility/{region}/run_{n}.csv"]),
        ("benchmarks/utility/fig2.tsv", ["results/utility/fig2.png"]),
        (None, ["results/utility/table5.csv"]),  # no benchmark
        ("benchmarks/data/prepare.tsv", ["results/data/summary.csv"]),
    ]
    assert benchmark_globs(rules, "utility") == ["benchmarks/utility/*_*.tsv", "benchmarks/utility/fig2.tsv"]
    assert benchmark_globs(rules, "koskela") == []


def test_every_role_of_a_full_run():
    reads = _classify()
    # epsilon_comparison.csv compares our accountants with each other (read by its own section beyond the
    # paper), not with the paper: it is no comparison table, so the report never calls it an input problem
    assert reads.comparisons == [
        "results/accounting/table2_comparison.csv",
        "results/utility/table5_comparison.csv",
    ]
    assert reads.figures == {
        3: ["results/data/fig3.png"],
        1: ["results/accounting/fig1.png"],
        2: ["results/utility/fig2.png"],
    }
    # Figures 4 and 6 are drawn from the region's files named in the config
    assert reads.figure_data == {
        1: ["results/accounting/fig1.csv"],
        2: ["results/utility/fig2.csv"],
        4: ["results/utility/gowalla/paris/heatmap_summary.csv"],
        6: ["results/utility/gowalla/paris/community.csv"],
    }
    assert reads.gaussian_checks == [
        "results/utility/crossover.csv",
        "results/utility/fig2.csv",
        "results/utility/gowalla/paris/community.csv",
        "results/utility/gowalla/paris/heatmap_summary.csv",
        "results/utility/text_tv.csv",
    ]
    assert reads.cell_counts == ["results/data/paris/cell_counts.csv"]
    assert reads.data_summary == "results/data/summary.csv"


def test_koskela_fig4_verdicts_follow_the_figures_1_to_3_table():
    # Fig. 4's own verdict table is read after koskela_verdicts.csv (the Findings read the first file)
    targets = [*TARGETS, "results/koskela/koskela_fig4.png", "results/koskela/koskela_fig4_verdicts.csv"]
    extras = _classify(targets=targets).extras
    assert extras[KOSKELA_FIGURES] == {
        "images": ["results/koskela/koskela_fig1.png", "results/koskela/koskela_fig4.png"],
        "data": ["results/koskela/koskela_verdicts.csv", "results/koskela/koskela_fig4_verdicts.csv"],
    }


def test_sections_beyond_the_paper():
    extras = _classify().extras
    assert tuple(extras) == EXTRA_SECTIONS
    assert extras[DELTA_SWEEPS] == {
        "images": ["results/accounting/sweeps/delta_vs_n.png"],
        "data": ["results/accounting/sweeps/delta_vs_n.csv"],
    }
    assert extras[EPSILON_AT_FIXED_DELTA] == {
        "images": ["results/accounting/epsilon_comparison.png"],
        "data": ["results/accounting/epsilon_comparison.csv"],
    }
    # The bracket's figure is shown in its section; bracket.md is not read (the CSV is)
    assert extras[WORST_CASE_BRACKET] == {
        "images": ["results/accounting/bracket.png"],
        "data": ["results/accounting/bracket.csv"],
    }
    assert extras[CROSSOVER] == {
        "images": ["results/utility/crossover.png"],
        "data": ["results/utility/crossover.csv"],
    }
    assert extras[THREE_CALIBRATIONS] == {
        "images": [],
        "data": ["results/utility/fig2.csv", "results/utility/gowalla/paris/community.csv"],
    }
    assert extras[KOSKELA_FIGURES] == {
        "images": ["results/koskela/koskela_fig1.png"],
        "data": ["results/koskela/koskela_verdicts.csv"],
    }
    assert extras[BALLE_FIGURE] == {
        "images": ["results/balle/balle_fig3.png"],
        "data": ["results/balle/balle_verdicts.csv"],
    }
    assert extras[EQUAL_GUARANTEE] == {
        "images": ["results/utility/equal_guarantee_tv.png"],
        "data": ["results/utility/equal_guarantee_ratio.csv"],
    }
    assert extras[DELTA_FLOOR] == {"images": [], "data": ["results/utility/delta_floor.csv"]}
    # one figure per delta rule and the grid and boundary CSVs (the Monte-Carlo markers are drawn on the figures)
    assert extras[PHASE_DIAGRAM] == {
        "images": [
            "results/utility/phase_diagram_fixed_1e-06.png",
            "results/utility/phase_diagram_n_pow_1.1.png",
        ],
        "data": ["results/utility/phase_diagram.csv", "results/utility/phase_diagram_boundary.csv"],
    }


def test_epsilon_comparison_is_no_paper_comparison():
    reads = _classify()
    assert "results/accounting/epsilon_comparison.csv" not in reads.comparisons
    assert "results/accounting/epsilon_comparison.csv" in reads.extras[EPSILON_AT_FIXED_DELTA]["data"]
    assert "results/accounting/epsilon_comparison.csv" in reads.paths()  # still read (and checksummed)


def test_only_the_report_stages_are_read():
    reads = _classify(stages=["accounting"])
    assert reads.comparisons == ["results/accounting/table2_comparison.csv"]
    assert set(reads.figures) == {1} and set(reads.figure_data) == {1}
    assert reads.gaussian_checks == [] and reads.cell_counts == [] and reads.data_summary is None
    assert all(p.startswith("results/accounting/") for p in reads.paths())


def test_gowalla_figure_data_only_where_a_rule_makes_it():
    reads = _classify(produced=lambda path: path.endswith("community.csv"))
    assert 4 not in reads.figure_data
    assert reads.figure_data[6] == ["results/utility/gowalla/paris/community.csv"]


def test_no_data_summary_when_the_data_stage_does_not_make_it():
    reads = _classify(targets=[t for t in TARGETS if t != "results/data/summary.csv"])
    assert reads.data_summary is None and reads.cell_counts == ["results/data/paris/cell_counts.csv"]


def test_paths_are_every_read_once_sorted():
    reads = ReportReads(
        comparisons=["b.csv"],
        figures={1: ["a.png"]},
        figure_data={1: ["b.csv"]},
        extras={"x": {"images": ["c.png"], "data": []}},
        data_summary="s.csv",
    )
    assert reads.paths() == ["a.png", "b.csv", "c.png", "s.csv"]
    full = _classify()
    assert "results/utility/text_tv.csv" in full.paths() and "results/data/summary.csv" in full.paths()


def test_stage_inputs_of_utility_and_report():
    data_outputs = ["results/data/paris/cell_counts.csv", "results/data/summary.csv"]
    utility = stage_inputs(
        "utility", data_outputs=data_outputs, manifest_stages=["data"], report_reads=["r.csv"]
    )
    assert utility == [
        {"path": "results/data/paris/cell_counts.csv", "source": {"kind": "data stage output"}}
    ]
    report = stage_inputs(
        "report", data_outputs=data_outputs, manifest_stages=["data"], report_reads=["r.csv"]
    )
    assert report == [
        {"path": "results/data/MANIFEST.json", "source": {"kind": "stage manifest"}},
        {"path": "r.csv", "source": {"kind": "read by the report"}},
    ]
    assert stage_inputs("koskela", data_outputs=data_outputs, manifest_stages=[], report_reads=[]) == []


def test_the_room_never_sees_snakemake():
    assert "snakemake" not in Path(report_inputs.__file__).read_text(encoding="utf-8").replace(
        "Snakemake", ""
    )
