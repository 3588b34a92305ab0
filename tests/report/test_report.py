"""Tests for the shuffledp.report package (the reproduction report's reading and rendering)."""

from __future__ import annotations

import base64
import json
import math
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from shuffledp import report
from shuffledp.report import read as report_read
from shuffledp.tables import COMPARISON_COLUMNS, NOT_REPRODUCED, NOT_REPRODUCIBLE, REPRODUCED, format_number

# The papers, when the shared folder sits next to the repository (skipped otherwise).
PAPERS = Path(__file__).resolve().parents[3] / "shared" / "papers"
# A 1x1 PNG (valid file; content irrelevant to the report).
PNG_1x1 = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)


def comparison_frame(**overrides) -> pd.DataFrame:
    rows = [
        {
            "table": "IV",
            "block": "varying n",
            "row": "n=50",
            "column": "eps=0.1",
            "paper": "1.91E-08",
            "ours_as_printed": 1.912e-8,
            "ours_exact": 3.0e-7,
            "relative_difference": 0.001,
            "verdict": REPRODUCED,
            "note": "rounds to the printed 1.91E-08",
        },
        {
            "table": "IV",
            "block": "varying k",
            "row": "k=5",
            "column": "eps=0.1",
            "paper": "1.96E-10",
            "ours_as_printed": 2.5e-10,
            "ours_exact": 2.5e-9,
            "relative_difference": 0.27,
            "verdict": NOT_REPRODUCED,
            "note": "ours 2.5e-10 vs printed 1.96E-10 (ratio 1.28)",
        },
        {
            "table": "II",
            "block": "n=100",
            "row": "eps=0.1",
            "column": "[12]",
            "paper": "0.2",
            "ours_as_printed": 0.2,
            "ours_exact": 0.25,
            "relative_difference": 0.0,  # a bound, not delta
            "verdict": REPRODUCED,
            "note": "rounds",
        },
    ]
    frame = pd.DataFrame(rows, columns=COMPARISON_COLUMNS)
    for key, value in overrides.items():
        frame[key] = value
    return frame


def test_read_comparisons_concatenates_and_names_sources(tmp_path):
    path = tmp_path / "table4_comparison.csv"
    comparison_frame().to_csv(path, index=False)
    rows, problems = report.read_comparisons([path])
    assert problems == []
    assert len(rows) == 3 and set(rows["source"]) == {str(path)}
    assert rows.loc[0, "paper"] == "1.91E-08"  # kept as printed, not parsed to float


def test_read_comparisons_reports_missing_files_bad_columns_and_bad_rows(tmp_path):
    bad_columns = tmp_path / "x_comparison.csv"
    pd.DataFrame({"table": ["II"]}).to_csv(bad_columns, index=False)
    bad_rows = tmp_path / "y_comparison.csv"
    comparison_frame(verdict=["maybe", REPRODUCED, REPRODUCED]).to_csv(bad_rows, index=False)
    rows, problems = report.read_comparisons([bad_columns, bad_rows, tmp_path / "absent.csv"])
    assert len(rows) == 3  # the bad row is kept, not dropped
    assert (rows["verdict"] == report_read.INVALID_VERDICT).sum() == 1
    assert any("lacks the comparison column(s) block" in p for p in problems)
    assert any("1 row(s) with a verdict outside" in p for p in problems)
    assert any("absent.csv` is missing" in p for p in problems)


def test_verdict_counts():
    counts = report.verdict_counts(comparison_frame()).set_index("table")
    assert counts.loc["IV", "cells"] == 2
    assert counts.loc["IV", REPRODUCED] == 1 and counts.loc["IV", NOT_REPRODUCED] == 1
    assert counts.loc["II", REPRODUCED] == 1


def tv_frame():
    # Medians by construction: at n=10 shuffle+INV (0.010) < Gaussian (0.020) < shuffle (0.050);
    # at n=100 Gaussian (0.001) < shuffle+INV (0.004) < shuffle (0.030).
    medians = {
        10: {"Gaussian": 0.020, "shuffle": 0.050, "shuffle+INV": 0.010},
        100: {"Gaussian": 0.001, "shuffle": 0.030, "shuffle+INV": 0.004},
    }
    rows = []
    for n, by_method in medians.items():
        for method, median in by_method.items():
            for offset in (-0.0005, 0.0, 0.0005):  # three runs, median = the middle one
                rows.append({"n": n, "method": method, "run": offset, "l1_half": median + offset})
    return pd.DataFrame(rows)


def test_method_summary_medians_and_best():
    summary = report.method_summary(tv_frame()).set_index("n")
    assert summary.loc[10, "shuffle+INV"] == pytest.approx(0.010)
    assert summary.loc[100, "Gaussian"] == pytest.approx(0.001)
    assert list(summary["best"]) == ["shuffle+INV", "Gaussian"]


def test_read_method_comparison_states_facts_from_the_data():
    text = report.read_method_comparison(tv_frame())
    assert "Gaussian in 1, shuffle in 0, shuffle+INV in 1" in text
    assert "shuffle+INV is below shuffle in 2 of 2." in text
    assert "The Gaussian mechanism is below shuffle+INV in 1 of 2." in text
    assert "n = 10: 0.5" in text and "n = 100: 4" in text  # ratios 0.010/0.020 and 0.004/0.001


def test_method_summary_rejects_frames_without_method_or_value():
    with pytest.raises(
        ValueError,
        match=r"`figure data` must have a `method` \(or `mechanism`\) column and one of l1_half, tv",
    ):
        report.method_summary(pd.DataFrame({"n": [1], "l1_half": [0.1]}))


def delta_grid(printed_factor=0.1):
    eps = np.linspace(0.1, 1.0, 4)
    eps0 = np.array([1.0, 2.0, 3.0])
    rows = []
    for e in eps:
        for e0 in eps0:
            exact = np.exp(-10 * e / e0) if e < e0 else 0.0  # decreasing in eps, increasing in eps0
            rows.append({"epsilon": e, "epsilon_local": e0, "accountant": "biswas-exact", "delta": exact})
            rows.append(
                {
                    "epsilon": e,
                    "epsilon_local": e0,
                    "accountant": "biswas-printed",
                    "delta": printed_factor * exact,
                }
            )
    return pd.DataFrame(rows)


def test_read_delta_surface_monotone_grid_and_ratio():
    text = report.read_delta_surface(delta_grid())
    # 4 eps x 3 eps0: 3*3 = 9 neighbouring pairs along eps, 4*2 = 8 along eps0
    assert (
        "`biswas-exact`: δ is non-increasing in ε in 9 of 9 neighbouring pairs and non-decreasing in ε0 in 8 of 8"
        in text
    )
    assert "log10(printed / exact) ranges from -1.00 to -1.00" in text
    assert "1 of 12 grid points have δ = 0" in text  # eps = 1.0 with eps0 = 1.0


def test_read_delta_surface_counts_a_violation():
    grid = delta_grid()
    mask = (grid["accountant"] == "biswas-exact") & (grid["epsilon"] == 1.0) & (grid["epsilon_local"] == 3.0)
    grid.loc[mask, "delta"] = 1.0  # larger than at smaller eps: breaks monotonicity once along eps
    text = report.read_delta_surface(grid)
    assert "`biswas-exact`: δ is non-increasing in ε in 8 of 9" in text


