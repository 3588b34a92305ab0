"""Benchmark: the weak adversary's composed epsilon at large n, before and after its certified tail of boxes
of (s, d, m) (:mod:`shuffledp.accounting.views.weak.tail_boxes`).

Usage::

    python benchmarks/composed_tail_large_n.py [--eps0 1.0] [--n 1000000] [--ks 2 3 4] [--qs 1 0.01] \
        [--ts 1 10 100 1000] [--deltas 1e-6 1e-15 1e-50 1e-300] \
        [--out results/benchmarks/composed_tail_large_n.csv]

For each k, rate q and number of rounds T: the composed ``weak-adversary`` epsilon at each delta, "before"
(the boxes switched off: below the PLD's floor the PLD's own, uncertified value) and "after" (the Chernoff
bound of the tail below the floor), and the CPU seconds of each (the PLD built once per (k, q) and cached;
the tail formed once per composition).
"""

from __future__ import annotations

import argparse
import csv
import time
from pathlib import Path

FIELDS = [
    "k",
    "n",
    "q",
    "per_round",
    "eps0",
    "T",
    "delta",
    "epsilon_before",
    "epsilon_after",
    "cpu_before",
    "cpu_after",
]


def _epsilons(k, n, q, eps0, T, deltas, boxes: bool):
    from shuffledp.accounting import composition_tail
    from shuffledp.accounting.composition import compose
    from shuffledp.accounting.views.weak import tail as weak_tail

    saved = weak_tail.MAX_BOXES
    weak_tail.MAX_BOXES = saved if boxes else 0
    composition_tail._views_have_tails.cache_clear()
    try:
        start = time.process_time()
        accountant = compose(
            "weak-adversary", epsilon_local=eps0, n_users=n, k=k, compositions=T, subsample=q
        )
        values = [accountant.epsilon_for_delta(d) for d in deltas]
        return values, time.process_time() - start
    finally:
        weak_tail.MAX_BOXES = saved
        composition_tail._views_have_tails.cache_clear()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--eps0", type=float, default=1.0)
    parser.add_argument("--n", type=int, default=10**6)
    parser.add_argument("--ks", type=int, nargs="+", default=[2, 3, 4])
    parser.add_argument("--qs", type=float, nargs="+", default=[1.0, 0.01])
    parser.add_argument("--ts", type=int, nargs="+", default=[1, 10, 100, 1000])
    parser.add_argument("--deltas", type=float, nargs="+", default=[1e-6, 1e-15, 1e-50, 1e-300])
    parser.add_argument("--out", type=Path, default=Path("results/benchmarks/composed_tail_large_n.csv"))
    args = parser.parse_args(argv)
    from shuffledp.accounting.params import users_per_round

    args.out.parent.mkdir(parents=True, exist_ok=True)
    with args.out.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=FIELDS)
        writer.writeheader()
        for k in args.ks:
            for q in args.qs:
                for T in args.ts:
                    before, cpu_before = _epsilons(k, args.n, q, args.eps0, T, args.deltas, boxes=False)
                    after, cpu_after = _epsilons(k, args.n, q, args.eps0, T, args.deltas, boxes=True)
                    for delta, b, a in zip(args.deltas, before, after):
                        writer.writerow(
                            {
                                "k": k,
                                "n": args.n,
                                "q": q,
                                "per_round": users_per_round(args.n, q),
                                "eps0": args.eps0,
                                "T": T,
                                "delta": delta,
                                "epsilon_before": b,
                                "epsilon_after": a,
                                "cpu_before": round(cpu_before, 2),
                                "cpu_after": round(cpu_after, 2),
                            }
                        )
                    handle.flush()
                    print(
                        f"k={k} q={q} T={T}: before {before} ({cpu_before:.1f} s) after {after} ({cpu_after:.1f} s)",
                        flush=True,
                    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
