"""The k >= 4 block search (worst_case/k4/blocks.py): the certified bracket at small n, before/after.

For n in {2, 4, 8, 12, 16, 20, 24}, k in {4, 5, 10, 100, 1000}, eps0 in {0.5, 1, 2, 4} and delta in
{1e-6, 1e-9} it records the epsilon of ``worst-case-lower``, of ``worst-case-upper`` without the block
search ("before": min(own-value hits, weak-adversary), the accountant with its block search switched
off in this process only) and with it ("after"), their ratios to the lower epsilon, and the seconds of
the "after" search (load-dependent: the machine is shared; compare ratios within one run).

Writes results/benchmarks/k4_blocks_bracket.csv and prints the cells above 1.01 and 1.002, before/after.
Run: python benchmarks/bench_k4_blocks.py [--users 2 4 8] [--domains 4 5]

``--rows FILE``: instead, the default bracket grid's rows at n in {20, 50, 100}, k in {4, 10, 100} (eps0 in
{0.5, 1, 2, 4, 8}, delta in {1e-6, 1e-9}; the rows of ``accounting.bracket`` in config/config.yaml), computed by
:func:`shuffledp.accounting.bracket.bracket` of the code on the import path, with the CPU seconds of each
(eps0, k) pair, written to FILE. Run it once with another tree's src on PYTHONPATH (before) and once with this
one (after), then ``--compare BEFORE AFTER`` writes results/benchmarks/k4_bracket_rows.csv side by side and
prints the rows above 1.01 before/after.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from shuffledp.accounting import get_accountant
from shuffledp.io import atomic_write_csv

ROOT = Path(__file__).resolve().parents[1]
OUTPUT = ROOT / "results" / "benchmarks" / "k4_blocks_bracket.csv"
COLUMNS = [
    "n",
    "k",
    "epsilon_local",
    "delta",
    "eps_lower",
    "eps_upper_before",
    "eps_upper_after",
    "ratio_before",
    "ratio_after",
    "seconds_after",
]


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
                    rows.append(
                        [
                            n,
                            k,
                            e0,
                            delta,
                            f"{lower:.12g}",
                            f"{before:.12g}",
                            f"{after:.12g}",
                            f"{rb:.9g}",
                            f"{ra:.9g}",
                            f"{seconds:.2f}",
                        ]
                    )
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
        print(
            f"k={k}: largest ratio {float(top_b[7]):.6g} (n={top_b[0]}, eps0={top_b[2]}, delta={top_b[3]}) -> "
            f"{float(top_a[8]):.6g} (n={top_a[0]}, eps0={top_a[2]}, delta={top_a[3]}); "
            f"after-search seconds max {max(float(r[9]) for r in mine):.1f}"
        )


ROWS_OUTPUT = ROOT / "results" / "benchmarks" / "k4_bracket_rows.csv"
ROW_COLUMNS = ["n", "k", "epsilon_local", "delta", "eps_lower", "eps_upper", "ratio", "cpu_seconds_pair"]
COMPARE_COLUMNS = [
    "n",
    "k",
    "epsilon_local",
    "delta",
    "eps_lower_before",
    "eps_upper_before",
    "ratio_before",
    "eps_lower_after",
    "eps_upper_after",
    "ratio_after",
    "cpu_before",
    "cpu_after",
]


def bracket_rows(path: Path, users, domains) -> None:
    """The bracket rows of the code on the import path (module docstring, ``--rows``)."""
    from shuffledp.accounting.bracket import bracket

    rows = []
    for n in users:
        for k in domains:
            for e0 in (0.5, 1.0, 2.0, 4.0, 8.0):
                start = time.process_time()
                found = bracket(epsilon_local=e0, n_users=n, k=k, deltas=[1e-6, 1e-9])
                cpu = time.process_time() - start
                for row in found:
                    rows.append(
                        [
                            n,
                            k,
                            e0,
                            row["delta"],
                            f"{row['eps_lower']:.12g}",
                            f"{row['eps_upper']:.12g}",
                            f"{row['ratio']:.9g}",
                            f"{cpu:.2f}",
                        ]
                    )
                    print(*rows[-1], flush=True)
    atomic_write_csv(path, ROW_COLUMNS, rows)


def compare(before: Path, after: Path, output: Path) -> None:
    """Side by side (``--compare``): the rows of both runs, and those above 1.01 before/after."""
    import csv

    def read(path):
        with open(path, newline="") as handle:
            return {(r["n"], r["k"], r["epsilon_local"], r["delta"]): r for r in csv.DictReader(handle)}

    old, new = read(before), read(after)
    rows = []
    for key in [key for key in new if key in old]:
        b, a = old[key], new[key]
        rows.append(
            [
                *key,
                b["eps_lower"],
                b["eps_upper"],
                b["ratio"],
                a["eps_lower"],
                a["eps_upper"],
                a["ratio"],
                b["cpu_seconds_pair"],
                a["cpu_seconds_pair"],
            ]
        )
    atomic_write_csv(output, COMPARE_COLUMNS, rows)
    print("n k eps0 delta | ratio before -> after | CPU s of the (n, k, eps0) pair before -> after")
    for r in rows:
        flag = " *" if max(float(r[6]), float(r[9])) > 1.01 else ""
        print(
            f"{r[0]:>3} {r[1]:>3} {r[2]:>4} {r[3]:>6} | {float(r[6]):.5f} -> {float(r[9]):.5f} | {r[10]} -> {r[11]}{flag}"
        )
    for limit in (1.01,):
        print(
            f"above {limit}: {sum(float(r[6]) > limit for r in rows)} -> {sum(float(r[9]) > limit for r in rows)}"
            f" of {len(rows)} rows; largest {max(float(r[6]) for r in rows):.5f} -> {max(float(r[9]) for r in rows):.5f}"
        )
    print(f"wrote {output} ({len(rows)} rows)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, nargs="+", default=None)
    parser.add_argument("--domains", type=int, nargs="+", default=None)
    parser.add_argument("--output", type=Path, default=None)
    parser.add_argument(
        "--rows", type=Path, default=None, help="write the bracket rows of the code on the path"
    )
    parser.add_argument("--compare", type=Path, nargs=2, default=None, metavar=("BEFORE", "AFTER"))
    args = parser.parse_args()
    if args.rows is not None:
        bracket_rows(args.rows, args.users or [20, 50, 100], args.domains or [4, 10, 100])
        return
    if args.compare is not None:
        compare(*args.compare, args.output or ROWS_OUTPUT)
        return
    args.users = args.users or [2, 4, 8, 12, 16, 20, 24]
    args.domains = args.domains or [4, 5, 10, 100, 1000]
    args.output = args.output or OUTPUT
    rows = run(args.users, args.domains)
    atomic_write_csv(args.output, COLUMNS, rows)
    summarise(rows)
    print(f"wrote {args.output} ({len(rows)} rows)")


if __name__ == "__main__":
    main()