def test_read_delta_surface_requires_axes():
    with pytest.raises(ValueError, match=r"`figure 1 data` must have columns `epsilon` and `epsilon_local`"):
        report.read_delta_surface(pd.DataFrame({"x": [1]}))


def test_read_data_counts():
    summary = pd.DataFrame(
        [
            {
                "level": "source",
                "name": "s",
                "label": "snap_paris",
                "rows_read": 100,
                "malformed": 3,
                "kept": 97,
                "paper_count": None,
            },
            {
                "level": "region",
                "name": "paris",
                "label": "Paris",
                "rows_read": 97,
                "malformed": None,
                "kept": 110,
                "paper_count": 100,
            },
        ]
    )
    cells = {"paris": pd.DataFrame({"count": [0, 5, 15]})}
    text = report.read_data_counts(summary, cells)
    assert "Source snap_paris: 100 rows read, 3 malformed, 97 kept." in text
    assert "Paris: 110 check-ins in the bounding box vs 100 in the paper (+10.0%)." in text
    assert "paris: 2 of 3 cells hold at least one check-in; the fullest cell holds 75.0%" in text
    assert report.read_data_counts(None, {}) == "The data stage's summary is absent from this run."


@pytest.mark.parametrize(
    "in_file, of_earlier, dropped, expected",
    [
        (4, 2, 6, "Source s: 100 rows read, 3 malformed, 6 exact duplicate rows (dropped), 91 kept."),
        (5, 0, 0, "Source s: 100 rows read, 3 malformed, 5 exact duplicate rows (kept), 91 kept."),
        (0, 0, 0, "Source s: 100 rows read, 3 malformed, 91 kept."),
    ],
    ids=["dropped", "kept", "none"],
)
def test_read_data_counts_reports_duplicates(in_file, of_earlier, dropped, expected):
    summary = pd.DataFrame(
        [
            {
                "level": "source",
                "name": "s",
                "label": "s",
                "rows_read": 100,
                "malformed": 3,
                "duplicates_in_file": in_file,
                "duplicates_of_earlier_source": of_earlier,
                "duplicates_dropped": dropped,
                "kept": 91,
            }
        ]
    )
    assert expected in report.read_data_counts(summary, {})


@pytest.fixture
def run_dir(tmp_path):
    results = tmp_path / "results"
    (results / "accounting").mkdir(parents=True)
    (results / "report").mkdir()
    comparison = results / "accounting" / "table4_comparison.csv"
    comparison_frame().to_csv(comparison, index=False)
    figure = results / "accounting" / "fig1.png"
    figure.write_bytes(PNG_1x1)
    data = results / "accounting" / "fig1.csv"
    delta_grid().to_csv(data, index=False)
    return tmp_path


def make_inputs(run_dir, **overrides):
    results = run_dir / "results"
    values = dict(
        config={"seed": 3},
        report_dir=results / "report",
        comparisons=[results / "accounting" / "table4_comparison.csv"],
        figures={1: [results / "accounting" / "fig1.png"]},
        figure_data={1: [results / "accounting" / "fig1.csv"]},
        producers={str(results / "accounting" / "table4_comparison.csv"): "table4"},
        checksums={str(results / "accounting" / "table4_comparison.csv"): "ab" * 32},
        expected_stages=["accounting"],
        config_sha256="cd" * 32,
        git={"commit": "0123456789abcdef", "dirty": False},
    )
    values.update(overrides)
    return report.ReportInputs(**values)


def test_build_report_markdown_lists_cells_verdicts_and_traces(run_dir):
    markdown = report.render_markdown(report.build_report(make_inputs(run_dir)))
    # Biswas section: unique cells per table by level (table, cells, reproduced, truncated, within, off, ...)
    # (the reproduced Table IV cell reproduces eq. (6) as printed: a level of its own, no guarantee)
    assert "| Table IV | 2 | 0 | 1 | 0 | 0 | 1 | 0 | 0 |" in markdown
    assert (
        "| n=50 | eps=0.1 | 1.91E-08 | 1.912e-08 | 3.000e-07 | reproduced (the printed value; not a guarantee) |  |"
        in markdown
    )  # appendix
    assert "rule `table4`, sha256 `abababababababab…`" in markdown
    assert "![Figure 1" in markdown and "(../accounting/fig1.png)" in markdown
    assert "non-increasing in ε in 9 of 9" in markdown  # reading derived from fig1.csv
    assert "No comparison rows in this run for Table V, Table VI" in markdown
    assert "Figure 2 is absent from this run" in markdown
    assert "**Incomplete run:** no manifest for stage(s) accounting" in markdown
    assert (
        "Over 2 cells of the paper's own δ (Table IV, Table II “Our δ”), log10(δ as printed / exact δ)"
        in markdown
    )
    assert "| Fig. 3 (San Francisco and Paris, community level) | Figures 6 and 7 |" in markdown


def test_render_html_is_self_contained_and_escaped(run_dir):
    blocks = report.build_report(make_inputs(run_dir))
    blocks.append(report.Paragraph("<script>alert(1)</script> and `a<b`"))
    page = report.render_html(blocks, title="T")
    assert page.startswith("<!DOCTYPE html>")
    assert "data:image/png;base64," + base64.b64encode(PNG_1x1).decode() in page
    assert "<script>" not in page and "&lt;script&gt;" in page
    assert "<code>a&lt;b</code>" in page
    # no external asset: every src is a data URI, no stylesheet or script is linked
    assert all(src.startswith("data:") for src in re.findall(r'src="([^"]*)"', page))
    assert "<link" not in page and "<script" not in page


def test_render_rejects_unknown_blocks():
    with pytest.raises(TypeError, match=r"`block` must be a report block; got int\."):
        report.render_markdown([1])
    with pytest.raises(TypeError, match=r"`block` must be a report block; got int\."):
        report.render_html([1])


def _references(text: str, pattern: str) -> dict[int, str]:
    return {int(m.group(1)): m.group(2) for m in re.finditer(pattern, text)}


@pytest.mark.skipif(not PAPERS.is_dir(), reason="../shared/papers is not present")
def test_fps_reference_map_matches_both_reference_lists():
    fps_text = (PAPERS / "002_dbce6aa1699ed5a4.txt").read_text()
    fps_text = fps_text[fps_text.index("\nReferences\n") : fps_text.index("Download references")]
    fps = _references(fps_text, r"\n\s*(\d{1,2})\.\s+([^\n]+)")
    arxiv = _references((PAPERS / "004_b76b353b89e75ea9.txt").read_text(), r"- \[(\d{1,2})\] ([^\n]+)")
    row = next(r for r in report.FPS_TO_ARXIV if r[0] == "references [1]-[15]")
    targets = [int(x) for x in re.findall(r"\[(\d+)\]", row[1])]
    assert len(targets) == 15
    for fps_number, arxiv_number in zip(range(1, 16), targets):
        first_word = re.split(r"[ ,.:]", fps[fps_number].strip())[0]
        assert first_word.lower() in arxiv[arxiv_number].lower(), (fps_number, arxiv_number)


