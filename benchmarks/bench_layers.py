"""A "no speed loss" check of the layered accounting package: representative accountant calls, timed in one process.

Uses only names that exist before and after the accounting package was reorganised into layers, so the
same script runs against either tree (``PYTHONPATH=<checkout>/src python benchmarks/bench_layers.py
LABEL``). Each call is timed as the best of three in-process runs (the first run of a call is not
counted: imports and caches); the rows go to ``results/benchmarks/layers_<LABEL>.csv``. To compare two
trees, run it against both, alternately, on the same machine, and read the ratios.
"""

from __future__ import annotations

import csv
import sys
import time
from pathlib import Path

import numpy as np

from shuffledp.accounting import get_accountant
from shuffledp.accounting.calibrate import calibrate_epsilon_local
from shuffledp.accounting.composition import compose

EPSILONS = np.arange(1, 51) * 0.02  # 0.02 ... 1.00


def _calls():
    yield (
        "weak-adversary 50 deltas n=1e6 k=10 eps0=1",
        lambda: get_accountant("weak-adversary", epsilon_local=1.0, n_users=10**6, k=10).delta_for_epsilon(
            EPSILONS
        ),
    )
    yield (
        "worst-case-lower 50 deltas n=1e6 k=10 eps0=1",
        lambda: get_accountant("worst-case-lower", epsilon_local=1.0, n_users=10**6, k=10).delta_for_epsilon(
            EPSILONS
        ),
    )
    yield (
        "strong-adversary 50 deltas n=1e6 k=10 eps0=1",
        lambda: get_accountant("strong-adversary", epsilon_local=1.0, n_users=10**6, k=10).delta_for_epsilon(
            EPSILONS
        ),
    )
    yield (
        "clones-krr 50 deltas n=1e6 k=10 eps0=1",
        lambda: get_accountant("clones-krr", epsilon_local=1.0, n_users=10**6, k=10).delta_for_epsilon(
            EPSILONS
        ),
    )
    yield (
        "biswas-exact 50 deltas n=1e5 n_x0=8e4 k=10 eps0=1",
        lambda: get_accountant(
            "biswas-exact", epsilon_local=1.0, n_users=10**5, k=10, n_x0=80_000
        ).delta_for_epsilon(EPSILONS),
    )
    yield (
        "weak-adversary eps(1e-6) n=1e6 k=10 eps0=1",
        lambda: get_accountant("weak-adversary", epsilon_local=1.0, n_users=10**6, k=10).epsilon_for_delta(
            1e-6
        ),
    )
    yield (
        "worst-case-upper eps(1e-6) n=1e4 k=2 eps0=1",
        lambda: get_accountant("worst-case-upper", epsilon_local=1.0, n_users=10**4, k=2).epsilon_for_delta(
            1e-6
        ),
    )
    yield (
        "calibrate weak-adversary n=1e4 k=10 (1, 1e-6)",
        lambda: calibrate_epsilon_local("weak-adversary", n_users=10**4, k=10, epsilon=1.0, delta=1e-6),
    )
    yield (
        "compose weak-adversary T=10 n=1e4 k=10 eps0=1",
        lambda: compose(
            "weak-adversary", epsilon_local=1.0, n_users=10**4, k=10, compositions=10
        ).epsilon_for_delta(1e-6),
    )


def main(label: str) -> None:
    rows = []
    for name, call in _calls():
        call()  # warm-up: imports, caches
        times = []
        for _ in range(3):
            start = time.perf_counter()
            call()
            times.append(time.perf_counter() - start)
        rows.append({"call": name, "seconds": min(times), "tree": label})
        print(f"{min(times):9.4f} s  {name}", flush=True)
    out = Path(__file__).resolve().parents[1] / "results" / "benchmarks" / f"layers_{label}.csv"
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out, "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=["call", "seconds", "tree"])
        writer.writeheader()
        writer.writerows(rows)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "this")
