"""Benchmark of the two worst-case accountants: speed and the width of their bracket.

Part 1 (speed): delta for 50 epsilons at n = 10^6 (k = 10, eps0 = 1; the epsilons span 1/20 to 3 times
the epsilon at delta = 1e-6, i.e. delta from ~1e-4 down to ~1e-19) for ``weak-adversary`` and
``worst-case-lower``, and epsilon at delta = 1e-6 for each. Target: <= 1 s each for the 50 deltas.

Part 2 (bracket width): epsilon_upper / epsilon_lower at delta in {1e-6, 1e-9, 1e-12} for n in
{10^2, ..., 10^7}, k in {2, 10, 100, 1000}, eps0 in {0.5, 1, 2, 4, 8} (``--max-n`` trims the grid;
n = 10^7 costs ~10 s per epsilon). Goal: ratio <= 1.01 wherever n gamma 2 / k >= 100 (the expected number
of blanket reports on x0 or x1), gamma = k / (e^eps0 + k - 1). For k = 2 the width is also given with
``worst-case-upper`` as the upper end (the certified maximum over datasets: blanket-bit block views for
n <= 10^4, pair-sum blocks up to 10^8; for k >= 3 it is weak-adversary's value).

Part 3 (``--goals``, the goal grid of the k >= 3 bracket): the bracket of ``worst-case-lower`` and ``worst-case-upper``
(each accountant as it stands, whichever view it uses at that n and k) at delta in {1e-6, 1e-9} for
k in {3, 4, 10, 100, 1000}, eps0 in {0.5, 1, 2, 4, 8} and n from 2 to 10^5 (GOAL_USERS), with the time
of each end's epsilon search. Goals: ratio <= 1.01 everywhere, <= 1.002 where n gamma 2 / k >= 100;
an epsilon search <= 2 s at n <= 10^5. Writes results/benchmarks/bracket_goals.csv.

Writes results/benchmarks/bracket_speed.csv and results/benchmarks/bracket_width.csv (atomically),
with machine information and the load average, and prints both tables.

Run: python benchmarks/bench_bracket.py [--max-n 1e6] [--skip-width] [--goals [--goal-users 2,3,...] [--goals-out CSV]]
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
OUT_GOALS = ROOT / "results" / "benchmarks" / "bracket_goals.csv"
NAMES = ("weak-adversary", "worst-case-lower")
GOAL_USERS = (2, 3, 4, 5, 7, 10, 15, 20, 30, 50, 70, 100, 200, 500, 1000, 10**4, 10**5)
GOAL_DOMAINS = (3, 4, 10, 100, 1000)
GOAL_LOCAL = (0.5, 1.0, 2.0, 4.0, 8.0)
GOAL_DELTAS = (1e-6, 1e-9)


def _ratio(value: float, e_lo: float) -> float:
    """``value / e_lo``; 1 when both are 0, inf when only ``e_lo`` is."""
    return value / e_lo if e_lo > 0 else (1.0 if value == 0 else math.inf)


def _machine() -> dict:
    return {
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "load_1min": os.getloadavg()[0],
    }


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
        rows.append(
            {
                "accountant": name,
                "n": n,
                "k": k,
                "eps0": e0,
                "n_epsilons": epsilons.size,
                "delta_min": float(deltas.min()),
                "delta_max": float(deltas.max()),
                "wall_s_50_deltas": wall,
                "cpu_s_50_deltas": cpu,
                "eps_at_1e-6": eps,
                "wall_s_eps": w2,
                "cpu_s_eps": c2,
                **_machine(),
            }
        )
        print(
            f"{name:18s} 50 deltas {wall:6.2f} s (cpu {cpu:.2f})  eps(1e-6) = {eps:.6g} in {w2:.2f} s",
            flush=True,
        )
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
                tight = (
                    get_accountant("worst-case-upper", epsilon_local=e0, n_users=n, k=k) if k == 2 else None
                )
                for delta in (1e-6, 1e-9, 1e-12):
                    start = time.perf_counter()
                    e_hi, e_lo = upper.epsilon_for_delta(delta), lower.epsilon_for_delta(delta)
                    seconds = time.perf_counter() - start
                    start = time.perf_counter()
                    e_tight = tight.epsilon_for_delta(delta) if tight is not None else e_hi
                    seconds_tight = time.perf_counter() - start if tight is not None else 0.0

                    ratio, ratio_tight = _ratio(e_hi, e_lo), _ratio(e_tight, e_lo)
                    rows.append(
                        {
                            "n": n,
                            "k": k,
                            "eps0": e0,
                            "delta": delta,
                            "eps_lower": e_lo,
                            "eps_upper": e_hi,
                            "ratio": ratio,
                            "eps_worst_case_upper": e_tight,
                            "ratio_worst_case_upper": ratio_tight,
                            "blanket_x0_x1": n * gamma * 2 / k,
                            "seconds": seconds,
                            "seconds_worst_case_upper": seconds_tight,
                        }
                    )
                    print(
                        f"n={n:>8} k={k:>4} eps0={e0:>3} delta={delta:.0e}: lower {e_lo:.6g} weak {e_hi:.6g} "
                        f"ratio {ratio:.5f}; worst-case-upper {e_tight:.6g} ratio {ratio_tight:.5f} "
                        f"({seconds:.1f} s + {seconds_tight:.1f} s)",
                        flush=True,
                    )
    frame = pd.DataFrame(rows)
    machine = _machine()
    for key, value in machine.items():
        frame[key] = value
    return frame


def _timed_search(name: str, delta: float, **params) -> tuple[float, float]:
    start = time.perf_counter()
    epsilon = get_accountant(name, **params).epsilon_for_delta(delta)
    return epsilon, time.perf_counter() - start


def goals(users) -> pd.DataFrame:
    """The goal grid of the k >= 3 bracket: one row per (n, k, eps0, delta), both ends searched from a fresh accountant."""
    rows = []
    for n in users:
        for k in GOAL_DOMAINS:
            for e0 in GOAL_LOCAL:
                gamma = k / (math.exp(e0) + k - 1)
                for delta in GOAL_DELTAS:
                    params = {"epsilon_local": e0, "n_users": n, "k": k}
                    e_lo, s_lo = _timed_search("worst-case-lower", delta, **params)
                    e_hi, s_hi = _timed_search("worst-case-upper", delta, **params)
                    e_weak, _ = _timed_search("weak-adversary", delta, **params)
                    ratio = e_hi / e_lo if e_lo > 0 else (1.0 if e_hi == 0 else math.inf)
                    rows.append(
                        {
                            "n": n,
                            "k": k,
                            "eps0": e0,
                            "delta": delta,
                            "eps_lower": e_lo,
                            "eps_upper": e_hi,
                            "ratio": ratio,
                            "eps_weak": e_weak,
                            "ratio_weak": e_weak / e_lo if e_lo > 0 else math.inf,
                            "blanket_x0_x1": n * gamma * 2 / k,
                            "seconds_lower": s_lo,
                            "seconds_upper": s_hi,
                        }
                    )
                    print(
                        f"n={n:>6} k={k:>4} eps0={e0:>3} delta={delta:.0e}: [{e_lo:.6g}, {e_hi:.6g}] ratio {ratio:.5f} "
                        f"(weak {rows[-1]['ratio_weak']:.5f}; {s_lo:.2f} s + {s_hi:.2f} s)",
                        flush=True,
                    )
    frame = pd.DataFrame(rows)
    for key, value in _machine().items():
        frame[key] = value
    return frame


def summarise_goals(frame: pd.DataFrame) -> None:
    wide = frame[frame["ratio"] > 1.01]
    print(
        f"\n{len(wide)} of {len(frame)} cells above 1.01 (weak-adversary as the upper end: "
        f"{int((frame['ratio_weak'] > 1.01).sum())}); largest {frame['ratio'].max():.5f}"
    )
    region = frame[frame["blanket_x0_x1"] >= 100]
    print(
        f"n gamma 2/k >= 100: {int((region['ratio'] > 1.002).sum())} of {len(region)} above 1.002, "
        f"largest {region['ratio'].max():.5f}"
    )
    print(wide.groupby(["k", "n"])["ratio"].agg(["count", "max"]).to_string())
    slow = frame[["seconds_lower", "seconds_upper"]].max(axis=1)
    print(
        f"searches above 2 s: {int((slow > 2).sum())} of {len(frame)}; slowest {slow.max():.2f} s at "
        f"{frame.loc[slow.idxmax(), ['n', 'k', 'eps0', 'delta']].to_dict()}"
    )


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-n", type=float, default=1e7)
    parser.add_argument("--skip-width", action="store_true")
    parser.add_argument(
        "--goals", action="store_true", help="only the goal grid of the k >= 3 bracket (part 3)"
    )
    parser.add_argument("--goal-users", default=",".join(map(str, GOAL_USERS)))
    parser.add_argument("--goals-out", default=str(OUT_GOALS))
    args = parser.parse_args(argv)
    if args.goals:
        table = goals([int(float(value)) for value in args.goal_users.split(",")])
        atomic_write_text(Path(args.goals_out), table.to_csv(index=False))
        summarise_goals(table)
        return 0
    frame = speed()
    atomic_write_text(OUT_SPEED, frame.to_csv(index=False))
    if not args.skip_width:
        table = width(args.max_n)
        atomic_write_text(OUT_WIDTH, table.to_csv(index=False))
        goal = table[table["blanket_x0_x1"] >= 100]
        tightest = goal[["ratio", "ratio_worst_case_upper"]].min(axis=1)
        print(
            f"\nratio where n gamma 2/k >= 100, weak-adversary as the upper end: max {goal['ratio'].max():.5f}, "
            f"median {goal['ratio'].median():.5f}; {int((goal['ratio'] > 1.01).sum())} of {len(goal)} above 1.01"
        )
        print(
            f"the same with the tightest upper end (worst-case-upper): max {tightest.max():.5f}, median "
            f"{tightest.median():.6f}; {int((tightest > 1.01).sum())} of {len(goal)} above 1.01"
        )
        for column in ("ratio", "ratio_worst_case_upper"):
            two = goal[goal["k"] == 2][column]
            print(f"k = 2 where n gamma 2/k >= 100, {column}: median {two.median():.5f}, max {two.max():.5f}")
        print(
            f"all cells: max ratio {table['ratio'].max():.4g} at "
            f"{table.loc[table['ratio'].idxmax(), ['n', 'k', 'eps0', 'delta']].to_dict()}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