def test_method_summary_accepts_mechanism_and_groups_by_varying_columns():
    frame = tv_frame().rename(columns={"method": "mechanism"}).assign(accountant="strong-adversary")
    summary = report.method_summary(frame)
    assert "accountant" not in summary.columns  # constant columns do not split the table
    assert "(in every row: accountant = strong-adversary)" in report.read_method_comparison(frame)
    assert list(summary["best"]) == ["shuffle+INV", "Gaussian"]


def test_roles_keep_the_projected_gaussian_apart():
    assert report_read.method_roles(["gaussian", "gaussian+proj", "shuffle", "shuffle+INV"]) == {
        "gaussian": "gaussian",
        "shuffle": "shuffle",
        "shuffle+inv": "shuffle+INV",
    }


def test_read_heatmap_summary():
    frame = pd.DataFrame(
        [
            {
                "region": "paris",
                "n_users": 209,
                "epsilon": 4.0,
                "epsilon_local": 4.0,
                "l1_half_gaussian": 0.02,
                "l1_half_shuffle_inv": 0.06,
                "delta_used": 1e-300,
                "delta_floored": True,
            }
        ]
    )
    text = report.read_heatmap_summary(frame)
    assert text == (
        "paris, n = 209, ε = 4.0, ε0 = 4.0: ½L1 distance to the original distribution 0.02 (Gaussian) and 0.06 "
        "(shuffle+INV); the Gaussian estimate is closer (ratio shuffle+INV / Gaussian 3), calibrated at "
        "δ̂ = 1.000e-300 (δ̂ = 0 replaced by the configured floor)."
    )
    with pytest.raises(
        ValueError, match=r"`heat-map data` must have columns l1_half_gaussian, l1_half_shuffle_inv"
    ):
        report.read_heatmap_summary(pd.DataFrame({"l1_half": [1]}))


def test_read_crossover_counts_winners_and_changes():
    rows = []
    for eps0, eps, printed, exact in [(2, 1, True, False), (2, 0.5, True, True), (3, 1, False, False)]:
        rows.append(
            {
                "epsilon_local": eps0,
                "epsilon": eps,
                "accountant": "biswas-printed",
                "gaussian_better": printed,
            }
        )
        rows.append(
            {"epsilon_local": eps0, "epsilon": eps, "accountant": "biswas-exact", "gaussian_better": exact}
        )
    text = report.read_crossover(pd.DataFrame(rows))
    assert (
        "`biswas-printed` (as printed: not a guarantee, shown for the paper's comparison only) the Gaussian has the lower mean TV in 2 of 3"
        in text
    )
    assert (
        "`biswas-exact` (exact: not a guarantee, shown for the paper's comparison only) the Gaussian has the lower mean TV in 1 of 3"
        in text
    )
    assert "changes between `biswas-printed` and `biswas-exact` in 1 of 3 cells" in text


def test_read_crossover_states_where_the_bracket_makes_the_winner_certain():
    rows = []
    # (eps0, eps): (gaussian_better under upper, under lower, gaussian mean TV gap over its s.e.)
    cells = {
        (2, 1): (True, True, 10.0),
        (2, 0.5): (True, False, 10.0),
        (3, 1): (False, False, 0.5),
        (3, 2): (False, False, 10.0),
    }
    for (eps0, eps), (upper, lower, gap) in cells.items():
        for accountant, better in (("weak-adversary", upper), ("worst-case-lower", lower)):
            shuffle = 0.10
            gaussian = shuffle - gap * 0.001 if better else shuffle + gap * 0.001
            rows.append(
                {
                    "epsilon_local": eps0,
                    "epsilon": eps,
                    "accountant": accountant,
                    "gaussian_better": better,
                    "l1_half_gaussian_mean": gaussian,
                    "l1_half_gaussian_se": 0.0005,
                    "l1_half_shuffle_inv_mean": shuffle,
                    "l1_half_shuffle_inv_se": 0.0005,
                }
            )
    text = report.read_crossover(pd.DataFrame(rows), upper="weak-adversary", lower="worst-case-lower")
    assert (
        "the winner is certain in 2 of 4 cells (the Gaussian in 1, shuffle+INV in 1); in the other 2" in text
    )
    assert "certain" not in report.read_crossover(pd.DataFrame(rows))


def test_read_gaussian_checks():
    frame = pd.DataFrame(
        {
            "sigma": [2.0, 1.0, 3.0, 0.9],
            "sigma_diffprivlib": [1.0, 1.0, 3.0, 1.0],
            "delta_used": [1e-300, 1e-6, 1e-3, 1e-18],
        }
    )
    text = report.read_gaussian_checks([frame, pd.DataFrame({"x": [1]})])
    assert text == (
        "Of 4 Gaussian calibrations in this run's utility data, diffprivlib's σ is more than 1% below ours "
        "(under-noised) in 1 (σ ours / σ diffprivlib 2 to 2, at δ 1.000e-300 to 1.000e-300); diffprivlib's σ "
        "is more than 1% above ours in 1 (σ ours / σ diffprivlib 0.9 to 0.9, at δ 1.000e-18 to 1.000e-18); "
        "elsewhere they agree within 1% (δ 1.000e-06 to 0.001)."
    )
    assert report.read_gaussian_checks([]) == "No calibration with both σ values is present in this run."


def test_read_sweep_places_bounds_relative_to_exact():
    rows = []
    for n, exact in [(100, -10.0), (200, -20.0), (300, -30.0)]:
        rows.append({"n_users": n, "accountant": "biswas-exact", "kind": "exact", "log10_delta": exact})
        rows.append(
            {"n_users": n, "accountant": "strong-adversary", "kind": "upper bound", "log10_delta": exact + 1}
        )
        rows.append(
            {"n_users": n, "accountant": "biswas-printed", "kind": "as printed", "log10_delta": exact - 5}
        )
    frame = pd.DataFrame(rows)
    frame["delta"] = 10.0 ** frame["log10_delta"]
    text = report.read_sweep(frame)
    assert "`biswas-exact` (exact): 3 points, log10 δ from -30.0 to -10.0, 0 with δ = 0." in text
    assert (
        "`strong-adversary` is below `biswas-exact` at 0 and above it at 3 of 3 points (an upper bound must never be below)."
        in text
    )
    assert "`biswas-printed` is below `biswas-exact` at 3 and above it at 0 of 3 points." in text
    with pytest.raises(ValueError, match=r"`sweep data` must have columns accountant, kind, delta"):
        report.read_sweep(pd.DataFrame({"delta": [1.0]}))


# --- verdict strength and empty cells -----------------------------------------------


