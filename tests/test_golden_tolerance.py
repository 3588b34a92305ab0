"""The machine-to-machine budget of golden values (tests/golden_tolerance.py) and the second platform of CI.

Each tolerance is shown to accept what another machine prints and to refuse a value just outside it; the README
comparison refuses a planted wrong digit; every test .ci/second-platform names exists; and a run with
NPY_DISABLE_CPU_FEATURES set really has numpy's AVX-512 paths off (numpy ignores a name it does not know with a
hidden warning, and the run would then test this CPU twice).
"""

from __future__ import annotations

import math
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from golden_tolerance import (
    DERIVED_RELATIVE,
    check_on_safe_side,
    epsilon_tolerance,
    log_delta_tolerance,
    printed_numbers_match,
    tolerance_of,
)

from shuffledp.accounting.numerics.safe_side import DEFAULT_RELATIVE_ROUNDING, LOG_ULPS

REPO = Path(__file__).resolve().parents[1]

# the README's biswas-exact example as recorded, and as a CPU without AVX-512 prints it (4.6e-14 relative)
SHOWN = """[
  {
    "eps": 0.1,
    "delta": 1.3447941547134078e-09,
    "log_delta": -20.427024880427908,
    "accountant": "biswas-exact",
    "kind": "exact"
  }
]"""
ELSEWHERE = SHOWN.replace("1.3447941547134078e-09", "1.3447941547134699e-09").replace(
    "-20.427024880427908", "-20.42702488042786"
)


def test_log_delta_tolerance_is_twice_the_safe_side_widening():
    assert log_delta_tolerance(-20.0) == pytest.approx(
        2 * (math.log1p(DEFAULT_RELATIVE_ROUNDING) + LOG_ULPS * 2.0**-52 * 20.0), rel=1e-12
    )
    assert epsilon_tolerance(0.03) == epsilon_tolerance(1.0) == 1e-9 and epsilon_tolerance(4.0) == 4e-9


@pytest.mark.parametrize(
    "key, value",
    [
        ("eps", 0.02965143731402379),
        ("eps", 3.5),
        ("delta", 1.3447941547134078e-09),
        ("log_delta", -20.4),
        ("ratio", 1.2),
    ],
)
def test_each_tolerance_accepts_inside_and_refuses_outside(key, value):
    """Probe for every kind of number: 0.99 of the tolerance passes on both sides, 1.01 fails on both."""
    step = tolerance_of(key, value)
    assert step > 0
    for sign in (1, -1):
        assert check_on_safe_side(value + sign * 0.99 * step, value, "upper bound", step) is None
        assert check_on_safe_side(value + sign * 1.01 * step, value, "upper bound", step) is not None
    assert tolerance_of(None, 2.0) == 2.0 * DERIVED_RELATIVE


def test_a_bound_is_told_by_its_side():
    step = 1e-9
    assert "UNSAFE" in check_on_safe_side(1.0 - 2 * step, 1.0, "upper bound", step)
    assert "UNSAFE" in check_on_safe_side(1.0 + 2 * step, 1.0, "lower bound", step)
    assert "UNSAFE" not in check_on_safe_side(1.0 + 2 * step, 1.0, "upper bound", step)
    assert "UNSAFE" not in check_on_safe_side(1.0 - 2 * step, 1.0, "lower bound", step)
    assert check_on_safe_side(math.inf, math.inf, "upper bound", step) is None
    assert check_on_safe_side(math.inf, 1.0, "upper bound", step) is not None


def test_the_readme_accepts_another_machines_last_digits():
    assert printed_numbers_match(SHOWN, SHOWN) is None
    assert printed_numbers_match(SHOWN, ELSEWHERE) is None


def test_the_readme_accepts_a_number_shown_rounded():
    rounded = SHOWN.replace("1.3447941547134078e-09", "1.34479415471e-09").replace(
        "-20.427024880427908", "-20.42702488043"
    )
    assert printed_numbers_match(rounded, SHOWN) is None and printed_numbers_match(rounded, ELSEWHERE) is None
    table = "delta\teps_lower\tratio\n1e-06\t0.0801313\t1.00037"
    assert printed_numbers_match(table, "delta\teps_lower\tratio\n1e-06\t0.08013128\t1.000374") is None
    assert printed_numbers_match("eps0     5.5299595  x", "eps0   5.52995953  x") is None  # padding as one


