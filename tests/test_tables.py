"""Tests for shuffledp.tables: printed-precision verdicts, number display and atomic table writing."""

import os

import pandas as pd
import pytest

from shuffledp.io import atomic_write_text
from shuffledp.tables import (
    NOT_REPRODUCED,
    NOT_REPRODUCIBLE,
    REPRODUCED,
    format_number,
    parse_printed,
    printed_half_unit,
    printed_precision_verdict,
    write_table,
)


@pytest.mark.parametrize(
    "printed, half_unit",
    [
        ("2.08E-20", 0.5e-22),  # Table IV style: three significant digits
        ("6.580E-7", 0.5e-10),  # Table II [12]: trailing zero is a printed digit
        ("12E-4", 0.5e-4),  # Table V style
        ("0.97", 0.005),
        ("0", 0.0),  # an exact printed zero
    ],
)
def test_half_unit_in_last_printed_digit(printed, half_unit):
    assert printed_half_unit(printed) == pytest.approx(half_unit, rel=1e-12, abs=0.0)


@pytest.mark.parametrize(
    "printed, ours, verdict",
    [
        ("2.08E-20", 2.0849e-20, REPRODUCED),  # rounds to 2.08
        ("2.08E-20", 2.0751e-20, REPRODUCED),
        ("2.08E-20", 2.0851e-20, NOT_REPRODUCED),  # rounds to 2.09
        ("1.26E-28", 1.267e-28, NOT_REPRODUCED),  # would match only if the paper truncated
        ("0", 0.0, REPRODUCED),
        ("0", 1e-300, NOT_REPRODUCED),  # a printed zero is not "small"
        ("0.97", float("nan"), NOT_REPRODUCIBLE),
    ],
)
def test_printed_precision_verdict(printed, ours, verdict):
    assert printed_precision_verdict(printed, ours)[0] == verdict


def test_verdict_note_names_both_values():
    _, note = printed_precision_verdict("3.82E-93", 4.19e-59)
    assert "3.82E-93" in note and "4.19e-59" in note


def test_parse_printed_rejects_text():
    with pytest.raises(ValueError, match=r"`paper value` must be a number as printed; got 'n/a'"):
        parse_printed("n/a")


@pytest.mark.parametrize(
    "value, shown",
    [(0.0, "0"), (1.5e-7, "1.500e-07"), (0.12345, "0.1235"), (123456.0, "1.235e+05"), (float("nan"), "")],
)
def test_format_number(value, shown):
    assert format_number(value) == shown


def test_format_number_missing_and_text():
    assert format_number(None, missing="-") == "-"
    assert format_number(float("nan"), missing="-") == "-"
    assert format_number("abc") == "abc"


def test_write_table_writes_three_formats(tmp_path):
    frame = pd.DataFrame(
        {"eps": [0.1, 0.5], "delta_exact": [1.345e-9, 0.0], "verdict": ["reproduced", "not reproduced"]}
    )
    write_table(
        frame, csv=tmp_path / "t.csv", latex=tmp_path / "t.tex", markdown=tmp_path / "t.md", caption="A_b"
    )
    back = pd.read_csv(tmp_path / "t.csv")
    assert back["delta_exact"].tolist() == [1.345e-9, 0.0]  # CSV keeps full precision
    latex = (tmp_path / "t.tex").read_text()
    assert r"\caption{A\_b}" in latex and r"delta\_exact" in latex and "1.345e-09" in latex
    markdown = (tmp_path / "t.md").read_text()
    assert markdown.splitlines()[2] == "| eps | delta_exact | verdict |"


def test_atomic_write_leaves_nothing_half_written(tmp_path):
    target = tmp_path / "out.txt"
    atomic_write_text(target, "old")

    with pytest.raises(TypeError):
        atomic_write_text(target, 12345)  # not text: the write fails midway
    assert target.read_text() == "old"
    assert sorted(os.listdir(tmp_path)) == ["out.txt"]  # no temporary file left behind