def monte_carlo_frame() -> pd.DataFrame:
    rows = [
        {
            "table": "VI",
            "block": "San Francisco",
            "row": "x0=40",
            "column": "shuffle+INV",
            "paper": "1E-3",
            "ours_as_printed": 3e-4,
            "ours_exact": 3e-4,
            "relative_difference": -0.7,
            "verdict": REPRODUCED,
            "note": "inside",
            "interval_low": 0.0,
            "interval_high": 0.0019,
            "p_pass_3x_larger": 0.80,
            "p_pass_3x_smaller": 1.0,
            "x0_count": 0,
        },
        {
            "table": "VI",
            "block": "San Francisco",
            "row": "x0=80",
            "column": "shuffle+INV",
            "paper": "5E-4",
            "ours_as_printed": 8e-4,
            "ours_exact": 8e-4,
            "relative_difference": 0.6,
            "verdict": REPRODUCED,
            "note": "inside",
            "interval_low": 1.1e-4,
            "interval_high": 0.010,
            "p_pass_3x_larger": 0.55,
            "p_pass_3x_smaller": 0.90,
            "x0_count": 136,
        },
        {
            "table": "VI",
            "block": "Paris",
            "row": "x0=20",
            "column": "shuffle+INV",
            "paper": "3E-4",
            "ours_as_printed": 1e-3,
            "ours_exact": 1e-3,
            "relative_difference": 2.3,
            "verdict": NOT_REPRODUCED,
            "note": "outside",
            "interval_low": 4e-4,
            "interval_high": 0.004,
            "p_pass_3x_larger": 0.40,
            "p_pass_3x_smaller": 0.85,
            "x0_count": 8,
        },
        {
            "table": "VI",
            "block": "Paris",
            "row": "x0=20",
            "column": "Gaussian",
            "paper": "2E-6",
            "ours_as_printed": 9e-4,
            "ours_exact": 2e-4,
            "relative_difference": 400.0,
            "verdict": NOT_REPRODUCIBLE,
            "note": "floored",
            "interval_low": np.nan,
            "interval_high": np.nan,
            "p_pass_3x_larger": np.nan,
            "p_pass_3x_smaller": np.nan,
            "x0_count": 8,
        },
    ]
    return pd.DataFrame(rows)


def test_read_comparisons_keeps_strength_columns_and_fills_them_for_old_files(tmp_path):
    new, old = tmp_path / "table6_comparison.csv", tmp_path / "table4_comparison.csv"
    monte_carlo_frame().to_csv(new, index=False)
    comparison_frame().to_csv(old, index=False)
    rows, problems = report.read_comparisons([new, old])
    assert not problems
    from_new = rows[rows["source"] == str(new)]
    assert (
        from_new["interval_high"].notna().sum() == 3
        and rows[rows["source"] == str(old)]["interval_high"].isna().all()
    )


def test_read_verdict_strength_reports_widths_and_pass_probabilities_from_the_rows():
    frame = monte_carlo_frame()
    text = report.read_verdict_strength(frame)
    tests = frame[frame["interval_high"].notna()]
    positive = tests[tests["interval_low"] > 0]
    decades = np.log10(positive["interval_high"] / positive["interval_low"])
    # counted by level, as the split of the cells counts them: the passing draw of the empty cell (x0 = 40)
    # is "not comparable", not "reproduced" (the verdict column alone says 2 reproduced)
    assert (
        "3 cells (Tables V, VI and the text's TV values; 1 of them “reproduced”, 1 “not comparable”" in text
    )
    assert f"{int((tests['verdict'] == REPRODUCED).sum())} of them" not in text
    assert f"span {decades.min():.1f} to {decades.max():.1f} decades" in text
    assert f"{int((tests['interval_low'] == 0).sum())} start at 0" in text
    larger = tests["p_pass_3x_larger"]
    assert f"probability {larger.min():.2f} to {larger.max():.2f} (median {larger.median():.2f})" in text
    assert report.read_verdict_strength(comparison_frame()) == ""  # printed-precision verdicts only


def test_strength_table_lists_each_interval_test():
    frame = monte_carlo_frame()
    table = report.strength_table(frame)
    assert len(table.rows) == int(frame["interval_high"].notna().sum())
    row, source = table.rows[1], frame.iloc[1]
    low, high = source["interval_low"], source["interval_high"]
    assert row[3] == f"[{format_number(low)}, {format_number(high)}]"
    assert row[4] == f"×{format_number(high / low)} ({np.log10(high / low):.1f} decades)"
    assert row[5] == f"{source['p_pass_3x_larger']:.2f}" and table.rows[0][4] == "from 0"
    assert report.strength_table(comparison_frame()) is None


def test_read_empty_cells_names_the_cells_without_check_ins():
    text = report.read_empty_cells(monte_carlo_frame())
    assert "San Francisco: x0 = 40" in text and "x0 = 80" not in text and "Paris" not in text
    assert report.read_empty_cells(comparison_frame()) == ""


def test_build_report_shows_verdict_strength_and_empty_cells(run_dir):
    path = run_dir / "results" / "table6_comparison.csv"
    monte_carlo_frame().to_csv(path, index=False)
    inputs = make_inputs(
        run_dir, comparisons=[run_dir / "results" / "accounting" / "table4_comparison.csv", path]
    )
    markdown = report.render_markdown(report.build_report(inputs))
    assert "**Verdict strength.** 3 cells" in markdown
    assert (
        "**Not comparable.** Cells without any check-in under our row-major numbering (San Francisco: x0 = 40)"
        in markdown
    )
    assert (
        "| x0=40 | shuffle+INV | 1E-3 | 3.000e-04 | 3.000e-04 | not comparable |" in markdown
    )  # not "reproduced"
    assert (
        "| x0=20 | shuffle+INV | 3E-4 | 0.001 | 0.001 | off | printed draw 1.33× below our 95% interval |"
        in markdown
    )
    assert "| x0=80 | shuffle+INV | reproduced | [1.100e-04, 0.01] |" in markdown
    assert "| Table VI | 4 | 1 | 0 | 0 | 0 | 1 | 1 | 1 |" in markdown


# ------------------------------------------------------------ manifests from another configuration

CURRENT = {
    "seed": 3,
    "data": {"source": "local", "max_bad_fraction": 0.01},
    "regions": {"paris": {"lat_min": 48.8}},
    "accounting": {"table2": {"n_users": [100]}},
    "utility": {"runs": 5},
    "report": {"title": "T"},
}


def _manifest_with(path, config):
    from shuffledp import provenance

    provenance.write_manifest(
        path,
        {
            "manifest_schema_version": 1,
            "config": {"sha256": provenance.config_sha256(config), "yaml": provenance.config_yaml(config)},
            "outputs": [],
        },
    )
    return path


@pytest.mark.parametrize(
    "change, stale",
    [
        ({}, {}),
        (
            {"data": {"source": "snap", "max_bad_fraction": 0.01}},
            {"data": ["data.source"], "utility": ["data.source"]},
        ),
        ({"accounting": {"table2": {"n_users": [100, 1000]}}}, {"accounting": ["accounting.table2.n_users"]}),
        ({"seed": 4}, {"utility": ["seed"]}),
        ({"report": {"title": "Other"}}, {}),  # not a key any result stage depends on
    ],
    ids=["same", "offline-then-standins", "accounting-changed", "seed", "title-only"],
)
def test_report_flags_stages_whose_manifest_records_another_relevant_config(run_dir, change, stale):
    results = run_dir / "results"
    manifests = {}
    for stage in ("data", "accounting", "utility"):
        (results / stage).mkdir(exist_ok=True)
        manifests[stage] = _manifest_with(results / stage / "MANIFEST.json", {**CURRENT, **change})
    inputs = make_inputs(
        run_dir, config=CURRENT, manifests=manifests, expected_stages=["data", "accounting", "utility"]
    )
    markdown = report.render_markdown(report.build_report(inputs))
    if not stale:
        assert "Stale results" not in markdown
        return
    line = next(line for line in markdown.splitlines() if "**Stale results:**" in line)
    for stage in ("data", "accounting", "utility"):
        if stage in stale:
            assert f"{stage} (differs in {', '.join(f'`{key}`' for key in stale[stage])})" in line
        else:
            assert f"{stage} (" not in line


