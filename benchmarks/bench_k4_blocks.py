"""The k >= 4 block search (views/worst/k4_blocks.py, issue 34): the certified bracket at small n, before/after.

For n in {2, 4, 8, 12, 16, 20, 24}, k in {4, 5, 10, 100, 1000}, eps0 in {0.5, 1, 2, 4} and delta in
{1e-6, 1e-9} it records the epsilon of ``worst-case-lower``, of ``worst-case-upper`` without the block
search ("before": min(own-value hits, weak-adversary), the accountant with its block search switched
off in this process only) and with it ("after"), their ratios to the lower epsilon, and the seconds of
the "after" search (load-dependent: the machine is shared; compare ratios within one run).

Writes results/benchmarks/k4_blocks_bracket.csv and prints the cells above 1.01 and 1.002, before/after.
Run: python benchmarks/bench_k4_blocks.py [--users 2 4 8] [--domains 4 5]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from shuffledp.accounting import get_accountant
from shuffledp.io import atomic_write_csv

ROOT = Path(__file__).resolve().parents[1]
OUTPUT = ROOT / "results" / "benchmarks" / "k4_blocks_bracket.csv"
COLUMNS = ["n", "k", "epsilon_local", "delta", "eps_lower", "eps_upper_before", "eps_upper_after",
           "ratio_before", "ratio_after", "seconds_after"]


def _upper(kw: dict, delta: float, blocks: bool) -> tuple[float, float]:
    accountant = get_accountant("worst-case-upper", **kw)
    if not blocks:
        accountant._k4 = False  # "before": the accountant as it was, own-value hits and weak-adversary only
    start = time.perf_counter()
    return accountant.epsilon_for_delta(delta), time.perf_counter() - start


def run(users, domains) -> list[list]:
    rows = []
    for n in users:
        for k in domains:
            for e0 in (0.5, 1.0, 2.0, 4.0):
                for delta in (1e-6, 1e-9):
                    kw = {"epsilon_local": e0, "n_users": n, "k": k}
                    lower = get_accountant("worst-case-lower", **kw).epsilon_for_delta(delta)
                    before, _ = _upper(kw, delta, False)
                    after, seconds = _upper(kw, delta, True)
                    rb, ra = (before / lower, after / lower) if lower > 0 else (float("nan"),) * 2
                    rows.append([n, k, e0, delta, f"{lower:.12g}", f"{before:.12g}", f"{after:.12g}",
                                 f"{rb:.9g}", f"{ra:.9g}", f"{seconds:.2f}"])
                    print(*rows[-1], flush=True)
    return rows


def summarise(rows) -> None:
    for limit in (1.01, 1.002):
        b = [r for r in rows if float(r[7]) > limit]
        a = [r for r in rows if float(r[8]) > limit]
        print(f"above {limit}: {len(b)} -> {len(a)} of {len(rows)} cells")
    for k in sorted({r[1] for r in rows}):
        mine = [r for r in rows if r[1] == k]
        top_b = max(mine, key=lambda r: float(r[7]))
        top_a = max(mine, key=lambda r: float(r[8]))
        print(f"k={k}: largest ratio {float(top_b[7]):.6g} (n={top_b[0]}, eps0={top_b[2]}, delta={top_b[3]}) -> "
              f"{float(top_a[8]):.6g} (n={top_a[0]}, eps0={top_a[2]}, delta={top_a[3]}); "
              f"after-search seconds max {max(float(r[9]) for r in mine):.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, nargs="+", default=[2, 4, 8, 12, 16, 20, 24])
    parser.add_argument("--domains", type=int, nargs="+", default=[4, 5, 10, 100, 1000])
    parser.add_argument("--output", type=Path, default=OUTPUT)
    args = parser.parse_args()
    rows = run(args.users, args.domains)
    atomic_write_csv(args.output, COLUMNS, rows)
    summarise(rows)
    print(f"wrote {args.output} ({len(rows)} rows)")


if __name__ == "__main__":
    main()
