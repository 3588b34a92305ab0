"""shuffledp.report.verdicts: the levels of a comparison cell (reproduced, matches if truncated, within 1 %,
off, not comparable), a row the paper prints in two blocks counted once, and the seed papers' verdict
tables counted from their verdict column."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from shuffledp.report.verdicts import (
    LEVELS,
    NOT_COMPARABLE,
    OFF,
    PRINTED_ONLY,
    TRUNCATED,
    WITHIN,
    cell_level,
    graded_cells,
    how_far,
    own_delta_cells,
    seed_counts,
    truncates_to,
    unique_cells,
)
from shuffledp.tables import NOT_REPRODUCED, NOT_REPRODUCIBLE, REPRODUCED


@pytest.mark.parametrize(
    "printed, ours, expected",
    [
        ("1.26E-28", 1.2671664e-28, True),  # Table II n = 100, eps = 0.1: rounds to 1.27, cut gives 1.26
        ("1.26E-28", 1.2599e-28, False),  # below the printed value: no cut gives it
        ("0.02", 0.02526, True),  # two printed decimals
        ("0.62", 0.6294, True),
        ("2.2E-3", 2.466e-3, False),
        ("0", 1e-30, False),  # a printed zero is never a truncation of a positive value
        ("6.580E-7", 6.5809e-7, True),  # trailing zero printed: four digits
        ("6.580E-7", 6.5819e-7, False),
        ("n/a", 1.0, False),
    ],
)
def test_truncation_cuts_after_the_last_printed_digit(printed, ours, expected):
    assert truncates_to(printed, ours) is expected


def _row(**changes):
    row = {
        "table": "II",
        "block": "n=100",
        "row": "eps=0.1",
        "column": "Our delta",
        "paper": "1.26E-28",
        "ours_as_printed": 1.2671664e-28,
        "ours_exact": 1.3e-9,
        "verdict": NOT_REPRODUCED,
        "note": "",
    }
    return {**row, **changes}


def test_levels_in_order_of_strength():
    assert cell_level(_row()) == TRUNCATED
    assert cell_level(_row(paper="1.27E-28", verdict=REPRODUCED)) == PRINTED_ONLY  # eq. (6) as printed
    # a rate column of Table II, or a value with no printed formula, stays reproduced
    assert cell_level(_row(column="[12]", paper="1.27E-28", verdict=REPRODUCED)) == REPRODUCED
    assert cell_level(_row(paper="1.3E-9", ours_as_printed=math.nan, verdict=REPRODUCED)) == REPRODUCED
    # where eq. (6) is the exact single-bin δ (both 0 at ε ≥ ε0) the printed value is right: reproduced
    assert cell_level(_row(paper="0", ours_as_printed=0.0, ours_exact=0.0, verdict=REPRODUCED)) == REPRODUCED
    assert cell_level(_row(paper="1.259E-28")) == WITHIN  # +0.65 %, and no cut of 1.26716 gives 1.259
    assert cell_level(_row(paper="2.2E-3", ours_as_printed=2.466e-3)) == OFF
    assert how_far(_row(paper="2.2E-3", ours_as_printed=2.466e-3)) == "+12.1%"
    assert how_far(_row(paper="6.66E-58", ours_as_printed=2.234e-115)) == "10^-57.5"
    assert how_far(_row(paper="6.02E-143", ours_as_printed=0.0)) == "ours 0, printed 6.02E-143"
    # no printed formula: the exact value is compared
    assert cell_level(_row(paper="1.3E-9", ours_as_printed=math.nan, ours_exact=1.3049e-9)) == TRUNCATED
    assert cell_level(_row(verdict=NOT_REPRODUCIBLE)) == NOT_REPRODUCIBLE


def test_an_empty_cell_is_not_comparable_even_when_its_draw_passed():
    row = _row(
        table="VI",
        paper="1E-3",
        ours_as_printed=3e-4,
        verdict=REPRODUCED,
        interval_low=0.0,
        interval_high=0.0019,
        x0_count=0,
    )
    assert cell_level(row) == NOT_COMPARABLE
    assert cell_level({**row, "x0_count": 5}) == REPRODUCED


def test_a_failed_single_draw_is_off_never_truncated_and_says_how_far_outside():
    row = _row(table="V", paper="3E-4", ours_as_printed=3.0001e-4, interval_low=4e-4, interval_high=4e-3)
    assert cell_level(row) == OFF
    assert how_far(row) == "printed draw 1.33× below our 95% interval"


def _table4():
    rows = []
    settings = {
        ("varying eps0", "eps0=2"): ["2.49E-15", "3.25E-22", "0"],
        ("varying n", "n=50"): ["1.91E-08", "5.02E-12", "0"],
        ("varying n", "n=100"): ["2.49E-15", "3.25E-22", "0"],  # the base setting again
        ("varying k", "k=10"): ["2.49E-15", "3.25E-22", "0"],  # and again
        ("varying k", "k=30"): ["0", "0", "0"],
        ("varying k", "k=35"): ["0", "0", "0"],
    }  # zeros of another setting: not merged
    for (block, label), printed in settings.items():
        for column, paper in zip(("a", "b", "c"), printed):
            value = float(paper) * 1.001
            rows.append(
                {
                    "table": "IV",
                    "block": block,
                    "row": label,
                    "column": column,
                    "paper": paper,
                    "ours_as_printed": value,
                    "ours_exact": value * 10,
                    "verdict": REPRODUCED,
                    "note": "",
                }
            )
    return pd.DataFrame(rows)


def test_a_row_printed_in_three_blocks_is_counted_once_and_zero_rows_are_not_merged():
    cells = unique_cells(_table4())
    assert len(cells) == 6 * 3 - 2 * 3
    assert set(cells["row"]) == {"eps0=2", "n=50", "k=30", "k=35"}
    # the same printed values with a different value of ours are different rows
    changed = _table4()
    changed.loc[(changed["row"] == "k=10") & (changed["column"] == "a"), "ours_as_printed"] = 9.0
    assert len(unique_cells(changed)) == 15


def test_graded_cells_in_the_paper_order_and_own_delta_cells_leave_out_rates_and_monte_carlo():
    rows = pd.concat(
        [
            _table4(),
            pd.DataFrame(
                [
                    _row(),
                    _row(column="[11]", paper="0.999", ours_as_printed=0.9991),
                    _row(table="V", column="shuffle+INV", note="TV at delta from eq. (6)"),
                ]
            ),
        ],
        ignore_index=True,
    )
    graded = graded_cells(rows)
    assert list(dict.fromkeys(graded["table"])) == ["II", "IV", "V"]
    own = own_delta_cells(rows)
    assert sorted(own["column"].unique()) == ["Our delta", "a", "b", "c"] and "V" not in set(own["table"])


def test_seed_counts_come_from_the_verdict_column_and_a_cause_makes_explained():
    frame = pd.DataFrame(
        {
            "verdict": [REPRODUCED, NOT_REPRODUCED, NOT_REPRODUCED, NOT_REPRODUCIBLE, "a new verdict"],
            "known_cause": [None, "their code divides by m", " ", "parameters stripped", None],
        }
    )
    assert seed_counts(frame) == {
        REPRODUCED: 1,
        "explained": 1,
        "a new verdict": 1,
        NOT_REPRODUCED: 1,
        NOT_REPRODUCIBLE: 1,
    }
    assert seed_counts(frame.drop(columns="known_cause"))[NOT_REPRODUCED] == 2
    assert seed_counts(None) == {} and seed_counts(pd.DataFrame({"x": [1]})) == {}


def test_an_invalid_row_is_counted_apart_never_graded():
    from shuffledp.report.read import INVALID_VERDICT
    from shuffledp.report.verdicts import level_counts

    cells = graded_cells(
        pd.DataFrame([_row(), _row(row="eps=0.2", paper="2.69E-43", verdict=INVALID_VERDICT)])
    )
    assert list(cells["level"]) == [TRUNCATED, INVALID_VERDICT]
    counts = level_counts(cells)
    assert counts.loc[0, INVALID_VERDICT] == 1 and counts.loc[0, "cells"] == 2


def test_a_cell_that_reproduces_eq6_as_printed_is_a_level_of_its_own_in_the_counts():
    """Eq. (6) as printed is no DP guarantee: its reproduced cells are counted apart from "reproduced",
    in the level counts and in the first screen's verdict line."""
    from shuffledp.report.findings import verdict_lines
    from shuffledp.report.verdicts import level_counts

    rows = pd.DataFrame(
        [
            _row(paper="1.27E-28", verdict=REPRODUCED),
            _row(row="eps=0.2", column="[12]", paper="0.2", ours_as_printed=0.2, verdict=REPRODUCED),
            _row(
                table="IV",
                block="varying k",
                row="k=5",
                paper="2.5E-10",
                ours_as_printed=2.5e-10,
                verdict=REPRODUCED,
            ),
        ]
    )
    cells = graded_cells(rows)
    assert cells["level"].tolist() == [PRINTED_ONLY, REPRODUCED, PRINTED_ONLY]
    assert LEVELS.index(PRINTED_ONLY) == LEVELS.index(REPRODUCED) + 1
    counts = level_counts(cells).set_index("table")
    assert counts.loc["II", REPRODUCED] == 1 and counts.loc["II", PRINTED_ONLY] == 1
    line = verdict_lines(cells, anchors={k: k for k in ("biswas", "koskela", "balle", "girgis")})[0]
    assert "1 reproduced, 2 reproduced (the printed value; not a guarantee)" in line
    # probe: graded as before (every verdict "reproduced" a reproduced level), the line would say 3 reproduced
    assert "3 reproduced" not in line
