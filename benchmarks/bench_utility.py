"""Benchmark: a full Figure 6 sweep (10 runs x the n grid x 2 settings, k = 408 cells).

Target: <= 30 s on 2 cores. Uses a synthetic 408-cell region shaped like the San Francisco
grid (no data files needed) and the shipped config's utility section. Writes
results/benchmarks/utility.csv and prints the numbers.

Run: python benchmarks/bench_utility.py
"""

from __future__ import annotations

import math
import time
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

from shuffledp.accounting.randomizers import KRR
from shuffledp.experiments.utility import community_sweep
from shuffledp.io import atomic_write_text
from shuffledp.mechanisms import sample_shuffled_histogram, sensitivity_for

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    utility = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())["utility"]
    gowalla = utility["gowalla"]
    rng = np.random.default_rng(0)
    region = rng.multinomial(123_108, rng.dirichlet(np.full(408, 0.3)))  # SF-sized, skewed like check-ins
    n_grid = gowalla["regions"]["san_francisco"]["n_users"]
    rows = []
    start = time.perf_counter()
    sample_shuffled_histogram(region, randomizer=KRR(epsilon_local=4.0, k=region.size), rng=rng, size=10)
    rows.append({"case": "sampler k=408 n=123108, 10 replicates", "seconds": time.perf_counter() - start})
    # The configured accountant only: with biswas-printed (delta-hat over every distinct cell count of
    # every sampled dataset) the same sweep takes minutes (~350 s on 2 shared cores).
    for accountant in [utility["accountant"]]:
        start = time.perf_counter()
        frame = community_sweep(
            region,
            n_users_grid=n_grid,
            settings=gowalla["settings"],
            runs=gowalla["runs"],
            replace=gowalla["sampling"] == "with-replacement",
            accountants=[("configured", accountant)],
            neighbouring_sensitivity=sensitivity_for(utility["neighbouring"]),
            delta_floor=utility["delta_floor"],
            estimator=utility["estimator"],
            seed=1,
            identity=("bench",),
        )
        seconds = time.perf_counter() - start
        releases = len(frame) // 4
        rows.append(
            {"case": f"figure 6 sweep ({releases} releases, accountant {accountant})", "seconds": seconds}
        )
    table = pd.DataFrame(rows)
    table["target_seconds"] = [math.nan] + [30.0] * (len(table) - 1)
    atomic_write_text(ROOT / "results" / "benchmarks" / "utility.csv", table.to_csv(index=False))
    print(table.to_string(index=False))


if __name__ == "__main__":
    main()
