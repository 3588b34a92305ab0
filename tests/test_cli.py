"""Tests of the `shuffle-dp` command line (src/shuffledp/cli.py).

Values printed by the CLI are checked against the library (the CLI adds no mathematics) and the
brute-force single-bin reference for one tiny case.
"""

import json
import math
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from shuffledp.accounting import get_accountant, list_accountants
from shuffledp.cli import main


def run(capsys, *argv):
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_delta_json_matches_library(capsys):
    code, out, _ = run(
        capsys,
        "delta",
        "--accountant",
        "biswas-exact",
        "--eps0",
        "0.49",
        "--n",
        "100",
        "--k",
        "10",
        "--nx0",
        "80",
        "--eps",
        "0.01",
        "0.1",
        "0.4",
        "--json",
    )
    assert code == 0
    rows = json.loads(out)
    library = get_accountant("biswas-exact", epsilon_local=0.49, n_users=100, k=10, n_x0=80)
    assert [row["eps"] for row in rows] == [0.01, 0.1, 0.4]
    for row in rows:
        assert row["delta"] == pytest.approx(library.delta_for_epsilon(row["eps"])[0], rel=1e-12)
        assert row["log_delta"] == pytest.approx(math.log(row["delta"]), rel=1e-9)
        assert row["accountant"] == "biswas-exact" and row["kind"] == "exact"


def test_delta_table_one_row_per_epsilon_and_zero_delta(capsys):
    code, out, _ = run(
        capsys,
        "delta",
        "--accountant",
        "biswas-printed",
        "--eps0",
        "1",
        "--n",
        "20",
        "--k",
        "3",
        "--nx0",
        "5",
        "--eps",
        "0.2",
        "1.5",
    )
    lines = out.strip().splitlines()
    assert code == 0 and lines[0].split("\t") == ["eps", "delta", "log_delta", "accountant", "kind"]
    assert len(lines) == 3 and lines[2].split("\t")[1] == "0"  # eps >= eps0: delta = 0 exactly
    code, out, _ = run(
        capsys,
        "delta",
        "--accountant",
        "biswas-printed",
        "--eps0",
        "1",
        "--n",
        "20",
        "--k",
        "3",
        "--nx0",
        "5",
        "--eps",
        "1.5",
        "--json",
    )
    assert json.loads(out)[0]["delta"] == 0.0 and json.loads(out)[0]["log_delta"] is None


def test_delta_tiny_case_matches_brute_force(capsys):
    sys.path.insert(0, str(Path(__file__).parent / "accounting"))
    from brute_force import hockey_stick, single_bin_distributions

    p0, p1 = single_bin_distributions(4, 3, 1, epsilon_local=1.0)
    code, out, _ = run(
        capsys,
        "delta",
        "--accountant",
        "biswas-exact",
        "--eps0",
        "1.0",
        "--n",
        "4",
        "--k",
        "3",
        "--nx0",
        "1",
        "--direction",
        "reverse",
        "--eps",
        "0.3",
        "--json",
    )
    assert code == 0 and json.loads(out)[0]["delta"] == pytest.approx(
        float(hockey_stick(p1, p0, 0.3)), rel=1e-12
    )


def test_epsilon_inverts_delta(capsys):
    code, out, _ = run(
        capsys,
        "epsilon",
        "--accountant",
        "biswas-exact",
        "--eps0",
        "2",
        "--n",
        "500",
        "--k",
        "10",
        "--nx0",
        "50",
        "--delta",
        "1e-6",
        "1e-20",
        "--json",
    )
    assert code == 0
    library = get_accountant("biswas-exact", epsilon_local=2.0, n_users=500, k=10, n_x0=50)
    for row in json.loads(out):
        assert library.delta_for_epsilon(row["eps"])[0] <= row["delta"] * (1 + 1e-9)
        assert library.delta_for_epsilon(row["eps"] - 1e-6)[0] > row["delta"]


def test_calibrate(capsys):
    code, out, _ = run(
        capsys,
        "calibrate",
        "--accountant",
        "biswas-exact",
        "--n",
        "300",
        "--k",
        "10",
        "--nx0",
        "30",
        "--eps",
        "0.5",
        "--delta",
        "1e-8",
        "--json",
    )
    assert code == 0
    eps0 = json.loads(out)[0]["eps0"]
    meets = get_accountant("biswas-exact", epsilon_local=eps0, n_users=300, k=10, n_x0=30).delta_for_epsilon(
        0.5
    )[0]
    misses = get_accountant(
        "biswas-exact", epsilon_local=eps0 * (1 + 1e-4), n_users=300, k=10, n_x0=30
    ).delta_for_epsilon(0.5)[0]
    assert meets <= 1e-8 < misses


