"""Benchmark: which randomizer to shuffle -- every shuffled randomizer's utility at equal guarantee.

For n = 10^3, 10^4, 10^6; k = 16, 192, 408 (the Gowalla grids' sizes: Paris 192, San Francisco 408); delta =
1e-6; epsilon = 0.25, 1, 4; on uniform and zipf:1 data: each shuffled randomizer at the eps0 certified by its
tightest valid upper bound (:func:`shuffledp.experiments.which_randomizer.compare_randomizers`), its exact
expected half L1 and squared L2 error, and the ratios to the Gaussian curator's and to shuffled k-RR's at the
same target; with the CPU and wall seconds of each setting's whole comparison (calibrations included).
Writes results/benchmarks/randomizers_utility.csv and prints a summary.

Run: python benchmarks/bench_randomizers_utility.py
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pandas as pd

from shuffledp.experiments.which_randomizer import compare_randomizers
from shuffledp.io import atomic_write_text

ROOT = Path(__file__).resolve().parents[1]
N_USERS = (1000, 10_000, 1_000_000)
K = (16, 192, 408)
EPSILONS = (0.25, 1.0, 4.0)
DELTA = 1e-6
DATA = ("uniform", "zipf:1")


def main() -> None:
    records = []
    for data in DATA:
        for n_users in N_USERS:
            for k in K:
                for epsilon in EPSILONS:
                    wall, cpu = time.perf_counter(), time.process_time()
                    result = compare_randomizers(
                        n_users=n_users, k=k, epsilon=epsilon, delta=DELTA, data=data
                    )
                    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
                    rows = {row["randomizer"]: row for row in result.rows}
                    gaussian, krr = rows["gaussian"], rows["krr"]
                    for row in result.rows:
                        records.append(
                            {
                                "data": data,
                                "n_users": n_users,
                                "k": k,
                                "epsilon": epsilon,
                                "delta": DELTA,
                                **{
                                    key: row[key]
                                    for key in ("randomizer", "parameters", "epsilon_local", "accountant")
                                },
                                "l1_half": row["l1_half"],
                                "squared_l2": row["squared_l2"],
                                "l1_half_over_gaussian": row["l1_half"] / gaussian["l1_half"],
                                "l1_half_over_krr": row["l1_half"] / krr["l1_half"],
                                "squared_l2_over_gaussian": row["squared_l2"] / gaussian["squared_l2"],
                                "squared_l2_over_krr": row["squared_l2"] / krr["squared_l2"],
                                "setting_cpu_seconds": cpu,
                                "setting_wall_seconds": wall,
                                "load_average_1min": os.getloadavg()[0],
                            }
                        )
                    print(
                        f"{data:8s} n={n_users:>8d} k={k:>4d} eps={epsilon:<5g} best shuffled "
                        f"{result.verdict['best_shuffled']:<9s} beating the Gaussian: "
                        f"{','.join(result.verdict['shuffled_beating_gaussian']) or '-':<20s} cpu {cpu:6.2f} s "
                        f"wall {wall:6.2f} s",
                        flush=True,
                    )
    frame = pd.DataFrame.from_records(records)
    out = ROOT / "results" / "benchmarks" / "randomizers_utility.csv"
    out.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(out, frame.to_csv(index=False))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
