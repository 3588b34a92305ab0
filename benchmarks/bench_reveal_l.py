"""The rejected "reveal L" view of docs/worst-case-k3.md, beside the weak adversary and the truth.

The view: the adversary also learns L, the number of reports of the users outside {x0, x1} that fell
on x0 or x1. Then (h0, h1, L) is sufficient (the outside histogram given them has the same law in both
worlds), the view depends on the dataset only through (n_x0, n_x1), and its delta, maximised over every
(n_x0, n_x1), is a valid upper bound on the worst case (post-processing). This script evaluates it by
direct enumeration of (n_x0, n_x1, L) (laws built one user at a time, positive terms only) and compares
it, and ``weak-adversary``, with the brute-force worst case over every dataset
(``tests/accounting/brute_force.py``: 50-digit enumeration), on k in {4, 5}, n in {3, 5, 7},
eps0 in {0.5, 1, 2, 4}, eps = (0.25, 0.5, 0.9) eps0 (72 cells). Question asked: is min(weak, reveal-L)
ever below the weak adversary? (Measured: never; docs/worst-case-k3.md.)

Run: python benchmarks/bench_reveal_l.py   (about a minute)
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
from scipy.special import gammaln

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "accounting"))

from brute_force import true_worst_case_delta  # noqa: E402

from shuffledp.accounting import get_accountant  # noqa: E402
from shuffledp.accounting.worst_case.exact.enumeration import add_user  # noqa: E402


def reveal_l_delta(eps: float, n: int, k: int, e0: float) -> float:
    """max over (n_x0, n_x1) of sum_L Bin(m, 2q)(L) H_{e^eps}(P_L || Q_L) (forward; (b, a) is the reverse)."""
    big = math.exp(e0)
    q = 1.0 / (big + k - 1)
    p, e = big * q, math.exp(eps)
    best = 0.0
    for a in range(n):
        for b in range(n - a):
            m = n - 1 - a - b
            g = np.ones((1, 1))
            for _ in range(a):
                g = add_user(g, p, q, 1.0 - p - q)
            for _ in range(b):
                g = add_user(g, q, p, 1.0 - p - q)
            total = 0.0
            for L in range(m + 1):
                if L:
                    g = add_user(g, 0.5, 0.5, 0.0)  # one more outside user's report on x0 or x1
                weight = math.exp(
                    gammaln(m + 1)
                    - gammaln(L + 1)
                    - gammaln(m - L + 1)
                    + L * math.log(2 * q)
                    + (m - L) * math.log1p(-2 * q)
                )
                shape = (g.shape[0] + 1, g.shape[1] + 1)
                g0, g1, gc = np.zeros(shape), np.zeros(shape), np.zeros(shape)
                g0[1:, :-1], g1[:-1, 1:], gc[:-1, :-1] = g, g, g
                P = p * g0 + q * g1 + (k - 2) * q * gc
                Q = q * g0 + p * g1 + (k - 2) * q * gc
                total += weight * np.maximum(P - e * Q, 0.0).sum()
            best = max(best, total)
    return best


def main() -> int:
    cells = below = 0
    for k in (4, 5):
        for n in (3, 5, 7):
            for e0 in (0.5, 1.0, 2.0, 4.0):
                for f in (0.25, 0.5, 0.9):
                    eps = f * e0
                    truth = float(true_worst_case_delta(eps, e0, n, k).delta)
                    weak = float(
                        get_accountant("weak-adversary", epsilon_local=e0, n_users=n, k=k).delta_for_epsilon(
                            [eps]
                        )[0]
                    )
                    reveal = reveal_l_delta(eps, n, k, e0)
                    cells += 1
                    below += reveal < weak
                    print(
                        f"k={k} n={n} eps0={e0} eps={eps:.3g}: truth {truth:.4g}  weak/truth {weak / truth:.4f}  "
                        f"reveal-L/truth {reveal / truth:.4f}",
                        flush=True,
                    )
    print(f"reveal-L below weak-adversary in {below} of {cells} cells")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