def test_accountants_lists_registry(capsys):
    code, out, _ = run(capsys, "accountants", "--json")
    rows = json.loads(out)
    assert code == 0 and [row["name"] for row in rows] == list_accountants()
    kinds = {row["name"]: row["kind"] for row in rows}
    assert kinds["biswas-printed"] == "as printed" and kinds["histogram-pair-lower"] == "lower bound"


def test_help_lists_every_registered_name():
    for command in ([], ["delta"], ["calibrate"]):
        out = subprocess.run(
            [sys.executable, "-m", "shuffledp", *command, "--help"], capture_output=True, text=True
        ).stdout
        flat = " ".join(out.split()).replace("- ", "-")  # argparse may wrap after any hyphen
        for name in list_accountants():
            assert name in flat


@pytest.mark.parametrize(
    "argv,message",
    [
        (
            ["delta", "--accountant", "nope", "--eps0", "1", "--n", "5", "--k", "3", "--eps", "0.1"],
            r"`accountant` must be one of .*; got 'nope'",
        ),
        (
            [
                "delta",
                "--accountant",
                "biswas-exact",
                "--eps0",
                "-1",
                "--n",
                "5",
                "--k",
                "3",
                "--nx0",
                "1",
                "--eps",
                "0.1",
            ],
            r"`epsilon_local` must be in \(0, inf\); got -1.0",
        ),
        (
            [
                "delta",
                "--accountant",
                "biswas-exact",
                "--eps0",
                "1",
                "--n",
                "5",
                "--k",
                "1",
                "--nx0",
                "1",
                "--eps",
                "0.1",
            ],
            r"`k` must be an integer in \[2, 1000000000000000\]; got 1",
        ),
        (
            [
                "delta",
                "--accountant",
                "biswas-exact",
                "--eps0",
                "1",
                "--n",
                "5",
                "--k",
                "3",
                "--nx0",
                "5",
                "--eps",
                "0.1",
            ],
            r"`n_x0` must be an integer in \[0, 4\]; got 5",
        ),
        (
            ["delta", "--accountant", "biswas-exact", "--eps0", "1", "--n", "5", "--k", "3", "--eps", "0.1"],
            r"`n_x0` is required by accountant 'biswas-exact'",
        ),
        (
            [
                "delta",
                "--accountant",
                "biswas-exact",
                "--eps0",
                "1",
                "--n",
                "5",
                "--k",
                "3",
                "--nx0",
                "1",
                "--eps",
                "-0.1",
            ],
            r"`epsilon` must be in \[0, inf\); got -0.1",
        ),
        (
            [
                "delta",
                "--accountant",
                "biswas-exact",
                "--eps0",
                "1",
                "--n",
                "5",
                "--k",
                "3",
                "--nx0",
                "1",
                "--direction",
                "up",
                "--eps",
                "0.1",
            ],
            r"`direction` must be one of 'forward', 'reverse', 'both'; got 'up'",
        ),
        (
            [
                "delta",
                "--accountant",
                "biswas-printed",
                "--eps0",
                "1",
                "--n",
                "5",
                "--k",
                "3",
                "--nx0",
                "1",
                "--direction",
                "both",
                "--eps",
                "0.1",
            ],
            r"`--direction` is not accepted by accountant 'biswas-printed'; got 'both'",
        ),
        (
            [
                "epsilon",
                "--accountant",
                "biswas-exact",
                "--eps0",
                "1",
                "--n",
                "5",
                "--k",
                "3",
                "--nx0",
                "1",
                "--delta",
                "1.5",
            ],
            r"`delta` must be in \[0, 1\]; got 1.5",
        ),
        (
            [
                "calibrate",
                "--accountant",
                "biswas-exact",
                "--n",
                "5",
                "--k",
                "3",
                "--nx0",
                "1",
                "--eps",
                "0.1",
                "--delta",
                "1",
            ],
            r"`delta` must be in \[0, 1\); got 1.0",
        ),
    ],
)
def test_errors_exit_2_with_clear_message(capsys, argv, message):
    code, _, err = run(capsys, *argv)
    assert code == 2
    assert err.startswith("shuffle-dp: error: ")
    import re

    assert re.search(message, err), err


