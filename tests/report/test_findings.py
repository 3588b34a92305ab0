"""shuffledp.report.findings: the opening answer of the report, one sentence per finding, each number
read from its input, and a sentence saying what is missing when an input is absent."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from shuffledp.report.findings import (
    amplified,
    extra_anchor,
    finding_balle,
    finding_bracket,
    finding_data,
    finding_eq6,
    finding_equal_guarantee,
    finding_koskela,
    finding_phase_diagram,
    finding_rounds,
    findings,
)

ANCHORS = {
    "bracket": "extra-worst-case-bracket",
    "equal": "extra-equal-guarantee",
    "phase": "extra-phase-diagram",
    "koskela": "extra-Koskela-et-al.-Figures-1-3",
}


def _comparison_rows():
    base = {"block": "n=100", "paper": "1e-5", "relative_difference": 0.1, "verdict": "reproduced"}
    return pd.DataFrame(
        [
            {
                **base,
                "table": "II",
                "row": "eps=1",
                "column": "Our delta",
                "ours_as_printed": 1e-10,
                "ours_exact": 1e-7,
                "note": "ours_as_printed: eq. (6) at eps0 = 0.49",
            },
            {
                **base,
                "table": "IV",
                "row": "n=50",
                "column": "eps=2",
                "ours_as_printed": 1e-20,
                "ours_exact": 1e-15,
                "note": "eq. (6) at n = 50, eps = 2",
            },
            {
                **base,
                "table": "IV",
                "row": "n=60",
                "column": "eps=3",
                "ours_as_printed": 0.0,
                "ours_exact": 1e-30,
                "note": "eq. (6) at n = 60, eps = 3",
            },
            # a prior bound's cell (not eq. (6)): must not count
            {
                **base,
                "table": "II",
                "row": "eps=1",
                "column": "[11]",
                "ours_as_printed": 1e-90,
                "ours_exact": 1.0,
                "note": "ours_as_printed: rate-erlingsson",
            },
        ]
    )


def test_eq6_orders_of_magnitude_come_from_the_eq6_rows_only():
    text = finding_eq6(_comparison_rows())
    assert "in 2 of 2 cells of Tables II and IV" in text
    assert (
        "median 4.0, up to 5.0 orders of magnitude" in text
    )  # log10(1e-7/1e-10) = 3, log10(1e-15/1e-20) = 5
    assert "Table IV, n=100, n=50, eps=2" in text
    assert "in 1 more cell it gives δ = 0 where the exact δ is positive" in text
    # eq. (6)'s value and the paper's printed value are told apart
    assert "eq. (6) gives 1.000e-20, the exact δ is 1.000e-15 and the paper printed 1e-5" in text
    assert "[Table IV](#table-iv)" in text and "90" not in text


def test_eq6_leaves_out_monte_carlo_rows_that_mention_eq6_and_counts_a_shared_cell_once():
    rows = _comparison_rows()
    monte_carlo = rows.iloc[[1]].assign(table=["V"], row=["n=1000"], note=["TV with δ from eq. (6)"])
    shared = rows.iloc[[1]].assign(block=["varying n"])  # Table IV prints its base setting in two blocks
    text = finding_eq6(pd.concat([rows, monte_carlo, shared], ignore_index=True))
    assert "in 2 of 2 cells of Tables II and IV" in text


def test_equal_guarantee_settings_differing_only_in_dataset_or_delta_rule_are_told_apart():
    frame = pd.DataFrame(
        {
            "dataset": ["paris", "paris"],
            "k": 408,
            "n_users": 1000,
            "epsilon": 4.0,
            "delta_rule": ["1/n^1.1", "fixed 1e-06"],
            "ratio": [0.9, 0.95],
            "winner_upper": "shuffle",
            "certain": True,
        }
    )
    text = finding_equal_guarantee(frame, "extra-equal-guarantee")
    assert (
        "(paris, n = 1,000, ε = 4, k = 408, δ 1/n^1.1; paris, n = 1,000, ε = 4, k = 408, δ fixed 1e-06)"
        in text
    )


def test_eq6_follows_its_input():
    rows = _comparison_rows()
    rows.loc[1, "ours_exact"] = 1e-12  # 8 orders
    assert "up to 8.0 orders of magnitude" in finding_eq6(rows)


def test_bracket_widest_ratio_and_where():
    frame = pd.DataFrame(
        {
            "n_users": [100, 1000],
            "k": [5, 15],
            "epsilon_local": [1.0, 2.0],
            "delta": [1e-6, 1e-6],
            "eps_lower": [0.5, 0.3],
            "eps_upper": [0.51, 0.36],
            "ratio": [1.02, 1.2],
            "upper": "worst-case-upper",
            "lower": "worst-case-lower",
        }
    )
    text = finding_bracket(frame, "extra-worst-case-bracket")
    assert (
        "within a factor 1.20000" in text and "over the 2 settings with amplification (median 1.11000" in text
    )
    assert "n = 1,000, k = 15, ε0 = 2" in text and "(ε 0.3 to 0.36)" in text
    assert "0 settings without amplification left out" in text
    assert text.endswith("([section](#extra-worst-case-bracket)).")


def test_bracket_leaves_out_the_settings_without_amplification_and_names_its_grid():
    """A setting whose upper ε is within 1 % of ε0 (no amplification) has a ratio near 1 that says nothing
    about tightness: the median and the widest are over the other settings, and the grid is named."""
    frame = pd.DataFrame(
        {
            "n_users": [2, 2, 2, 1000, 10_000],
            "k": [3, 3, 3, 3, 3],
            "epsilon_local": [1.0, 4.0, 4.0, 1.0, 1.0],
            "delta": 1e-6,
            "eps_lower": [1.0, 3.99, 3.94, 0.5, 0.2],
            "eps_upper": [1.0, 3.99, 3.95, 0.5002, 0.20006],
            "ratio": [1.0, 1.0, 1.0025, 1.0004, 1.0003],
            "upper": "worst-case-upper",
            "lower": "worst-case-lower",
        }
    )
    text = finding_bracket(frame, "a", "quick")
    # rows 0 and 1 have upper ε ≥ 0.99·ε0; row 2 (3.95 < 3.96) is kept
    assert "over the 3 settings with amplification (median 1.00040" in text
    assert "2 settings without amplification left out (upper ε ≥ 0.99·ε0" in text
    assert "the quick grid: n ∈ {2, 1,000, 10,000} × k ∈ {3} × ε0 ∈ {1, 4} × δ ∈ {1e-06}" in text
    assert "within a factor 1.00250" in text
    # probe: counting the trivial settings would give the median of all five, 1.0003
    assert amplified(frame).tolist() == [False, False, True, True, True]


def test_equal_guarantee_winners_and_ratios():
    frame = pd.DataFrame(
        {
            "dataset": "uniform",
            "k": [5, 5, 5],
            "n_users": [100, 10_000, 10_000],
            "epsilon": [1.0, 0.5, 2.0],
            "delta_rule": "fixed 1e-06",
            "ratio": [2.5, 0.8, 1.1],
            "winner_upper": ["central", "shuffle", "tie"],
            "certain": [True, True, False],
        }
    )
    text = finding_equal_guarantee(frame, "extra-equal-guarantee")
    assert (
        "lower ½L1 error in 1 of 3 settings and shuffle+INV in 1 (uniform, n = 10,000, ε = 0.5, k = 5, δ fixed 1e-06)"
        in text
    )
    assert "neither beyond Monte-Carlo error in 1" in text
    assert "0.80 to 2.50 (median 1.10)" in text and "2 of 3 verdicts are certain" in text


def test_phase_diagram_share_and_boundary_at_the_largest_n():
    grid = pd.DataFrame(
        {
            "delta_rule": "fixed 1e-06",
            "k": [2, 2, 15, 15],
            "n_users": [100, 1000, 100, 1000],
            "epsilon": [0.1, 1.0, 0.1, 1.0],
            "log_ratio": [-0.1, 0.2, 0.3, math.nan],
        }
    )
    boundary = pd.DataFrame(
        {
            "delta_rule": "fixed 1e-06",
            "k": [2, 2, 15],
            "n_users": [100, 1000, 1000],
            "epsilon": [0.2, 0.7, 0.05],
            "shuffle_wins_below": [True, True, True],
        }
    )
    certified = grid.assign(accountant="worst-case-upper")
    text = finding_phase_diagram(certified, boundary, "extra-phase-diagram")
    assert "at 1 of 3 points" in text and "(k = 2, 15)" in text
    assert "n = 1,000 it wins for ε < 0.7 for k = 2, ε < 0.05 for k = 15" in text
    assert "phase_diagram_boundary.csv` is missing" in finding_phase_diagram(certified, None, "a")


def test_phase_diagram_quotes_no_region_of_a_panel_calibrated_by_a_lower_bound():
    grid = pd.DataFrame(
        {
            "delta_rule": "fixed 1e-06",
            "k": [2, 2, 15, 15],
            "n_users": [100, 1000, 100, 1000],
            "epsilon": [0.1, 1.0, 0.1, 1.0],
            "log_ratio": [-0.1, -0.2, 0.3, -0.4],
            "calibration": ["worst-case-lower", "worst-case-lower", "weak-adversary", "weak-adversary"],
        }
    )
    boundary = pd.DataFrame(
        {
            "delta_rule": "fixed 1e-06",
            "k": [2, 15],
            "n_users": [1000, 1000],
            "epsilon": [0.7, 0.05],
            "shuffle_wins_below": [True, True],
        }
    )
    text = finding_phase_diagram(grid, boundary, "extra-phase-diagram")
    assert "(k = 15) shuffle+INV has the lower expected error at 1 of 2 points" in text
    assert "k = 2 by `worst-case-lower`" in text and "ε < 0.7" not in text and "ε < 0.05 for k = 15" in text
    # the same panel calibrated by the certified upper bound is counted
    upper = finding_phase_diagram(grid.assign(calibration="worst-case-upper"), boundary, "a")
    assert "(k = 2, 15) shuffle+INV has the lower expected error at 3 of 4 points" in upper


def test_koskela_counts_and_distinct_failed_curves():
    frame = pd.DataFrame(
        {
            "figure": [1, 1, 2, 3],
            "curve": ["PLD", "PLD", "RDP", "PLD"],
            "verdict": ["not reproduced", "not reproduced", "reproduced", "not reproduced"],
            "compared": [5, 5, 5, 0],
            "max_relative_difference": [0.5, 0.2, 0.001, math.nan],
            "known_cause": ["grid", "", "", ""],
        }
    )
    text = finding_koskela(frame, "k")
    assert "4 published curves, 1 reproduced, 1 explained, 2 not reproduced" in text
    assert (
        "the 3 not reproduced fall in 2 group(s) (Fig. 1 PLD; Fig. 3 PLD), 1 of them with a documented cause"
        in text
    )
    # a relative difference of δ is never quoted as how far off a curve is
    assert "%" not in text
    with_eps = finding_koskela(frame.assign(max_epsilon_difference=[0.02, 0.5, 0.0, math.nan]), "k")
    assert "up to 0.5 apart in ε" in with_eps


def test_data_caveat_counts_against_the_paper():
    summary = pd.DataFrame(
        {
            "level": ["source", "region", "region"],
            "name": ["fx", "sf", "paris"],
            "label": ["fixture", "San Francisco", "Paris"],
            "kept": [700, 412, 10260],
            "paper_count": [math.nan, 123108, 10260],
        }
    )
    text = finding_data(summary)
    assert "`fixture`" in text and "San Francisco 412 check-ins vs the paper's 123,108 (-99.7%)" in text
    assert "Paris 10,260 check-ins vs the paper's 10,260 (+0.0%)" in text and "stand-ins" in text
    same = summary.assign(kept=[700, 123108, 10260])
    assert "matching the paper's counts" in finding_data(same)


@pytest.mark.parametrize(
    "function, args, path",
    [
        (finding_eq6, (None,), "table2_comparison.csv"),
        (finding_bracket, (None, "a"), "results/accounting/bracket.csv"),
        (finding_equal_guarantee, (None, "a"), "results/utility/equal_guarantee_ratio.csv"),
        (finding_phase_diagram, (None, None, "a"), "results/utility/phase_diagram.csv"),
        (finding_koskela, (None, "a"), "results/koskela/koskela_verdicts.csv"),
        (finding_data, (None,), "results/data/summary.csv"),
    ],
)
def test_a_missing_input_says_what_is_missing(function, args, path):
    text = function(*args)
    assert "not available in this run" in text and path in text


def test_a_frame_without_the_needed_columns_is_missing_too():
    assert "not available in this run" in finding_bracket(pd.DataFrame({"x": [1]}), "a")
    assert "not available in this run" in finding_eq6(pd.DataFrame(columns=["table", "ours_as_printed"]))


def test_findings_in_order_and_never_crash_on_nothing():
    bullets = findings(None, anchors=ANCHORS)
    assert len(bullets) == 6 and all("not available in this run" in b for b in bullets)
    assert "(#extra-phase-diagram)" in bullets[3]
    assert extra_anchor("Koskela et al. Figures 1-3") == ANCHORS["koskela"]


def test_balle_counts_per_code_version_and_the_loosest_bound():
    frame = pd.DataFrame(
        {
            "panel": ["i", "i", "iii", "iii"],
            "curve": ["Hoeffding", "Bennett", "Bennett, RR-2", "Bennett, RR-2"],
            "code": ["current", "current", "current", "2019"],
            "verdict": ["reproduced", "reproduced", "reproduced", "not reproduced"],
            "max_relative_difference": [1e-9, 2e-9, 3e-9, 0.24],
            "looseness_max": [2.85, 4.8, 1.37, 1.37],
            "looseness_min": [0.81, 1.2, 1.1, 1.1],
            "reference": ["feldman-numerical (generic upper)"] * 2 + ["worst case, RR-2"] * 2,
        }
    )
    text = finding_balle(frame, "extra-balle")
    assert "3 of 3 curves reproduced against their current code" in text
    assert (
        "0 of 1 curves reproduced against their 2019 code (not: panel iii Bennett, RR-2; up to 24% off)"
        in text
    )
    # each reference named for what it is: the k = 2 worst case is tight, feldman-numerical is not
    assert (
        "against a tight reference (the k-RR worst case, `worst-case-upper` at k = 2) the loosest is " in text
    )
    assert "Bennett, RR-2 (panel iii), up to 1.4× the worst case" in text
    assert (
        "against “feldman-numerical (generic upper)”, an upper bound that need not be tight, the factor runs "
        "from 0.81 (Hoeffding, panel i) to 4.8 (Bennett, panel i)" in text
    )
    assert "tight reference" not in text.split("the worst case;")[-1]  # probe: no "tight" beside feldman
    assert finding_balle(None, "extra-balle").startswith("Balle et al.'s Figure 3")
    assert "balle_verdicts.csv" in finding_balle(None, "extra-balle")


def test_the_phase_diagram_reading_counts_no_panel_calibrated_by_a_lower_bound():
    from shuffledp.report.beyond import read_phase_diagram

    grid = pd.DataFrame(
        {
            "delta_rule": "fixed 1e-06",
            "k": [2, 2, 15],
            "n_users": [100, 1000, 100],
            "epsilon": 1.0,
            "log_ratio": [-0.5, -0.2, 0.3],
            "accountant": ["worst-case-lower", "worst-case-lower", "weak-adversary"],
        }
    )
    text = read_phase_diagram(grid)
    assert "k = 2: calibrated by `worst-case-lower`, not a guarantee, so no count." in text
    assert "k = 15 (`weak-adversary`): shuffle+INV has the lower expected ½L1 error at 0 of 1 points" in text
    boundary = pd.DataFrame(
        {
            "delta_rule": "fixed 1e-06",
            "k": [2, 15],
            "n_users": [1000, 1000],
            "epsilon": [0.7, 0.1],
            "shuffle_wins_below": [True, True],
        }
    )
    crossings = read_phase_diagram(boundary, uncertified_k={2})
    assert "k = 2" not in crossings and "k = 15: 1 crossing(s)" in crossings


def test_koskela_counts_published_curves_apart_from_ours():
    """Curves we draw beside theirs with no published values (``points`` = 0: Feldman et al.'s method, the
    certified lower bound, Balle et al.'s Thm 3.1) are not "published curves"."""
    import pandas as pd

    from shuffledp.report.findings import finding_koskela

    frame = pd.DataFrame(
        {
            "figure": [1, 1, 2],
            "curve": ["PLD", "feldman", "lower"],
            "points": [12, 0, 0],
            "verdict": ["reproduced", "not reproducible as specified", "not reproducible as specified"],
            "known_cause": ["", "no published counterpart", "no published counterpart"],
        }
    )
    text = finding_koskela(frame, "koskela")
    assert "1 published curves, 1 reproduced" in text and "2 curves of ours are drawn beside them" in text


def test_balle_claims_are_counted_from_their_table():
    """Each claim's count is the table's, recounted here by a plain loop over the rows (the two claims
    the corrected Bennett code overturns)."""
    import pandas as pd

    from shuffledp.report.findings import finding_balle_claims

    frame = pd.DataFrame(
        {
            "panel": ["i", "iii"],
            "claim": [
                "Hoeffding for small n, Bennett for large n",
                "Bennett better for every mechanism (RR-2)",
            ],
            "better": ["Bennett", "Bennett, RR-2"],
            "points": [100, 100],
            "claim_holds": [0, 3],
            "claim_fails": [100, 97],
            "verdict": ["not reproduced", "not reproduced"],
        }
    )
    text = finding_balle_claims(frame, "balle")
    for row in frame.to_dict("records"):
        assert f"{row['better']} is better at {row['claim_holds']} of {row['points']} points" in text
    assert "balle_claims.csv" in finding_balle_claims(frame.drop(columns=["claim_holds"]), "balle")


def test_rounds_finding_recounts_every_number_from_the_grid():
    """Each number of the composed phase diagram's finding, recounted here by a plain loop."""
    rows = []
    # (k, q, n): log ratio at T = 1, 10, 100 (negative: shuffle+INV wins); one skipped point, one NaN
    lines = {
        (2, 1.0, 1000): [0.2, -0.1, -0.3],
        (2, 0.01, 100000): [-0.5, -0.2, 0.1],
        (15, 1.0, 1000): [0.4, 0.3, 0.2],
        (15, 0.01, 100000): [-0.2, -0.3, math.nan],
    }
    for (k, q, n), ratios in lines.items():
        for T, ratio in zip((1, 10, 100), ratios):
            rows.append(
                {
                    "k": k,
                    "subsample": q,
                    "n_users": n,
                    "epsilon": 1.0,
                    "compositions": T,
                    "log_ratio": ratio,
                    "skipped": "",
                }
            )
    rows.append(
        {
            "k": 15,
            "subsample": 0.01,
            "n_users": 100,
            "epsilon": 1.0,
            "compositions": 1,
            "log_ratio": math.nan,
            "skipped": "q n = 1 ...",
        }
    )
    grid = pd.DataFrame(rows)
    first_last = {}
    for row in rows:
        if row["skipped"] or math.isnan(row["log_ratio"]):
            continue
        key = (row["k"], row["subsample"], row["n_users"], row["epsilon"])
        winner = "shuffle" if row["log_ratio"] < 0 else "gaussian"
        low, high = first_last.get(key, ((math.inf, None), (-math.inf, None)))
        first_last[key] = (
            min(low, (row["compositions"], winner)) if low[1] else (row["compositions"], winner),
            max(high, (row["compositions"], winner)) if high[1] else (row["compositions"], winner),
        )
    to_shuffle = sum(1 for a, b in first_last.values() if a[1] == "gaussian" and b[1] == "shuffle")
    to_gaussian = sum(1 for a, b in first_last.values() if a[1] == "shuffle" and b[1] == "gaussian")
    first_shuffle = sum(1 for a, _ in first_last.values() if a[1] == "shuffle")
    last_shuffle = sum(1 for _, b in first_last.values() if b[1] == "shuffle")
    text = finding_rounds(grid, "extra-phase-diagram-over-rounds")
    assert (to_shuffle, to_gaussian, len(first_last), first_shuffle, last_shuffle) == (1, 1, 4, 2, 2)
    assert (
        f"moves from the Gaussian to shuffle+INV on {to_shuffle} and from shuffle+INV to the Gaussian on "
        f"{to_gaussian} of {len(first_last)} lines"
    ) in text
    assert f"shuffle+INV wins {first_shuffle} at the smallest T and {last_shuffle} at the largest" in text
    assert "T = 1 to 100" in text and "q = 0.01, 1" in text and "k = 2, 15" in text
    assert "phase_diagram_rounds.csv` is missing" in finding_rounds(None, "a")


def _koskela_frame_with_lower_bound() -> pd.DataFrame:
    cause = (
        "their loss has an extra factor; their curve is not an upper bound: below a certified lower bound "
        "(the exact subsampled pair of D = all users on x0 vs u on x1; recorded as a reference) at n_c = 10 (0.9551 < 0.9602), "
        "n_c = 31 (1.678 < 1.69)"
    )
    return pd.DataFrame(
        {
            "figure": [2, 2, 1],
            "curve": ["PLD", "RDP", "feldman-numerical"],
            "points": [8, 8, 0],
            "verdict": ["not reproduced", "reproduced", "not reproducible as specified"],
            "known_cause": [cause, "", "no published values"],
        }
    )


def test_koskela_states_the_published_curve_below_a_certified_lower_bound():
    from shuffledp.report.findings import below_certified_lower

    frame = _koskela_frame_with_lower_bound()
    assert below_certified_lower(frame) == [
        (2, 10, "PLD", "0.9551", "0.9602"),
        (2, 31, "PLD", "1.678", "1.69"),
    ]
    text = finding_koskela(frame, "k")
    assert (
        "Their published Fig. 2 PLD curve lies below a certified lower bound at n_c = 10 (ε 0.9551 < 0.9602), "
        "n_c = 31 (ε 1.678 < 1.69)" in text
    )
    # probe: a cause that records no such point gives no sentence
    assert "certified lower bound" not in finding_koskela(frame.assign(known_cause=""), "k")


def test_koskela_files_our_curves_without_published_values_apart():
    from shuffledp.report.findings import OURS_ONLY, file_added

    filed = file_added(_koskela_frame_with_lower_bound())
    assert filed["verdict"].tolist() == ["not reproduced", "reproduced", OURS_ONLY]
    assert "not reproducible as specified" not in set(filed["verdict"])