# --- epsilon at a fixed delta and the worst-case bracket ------------------------------


def _epsilon_rows(values: dict, *, panel="against n", x="n_users", statuses=None) -> pd.DataFrame:
    """values: accountant -> list of epsilon over x = 100, 1000, 10000 (or eps0 = 1, 2, 4)."""
    roles = {
        "weak": "guarantee, all datasets",
        "strong": "guarantee, all datasets",
        "lower": "lower bound on the worst case",
        "paper": "one dataset, not a guarantee",
    }
    xs = [100, 1000, 10000] if x == "n_users" else [1.0, 2.0, 4.0]
    rows = []
    for accountant, epsilons in values.items():
        for i, (value, eps) in enumerate(zip(xs, epsilons)):
            status = (statuses or {}).get((accountant, i), "ok")
            rows.append(
                {
                    "panel": panel,
                    "accountant": accountant,
                    "role": roles[accountant],
                    "k": 10,
                    "delta": 1e-6,
                    "n_users": value if x == "n_users" else 500,
                    "epsilon_local": value if x != "n_users" else 2.0,
                    "epsilon": eps,
                    "status": status,
                }
            )
    return pd.DataFrame(rows)


def test_read_epsilon_comparison_ranks_guarantees_and_checks_the_lower_bound():
    frame = _epsilon_rows(
        {
            "weak": [0.9, 0.3, 0.1],
            "strong": [math.inf, 0.9, 0.25],
            "lower": [0.8, 0.3, 0.1],
            "paper": [0.0, 0.0, 0.0],
        },
        statuses={
            ("strong", 0): "unreachable",
            ("paper", 0): "epsilon = 0",
            ("paper", 1): "epsilon = 0",
            ("paper", 2): "epsilon = 0",
        },
    )
    text = report.read_epsilon_comparison(frame)
    assert (
        "(against n, k = 10, ε0 = 2, δ = 1e-06, 3 points) Smallest valid guarantee: `weak` at 3 of 3 points"
        in text
    )
    assert "`weak` gives ε from 0.9 (n = 100) to 0.1 (n = 10,000)" in text
    assert "the other guarantees exceed it by `strong` 2.5× to 3×" in text
    assert f"Smallest guarantee / `lower`: 1.00000 to {0.9 / 0.8:.5f} (largest at n = 100)" in text
    assert "A guarantee below the lower bound: 0 points (must be 0)." in text
    assert "`strong` (guarantee, all datasets): no ε reaches δ at n = 100." in text
    assert "`paper` (one dataset, not a guarantee): ε = 0 meets δ at every point." in text


def test_read_epsilon_comparison_counts_a_guarantee_below_the_lower_bound():
    frame = _epsilon_rows(
        {"weak": [0.5, 0.3, 0.1], "strong": [0.6, 0.2, 0.2], "lower": [0.4, 0.25, 0.1]},
        panel="against eps0",
        x="epsilon_local",
    )
    text = report.read_epsilon_comparison(frame)
    assert "Smallest valid guarantee: `weak` at 2, `strong` at 1 of 3 points" in text
    assert "A guarantee below the lower bound: 1 points (must be 0)." in text  # strong at eps0 = 2
    with pytest.raises(ValueError, match=r"`epsilon comparison data` must have columns panel, accountant"):
        report.read_epsilon_comparison(pd.DataFrame({"epsilon": [1.0]}))


def test_read_bracket_states_the_width_and_the_accountant_to_use():
    rows = [
        (100, 2, 4.0, 1e-6, 4.0, 4.0, "both at eps0: no amplification"),
        (100, 10, 1.0, 1e-6, 0.2, 0.25, "ok"),
        (1000, 10, 1.0, 1e-6, 0.1, 0.1001, "ok"),
        (1000, 2, 1.0, 1e-9, 0.1, 0.13, "ok"),
    ]
    frame = pd.DataFrame(
        rows, columns=["n_users", "k", "epsilon_local", "delta", "eps_lower", "eps_upper", "status"]
    )
    frame["ratio"] = frame["eps_upper"] / frame["eps_lower"]
    frame["upper"], frame["lower"] = "weak-adversary", "worst-case-lower"
    text = report.read_bracket(frame, utility_accountant="strong-adversary")
    ratios = frame["ratio"][1:]  # the first setting has no amplification (upper ε = ε0): left out
    assert (
        "over the 3 with amplification (upper ε below 0.99·ε0; 1 without, where a ratio near 1 says nothing "
        f"about tightness): ε(`weak-adversary`) / ε(`worst-case-lower`) from {ratios.min():.5f} to "
        f"{ratios.max():.5f}, median {ratios.median():.5f}; widest at n = 1,000, k = 2, ε0 = 1, δ = 1e-09"
    ) in text
    assert "median 1.00000" not in text.split(" Per k")[0]  # probe: the trivial setting is not counted
    assert f"k = 2: median {frame.loc[frame.k == 2, 'ratio'].median():.5f}, max {1.3:.5f}" in text
    assert "2 of 4 settings are within 1%." in text
    assert "should use `weak-adversary`; this run's `utility.accountant` is `strong-adversary`." in text
    assert "utility.accountant" not in report.read_bracket(frame, utility_accountant="weak-adversary")
    with pytest.raises(ValueError, match=r"`bracket data` must have columns n_users, k"):
        report.read_bracket(pd.DataFrame({"ratio": [1.0]}))


# --- three calibrations and the delta floor --------------------------------------------


def _calibration_rows(means: dict, *, n_users=1000, draws=50, spread=1e-3, seed=0):
    rng = np.random.default_rng(seed)
    accountants = {
        "as_printed": "biswas-printed",
        "configured": "weak-adversary",
        "lower": "worst-case-lower",
    }
    rows = []
    for (calibration, mechanism), mean in means.items():
        for tv in mean + spread * rng.standard_normal(draws):
            rows.append(
                {
                    "n_users": n_users,
                    "epsilon": 4.0,
                    "epsilon_local": 4.0,
                    "calibration": calibration,
                    "accountant": accountants[calibration],
                    "mechanism": mechanism,
                    "l1_half": tv,
                }
            )
    return pd.DataFrame(rows)


def test_three_calibrations_reading_counts_certain_and_flipped_verdicts():
    means = {
        ("configured", "gaussian"): 0.10,
        ("configured", "shuffle+INV"): 0.05,
        ("lower", "gaussian"): 0.20,
        ("lower", "shuffle+INV"): 0.05,
        ("as_printed", "gaussian"): 0.01,
        ("as_printed", "shuffle+INV"): 0.05,
    }
    text = report.read_three_calibrations(_calibration_rows(means))
    assert (
        "shuffle+INV has the lower mean ½L1 error at 1 of 1 n under the tight upper bound (`weak-adversary`)"
        in text
    )
    assert "at 0 of 1 n under eq. (6) as printed" in text
    assert "certain (same winner under both bounds, means more than 2 s.e. apart) at 1 of 1 n" in text
    assert "the paper's calibration gives the other winner at 1 of them" in text


