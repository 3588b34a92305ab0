"""`shuffle-dp compare --compositions T --subsample Q`: timings and three protocol Monte Carlos.

For three settings (and the timing grid below) it runs :func:`shuffledp.experiments.compare_rounds.compare_rounds`
(calibration of every mechanism to the total (epsilon, delta), exact per-round and averaged errors), then a
Monte Carlo of the whole T-round protocol on counts (:func:`~shuffledp.experiments.compare_rounds.protocol_monte_carlo`:
every round drawn on its own, the T unprojected estimates averaged) and sets the exact average TV beside the
simulated one, with the verdict (shuffle+inv against the Gaussian on the average) of each. Prints the table
and writes ``results/benchmarks/compare_rounds.csv`` (CPU and wall seconds, load average). The machine is
shared: CPU seconds are the figure to read. Usage: ``python benchmarks/bench_compare_rounds.py [--quick | --timings-only] [--out CSV]``
(``--quick``: the three checks only, 200 protocol draws; ``--timings-only``: the timing points only).
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pandas as pd

from shuffledp._random import job_rng
from shuffledp.experiments.compare import dataset_counts
from shuffledp.experiments.compare_rounds import compare_rounds, protocol_monte_carlo
from shuffledp.io import atomic_write_text

OUTPUT = Path("results/benchmarks/compare_rounds.csv")
SEED = 20261129
#: (n, k, epsilon, delta, T, q): the three protocol checks
CHECKS = [
    (10_000, 15, 1.0, 1e-6, 10, 1.0),
    (100_000, 15, 1.0, 1e-6, 100, 0.01),
    (10_000, 2, 1.0, 1e-6, 1000, 1.0),
]
#: further timing points (T <= 1000 must answer in <= 10 s); the k = 2 ones have 10^5 and 10^6 users per round
#: (without the vectorised weak PLD and the guessed start they take 14.8 s and > 300 s)
TIMINGS = [
    (100_000, 408, 1.0, 1e-6, 1000, 0.01),
    (1_000_000, 192, 1.0, 1e-8, 1000, 0.01),
    (100_000, 2, 1.0, 1e-6, 1000, 1.0),
    (1_000_000, 2, 1.0, 1e-6, 1000, 1.0),
]
PAIR = ("shuffle+inv", "gaussian")


def _one(n, k, epsilon, delta, T, q, *, simulate: bool, draws: int) -> list[dict]:
    load = os.getloadavg()[0]
    wall, cpu = time.perf_counter(), time.process_time()
    result = compare_rounds(
        n_users=n, k=k, epsilon=epsilon, delta=delta, compositions=T, subsample=q, draws=200, seed=SEED
    )
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    rounds = result.verdict["rounds"]
    base = {
        "n_users": n,
        "k": k,
        "epsilon": epsilon,
        "delta": delta,
        "compositions": T,
        "subsample": q,
        "per_round": rounds["per_round"],
        "cpu_seconds": cpu,
        "wall_seconds": wall,
        "load_average": load,
        **{key: rounds[key] for key in ("epsilon_local", "sigma", "geometric_epsilon", "local_epsilon")},
    }
    exact = {row["mechanism"]: row for row in result.rows if row["average_l1_half"] is not None}
    simulated = {}
    if simulate:
        counts = dataset_counts("uniform", n_users=rounds["per_round"], k=k)
        simulated = protocol_monte_carlo(
            counts,
            {key: base[key] for key in ("epsilon_local", "sigma", "geometric_epsilon", "local_epsilon")},
            compositions=T,
            draws=draws,
            rng=job_rng(SEED, "bench-compare-rounds", n, k, T, q),
        )
    rows = []
    for mechanism, row in exact.items():
        mean, se = simulated.get(mechanism, (float("nan"), float("nan")))
        rows.append(
            {
                **base,
                "mechanism": mechanism,
                "per_round_l1_half": row["l1_half"],
                "average_l1_half": row["average_l1_half"],
                "average_l1_half_se": row["average_l1_half_se"],
                "average_method": row["average_method"],
                "protocol_l1_half": mean,
                "protocol_l1_half_se": se,
            }
        )
    if simulate:
        by = {row["mechanism"]: row for row in rows}
        exact_winner = min(PAIR, key=lambda name: by[name]["average_l1_half"])
        simulated_winner = min(PAIR, key=lambda name: by[name]["protocol_l1_half"])
        for row in rows:
            row.update({"verdict_exact": exact_winner, "verdict_protocol": simulated_winner})
    return rows


def main(argv: list[str]) -> int:
    quick = "--quick" in argv
    draws = 200 if quick else 1000
    rows = []
    for setting in [] if "--timings-only" in argv else CHECKS:
        rows += _one(*setting, simulate=True, draws=draws)
    if not quick:
        for setting in TIMINGS:
            rows += _one(*setting, simulate=False, draws=draws)
    frame = pd.DataFrame(rows)
    output = Path(argv[argv.index("--out") + 1]) if "--out" in argv else OUTPUT
    output.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(output, frame.to_csv(index=False))
    columns = [
        "n_users",
        "k",
        "compositions",
        "subsample",
        "epsilon_local",
        "mechanism",
        "average_l1_half",
        "protocol_l1_half",
        "protocol_l1_half_se",
        "verdict_exact",
        "verdict_protocol",
        "cpu_seconds",
        "wall_seconds",
    ]
    with pd.option_context("display.width", 200, "display.max_columns", 20):
        print(
            frame[[c for c in columns if c in frame]].to_string(
                index=False, float_format=lambda v: f"{v:.5g}"
            )
        )
    print(f"written {output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