@pytest.mark.parametrize(
    "planted",
    [
        ("1.3447941547134078e-09", "1.3447941547134079e-08"),  # full precision, wrong exponent
        ("1.3447941547134078e-09", "1.3447941547234078e-09"),  # full precision, a digit off by 7e-11 relative
        ("-20.427024880427908", "-20.427024880437908"),  # log delta off by 1e-11
        ('"eps": 0.1', '"eps": 0.2'),
        ("biswas-exact", "biswas-printed"),  # text
    ],
)
def test_the_readme_refuses_a_planted_wrong_digit(planted):
    old, new = planted
    assert printed_numbers_match(SHOWN.replace(old, new), SHOWN) is not None
    assert printed_numbers_match(SHOWN, SHOWN.replace(old, new)) is not None


def test_a_rounded_readme_number_refuses_the_next_digit():
    for shown, printed in [("0.0801313", "0.0801315"), ("0.0801313", "0.08013136"), ("10000", "10001")]:
        assert printed_numbers_match(f"x {shown} y", f"x {printed} y") is not None, (shown, printed)
    assert printed_numbers_match('"delta": 1.34479415471e-09,', '"delta": 1.3447941548e-09,') is not None
    assert printed_numbers_match('"delta": 1.34479415471e-09,', '"delta": 1.344794154714e-09,') is None


# --- the second platform of CI


def _second_platform_arguments() -> list[str]:
    lines = (REPO / ".ci" / "second-platform").read_text(encoding="utf-8").splitlines()
    return [line for line in lines if line.strip() and not line.startswith("#")]


def _missing(arguments: list[str]) -> list[str]:
    """The arguments that name no existing file, or a test function their file does not define."""
    missing = []
    for argument in arguments:
        path, _, test = argument.partition("::")
        defined = (REPO / path).is_file() and (
            not test
            or re.search(
                rf"^def {re.escape(test.partition('[')[0])}\(", (REPO / path).read_text(), flags=re.M
            )
        )
        if not defined:
            missing.append(argument)
    return missing


def test_every_test_the_second_platform_names_exists():
    arguments = _second_platform_arguments()
    assert len(arguments) >= 4
    assert _missing(arguments) == []
    # probe: a file or a test that is not there is found
    planted = ["tests/no_such_file.py", "tests/test_golden_tolerance.py::test_no_such_test[1]"]
    assert _missing([*arguments, *planted]) == planted


def test_the_second_platform_runs_its_golden_value_tests():
    arguments = _second_platform_arguments()
    for path in (
        "tests/accounting/test_cli_grid.py",
        "tests/test_readme_examples.py",
        "tests/test_golden_tolerance.py",
    ):
        assert path in arguments


def _avx512_dispatch(disabled: str | None) -> bool:
    """Whether numpy dispatches to its AVX-512 (SVML) loops with NPY_DISABLE_CPU_FEATURES = ``disabled``."""
    env = {key: value for key, value in os.environ.items() if key != "NPY_DISABLE_CPU_FEATURES"}
    if disabled is not None:
        env["NPY_DISABLE_CPU_FEATURES"] = disabled
    code = (
        "from numpy._core._multiarray_umath import __cpu_features__ as f; "
        "print(int(bool(f.get('AVX512_SKX')) and bool(f.get('X86_V4', True))))"
    )
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    return out.stdout.strip() == "1"


def _ci_features() -> str:
    match = re.search(r'NPY_DISABLE_CPU_FEATURES="([^"]+)"', (REPO / ".ci" / "run").read_text())
    assert match, ".ci/run sets no NPY_DISABLE_CPU_FEATURES"
    return match.group(1)


def test_the_variable_set_here_switches_avx512_off():
    """Under .ci/run's second run (the variable set), numpy must really be off its AVX-512 paths; and the names
    .ci/run sets must switch them off on this machine whatever the environment."""
    if os.environ.get("NPY_DISABLE_CPU_FEATURES"):
        from numpy._core._multiarray_umath import __cpu_features__

        assert not (__cpu_features__.get("AVX512_SKX") and __cpu_features__.get("X86_V4", True)), (
            "NPY_DISABLE_CPU_FEATURES is set but numpy still dispatches to AVX-512: "
            + os.environ["NPY_DISABLE_CPU_FEATURES"]
        )
    assert not _avx512_dispatch(_ci_features())


def test_names_numpy_does_not_know_leave_avx512_on():
    """Probe: the check above would catch a variable numpy ignores (numpy 2.4 has no dispatch target AVX512F)."""
    if not _avx512_dispatch(None):
        pytest.skip("this CPU has no AVX-512: numpy's libm path is the only one here")
    assert _avx512_dispatch("AVX512F AVX512_SKX")