def test_three_calibrations_reading_is_uncertain_when_the_bounds_disagree_or_overlap():
    disagree = {
        ("configured", "gaussian"): 0.04,
        ("configured", "shuffle+INV"): 0.05,
        ("lower", "gaussian"): 0.20,
        ("lower", "shuffle+INV"): 0.05,
    }
    assert "at 0 of 1 n" in report.read_three_calibrations(_calibration_rows(disagree)).split("certain")[1]
    overlap = {
        ("configured", "gaussian"): 0.0501,
        ("configured", "shuffle+INV"): 0.05,
        ("lower", "gaussian"): 0.0501,
        ("lower", "shuffle+INV"): 0.05,
    }
    assert (
        "at 0 of 1 n"
        in report.read_three_calibrations(_calibration_rows(overlap, spread=0.01)).split("certain")[1]
    )
    with pytest.raises(ValueError, match="must have columns"):
        report.read_three_calibrations(pd.DataFrame({"l1_half": [0.1]}))


def test_delta_floor_reading_states_the_break_even_range_and_the_floor():
    frame = pd.DataFrame(
        {
            "region": "synthetic",
            "n_users": [1000, 10000],
            "epsilon": 4.0,
            "epsilon_local": 4.0,
            "calibration": "configured",
            "accountant": "weak-adversary",
            "delta_floored": True,
            "delta_floor": 1e-300,
            "log10_delta_break_even": [-12.3, -45.6],
            "winner_at_delta_used": ["gaussian", "shuffle+INV"],
        }
    )
    text = report.read_delta_floor(frame)
    assert "δ* = 10^-45.6 (n = 10,000) to 10^-12.3 (n = 1,000)" in text
    assert "at our floor it wins (in expectation, unprojected) at 1 of 2 n" in text
    assert "no floor is used" in report.read_delta_floor(frame.assign(delta_floored=False))


def test_equal_guarantee_reading_answers_with_counts_ratios_and_the_accountant_gap():
    rows = []
    for dataset, k in (("synthetic", 15), ("paris", 192)):
        for n_users, ratio in ((1000, 0.8), (1_000_000, 2.5)):
            for epsilon in (0.5, 4.0):
                r = ratio if epsilon > 1 else 1.2
                rows.append(
                    {
                        "dataset": dataset,
                        "k": k,
                        "n_users": n_users,
                        "epsilon": epsilon,
                        "delta_rule": "fixed 1e-06",
                        "ratio": r,
                        "certain": r != 0.8 or dataset == "paris",
                        "winner_upper": "shuffle" if r < 1 else "central",
                        "best_gaussian": "gaussian+proj",
                        "epsilon_local_upper": 3.0,
                        "epsilon_local_lower": 3.0 + (0.05 if dataset == "paris" else 0.0),
                        "ratio_geometric": 0.9 if r < 1 else 1.5,
                    }
                )
    text = report.read_equal_guarantee(pd.DataFrame(rows))
    assert "Over 8 settings (k = 15, 192" in text
    assert (
        "gives the lower ½L1 error in 6 and shuffle+INV at the largest ε0 certified by the tight upper bound in 2"
        in text
    )
    assert "paris (k = 192), n = 1,000, ε = 4" in text
    assert "7 of 8 verdicts are certain" in text
    assert (
        "at n = 1,000,000 the ½L1 ratio shuffle+INV / Gaussian is 1.20 to 1.20 for ε ≤ 1 and 2.50 to 2.50 for ε > 1"
        in text
    )
    assert "differ by at most 0.05" in text and "in only 2 of 8 settings" in text


def test_koskela_reading_counts_reproduced_curves_and_gives_known_causes():
    frame = pd.DataFrame(
        [
            {
                "figure": 3,
                "curve": "weak adversary",
                "accountant": "weak-adversary",
                "compositions": c,
                "compared": 5,
                "max_relative_difference": 0.001 * c,
                "tolerance": 0.01,
                "verdict": "reproduced",
                "note": "",
                "known_cause": "",
            }
            for c in (1, 4)
        ]
        + [
            {
                "figure": 3,
                "curve": "strong adversary",
                "accountant": "strong-adversary",
                "compositions": 4,
                "compared": 5,
                "max_relative_difference": 0.08,
                "tolerance": 0.01,
                "verdict": "not reproduced",
                "note": "",
                "known_cause": "their pair omits gamma",
            },
        ]
    )
    text = report.read_koskela_verdicts(frame)
    assert (
        "Fig. 3, weak adversary (ours: `weak-adversary`; n_c = 1, n_c = 4): 2 of 2 reproduced, largest relative difference 0.40%"
        in text
    )
    assert (
        "Fig. 3, strong adversary (ours: `strong-adversary`; n_c = 4): 0 of 1 reproduced, largest relative difference 8.00% (tolerance 1%); not reproduced: their pair omits gamma."
        in text
    )


def test_koskela_reading_of_fig4_names_the_verdict_cause_and_what_was_checked():
    # Fig. 4 rows (shuffledp.experiments.shuffled_gaussian.fig4_verdicts) have nothing to compare
    frame = pd.DataFrame(
        [
            {
                "figure": 4,
                "curve": "shuffled Gaussian, d = 2",
                "accountant": "monte-carlo hockey-stick",
                "compositions": "",
                "compared": 0,
                "max_relative_difference": float("nan"),
                "tolerance": float("nan"),
                "verdict": "not reproducible as specified",
                "note": "exact: largest relative difference 1.33%",
                "known_cause": "parameters not published",
            },
        ]
    )
    text = report.read_koskela_verdicts(frame)
    assert text == (
        "Fig. 4, shuffled Gaussian, d = 2 (ours: `monte-carlo hockey-stick`): 0 of 1 reproduced; "
        "not reproducible as specified: parameters not published (exact: largest relative difference "
        "1.33%)."
    )


def test_the_report_opens_with_verdicts_then_findings_errata_and_contents(run_dir):
    markdown = report.render_markdown(report.build_report(make_inputs(run_dir)))
    order = [
        markdown.index(h)
        for h in (
            "## Verdicts",
            "## Findings",
            "## Errata",
            "## Contents",
            "## Biswas et al.",
            "## Koskela et al.",
            "## Balle et al.",
            "## Girgis et al.",
            "## Appendix",
        )
    ]
    assert order == sorted(order)
    verdicts = markdown[order[0] : order[1]]
    assert (
        "**Biswas, Jung & Palamidessi** (3 printed cells of Tables II and IV): 1 reproduced, 1 reproduced (the printed value; not a guarantee), 1 off"
        in verdicts
    )
    for paper in ("Koskela et al.", "Balle et al.", "Girgis et al."):
        assert f"**{paper}**: not run here (no verdict table)" in verdicts
    opening = markdown[order[1] : order[2]]
    # no bracket, equal-guarantee, phase-diagram, Koskela or data outputs: each bullet says what is missing
    assert opening.count("not available in this run") == 5 and "(#table-iv)" in opening
    assert 'id="verdicts"' in report.render_html(report.build_report(make_inputs(run_dir)))


