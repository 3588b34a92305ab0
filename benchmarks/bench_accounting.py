"""Benchmark of the Biswas-family accountants and the eq. (10) community delta-hat.

Targets (on a 2-core machine):
* ``biswas-exact``, 50 epsilons, n = 10^6, n_x0 = n/10, k = 10: <= 1 s;
* community delta-hat for the San Francisco grid (408 cells, n ~ 1.2e5): <= 5 s.

Reads ``results/data/san_francisco/cell_counts.csv`` when it exists (run from the repository root
after the data stage); otherwise synthesises 408 log-normal cell counts summing to 123,108 with a
fixed seed. Prints the numbers and writes ``results/benchmarks/accounting.csv`` (wall and CPU
seconds, sizes, machine information, load average). Usage: ``python benchmarks/bench_accounting.py``.
"""

from __future__ import annotations

import os
import platform
import time
from functools import partial
from pathlib import Path

import numpy as np
import pandas as pd

from shuffledp.accounting import get_accountant
from shuffledp.accounting.community import community_delta
from shuffledp.io import atomic_write_text

OUTPUT = Path("results/benchmarks/accounting.csv")
SF_COUNTS = Path("results/data/san_francisco/cell_counts.csv")
SEED = 20240601
REPEATS = 3


def _timed(function):
    """(best wall seconds, CPU seconds of that run, result) over REPEATS runs."""
    best = None
    for _ in range(REPEATS):
        wall, cpu = time.perf_counter(), time.process_time()
        result = function()
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        if best is None or wall < best[0]:
            best = (wall, cpu, result)
    return best


def _sf_counts() -> tuple[np.ndarray, str]:
    if SF_COUNTS.exists():
        return pd.read_csv(SF_COUNTS)["count"].to_numpy(), str(SF_COUNTS)
    rng = np.random.default_rng(SEED)
    weights = rng.lognormal(0.0, 1.6, 408)
    return rng.multinomial(123_108, weights / weights.sum()), f"synthetic log-normal, seed {SEED}"


def main() -> pd.DataFrame:
    machine = dict(
        machine=platform.machine(),
        processor=platform.processor() or "unknown",
        cpu_count=os.cpu_count(),
        python=platform.python_version(),
        numpy=np.__version__,
        load_average_1min=os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan"),
    )
    rows = []

    epsilons = np.linspace(0.01, 1.99, 50)
    n = 10**6
    wall, cpu, log_delta = _timed(
        lambda: get_accountant(
            "biswas-exact", epsilon_local=2.0, n_users=n, k=10, n_x0=n // 10
        ).log_delta_for_epsilon(epsilons)
    )
    rows.append(
        dict(
            benchmark="biswas-exact, 50 eps, eps0 = 2",
            n_users=n,
            k=10,
            n_x0=n // 10,
            n_epsilons=50,
            wall_seconds=wall,
            cpu_seconds=cpu,
            target_seconds=1.0,
            source="",
            note=f"log10 delta from {log_delta[0] / np.log(10):.1f} to {log_delta[-1] / np.log(10):.3g}",
        )
    )

    counts, source = _sf_counts()
    for eps0, eps_grid in [
        (4.0, np.array([3.0])),
        (4.0, np.linspace(0.5, 3.5, 10)),
        (2.0, np.linspace(0.1, 1.9, 10)),
    ]:
        wall, cpu, result = _timed(partial(community_delta, counts, epsilon_local=eps0, epsilons=eps_grid))
        rows.append(
            dict(
                benchmark=f"community delta-hat (biswas-exact), eps0 = {eps0:g}",
                n_users=int(counts.sum()),
                k=counts.size,
                n_x0=-1,
                n_epsilons=eps_grid.size,
                wall_seconds=wall,
                cpu_seconds=cpu,
                target_seconds=5.0,
                source=source,
                note=f"{np.unique(counts[counts > 0]).size} distinct counts; argmax count at first eps {result.argmax_count[0]}",
            )
        )

    frame = pd.DataFrame([{**row, **machine} for row in rows])
    atomic_write_text(OUTPUT, frame.to_csv(index=False))
    with pd.option_context("display.width", 200, "display.max_columns", 20):
        print(
            frame[
                [
                    "benchmark",
                    "n_users",
                    "k",
                    "n_epsilons",
                    "wall_seconds",
                    "cpu_seconds",
                    "target_seconds",
                    "load_average_1min",
                ]
            ]
        )
    print(f"wrote {OUTPUT}")
    return frame


if __name__ == "__main__":
    main()
