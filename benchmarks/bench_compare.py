"""Benchmark: `shuffle-dp compare` at n = 10^6, k = 408.

Targets: the exact rows (unprojected shuffle+INV at both eps0, Gaussian, geometric, local k-RR) in
<= 1 s, calibration excluded; the calibrations (worst-case-upper and worst-case-lower) timed apart; the
whole comparison with ``--draws 1000`` in <= 15 s (in-process: interpreter start-up excluded). Each
case is timed ``--repeats`` times and the median kept. Datasets: uniform and zipf:1 (408 distinct
counts, the slow case of the exact sum). Writes results/benchmarks/compare.csv and prints it.

Run: python benchmarks/bench_compare.py [--repeats 3]
"""

from __future__ import annotations

import argparse
import statistics
import time
from functools import partial
from pathlib import Path

from shuffledp.experiments.compare import calibrate, compare, dataset_counts, exact_rows
from shuffledp.io import atomic_write_text

ROOT = Path(__file__).resolve().parents[1]
N_USERS, K, EPSILON, DELTA = 1_000_000, 408, 1.0, 1e-6


def _timed(function, repeats: int) -> tuple[float, object]:
    seconds, result = [], None
    for _ in range(repeats):
        started = time.perf_counter()
        result = function()
        seconds.append(time.perf_counter() - started)
    return statistics.median(seconds), result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    setting = dict(n_users=N_USERS, k=K, epsilon=EPSILON, delta=DELTA)
    rows = []
    seconds, epsilon_local = _timed(lambda: calibrate(**setting), args.repeats)
    rows.append(
        {
            "case": "calibration: worst-case-upper and worst-case-lower eps0",
            "data": "-",
            "seconds": seconds,
            "target_seconds": None,
            "note": f"eps0 upper {epsilon_local['upper']:.6f}, lower {epsilon_local['lower']:.6f}",
        }
    )
    for data in ("uniform", "zipf:1"):
        counts = dataset_counts(data, n_users=N_USERS, k=K)
        seconds, _ = _timed(
            partial(exact_rows, counts, epsilon=EPSILON, delta=DELTA, epsilon_local=epsilon_local),
            args.repeats,
        )
        rows.append(
            {
                "case": "exact rows (calibration excluded)",
                "data": data,
                "seconds": seconds,
                "target_seconds": 1.0,
                "note": "",
            }
        )
        seconds, _ = _timed(
            lambda counts=counts: exact_rows(
                counts, epsilon=EPSILON, delta=DELTA, epsilon_local=calibrate(**setting)
            ),
            args.repeats,
        )
        rows.append(
            {
                "case": "exact rows with calibration",
                "data": data,
                "seconds": seconds,
                "target_seconds": None,
                "note": "",
            }
        )
        seconds, result = _timed(partial(compare, **setting, data=data, draws=1000, seed=0), args.repeats)
        pair = result.verdict["shuffle_vs_gaussian"]
        rows.append(
            {
                "case": "compare --draws 1000 (calibration included)",
                "data": data,
                "seconds": seconds,
                "target_seconds": 15.0,
                "note": f"{pair['winner']} wins, ratio {pair['ratio']:.4g}",
            }
        )
    import pandas as pd

    frame = pd.DataFrame(rows)
    frame["meets_target"] = [
        None if t is None or t != t else bool(s <= t)
        for s, t in zip(frame["seconds"], frame["target_seconds"])
    ]
    path = ROOT / "results" / "benchmarks" / "compare.csv"
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, frame.to_csv(index=False))
    with pd.option_context("display.width", 200, "display.max_colwidth", 60):
        print(frame.to_string(index=False))
    print(f"written {path.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