def test_phase_diagram_section_opens_with_its_reading_and_shows_its_figures(run_dir):
    utility = run_dir / "results" / "utility"
    utility.mkdir(parents=True, exist_ok=True)
    pd.DataFrame(
        {
            "delta_rule": "fixed 1e-06",
            "k": [2, 2],
            "n_users": [100, 1000],
            "epsilon": [0.5, 0.5],
            "log_ratio": [0.1, -0.2],
            "accountant": "worst-case-upper",
        }
    ).to_csv(utility / "phase_diagram.csv", index=False)
    pd.DataFrame(
        {
            "delta_rule": ["fixed 1e-06"],
            "k": [2],
            "n_users": [1000],
            "epsilon": [0.8],
            "shuffle_wins_below": [True],
        }
    ).to_csv(utility / "phase_diagram_boundary.csv", index=False)
    image = utility / "phase_diagram_fixed_1e-06.png"
    image.write_bytes(b"\x89PNG\r\n\x1a\n")
    extras = {
        "phase diagram": {
            "images": [image],
            "data": [utility / "phase_diagram.csv", utility / "phase_diagram_boundary.csv"],
        }
    }
    markdown = report.render_markdown(report.build_report(make_inputs(run_dir, extras=extras)))
    section = markdown[markdown.index("### Phase diagram") : markdown.index("## Appendix")]
    assert section.split("\n\n")[1].startswith(
        "[phase_diagram.csv] δ fixed 1e-06, k = 2 (`worst-case-upper`): shuffle+INV has the lower expected ½L1 error at 1 of 2"
    )
    assert "Phase diagram, δ rule fixed 1e-06: exact ratio" in section
    findings = markdown[markdown.index("## Findings") : markdown.index("## Errata")]
    assert "(k = 2) shuffle+INV has the lower expected error at 1 of 2 points" in findings
    assert "at δ fixed 1e-06 and n = 1,000 it wins for ε < 0.8 for k = 2" in findings


def test_the_crossover_reading_counts_the_projected_gaussian_the_figure_draws():
    """crossover.png compares shuffle+INV with the Gaussian with projection; the reading counts the
    same comparison: here the raw Gaussian wins 3 of 4 cells and the projected one 1 of 4."""
    import pandas as pd

    from shuffledp.report.readings import read_crossover

    frame = pd.DataFrame(
        {
            "epsilon_local": [1.0, 1.0, 2.0, 2.0],
            "epsilon": [0.5, 1.0, 0.5, 1.0],
            "accountant": ["weak-adversary"] * 4,
            "gaussian_better": [True, True, True, False],
            "gaussian_proj_better": [True, False, False, False],
            "tv_gaussian_proj_mean": [0.1] * 4,
            "tv_gaussian_proj_se": [0.01] * 4,
        }
    )
    text = read_crossover(frame)
    assert "the Gaussian with projection has the lower mean TV in 1 of 4" in text.replace(
        " (an upper bound: a guarantee)", ""
    )
    assert "the Gaussian has the lower mean TV in 3 of 4" in read_crossover(
        frame.drop(columns=["gaussian_proj_better"])
    ).replace(" (an upper bound: a guarantee)", "")


def test_the_crossover_reading_leads_with_the_valid_accountants():
    """The old reading quoted the eq. (6) panel first (the Gaussian wins 7 of 32) although under both valid
    accountants it wins 32 of 32; the printed panel's saturated blue came from the 1e-300 δ floor. The valid
    accountants lead; the printed one comes last, marked not a guarantee, with the cells its floor decided."""
    from shuffledp.report.readings import read_crossover

    cells = [(e0, e) for e0 in (2.0, 4.0) for e in (0.5, 1.0)]
    rows = []
    for accountant, better, floored in (
        ("biswas-printed", [False, False, True, False], [True, True, False, True]),
        ("weak-adversary", [True] * 4, [False] * 4),
        ("worst-case-lower", [True] * 4, [False] * 4),
    ):
        for (e0, e), b, f in zip(cells, better, floored):
            rows.append(
                {
                    "epsilon_local": e0,
                    "epsilon": e,
                    "accountant": accountant,
                    "gaussian_better": b,
                    "delta_floored": f,
                    "delta_used": 1e-300 if f else 1e-7,
                }
            )
    text = read_crossover(pd.DataFrame(rows))
    sentences = text.split(". ")
    assert sentences[0].startswith("With δ̂ from `weak-adversary` (an upper bound: a guarantee)")
    assert "in 4 of 4" in sentences[0]
    assert sentences[1].startswith("With δ̂ from `worst-case-lower` (a lower bound")
    assert sentences[2].startswith("With δ̂ from `biswas-printed` (as printed: not a guarantee")
    assert "in 1 of 4 (ε0, ε) cells; in 3 of them δ̂ was below the floor" in sentences[2]
    assert "floor δ = 1.000e-300" in sentences[2]


def test_the_main_part_before_the_appendix_stays_under_250_lines(tmp_path):
    """The main part (everything before the appendix, the provenance after it) is under 250 lines on
    the stand-in run when one is present in this checkout."""
    path = Path(__file__).resolve().parents[2] / "results" / "report" / "reproduction-report.md"
    if not path.is_file():
        pytest.skip("no workflow run in this checkout (results/report/reproduction-report.md)")
    lines = path.read_text(encoding="utf-8").split("\n")
    main = next(i for i, line in enumerate(lines) if line.startswith("## Appendix"))
    assert main < 250, main


