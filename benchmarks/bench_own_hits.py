"""Own-value-hit views (k >= 4, small n): tiny cases against brute force, and the small-n bracket.

Part 1 (tiny cases): for k in {4, 5}, n in {3 .. 7} (k = 4) and {3 .. 6} (k = 5), eps0 in
{0.5, 1, 2, 4}, eps = (0.25, 0.5, 0.9) eps0, the true worst case over every dataset and both
directions (``tests/accounting/brute_force.py``, 50 digits) beside ``weak-adversary`` and
``worst-case-upper`` (now the own-value-hit bound); value / truth of each.

Part 2 (bracket at small n): epsilon at delta in {1e-6, 1e-9} of ``worst-case-lower``,
``worst-case-upper`` and ``weak-adversary`` for n in {10, 20, 30}, k in {4, 5, 10}, eps0 in
{0.5, 1, 2, 4}; ratio of each upper epsilon to the lower one, and the seconds of the upper search.

Writes results/benchmarks/own_hits_tiny.csv and own_hits_bracket.csv and prints a summary.
Run: python benchmarks/bench_own_hits.py   (about 5 minutes on 2 cores)
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "accounting"))

from brute_force import true_worst_case_delta  # noqa: E402

from shuffledp.accounting import get_accountant  # noqa: E402


def _delta(name: str, e0: float, n: int, k: int, eps: float) -> float:
    return float(get_accountant(name, epsilon_local=e0, n_users=n, k=k).delta_for_epsilon([eps])[0])


def tiny() -> pd.DataFrame:
    rows = []
    for k, ns in ((4, range(3, 8)), (5, range(3, 7))):
        for n in ns:
            for e0 in (0.5, 1.0, 2.0, 4.0):
                for f in (0.25, 0.5, 0.9):
                    eps = f * e0
                    truth = float(true_worst_case_delta(eps, e0, n, k).delta)
                    rows.append(
                        {
                            "k": k,
                            "n": n,
                            "epsilon_local": e0,
                            "epsilon": eps,
                            "truth": truth,
                            "weak_over_truth": _delta("weak-adversary", e0, n, k, eps) / truth,
                            "upper_over_truth": _delta("worst-case-upper", e0, n, k, eps) / truth,
                        }
                    )
    return pd.DataFrame(rows)


def bracket() -> pd.DataFrame:
    rows = []
    for n in (10, 20, 30):
        for k in (4, 5, 10):
            for e0 in (0.5, 1.0, 2.0, 4.0):
                for delta in (1e-6, 1e-9):
                    kw = {"epsilon_local": e0, "n_users": n, "k": k}
                    lower = get_accountant("worst-case-lower", **kw).epsilon_for_delta(delta)
                    start = time.perf_counter()
                    upper = get_accountant("worst-case-upper", **kw).epsilon_for_delta(delta)
                    seconds = time.perf_counter() - start
                    weak = get_accountant("weak-adversary", **kw).epsilon_for_delta(delta)
                    rows.append(
                        {
                            "n": n,
                            "k": k,
                            "epsilon_local": e0,
                            "delta": delta,
                            "lower": lower,
                            "upper": upper,
                            "weak": weak,
                            "upper_ratio": upper / lower,
                            "weak_ratio": weak / lower,
                            "upper_seconds": seconds,
                        }
                    )
                    print(rows[-1], flush=True)
    return pd.DataFrame(rows)


def main() -> None:
    out = ROOT / "results" / "benchmarks"
    out.mkdir(parents=True, exist_ok=True)
    t = tiny()
    t.to_csv(out / "own_hits_tiny.csv", index=False)
    print(
        f"tiny cases: {len(t)}; upper below truth in {(t.upper_over_truth < 1 - 1e-9).sum()}; "
        f"weak/truth max {t.weak_over_truth.max():.5f}, upper/truth max {t.upper_over_truth.max():.5f}; "
        f"upper < weak in {(t.upper_over_truth < t.weak_over_truth * (1 - 1e-9)).sum()}"
    )
    b = bracket()
    b.to_csv(out / "own_hits_bracket.csv", index=False)
    for name in ("weak_ratio", "upper_ratio"):
        print(
            f"{name}: max {b[name].max():.5f}; > 1.01 in {(b[name] > 1.01).sum()} of {len(b)}; "
            f"> 1.002 in {(b[name] > 1.002).sum()}"
        )
    print(f"upper search seconds: median {b.upper_seconds.median():.2f}, max {b.upper_seconds.max():.2f}")


if __name__ == "__main__":
    main()
