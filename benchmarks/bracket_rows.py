"""The default grid's bracket rows above 1.01: before/after table of the worst-case bracket.

For each selected (n, k, eps0) of the default bracket grid (config/config.yaml, ``accounting.bracket``: the
product of its lists plus its ``extra`` rows), the bracket (``shuffledp.accounting.bracket.bracket``: the
epsilon of ``worst-case-upper`` and of ``worst-case-lower`` at each delta of the grid, and their ratio), the
search that ran for the upper end (the table of regimes; "weak-adversary" where none runs) and the CPU seconds
of the setting (both ends, both deltas). Rows are written to results/benchmarks/bracket_rows.csv under a
``stage`` label (``--stage before`` with the code before a change on the import path, ``--stage after`` with
it), replacing that stage's earlier rows of the same settings; other stages' rows are kept, so the file holds
both tables side by side.

Selection: ``--settings n:k:eps0,...`` or ``--above PATH`` (the settings with a ratio above 1.01 in a
bracket CSV with columns n_users, k, epsilon_local, ratio), else every setting of the grid (606 rows; the
whole grid is slow: minutes to hours at n = 20-100, k >= 4).

Run: python benchmarks/bracket_rows.py --stage after [--settings 20:10:4,...] [--out CSV]
"""

from __future__ import annotations

import argparse
import itertools
import os
import time
from pathlib import Path

import pandas as pd
import yaml

from shuffledp.accounting.bracket import bracket
from shuffledp.accounting.params import ShuffleSetting
from shuffledp.accounting.worst_case.regimes import regime_for
from shuffledp.io import atomic_write_text

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "results" / "benchmarks" / "bracket_rows.csv"
GOAL = 1.01
KEYS = ["stage", "n_users", "k", "epsilon_local", "delta"]


def grid() -> tuple[list[tuple[int, int, float]], list[float]]:
    """The default bracket grid's settings (n, k, eps0) and its deltas."""
    config = yaml.safe_load((ROOT / "config" / "config.yaml").read_text(encoding="utf-8"))
    section = config["accounting"]["bracket"]
    settings = [
        (int(n), int(k), float(e0))
        for n, k, e0 in itertools.product(section["n_users"], section["k"], section["epsilon_local"])
    ]
    settings += [
        (int(x["n_users"]), int(x["k"]), float(x["epsilon_local"])) for x in section.get("extra", [])
    ]
    return settings, [float(d) for d in section["delta"]]


def rows_of(n: int, k: int, e0: float, deltas: list[float], stage: str) -> list[dict]:
    """The bracket rows of one setting, with the upper end's search and the setting's CPU and wall seconds."""
    regime = regime_for(ShuffleSetting(n_users=n, k=k, epsilon_local=e0))
    cpu, wall = time.process_time(), time.perf_counter()
    found = bracket(epsilon_local=e0, n_users=n, k=k, deltas=deltas)
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    return [
        {
            "stage": stage,
            "n_users": n,
            "k": k,
            "epsilon_local": e0,
            "delta": row["delta"],
            "eps_lower": row["eps_lower"],
            "eps_upper": row["eps_upper"],
            "ratio": row["ratio"],
            "above_goal": row["ratio"] > GOAL,
            "upper_search": regime.search.name if regime is not None else "weak-adversary",
            "cpu_s_setting": round(cpu, 2),
            "wall_s_setting": round(wall, 2),
            "load_1min": round(os.getloadavg()[0], 1),
        }
        for row in found
    ]


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stage", required=True, help="label of this table (e.g. before, after)")
    parser.add_argument("--settings", help="n:k:eps0,... (default: the whole grid)")
    parser.add_argument("--above", help="a bracket CSV: its settings with a ratio above 1.01")
    parser.add_argument("--out", default=str(OUT))
    args = parser.parse_args(argv)
    settings, deltas = grid()
    if args.settings:
        settings = [
            (int(n), int(k), float(e0)) for n, k, e0 in (s.split(":") for s in args.settings.split(","))
        ]
    elif args.above:
        table = pd.read_csv(args.above)
        table = table[table["ratio"] > GOAL]
        columns = zip(table["n_users"].tolist(), table["k"].tolist(), table["epsilon_local"].tolist())
        settings = sorted({(int(n), int(k), float(e0)) for n, k, e0 in columns})
    out = Path(args.out)
    for n, k, e0 in settings:
        new = pd.DataFrame(rows_of(n, k, e0, deltas, args.stage))
        old = pd.read_csv(out) if out.exists() else pd.DataFrame(columns=new.columns)
        mine = (
            (old["stage"] == args.stage)
            & (old["n_users"] == n)
            & (old["k"] == k)
            & (old["epsilon_local"] == e0)
        )
        table = pd.concat([old[~mine], new], ignore_index=True).sort_values(KEYS, kind="stable")
        out.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(out, table.to_csv(index=False))
        for row in new.itertuples():
            print(
                f"{args.stage:7s} n={n:<7d} k={k:<5d} eps0={e0:<5g} delta={row.delta:.0e} lower={row.eps_lower:.6g} "
                f"upper={row.eps_upper:.6g} ratio={row.ratio:.5f} {row.upper_search} cpu={row.cpu_s_setting}s",
                flush=True,
            )


if __name__ == "__main__":
    main()
