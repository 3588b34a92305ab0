"""benchmarks/bench_peers_k3plus.py: the CuPy stand-in and the verdict counts (no peer code needed)."""

from __future__ import annotations

import importlib.util
import math
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[1]


def _load(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def bench():
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        yield _load("bench_peers_k3plus", ROOT / "benchmarks" / "bench_peers_k3plus.py")
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))


def test_cupy_standin_has_the_names_the_peer_calls_with_numpy_results():
    cp = _load(
        "cupy_standin_under_test", ROOT / "benchmarks" / "peers" / "cupy_standin" / "cupy" / "__init__.py"
    )
    x = cp.asarray([0.25, 0.5, 0.25])
    padded = cp.pad(x, (0, 5), mode="constant")
    assert padded.shape == (8,) and padded[3:].sum() == 0
    # convolution of x with itself through the FFT, as the peer does it (power 2, real part, clip, sum)
    conv = cp.maximum(cp.fft.ifft(cp.fft.fft(padded) ** 2).real, 0)
    assert np.allclose(conv[:5], np.convolve(x, x), atol=1e-15)
    assert cp.sum(conv).item() == pytest.approx(1.0, abs=1e-15)
    assert np.array_equal(cp.linspace(0, 1, 3), np.array([0.0, 0.5, 1.0]))
    assert isinstance(cp.asnumpy(x), np.ndarray)


def _frame(rows):
    columns = [
        "log_delta_worst-case-lower",
        "log_delta_worst-case-upper",
        "log_delta_wang_ub",
        "log_delta_wang_lb",
        "log_delta_scw_up",
        "log_delta_scw_lo",
        "s_scw",
    ]
    return pd.DataFrame([dict(zip(columns, row)) for row in rows])


def test_verdicts_count_invalid_inside_and_loose_and_skip(bench):
    lo, up, floor = math.log(1e-6), math.log(2e-6), math.log(1e-11)
    frame = _frame(
        [
            # Wang UB below our lower (invalid); Wang LB inside; SCW upper looser; SCW lower inside
            (lo, up, math.log(5e-7), math.log(1.5e-6), math.log(3e-6), math.log(1.5e-6), 1.0),
            # Wang UB inside (tighter than our upper); Wang LB below our lower; SCW at its floor (clamped)
            (math.log(1e-20), math.log(1e-18), math.log(1e-19), math.log(1e-21), floor, floor, 1.0),
            # SCW skipped: nan everywhere, not counted
            (lo, up, up, lo, math.nan, math.nan, math.nan),
        ]
    )
    table = bench.verdicts(frame).set_index("peer")
    assert table.loc[
        "Wang UB", ["cells", "invalid", "inside_bracket_tighter", "as_loose_or_looser"]
    ].tolist() == [3, 1, 1, 1]
    assert table.loc[
        "Wang LB", ["cells", "invalid", "inside_bracket_tighter", "as_loose_or_looser"]
    ].tolist() == [3, 0, 1, 2]
    assert table.loc[
        "SCW upper", ["cells", "invalid", "inside_bracket_tighter", "as_loose_or_looser"]
    ].tolist() == [2, 0, 0, 2]
    # the floor lower value 1e-11 lies above our upper 1e-18: invalid, and counted as their clamp
    assert table.loc[
        "SCW lower", ["cells", "invalid", "invalid_at_their_floor", "inside_bracket_tighter"]
    ].tolist() == [2, 1, 1, 1]


def test_log_keeps_a_skipped_value_nan(bench):
    assert math.isnan(bench._log(math.nan))
    assert bench._log(0.0) == -math.inf
    assert bench._log(math.e) == pytest.approx(1.0)
