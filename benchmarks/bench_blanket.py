"""Benchmark: strong-adversary delta (50 epsilons, k = 10) at n up to 10^7 vs the straightforward sum.

Target: n = 10^6 in <= 1 s on a 2-core machine. The fast path sums over the number of
other users who drew x0 or x1 from the blanket with closed-form inner tails (O(n) with pruning); the
straightforward implementation sums over every pair of counts (a, c) (O(n^2) time and memory per
epsilon batch). The straightforward one runs on the largest n it handles in reasonable time; its
time at n = 10^6 is extrapolated with the fitted exponent of its own timings (stated as such). Also
times ``feldman-numerical`` (same machinery, generic clones pair). Writes
results/benchmarks/blanket.csv and prints the numbers.

Run: python benchmarks/bench_blanket.py
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import numpy as np
import pandas as pd

from shuffledp.accounting import ShuffleSetting, get_accountant
from shuffledp.accounting.views.strong.view import log_delta_direct as strong_adversary_log_delta_direct
from shuffledp.io import atomic_write_text

ROOT = Path(__file__).resolve().parents[1]
EPSILON_LOCAL = 0.49
K = 10
EPSILONS = np.linspace(0.01, 0.45, 50)
REPEATS = 3


def _best_time(function, repeats: int = REPEATS) -> tuple[tuple[float, float], np.ndarray]:
    """(wall, CPU) seconds of the fastest of ``repeats`` runs (the machine is shared), last result."""
    best, result = (np.inf, np.inf), None
    for _ in range(repeats):
        start, start_cpu = time.perf_counter(), time.process_time()
        result = function()
        best = min(best, (time.perf_counter() - start, time.process_time() - start_cpu))
    return best, result


def main() -> None:
    rows = []
    fast_at = {}
    for n in (500, 1_000, 2_000, 100_000, 1_000_000, 10_000_000):
        accountant = get_accountant("strong-adversary", epsilon_local=EPSILON_LOCAL, n_users=n, k=K)
        seconds, log_delta = _best_time(lambda a=accountant: a.log_delta_for_epsilon(EPSILONS))
        fast_at[n] = log_delta
        rows.append(
            {
                "method": "strong-adversary (fast)",
                "n_users": n,
                "seconds": seconds[0],
                "cpu_seconds": seconds[1],
                "measured": True,
                "max_abs_log_delta_difference": np.nan,
            }
        )
    direct_times = {}
    for n in (500, 1_000, 2_000):
        seconds, log_delta = _best_time(
            lambda n=n: strong_adversary_log_delta_direct(
                EPSILONS, ShuffleSetting(epsilon_local=EPSILON_LOCAL, n_users=n, k=K)
            ),
            repeats=1,
        )
        direct_times[n] = seconds[0]
        rows.append(
            {
                "method": "strong-adversary (straightforward double sum)",
                "n_users": n,
                "seconds": seconds[0],
                "cpu_seconds": seconds[1],
                "measured": True,
                "max_abs_log_delta_difference": float(np.max(np.abs(log_delta - fast_at[n]))),
            }
        )
    sizes = np.array(sorted(direct_times))
    fitted = float(np.polyfit(np.log(sizes), np.log([direct_times[s] for s in sizes]), 1)[0])
    largest = sizes[-1]
    # the double sum touches (n + 1)^2 cells per epsilon: extrapolate with exponent 2 from the
    # largest measured n (the fitted exponent over these small n is reported beside it)
    for target in (1_000_000, 10_000_000):
        rows.append(
            {
                "method": f"strong-adversary (straightforward, extrapolated n^2; fitted n^{fitted:.2f})",
                "n_users": target,
                "seconds": direct_times[largest] * (target / largest) ** 2,
                "cpu_seconds": np.nan,
                "measured": False,
                "max_abs_log_delta_difference": np.nan,
            }
        )
    for n in (1_000_000,):
        accountant = get_accountant("feldman-numerical", epsilon_local=2.0, n_users=n, k=K)
        seconds, _ = _best_time(lambda a=accountant: a.log_delta_for_epsilon(np.linspace(0.01, 1.9, 50)))
        rows.append(
            {
                "method": "feldman-numerical (eps0 = 2)",
                "n_users": n,
                "seconds": seconds[0],
                "cpu_seconds": seconds[1],
                "measured": True,
                "max_abs_log_delta_difference": np.nan,
            }
        )
    table = pd.DataFrame(rows)
    table.insert(0, "n_epsilons", len(EPSILONS))
    table.insert(1, "k", K)
    table["load_average_1min"] = os.getloadavg()[0]
    table["cpu_count"] = os.cpu_count()
    output = ROOT / "results" / "benchmarks" / "blanket.csv"
    atomic_write_text(output, table.to_csv(index=False))
    with pd.option_context("display.width", 160, "display.max_columns", 10):
        print(table.to_string(index=False))
    print(f"wrote {output}")


if __name__ == "__main__":
    main()
