"""Tiny cases against the brute-force worst case: how tight are weak-adversary and worst-case-lower?

For n = 2..8, k = 2..4, eps0 in {0.5, 1, 2, 4} and eps in {0, 0.1, 0.25, 0.5, 0.75, 1, 1.5, 3} with
eps < eps0 (483 cases; the grid of ``bench_peers_krr.py``, part 2), this compares

* the true worst case over every dataset of the other n - 1 users and both directions (50-digit
  enumeration, ``tests/accounting/brute_force.py``: :func:`true_worst_case_delta`),
* ``weak-adversary``, ``strong-adversary`` (upper bounds) and ``worst-case-lower`` (lower bound),
* which datasets attain the worst case (every dataset within a relative 1e-12 of it, classified as
  "all others on x0 or on x1", "no other on x0 or x1", or "mixed"),
* optionally (``--wang DIR``, a checkout of ``wangsw/PrivacyAmplification``, imported at run time,
  nothing copied) Wang et al.'s k-RR "upper bound", and the (h_x0, h_x1) delta of the dataset where no
  other user holds x0 or x1 (the brute-force pair law), which it is compared with.

Writes results/benchmarks/tiny_worst_case.csv (one row per case) and prints the counts quoted in
docs/decisions/weak-adversary.md.

Run: python benchmarks/tiny_worst_case.py [--wang <dir>]   (about 3 minutes on one core)
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "accounting"))  # the test suite's brute-force reference
sys.path.insert(0, str(ROOT / "benchmarks"))

from brute_force import (  # noqa: E402
    histogram_distribution_of_counts,
    hockey_stick,
    other_datasets,
    pair_distributions,
    true_worst_case_delta,
)

from shuffledp.accounting import get_accountant  # noqa: E402
from shuffledp.io import atomic_write_text  # noqa: E402

OUTPUT = ROOT / "results" / "benchmarks" / "tiny_worst_case.csv"
USERS = range(2, 9)
DOMAINS = (2, 3, 4)
LOCAL_EPSILONS = (0.5, 1.0, 2.0, 4.0)
EPSILONS = (0.0, 0.1, 0.25, 0.5, 0.75, 1.0, 1.5, 3.0)
#: two values this close (relative) are "equal"; the brute force carries 50 digits, ours ~1e-13
EQUAL = 1e-12


def _dataset_kind(others: tuple[int, ...], n: int) -> str:
    if others[0] == n - 1 or others[1] == n - 1:
        return "all others on x0 or on x1"
    if others[0] == 0 and others[1] == 0:
        return "no other on x0 or x1"
    return "mixed"


def _maximisers(n, k, eps0, eps, worst, cache) -> list[tuple[int, ...]]:
    found = []
    for others in other_datasets(n, k):
        key = (n, k, eps0, others)
        if key not in cache:
            with_x0, with_x1 = list(others), list(others)
            with_x0[0] += 1
            with_x1[1] += 1
            cache[key] = (
                histogram_distribution_of_counts(tuple(with_x0), k, epsilon_local=eps0),
                histogram_distribution_of_counts(tuple(with_x1), k, epsilon_local=eps0),
            )
        p0, p1 = cache[key]
        delta = max(float(hockey_stick(p0, p1, eps)), float(hockey_stick(p1, p0, eps)))
        if delta >= worst * (1 - EQUAL):
            found.append(others)
    return found


def run(peer=None) -> pd.DataFrame:
    rows = []
    for n in USERS:
        for k in DOMAINS:
            cache: dict = {}
            for eps0 in LOCAL_EPSILONS:
                accountants = {
                    name: get_accountant(name, epsilon_local=eps0, n_users=n, k=k)
                    for name in ("weak-adversary", "strong-adversary", "worst-case-lower")
                }
                p0, p1 = pair_distributions(n, k, 0, "third", epsilon_local=eps0)
                for eps in EPSILONS:
                    if eps >= eps0:
                        continue
                    worst = true_worst_case_delta(eps, eps0, n, k)
                    true = float(worst.delta)
                    kinds = sorted({_dataset_kind(o, n) for o in _maximisers(n, k, eps0, eps, true, cache)})
                    row = {
                        "n_users": n,
                        "k": k,
                        "epsilon_local": eps0,
                        "epsilon": eps,
                        "true_worst_case": true,
                        **{name: float(a.delta_for_epsilon([eps])[0]) for name, a in accountants.items()},
                        "pair_no_other_on_x0_x1": float(
                            max(hockey_stick(p0, p1, eps), hockey_stick(p1, p0, eps))
                        ),
                        "maximiser_kinds": "; ".join(kinds),
                    }
                    if peer is not None:
                        from bench_peers_krr import peer_delta

                        row["wang_vldb24"] = peer_delta(peer, n, k, eps0, eps)
                    rows.append(row)
            print(f"n = {n}, k = {k}: done", file=sys.stderr, flush=True)
    return pd.DataFrame(rows)


def _equal(a: pd.Series, b: pd.Series, tolerance: float = EQUAL) -> pd.Series:
    return (a - b).abs() <= tolerance * b.abs()


def summary(table: pd.DataFrame) -> list[str]:
    true, weak, strong, lower = (
        table[c] for c in ("true_worst_case", "weak-adversary", "strong-adversary", "worst-case-lower")
    )
    slack = 1e-9
    lines = [
        f"cases: {len(table)}",
        f"lower <= true <= weak <= strong (rel. {slack:g}): "
        f"{int(((lower <= true * (1 + slack)) & (true <= weak * (1 + slack)) & (weak <= strong * (1 + slack))).sum())}",
        f"weak == true to {EQUAL:g} (relative): {int(_equal(weak, true).sum())}",
        f"lower == true to {EQUAL:g} (relative): {int(_equal(lower, true).sum())}",
    ]
    excess = weak / true
    worst = table.loc[excess.idxmax()]
    lines.append(
        f"largest weak / true: {excess.max():.4f} at n = {worst.n_users}, k = {worst.k}, eps0 = {worst.epsilon_local:g}, "
        f"eps = {worst.epsilon:g} (true {worst.true_worst_case:.4g}, weak {worst['weak-adversary']:.4g})"
    )
    for k, group in table.groupby("k"):
        lines.append(
            f"k = {k}: weak == true {int(_equal(group['weak-adversary'], group['true_worst_case']).sum())} of "
            f"{len(group)}, max weak / true {(group['weak-adversary'] / group['true_worst_case']).max():.4f}"
        )
    counts = Counter()
    for kinds, k in zip(table["maximiser_kinds"], table["k"]):
        for kind in kinds.split("; "):
            counts[(kind, k)] += 1
        if kinds == "mixed":
            counts[("only mixed", k)] += 1
    for kind in ("all others on x0 or on x1", "no other on x0 or x1", "only mixed"):
        per_k = ", ".join(f"k = {k}: {counts[(kind, k)]}" for k in DOMAINS)
        lines.append(f"worst case attained by '{kind}': {sum(counts[(kind, k)] for k in DOMAINS)} ({per_k})")
    if "wang_vldb24" in table.columns:
        wang, pair = table["wang_vldb24"], table["pair_no_other_on_x0_x1"]
        k2 = table["k"] == 2
        lines.append(
            f"Wang et al. == weak for k = 2: {int(_equal(wang[k2], weak[k2], 1e-9).sum())} of {int(k2.sum())}"
        )
        lines.append(
            f"Wang et al. == (h_x0, h_x1) delta of 'no other on x0 or x1' for k >= 3: "
            f"{int(_equal(wang[~k2], pair[~k2], 1e-9).sum())} of {int((~k2).sum())}"
        )
        below = wang < true * (1 - slack)
        ratio = true / wang
        where = table.loc[ratio.idxmax()]
        lines.append(
            f"Wang et al. below the true worst case: {int(below.sum())} "
            f"({', '.join(f'k = {k}: {int((below & (table.k == k)).sum())}' for k in DOMAINS)}); largest "
            f"true / theirs {ratio.max():.3f} at n = {where.n_users}, k = {where.k}, eps0 = {where.epsilon_local:g}, "
            f"eps = {where.epsilon:g} (true {where.true_worst_case:.4g}, theirs {where.wang_vldb24:.4g})"
        )
    return lines


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--wang", default=None, help="checkout of wangsw/PrivacyAmplification (optional)")
    arguments = parser.parse_args(argv)
    peer = None
    if arguments.wang:
        from bench_peers_krr import load_peer

        peer = load_peer(arguments.wang)
    table = run(peer)
    atomic_write_text(OUTPUT, table.to_csv(index=False))
    print("\n".join(summary(table)))
    print(f"wrote {OUTPUT}")


if __name__ == "__main__":
    main()