def test_first_screen_names_the_data_and_the_grid_profile(run_dir):
    label = {
        "requested": "auto",
        "source": "bundled",
        "reason": "SNAP could not be downloaded (Network unreachable)",
        "files": [],
        "regions": {
            "san_francisco": {"label": "San Francisco", "kept": 116413, "paper_count": 123108},
            "paris": {"label": "Paris", "kept": 11190, "paper_count": 10260},
        },
    }
    path = run_dir / "results" / "source_label.json"
    path.write_text(json.dumps(label))
    markdown = report.render_markdown(
        report.build_report(
            make_inputs(run_dir, data_source=path, config={"seed": 3, "grid_profile": "quick"})
        )
    )
    first_screen = markdown.split("## Verdicts")[0]
    assert "**Data: the bundled Gowalla subsets, not the full SNAP file**" in first_screen
    assert "San Francisco 116,413 check-ins in the crop against the paper's 123,108" in first_screen
    assert "Paris 11,190 check-ins in the crop against the paper's 10,260" in first_screen
    assert "**Grids:** this report ran the quick grids (config/quick.yaml" in first_screen
    # the grids that ran, from the configuration: named on the first screen
    quick = {
        "seed": 3,
        "grid_profile": "quick",
        "accounting": {
            "bracket": {
                "n_users": [2, 10, 1000, 10000],
                "k": [3, 4, 10],
                "epsilon_local": [1.0, 4.0],
                "delta": [1e-6],
                "extra": [{"n_users": 100000000, "k": 10, "epsilon_local": 15.0}],
            }
        },
        "utility": {
            "phase_diagram": {"n_points": 3, "epsilon_points": 4},
            "phase_diagram_rounds": {"compositions": [1, 10]},
        },
    }

    def first_screen_with(config):
        markdown = report.render_markdown(
            report.build_report(make_inputs(run_dir, data_source=path, config=config))
        )
        return markdown.split("## Verdicts")[0]

    first_screen = first_screen_with(quick)
    assert (
        "worst-case bracket n ∈ {2, 10, 1,000, 10,000} × k ∈ {3, 4, 10} × ε0 ∈ {1, 4} × δ ∈ {1e-06} and 1 "
        "large-ε0 end; phase diagram 3 n × 4 ε per panel; composed phase diagram T ∈ {1, 10}." in first_screen
    )
    # the equal-guarantee grid's points join the phase diagram's axes: said when it is configured
    quick["utility"]["equal_guarantee"] = {"n_users": [1000, 100000], "epsilon": [0.5, 2.0]}
    first_screen = first_screen_with(quick)
    assert (
        "phase diagram 3 n × 4 ε per panel, with the equal-guarantee grid's n and ε inside its ranges added; "
        "composed phase diagram" in first_screen
    )
    # probe: a run on the SNAP file says so, and the default grids
    label.update(source="snap", reason="downloaded from SNAP", files=[{"sha256": "ab" * 32}])
    path.write_text(json.dumps(label))
    markdown = report.render_markdown(report.build_report(make_inputs(run_dir, data_source=path)))
    first_screen = markdown.split("## Verdicts")[0]
    assert "**Data: the SNAP file loc-gowalla_totalCheckins.txt.gz** (sha256 `abababababab`" in first_screen
    assert "bundled" not in first_screen and "the default grids" in first_screen
    markdown = report.render_markdown(report.build_report(make_inputs(run_dir)))
    assert "**Data:** no Gowalla data in this run" in markdown.split("## Verdicts")[0]


def test_koskela_section_states_the_certified_lower_bound_and_files_our_curves_apart(run_dir):
    from shuffledp.report.inputs import KOSKELA_FIGURES

    path = run_dir / "results" / "koskela_verdicts.csv"
    cause = (
        "their curve is not an upper bound: below a certified lower bound (one dataset pair) at "
        "n_c = 10 (0.9551 < 0.9602), n_c = 31 (1.678 < 1.69)"
    )
    pd.DataFrame(
        {
            "figure": [2, 1],
            "curve": ["PLD", "feldman-numerical"],
            "points": [8, 0],
            "verdict": [NOT_REPRODUCED, NOT_REPRODUCIBLE],
            "known_cause": [cause, "no published values"],
        }
    ).to_csv(path, index=False)
    markdown = report.render_markdown(
        report.build_report(make_inputs(run_dir, extras={KOSKELA_FIGURES: {"images": [], "data": [path]}}))
    )
    main = markdown.split("## Appendix")[0]
    section = main.split('<a id="koskela"></a>')[-1] if '<a id="koskela"></a>' in main else main
    assert (
        "**Certified lower bound.** Their published Fig. 2 PLD curve lies below a certified lower bound"
        in section
    )
    assert (
        "| 1 | feldman-numerical | 1 | 0 | 1 |" in section
    )  # filed under "ours only", not "not reproducible"
    assert "ours only (nothing published to compare)" in section
    assert NOT_REPRODUCIBLE not in section.split("**Certified lower bound.**")[-1].split("\n\n")[2]


def test_phase_diagram_reading_counts_neither_useful_as_no_win():
    """A point where both expected ½L1 errors reach 1 - 1/k (the uniform guess) is nobody's win: the old
    reading counted 12 "shuffle wins" at k >= 15, 6 of them between errors above 1."""
    from shuffledp.report.beyond import read_phase_diagram
    from shuffledp.report.findings import finding_phase_diagram

    grid = pd.DataFrame(
        {
            "delta_rule": "fixed 1e-06",
            "k": 192,
            "n_users": [100, 100, 1000],
            "epsilon": [0.05, 1.0, 1.0],
            "log_ratio": [-1.0, -0.5, 0.3],
            "accountant": "worst-case-upper",
            "verdict": ["neither", "shuffle", "gaussian"],
        }
    )
    text = read_phase_diagram(grid)
    assert "lower expected ½L1 error at 1 of 3 points, the Gaussian at 1" in text
    assert "at 1 neither is useful" in text
    found = finding_phase_diagram(grid, None, "a")
    assert "lower expected error at 1 of 3 points (at 1 neither is useful" in found


def _coincident_rows(seed=0):
    """Two settings x 10 n; `configured` and `lower` have the same σ (one experiment drawn with one random
    stream, as the Gowalla community rows are), `as_printed` another σ."""
    rng = np.random.default_rng(seed)
    rows = []
    for epsilon in (1.0, 4.0):
        for n_users in range(1000, 11000, 1000):
            draws = {m: rng.uniform(0.01, 0.1, size=5) for m in ("gaussian", "shuffle+INV")}
            for calibration, sigma in (("configured", 3.0), ("lower", 3.0), ("as_printed", 0.5)):
                for mechanism, values in draws.items():
                    for run, value in enumerate(values):
                        rows.append(
                            {
                                "n_users": n_users,
                                "run": run,
                                "epsilon": epsilon,
                                "epsilon_local": 4.0,
                                "calibration": calibration,
                                "accountant": calibration,
                                "mechanism": mechanism,
                                "sigma": sigma,
                                "l1_half": value * (1.0 if calibration != "as_printed" else 0.5),
                            }
                        )
    return pd.DataFrame(rows)


def test_coincident_calibrations_are_counted_once():
    """Calibrations with the same σ at every n are one experiment: the Gowalla reading counted 20
    configurations twice as 40 (and three calibrations as three verdicts that differed only by noise)."""
    from shuffledp.experiments.utility_tables import merge_coincident_calibrations

    frame = _coincident_rows()
    merged = merge_coincident_calibrations(frame)
    assert sorted(merged["calibration"].unique()) == ["as_printed", "configured"]
    assert set(merged.loc[merged["calibration"] == "configured", "coincides_with"]) == {"lower"}
    assert len(merged) == len(frame) * 2 // 3
    text = report.read_method_comparison(frame)
    assert "(40 configuration(s)" in text  # 2 settings x 10 n x 2 distinct calibrations, not 60
    assert "Counted once: calibration `configured` = `lower`" in text
    three = report.read_three_calibrations(frame)
    assert "under the lower bound" not in three.split("certain")[0]
    assert "which coincides with `lower`" in three
    # distinct σ: nothing merged
    apart = frame.assign(sigma=np.where(frame["calibration"] == "lower", 3.5, frame["sigma"]))
    assert merge_coincident_calibrations(apart)["calibration"].nunique() == 3


def test_utility_figures_say_which_grid_ran():
    """The quick profile's coarse grids were shown without a word; every utility figure's caption now says
    which grid profile ran."""
    from shuffledp.report.sections import grid_words

    assert grid_words({"grid_profile": "quick"}) == (
        "grid: quick profile (a coarse stand-in grid, not config/config.yaml's)"
    )
    assert grid_words({}) == "grid: default profile (config/config.yaml)"