def test_argparse_errors_exit_2(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["delta", "--accountant", "biswas-exact", "--n", "5", "--k", "3", "--eps", "0.1"])
    assert exit_info.value.code == 2 and "--eps0" in capsys.readouterr().err


@pytest.mark.parametrize(
    "argv",
    [
        ["accountants"],
        ["accountants", "--json"],
        ["delta", "--accountant", "rate-balle", "--eps0", "1", "--n", "10", "--k", "3", "--eps", "0.1"],
    ],
)
def test_closed_pipe_exits_quietly(argv):
    """`shuffle-dp accountants | head` must not end in a BrokenPipeError traceback.

    The reading end is closed before the command writes, so every write hits a broken pipe
    (deterministic, unlike racing a real `head`).
    """
    process = subprocess.Popen(
        [sys.executable, "-m", "shuffledp", *argv], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    process.stdout.close()
    err = process.stderr.read().decode()
    process.stderr.close()
    assert process.wait(timeout=60) == 1  # the Python docs' convention for EPIPE (note on SIGPIPE)
    assert err == "", err


def test_eps0_1e308_gives_delta_one_and_a_huge_epsilon(capsys):
    """Not delta 0 and epsilon 0 at eps0 = 1e308 (the report is the true value up to e^-1e308)."""
    code, out, _ = run(
        capsys,
        "delta",
        "--accountant",
        "biswas-exact",
        "--eps0",
        "1e308",
        "--n",
        "100",
        "--k",
        "10",
        "--nx0",
        "80",
        "--eps",
        "0.5",
        "--json",
    )
    # an EXACT value is rounded down by its declared rounding bound, 5e-13 (numerics/safe_side.py)
    assert code == 0 and 1.0 - 1e-12 <= json.loads(out)[0]["delta"] <= 1.0
    code, out, _ = run(
        capsys,
        "epsilon",
        "--accountant",
        "biswas-exact",
        "--eps0",
        "1e308",
        "--n",
        "100",
        "--k",
        "10",
        "--nx0",
        "80",
        "--delta",
        "1e-9",
        "--json",
    )
    assert code == 0 and json.loads(out)[0]["eps"] == pytest.approx(1e308, rel=1e-9)


@pytest.mark.parametrize(
    "argv,message",
    [
        (
            ["--eps0", "inf", "--n", "100", "--k", "10", "--nx0", "80"],
            r"`epsilon_local` must be in \(0, inf\); got inf\.$",
        ),
        (
            ["--eps0", "1", "--n", str(10**16), "--k", "10", "--nx0", "80"],
            r"`n_users` must be an integer in \[1, 1000000000000000\]; got 10000000000000000\.$",
        ),
        (
            ["--eps0", "1", "--n", str(10**9 + 1), "--k", "10", "--nx0", "80"],
            r"`n_users` must be an integer in \[1, 1000000000\] for accountant 'biswas-exact'.*got 1000000001\.$",
        ),
    ],
)
def test_extreme_inputs_refused_with_one_line(capsys, argv, message):
    """`--eps0 inf` failed with "cannot convert float NaN to integer"; huge n filled the memory."""
    code, _, err = run(capsys, "delta", "--accountant", "biswas-exact", *argv, "--eps", "0.5")
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert re.search(message, err.strip()), err


# --compositions / --subsample (src/shuffledp/accounting/composition.py, girgis.py)


@pytest.mark.parametrize(
    "command, values", [("delta", ["--eps", "0.1", "0.5"]), ("epsilon", ["--delta", "1e-6"])]
)
def test_compositions_one_is_byte_identical_to_the_single_round_output(capsys, command, values):
    base = [command, "--accountant", "weak-adversary", "--eps0", "2", "--n", "1000", "--k", "4", *values]
    _, plain, _ = run(capsys, *base)
    _, with_flag, _ = run(capsys, *base, "--compositions", "1")
    assert plain == with_flag


def test_compositions_match_library_and_grow(capsys):
    from shuffledp.accounting.composition import compose

    argv = [
        "epsilon",
        "--accountant",
        "weak-adversary",
        "--eps0",
        "2",
        "--n",
        "1000",
        "--k",
        "4",
        "--delta",
        "1e-6",
        "--json",
    ]
    code, out, _ = run(capsys, *argv, "--compositions", "4")
    row = json.loads(out)[0]
    library = compose("weak-adversary", epsilon_local=2.0, n_users=1000, k=4, compositions=4)
    assert code == 0 and row["eps"] == pytest.approx(library.epsilon_for_delta(1e-6), rel=1e-12)
    assert row["kind"] == "upper bound"
    _, single, _ = run(capsys, *argv)
    assert row["eps"] > json.loads(single)[0]["eps"]


def test_subsample_for_clones_and_girgis(capsys):
    code, out, _ = run(
        capsys,
        "delta",
        "--accountant",
        "girgis-rdp",
        "--eps0",
        "3",
        "--n",
        "100000",
        "--k",
        "2",
        "--eps",
        "1.0",
        "--compositions",
        "100",
        "--subsample",
        "0.01",
        "--json",
    )
    girgis = json.loads(out)[0]["delta"]
    code2, out2, _ = run(
        capsys,
        "delta",
        "--accountant",
        "feldman-numerical",
        "--eps0",
        "3",
        "--n",
        "100000",
        "--k",
        "2",
        "--eps",
        "1.0",
        "--compositions",
        "100",
        "--subsample",
        "0.01",
        "--json",
    )
    assert code == 0 and code2 == 0 and json.loads(out2)[0]["delta"] <= girgis


def test_subsample_in_the_papers_words_gives_their_stored_values(capsys):
    """Koskela et al. (Fig. 2; girgis_upper.py's pickle eps_fig1_girgis_upper.p): "n = 10^5 users, subsampling
    ratio q = 0.01", eps0 = 3, delta = 1e-5; --n is the population and the output states both numbers."""
    expected = {10: 0.73077, 1000: 4.28734}
    for T, value in expected.items():
        code, out, _ = run(
            capsys,
            "epsilon",
            "--accountant",
            "girgis-rdp",
            "--eps0",
            "3",
            "--n",
            "100000",
            "--k",
            "2",
            "--delta",
            "1e-5",
            "--compositions",
            str(T),
            "--subsample",
            "0.01",
            "--json",
        )
        row = json.loads(out)[0]
        assert code == 0 and row["eps"] == pytest.approx(value, abs=1e-5)
        assert (row["population"], row["subsample"], row["per_round"]) == (100000, 0.01, 1000)
    _, table, _ = run(
        capsys,
        "epsilon",
        "--accountant",
        "feldman-numerical",
        "--eps0",
        "3",
        "--n",
        "100000",
        "--k",
        "4",
        "--delta",
        "1e-5",
        "--compositions",
        "10",
        "--subsample",
        "0.01",
    )
    header, line = table.splitlines()
    assert header.split("\t")[-3:] == ["population", "subsample", "per_round"]
    assert line.split("\t")[-3:] == ["100000", "0.01", "1000"]
    assert float(line.split("\t")[1]) == pytest.approx(
        0.0257, abs=5e-4
    )  # not the 0.0016 of the per-round reading


@pytest.mark.parametrize("n, shown", [("50", "0.5"), ("1234", "12.34")])
def test_subsample_without_a_whole_number_per_round_is_refused_in_one_line(capsys, n, shown):
    code, out, err = run(
        capsys,
        "epsilon",
        "--accountant",
        "feldman-numerical",
        "--eps0",
        "3",
        "--n",
        n,
        "--k",
        "4",
        "--delta",
        "1e-5",
        "--subsample",
        "0.01",
    )
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert f"got subsample=0.01 x n_users={n} = {shown}." in err


@pytest.mark.parametrize(
    "extra, message",
    [
        (
            ["--accountant", "biswas-exact", "--compositions", "2"],
            r"`--accountant` must be one of .*girgis-rdp.*; got 'biswas-exact'",
        ),
        (
            ["--accountant", "weak-adversary", "--compositions", "0"],
            r"`compositions` must be an integer in \[1, 1000000\]; got 0",
        ),
        (
            ["--accountant", "weak-adversary", "--subsample", "1.5"],
            r"`subsample` must be in \(0, 1\]; got 1.5",
        ),
        (["--accountant", "weak-adversary", "--subsample", "0"], r"`subsample` must be in \(0, 1\]; got 0.0"),
        (
            ["--accountant", "weak-adversary", "--compositions", "2", "--nx0", "3"],
            r"drop `--direction` and `--nx0`",
        ),
        (
            ["--accountant", "girgis-rdp-simple", "--subsample", "0.5"],
            r"`subsample` must be 1 for 'girgis-rdp-simple'",
        ),
    ],
)
def test_composition_flags_errors(capsys, extra, message):
    code, _, err = run(capsys, "delta", "--eps0", "1", "--n", "50", "--k", "3", "--eps", "0.1", *extra)
    assert code == 2 and re.search(message, err)


# options refused or accepted the same way by every accountant


@pytest.mark.parametrize("option, value", [("--nx0", "3"), ("--direction", "reverse")])
def test_options_an_accountant_does_not_take_are_refused_the_same_way(capsys, option, value):
    code, out, err = run(
        capsys,
        "delta",
        "--accountant",
        "weak-adversary",
        "--eps0",
        "2",
        "--n",
        "100",
        "--k",
        "4",
        option,
        value,
        "--eps",
        "0.5",
    )
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert re.search(
        rf"`{option}` is not accepted by accountant 'weak-adversary'.*got '?{value}'?\.$", err.strip()
    ), err


def test_integer_options_accept_integral_scientific_notation(capsys):
    base = [
        "epsilon",
        "--accountant",
        "weak-adversary",
        "--eps0",
        "2",
        "--k",
        "4",
        "--delta",
        "1e-6",
        "--json",
    ]
    _, plain, _ = run(capsys, *base, "--n", "1000", "--compositions", "10")
    code, scientific, err = run(capsys, *base, "--n", "1e3", "--compositions", "1.0e1")
    assert code == 0 and err == "" and scientific == plain
    _, plain, _ = run(capsys, *base, "--n", "1500")
    code, scientific, err = run(capsys, *base, "--n", "1.5e3")
    assert code == 0 and err == "" and scientific == plain


@pytest.mark.parametrize(
    "option, value", [("--n", "1.5"), ("--n", "1e6.5"), ("--compositions", "2.5"), ("--k", "inf")]
)
def test_non_integral_integer_options_are_refused_in_one_line(capsys, option, value):
    argv = {"--n": "1000", "--k": "4", "--compositions": "1"}
    argv[option] = value
    with pytest.raises(SystemExit) as exit_info:
        main(
            [
                "epsilon",
                "--accountant",
                "weak-adversary",
                "--eps0",
                "2",
                "--delta",
                "1e-6",
                *[x for pair in argv.items() for x in pair],
            ]
        )
    err = capsys.readouterr().err
    assert exit_info.value.code == 2 and len(err.strip().splitlines()) == 1, err
    assert err.startswith(f"shuffle-dp: error: argument {option}: must be an integer") and repr(value) in err


def test_an_unreadable_data_file_is_one_line_naming_it(capsys, monkeypatch, tmp_path):
    import errno

    import pandas as pd

    path = tmp_path / "counts.csv"
    path.write_text("count\n1\n2\n3\n")

    def unreadable(file, *args, **kwargs):  # what pandas raises for a file without read permission
        raise PermissionError(errno.EACCES, "Permission denied", str(file))

    monkeypatch.setattr(pd, "read_csv", unreadable)
    code, out, err = run(
        capsys,
        "compare",
        "--n",
        "100",
        "--k",
        "3",
        "--eps",
        "1",
        "--delta",
        "1e-5",
        "--data",
        str(path),
        "--draws",
        "2",
    )
    assert code == 1 and out == ""
    assert err.strip().splitlines() == [f"shuffle-dp: error: cannot open {path}: Permission denied"]


@pytest.mark.parametrize("preset, expected", [(None, 1), ("2", 2)])
def test_the_command_runs_on_one_blas_thread_unless_the_caller_chose(preset, expected):
    """OpenBLAS's per-core thread pool is half the command's start-up; the console script asks
    for one thread, and a caller's OPENBLAS_NUM_THREADS is kept."""
    env = {key: value for key, value in os.environ.items() if key != "OPENBLAS_NUM_THREADS"}
    if preset is not None:
        env["OPENBLAS_NUM_THREADS"] = preset
    script = (
        "import contextlib, io\n"
        "from shuffledp.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    assert main(['delta', '--accountant', 'weak-adversary', '--eps0', '1', '--n', '1000', '--k', '10',"
        " '--eps', '0.5']) == 0\n"
        "from threadpoolctl import threadpool_info\n"
        "print(sorted({pool['num_threads'] for pool in threadpool_info() if pool['user_api'] == 'blas'}))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == f"[{expected}]"
