"""Both ends of the bracket against the exact worst case at medium n.

The truth is the test suite's independent enumeration (``tests/accounting/exact_enumeration.py``: every
dataset of the n - 1 others up to permuting the values 2 .. k-1, direct convolution, certified interval).
For k = 3 (n up to 40), k = 4 (n up to 24), k = 5 (n up to 14), eps0 in {0.5, 1, 2, 4, 8, 15, 25} and
eps = fraction x eps0, fraction in {0.05, 0.25, 0.5, 0.75, 0.95}, it records

* ``worst-case-upper`` / truth, ``weak-adversary`` / truth and ``worst-case-lower`` / truth (delta ratios),
* the argmax dataset (c_x0, c_x1, d_2 >= ... >= d_{k-1}) and its shape: "one value" (every other on one
  value), "all but j" (all but j <= 3 on one value), or "mixture",

writes results/benchmarks/bracket_enumeration.csv (one row per case) and prints the extremes per k.

Run: python benchmarks/bench_bracket_enumeration.py [--quick]   (about 10 minutes on one core)
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "accounting"))  # the test suite's exact reference

from exact_enumeration import worst_case  # noqa: E402

from shuffledp.accounting import get_accountant  # noqa: E402
from shuffledp.io import atomic_write_csv  # noqa: E402

OUTPUT = ROOT / "results" / "benchmarks" / "bracket_enumeration.csv"
SIZES = {3: (5, 10, 20, 30, 40), 4: (5, 10, 16, 20, 24), 5: (5, 8, 10, 12, 14)}
QUICK = {3: (10, 20), 4: (10,), 5: (6,)}
LOCAL_EPSILONS = (0.5, 1.0, 2.0, 4.0, 8.0, 15.0, 25.0)
FRACTIONS = (0.05, 0.25, 0.5, 0.75, 0.95)
NAMES = ("worst-case-upper", "weak-adversary", "worst-case-lower")
COLUMNS = [
    "k",
    "n",
    "epsilon_local",
    "epsilon",
    "true_delta",
    "true_low",
    "true_high",
    "refined",
    "argmax",
    "direction",
    "shape",
    *[f"{name}_ratio" for name in NAMES],
    "seconds",
]


def shape(counts: tuple, n: int) -> str:
    """ "one value" when every other user holds one value, "all but j" (j <= 3), else "mixture"."""
    j = (n - 1) - max(counts)
    if j == 0:
        return "one value"
    return f"all but {j}" if j <= 3 else "mixture"


def run(sizes) -> list[list]:
    rows = []
    for k, ns in sizes.items():
        for n in ns:
            for epsilon_local in LOCAL_EPSILONS:
                epsilons = [f * epsilon_local for f in FRACTIONS]
                start = time.perf_counter()
                truths = worst_case(epsilons, epsilon_local, n, k)
                seconds = time.perf_counter() - start
                values = {
                    name: get_accountant(name, epsilon_local=epsilon_local, n_users=n, k=k).delta_for_epsilon(
                        epsilons
                    )
                    for name in NAMES
                }
                for i, (eps, truth) in enumerate(zip(epsilons, truths)):
                    ratios = [
                        float(values[name][i]) / truth.delta if truth.delta > 0 else float("nan")
                        for name in NAMES
                    ]
                    rows.append(
                        [
                            k,
                            n,
                            epsilon_local,
                            eps,
                            f"{truth.delta:.17g}",
                            f"{truth.low:.17g}",
                            f"{truth.high:.17g}",
                            truth.refined,
                            " ".join(map(str, truth.others)),
                            truth.direction,
                            shape(truth.others, n),
                            *[f"{r:.12g}" for r in ratios],
                            f"{seconds:.2f}",
                        ]
                    )
                print(f"k={k} n={n} eps0={epsilon_local}: {seconds:.1f} s", flush=True)
    return rows


def summarise(rows) -> None:
    index = {name: COLUMNS.index(f"{name}_ratio") for name in NAMES}
    for k in sorted({row[0] for row in rows}):
        mine = [row for row in rows if row[0] == k]
        for name in NAMES:
            col = index[name]
            top = max(mine, key=lambda row: float(row[col]))
            low = min(mine, key=lambda row: float(row[col]))
            print(
                f"k={k} {name}: max {float(top[col]):.6g} at n={top[1]}, eps0={top[2]}, eps={top[3]:.4g} "
                f"(argmax {top[8]}); min {float(low[col]):.6g} at n={low[1]}, eps0={low[2]}, eps={low[3]:.4g} "
                f"(argmax {low[8]})"
            )
        shapes = {}
        for row in mine:
            shapes[row[10]] = shapes.get(row[10], 0) + 1
        print(f"k={k} argmax shapes: {shapes}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a few small sizes only (a smoke run)")
    parser.add_argument(
        "--domains", type=int, nargs="+", default=None, help="only these k (default: 3, 4, 5)"
    )
    parser.add_argument("--output", type=Path, default=OUTPUT, help="CSV written (default: %(default)s)")
    args = parser.parse_args()
    sizes = QUICK if args.quick else SIZES
    rows = run({k: ns for k, ns in sizes.items() if args.domains is None or k in args.domains})
    atomic_write_csv(args.output, COLUMNS, rows)
    summarise(rows)
    print(f"wrote {args.output} ({len(rows)} rows)")


if __name__ == "__main__":
    main()
