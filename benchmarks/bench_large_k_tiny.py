"""Tiny cases at large k (10, 100, 1000): the true worst case over every dataset, against our bracket.

The brute force of tests/accounting/brute_force.py enumerates whole k-bin histograms, which is out of
reach for k >= 10. At tiny n it is not needed: a dataset of the other n - 1 users holds x0 (a users),
x1 (b users) and h <= n - 1 other values ("held", with their counts: a partition of m = n - 1 - a - b);
the k - 2 - h values nobody holds are "unheld". Every report on an unheld value is uniform over the
unheld values, in both worlds and whatever its sender holds, so given the number N of reports on unheld
values their arrangement has the same law under D and D'. Hence (counts on x0, x1, each held value, N)
is sufficient, and its law is a convolution of n categorical laws over h + 3 cells (50 digits, mpmath).
The worst case is the maximum over every (a, b, partition of m) and both directions.

Checked against the full-histogram brute force (``true_worst_case_delta``) at k = 4 and 5, n <= 5 before
anything else is printed. Then, for k in {10, 100, 1000}, n in {2, ..., 6}, eps0 in {0.5, 1, 2, 4},
eps = (0.25, 0.5, 0.9) eps0: the truth, ``worst-case-lower``, ``worst-case-upper``, ``weak-adversary``,
and which dataset attains the truth; and the epsilon at delta = 1e-6 of the truth (bisection on the
exact delta) beside the bracket's ends at the cells of bench_bracket.py's goal grid with k >= 100 and n <= 20
that are above 1.01 and within this n range.

Writes results/benchmarks/large_k_tiny.csv. Run: python benchmarks/bench_large_k_tiny.py (a few minutes)
"""

from __future__ import annotations

import argparse
import sys
from collections import defaultdict
from pathlib import Path

import mpmath
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "accounting"))  # the test suite's brute-force reference
from brute_force import hockey_stick, true_worst_case_delta  # noqa: E402

from shuffledp.accounting import get_accountant  # noqa: E402
from shuffledp.io import atomic_write_text  # noqa: E402

OUTPUT = ROOT / "results" / "benchmarks" / "large_k_tiny.csv"
DPS = 50
NAMES = ("worst-case-lower", "worst-case-upper", "weak-adversary")


def _partitions(m: int, largest: int | None = None):
    """Integer partitions of m (non-increasing parts)."""
    if m == 0:
        yield ()
        return
    for part in range(min(m, largest or m), 0, -1):
        for rest in _partitions(m - part, part):
            yield (part, *rest)


def datasets(n: int, k: int):
    """(a, b, partition of the rest over held values) for every dataset of the n - 1 others."""
    for a in range(n):
        for b in range(n - a):
            for parts in _partitions(n - 1 - a - b):
                if len(parts) <= k - 2:
                    yield a, b, parts


def lumped_law(values: list[int], held: int, k: int, e0) -> dict:
    """Law of (counts on x0, x1, held values 1..held, N on unheld values) of users holding ``values``
    (0 = x0, 1 = x1, 2 .. held + 1 = held values)."""
    e = mpmath.exp(mpmath.mpf(e0))
    p, q = e / (e + k - 1), 1 / (e + k - 1)
    cells = held + 3
    law = {(0,) * cells: mpmath.mpf(1)}
    for value in values:
        row = [q] * (cells - 1) + [(k - 2 - held) * q]
        row[value] = p
        new: dict = defaultdict(lambda: mpmath.mpf(0))
        for counts, probability in law.items():
            for cell, weight in enumerate(row):
                if weight:
                    bumped = list(counts)
                    bumped[cell] += 1
                    new[tuple(bumped)] += probability * weight
        law = dict(new)
    return law


def laws(n: int, k: int, e0) -> list:
    """[(dataset, P, Q)]: P with u on x0, Q with u on x1, for every dataset (forward direction)."""
    out = []
    with mpmath.workdps(DPS):
        for a, b, parts in datasets(n, k):
            others = [0] * a + [1] * b + [2 + j for j, part in enumerate(parts) for _ in range(part)]
            out.append(
                (
                    (a, b, parts),
                    lumped_law(others + [0], len(parts), k, e0),
                    lumped_law(others + [1], len(parts), k, e0),
                )
            )
    return out


