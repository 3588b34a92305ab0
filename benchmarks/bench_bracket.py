"""Benchmark of the two worst-case accountants of issue 8: speed and the width of their bracket.

Part 1 (speed): delta for 50 epsilons at n = 10^6 (k = 10, eps0 = 1; the epsilons span 1/20 to 3 times
the epsilon at delta = 1e-6, i.e. delta from ~1e-4 down to ~1e-19) for ``weak-adversary`` and
``worst-case-lower``, and epsilon at delta = 1e-6 for each. Target (issue 8): <= 1 s each for the 50 deltas.

Part 2 (bracket width): epsilon_upper / epsilon_lower at delta in {1e-6, 1e-9, 1e-12} for n in
{10^2, ..., 10^7}, k in {2, 10, 100, 1000}, eps0 in {0.5, 1, 2, 4, 8} (``--max-n`` trims the grid;
n = 10^7 costs ~10 s per epsilon). Goal: ratio <= 1.01 wherever n gamma 2 / k >= 100 (the expected number
of blanket reports on x0 or x1), gamma = k / (e^eps0 + k - 1). For k = 2 the width is also given with
``worst-case-upper`` as the upper end (the certified maximum over datasets: blanket-bit block views for
n <= 10^4, pair-sum blocks up to 10^8; for k >= 3 it is weak-adversary's value).

Writes results/benchmarks/bracket_speed.csv and results/benchmarks/bracket_width.csv (atomically),
with machine information and the load average, and prints both tables.

Run: python benchmarks/bench_bracket.py [--max-n 1e6] [--skip-width]
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import time
from pathlib import Path

import numpy as np
import pandas as pd

from shuffledp.accounting import get_accountant
from shuffledp.io import atomic_write_text

ROOT = Path(__file__).resolve().parents[1]
OUT_SPEED = ROOT / "results" / "benchmarks" / "bracket_speed.csv"
OUT_WIDTH = ROOT / "results" / "benchmarks" / "bracket_width.csv"
NAMES = ("weak-adversary", "worst-case-lower")


def _machine() -> dict:
    return {"machine": platform.machine(), "cpus": os.cpu_count(), "python": platform.python_version(),
            "load_1min": os.getloadavg()[0]}


def speed() -> pd.DataFrame:
    rows = []
    n, k, e0 = 10**6, 10, 1.0
    reference = get_accountant("weak-adversary", epsilon_local=e0, n_users=n, k=k).epsilon_for_delta(1e-6)
    epsilons = np.linspace(reference / 20, 3 * reference, 50)
    for name in NAMES:
        accountant = get_accountant(name, epsilon_local=e0, n_users=n, k=k)
        wall, cpu = time.perf_counter(), time.process_time()
        deltas = accountant.delta_for_epsilon(epsilons)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        w2, c2 = time.perf_counter(), time.process_time()
        eps = accountant.epsilon_for_delta(1e-6)
        w2, c2 = time.perf_counter() - w2, time.process_time() - c2
        rows.append({"accountant": name, "n": n, "k": k, "eps0": e0, "n_epsilons": epsilons.size,
                     "delta_min": float(deltas.min()), "delta_max": float(deltas.max()),
                     "wall_s_50_deltas": wall, "cpu_s_50_deltas": cpu,
                     "eps_at_1e-6": eps, "wall_s_eps": w2, "cpu_s_eps": c2, **_machine()})
        print(f"{name:18s} 50 deltas {wall:6.2f} s (cpu {cpu:.2f})  eps(1e-6) = {eps:.6g} in {w2:.2f} s", flush=True)
    return pd.DataFrame(rows)


def width(max_n: float) -> pd.DataFrame:
    rows = []
    for n in [10**e for e in range(2, 8) if 10**e <= max_n]:
        for k in (2, 10, 100, 1000):
            for e0 in (0.5, 1.0, 2.0, 4.0, 8.0):
                gamma = k / (math.exp(e0) + k - 1)
                upper = get_accountant("weak-adversary", epsilon_local=e0, n_users=n, k=k)
                lower = get_accountant("worst-case-lower", epsilon_local=e0, n_users=n, k=k)
                # worst-case-upper differs from weak-adversary only for k = 2 (and k = 3, n <= 64: not in this grid)
                tight = get_accountant("worst-case-upper", epsilon_local=e0, n_users=n, k=k) if k == 2 else None
                for delta in (1e-6, 1e-9, 1e-12):
                    start = time.perf_counter()
                    e_hi, e_lo = upper.epsilon_for_delta(delta), lower.epsilon_for_delta(delta)
                    seconds = time.perf_counter() - start
                    start = time.perf_counter()
                    e_tight = tight.epsilon_for_delta(delta) if tight is not None else e_hi
                    seconds_tight = time.perf_counter() - start if tight is not None else 0.0

                    def ratio_of(value):
                        return value / e_lo if e_lo > 0 else (1.0 if value == 0 else math.inf)

                    ratio, ratio_tight = ratio_of(e_hi), ratio_of(e_tight)
                    rows.append({"n": n, "k": k, "eps0": e0, "delta": delta, "eps_lower": e_lo, "eps_upper": e_hi,
                                 "ratio": ratio, "eps_worst_case_upper": e_tight, "ratio_worst_case_upper": ratio_tight,
                                 "blanket_x0_x1": n * gamma * 2 / k, "seconds": seconds,
                                 "seconds_worst_case_upper": seconds_tight})
                    print(f"n={n:>8} k={k:>4} eps0={e0:>3} delta={delta:.0e}: lower {e_lo:.6g} weak {e_hi:.6g} "
                          f"ratio {ratio:.5f}; worst-case-upper {e_tight:.6g} ratio {ratio_tight:.5f} "
                          f"({seconds:.1f} s + {seconds_tight:.1f} s)", flush=True)
    frame = pd.DataFrame(rows)
    machine = _machine()
    for key, value in machine.items():
        frame[key] = value
    return frame


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-n", type=float, default=1e7)
    parser.add_argument("--skip-width", action="store_true")
    args = parser.parse_args(argv)
    frame = speed()
    atomic_write_text(OUT_SPEED, frame.to_csv(index=False))
    if not args.skip_width:
        table = width(args.max_n)
        atomic_write_text(OUT_WIDTH, table.to_csv(index=False))
        goal = table[table["blanket_x0_x1"] >= 100]
        tightest = goal[["ratio", "ratio_worst_case_upper"]].min(axis=1)
        print(f"\nratio where n gamma 2/k >= 100, weak-adversary as the upper end: max {goal['ratio'].max():.5f}, "
              f"median {goal['ratio'].median():.5f}; {int((goal['ratio'] > 1.01).sum())} of {len(goal)} above 1.01")
        print(f"the same with the tightest upper end (worst-case-upper): max {tightest.max():.5f}, median "
              f"{tightest.median():.6f}; {int((tightest > 1.01).sum())} of {len(goal)} above 1.01")
        for column in ("ratio", "ratio_worst_case_upper"):
            two = goal[goal["k"] == 2][column]
            print(f"k = 2 where n gamma 2/k >= 100, {column}: median {two.median():.5f}, max {two.max():.5f}")
        print(f"all cells: max ratio {table['ratio'].max():.4g} at "
              f"{table.loc[table['ratio'].idxmax(), ['n', 'k', 'eps0', 'delta']].to_dict()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
