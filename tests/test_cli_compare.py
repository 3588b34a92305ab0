"""`shuffle-dp compare`: table and JSON output, and one clear line with exit status 2 on bad input."""

from __future__ import annotations

import json

import pytest
from calibration_memo import calibrations_once, memoized

from shuffledp.cli import main

SETTING = ["compare", "--n", "200", "--k", "5", "--eps", "1.0", "--delta", "1e-3", "--draws", "20"]


@pytest.fixture(scope="module", autouse=True)
def _calibrated_once():
    """The tests render the same setting as a table and as JSON: each calibration is computed once for the
    module (tests/calibration_memo.py); what they check is the command's dispatch and output."""
    with calibrations_once():
        yield


def test_the_memo_is_the_function_per_argument():
    """The memo answers each argument set with the function's own answer, a copy each time; probe: a memo
    keyed on the positional arguments alone answers the second keyword with the first one's value."""
    calls = []

    def function(x, *, scale):
        calls.append((x, scale))
        return {"value": x * scale}

    once = memoized(function)
    assert [once(2, scale=3), once(2, scale=5), once(2, scale=3)] == [
        {"value": 6},
        {"value": 10},
        {"value": 6},
    ]
    assert calls == [(2, 3), (2, 5)]
    changed = once(2, scale=3)
    changed["value"] = 0
    assert once(2, scale=3) == {"value": 6}
    answers: dict = {}

    def positional_only(*args, **kwargs):  # the planted fault
        return answers.setdefault(args, function(*args, **kwargs))

    assert positional_only(2, scale=3) == {"value": 6} and positional_only(2, scale=5) != {"value": 10}


def test_json_has_one_object_per_mechanism_and_the_verdict(capsys):
    assert main([*SETTING, "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    *mechanisms, final = rows
    assert [row["mechanism"] for row in mechanisms if row["calibration"] != "lower"] == [
        "shuffle+inv",
        "shuffle+inv+proj",
        "shuffle+ibu",
        "gaussian",
        "gaussian+proj",
        "geometric",
        "geometric+proj",
        "local-krr+inv",
    ]
    for row in mechanisms:
        assert {
            "mechanism",
            "epsilon_local",
            "sigma",
            "l1_half",
            "l1_half_se",
            "method",
            "calibration",
        } <= set(row)
        assert row["method"] in {"exact", "monte-carlo"}
    assert final["winner"] in {row["mechanism"] for row in mechanisms}
    assert set(final["shuffle_vs_gaussian"]) >= {"winner", "ratio", "certain"}


def test_table_has_one_line_per_row_and_the_verdict(capsys):
    assert main(SETTING) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("mechanism")
    assert all(line.endswith(("exact", "monte-carlo")) for line in lines[1:12]) and len(lines) == 26
    assert any(line.startswith("winner (smallest expected half L1 error") for line in lines)
    assert any(line.startswith("shuffle+inv+proj vs gaussian+proj:") for line in lines)
    # by default, every shuffled randomizer side by side after k-RR's detail
    assert lines[15].startswith("which randomizer to shuffle") and lines[16].startswith("randomizer")
    assert [line.split()[0] for line in lines[17:25]] == [
        "krr",
        "hadamard",
        "olh",
        "oue",
        "subset",
        "sue",
        "gaussian",
        "geometric",
    ]
    assert lines[25].startswith("best shuffled: ")


def test_one_key_keeps_its_detailed_comparison_alone(capsys):
    assert main([*SETTING, "--randomizer", "krr"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 15 and not any(line.startswith("which randomizer") for line in lines)


def test_a_list_of_keys_is_compared_side_by_side(capsys):
    assert main([*SETTING, "--randomizer", "oue,olh", "--json"]) == 0
    *rows, verdict = json.loads(capsys.readouterr().out)
    assert [row["randomizer"] for row in rows] == ["oue", "olh", "gaussian", "geometric"]
    assert all(row["epsilon_local"] >= 1.0 for row in rows[:2])
    assert verdict["best_shuffled"] in {"oue", "olh"}
    assert main([*SETTING, "--randomizer", "oue,olh"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 7 and lines[-1].startswith("best shuffled: ")


def test_default_json_carries_the_side_by_side_comparison(capsys):
    assert main([*SETTING, "--json"]) == 0
    final = json.loads(capsys.readouterr().out)[-1]
    *rows, verdict = final["randomizers"]
    assert rows[0]["randomizer"] == "krr" and verdict["metric"] == "l1_half"


@pytest.mark.parametrize(
    "extra, message",
    [
        pytest.param(
            ["--data", "zipf:-1"],
            "`--data` zipf exponent S must be a number in [0, inf); got 'zipf:-1'.",
            id="negative-zipf",
        ),
        pytest.param(["--draws", "0"], "`draws` must be an integer in [2, inf); got 0.", id="no-draws"),
        pytest.param(["--delta", "1.5"], "`delta` must be in (0, 1); got 1.5.", id="delta"),
        pytest.param(
            ["--randomizer", "oue,,olh"],
            "`--randomizer` must be registered keys separated by commas; got 'oue,,olh'.",
            id="empty-key",
        ),
        pytest.param(
            ["--randomizer", "oue,nope"],
            "`randomizer` must be one of binary-rr, hadamard, krr, laplace, olh, oue, subset, sue; got 'nope'.",
            id="unknown-key",
        ),
        pytest.param(
            ["--neighbouring", "swap"],
            "`neighbouring` must be one of 'replace-one', 'add-remove'; got 'swap'.",
            id="neighbouring",
        ),
    ],
)
def test_bad_input_is_one_line_and_status_2(capsys, extra, message):
    assert main([*SETTING, *extra]) == 2
    error = capsys.readouterr().err
    assert error == f"shuffle-dp: error: {message}\n"


def test_csv_with_the_wrong_number_of_counts(capsys, tmp_path):
    path = tmp_path / "counts.csv"
    path.write_text("count\n3\n4\n5\n")
    assert main([*SETTING, "--data", str(path)]) == 2
    assert (
        capsys.readouterr().err
        == f"shuffle-dp: error: `--data` CSV must hold k = 5 counts (one per cell); got 3 in {path}.\n"
    )