def truth(table: list, eps) -> tuple:
    """(max over datasets and directions of the exact delta, its dataset, its direction)."""
    best = (mpmath.mpf(-1), None, None)
    with mpmath.workdps(DPS):
        for dataset, P, Q in table:
            for direction, (x, y) in (("D||D'", (P, Q)), ("D'||D", (Q, P))):
                value = hockey_stick(x, y, mpmath.mpf(eps), dps=DPS)
                if value > best[0]:
                    best = (value, dataset, direction)
    return best


def check_against_full_histograms() -> None:
    for k in (4, 5):
        for n in (2, 3, 4, 5):
            for e0, eps in ((0.5, 0.25), (2.0, 1.0), (1.0, 0.9)):
                mine = truth(laws(n, k, e0), eps)[0]
                full = true_worst_case_delta(eps, e0, n, k).delta
                assert abs(mine - full) <= mpmath.mpf(10) ** -40 * full, (k, n, e0, eps, mine, full)
    print("lumped brute force equals the full-histogram brute force at k = 4, 5, n <= 5 (1e-40 relative)")


def epsilon_of_truth(table: list, e0: float, delta: float) -> float:
    lo, hi = 0.0, float(e0)
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if truth(table, mid)[0] > delta else (lo, mid)
    return hi


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", default="2,3,4,5,6")
    args = parser.parse_args(argv)
    check_against_full_histograms()
    rows = []
    for k in (10, 100, 1000):
        for n in map(int, args.users.split(",")):
            for e0 in (0.5, 1.0, 2.0, 4.0):
                table = laws(n, k, e0)
                accountants = {name: get_accountant(name, epsilon_local=e0, n_users=n, k=k) for name in NAMES}
                for f in (0.25, 0.5, 0.9):
                    value, dataset, direction = truth(table, f * e0)
                    row = {
                        "k": k,
                        "n": n,
                        "eps0": e0,
                        "eps": f * e0,
                        "truth": float(value),
                        "argmax": f"a={dataset[0]} b={dataset[1]} rest={list(dataset[2])}",
                        "direction": direction,
                    }
                    for name, accountant in accountants.items():
                        row[name] = float(accountant.delta_for_epsilon([f * e0])[0])
                        row[f"{name}/truth"] = row[name] / row["truth"]
                    rows.append(row)
                    print(
                        f"k={k:>4} n={n} eps0={e0} eps={f * e0:.3f}: truth {row['truth']:.6e} ({row['argmax']}, "
                        f"{direction}); lower/truth {row['worst-case-lower/truth']:.6f} upper/truth "
                        f"{row['worst-case-upper/truth']:.6f} weak/truth {row['weak-adversary/truth']:.6f}",
                        flush=True,
                    )
    frame = pd.DataFrame(rows)
    atomic_write_text(OUTPUT, frame.to_csv(index=False))
    for name in NAMES:
        ratio = frame[f"{name}/truth"]
        print(
            f"{name}: value / truth {ratio.min():.6f} .. {ratio.max():.6f}; below the truth (1e-9) in "
            f"{int((ratio < 1 - 1e-9).sum())} of {len(frame)}; equal (1e-6) in {int(((ratio - 1).abs() < 1e-6).sum())}"
        )
    for n, k, e0 in ((4, 1000, 0.5), (5, 100, 2.0)):  # goal-grid cells above 1.01 (bench_bracket.py --goals)
        eps = epsilon_of_truth(laws(n, k, e0), e0, 1e-6)
        ends = [
            get_accountant(name, epsilon_local=e0, n_users=n, k=k).epsilon_for_delta(1e-6)
            for name in NAMES[:2]
        ]
        print(
            f"n={n} k={k} eps0={e0} delta=1e-6: eps lower {ends[0]:.6f}, truth {eps:.6f}, upper {ends[1]:.6f}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
