"""Check (the peer grid of bench_peers_lower.py): where Wang et al.'s k-RR "upper bound" falls below our certified lower
bound at n = 10^4, is one dataset's delta really above it? Computed here without shuffledp.

The dataset: the differing user u holds x0 (D) or x1 (D'), every other user holds x2. Its exact
histogram delta is sum_h (P(h) - e^eps Q(h))_+ over the counts (h0, h1, h2) (the other k - 3 values
are uniform given their total under both, so these counts are sufficient). P and Q are built from the
others' four-cell multinomial law (q, q, p, (k - 3) q) over a window of +-12 standard deviations per
count (log factorials from scipy.special.gammaln), shifted by u's report, one value of h0 at a time. Every term is positive, so leaving the rest of the
support out makes the value SMALLER: a window value above Wang's number shows that number is not an
upper bound on the worst case over datasets. (The rounding of the float sum is ~1e-16 of the mass.)

Printed and written (results/benchmarks/wang_direct_check.csv) beside Wang's upper delta
(Delta + 1e-19 n, their code loaded from a checkout by bench_peers_krr.load_peer) and our
``worst-case-lower`` (the maximum over its datasets, this one included for k >= 4).

Run: python benchmarks/check_wang_direct.py --wang DIR
"""

from __future__ import annotations

import argparse
import csv
import math
import sys
from pathlib import Path

import numpy as np
from scipy.special import gammaln

HERE = Path(__file__).resolve().parent
OUTPUT = HERE.parent / "results" / "benchmarks" / "wang_direct_check.csv"
CELLS = [(10**4, 10, 1.0), (10**4, 10, 2.0), (10**4, 10, 4.0), (10**4, 100, 2.0), (10**4, 100, 4.0)]
EPSILONS = (0.02, 0.04, 0.1, 0.2, 0.5)  # among the 50 eps of the goals table


def _window(mean: float, sd: float, top: int) -> np.ndarray:
    return np.arange(max(0, int(mean - 12 * sd)), min(top, int(mean + 12 * sd) + 1) + 1)


def direct_deltas(n: int, k: int, e0: float, epsilons) -> tuple[list[float], float]:
    """(delta at each eps, mass of P on the window) of the dataset (module doc), one slab of h0 at a time."""
    E = math.exp(e0)
    p, q, m = E / (E + k - 1), 1.0 / (E + k - 1), n - 1
    c01, c2 = _window(m * q, math.sqrt(m * q), m), _window(m * p, math.sqrt(m * p * (1 - p)), m)
    log_factorial = gammaln(np.arange(n + 1, dtype=float) + 1.0)
    b, c = c01[:, None], c2[None, :]

    def law(a: int) -> np.ndarray:  # others' law at c0 = a, over (c1, c2) in the window; 0 outside
        if a < c01[0] or a > c01[-1]:
            return np.zeros((c01.size, c2.size))
        rest = m - a - b - c
        ok = rest >= 0
        rest = np.where(ok, rest, 0)
        log = (
            log_factorial[m]
            - log_factorial[a]
            - log_factorial[b]
            - log_factorial[c]
            - log_factorial[rest]
            + (a + b) * math.log(q)
            + c * math.log(p)
            + rest * math.log((k - 3) * q)
        )
        return np.where(ok, np.exp(np.where(ok, log, -np.inf)), 0.0)

    def shift(g: np.ndarray, axis: int | None) -> np.ndarray:  # u's report adds one to (c1, c2) on axis
        out = np.zeros((g.shape[0] + 1, g.shape[1] + 1))
        index = [slice(0, -1), slice(0, -1)]
        if axis is not None:
            index[axis] = slice(1, None)
        out[tuple(index)] = g
        return out

    totals, mass = np.zeros(len(epsilons)), 0.0
    for h0 in range(int(c01[0]), int(c01[-1]) + 2):
        below, here = law(h0 - 1), law(h0)  # u reported x0 / anything else
        common = q * shift(here, 1) + (k - 3) * q * shift(here, None)
        P = p * shift(below, None) + q * shift(here, 0) + common
        Q = q * shift(below, None) + p * shift(here, 0) + common
        mass += float(P.sum())
        for i, eps in enumerate(epsilons):
            totals[i] += float(np.sum(np.maximum(P - math.exp(eps) * Q, 0.0)))
    return list(totals), mass


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--wang", required=True, help="checkout of wangsw/PrivacyAmplification")
    parser.add_argument("--out", default=str(OUTPUT))
    arguments = parser.parse_args(argv)
    sys.path.insert(0, str(HERE))
    from bench_peers_krr import load_peer, peer_delta

    from shuffledp.accounting import get_accountant

    peer, rows = load_peer(arguments.wang), []
    for n, k, e0 in CELLS:
        epsilons = [eps for eps in EPSILONS if eps < e0]
        deltas, mass = direct_deltas(n, k, e0, epsilons)
        lower = get_accountant("worst-case-lower", n_users=n, k=k, epsilon_local=e0)
        for eps, direct in zip(epsilons, deltas):
            wang = peer_delta(peer, n, k, e0, eps)
            ours = math.exp(lower.log_delta_for_epsilon([eps])[0])
            row = {
                "n": n,
                "k": k,
                "eps0": e0,
                "eps": eps,
                "direct_one_dataset": direct,
                "wang_upper": wang,
                "ours_worst_case_lower": ours,
                "window_mass_P": mass,
                "wang_below_direct": wang < direct * (1 - 1e-12),
            }
            rows.append(row)
            print(
                "  ".join(
                    f"{key}={value:.10g}" if isinstance(value, float) else f"{key}={value}"
                    for key, value in row.items()
                ),
                flush=True,
            )
    Path(arguments.out).parent.mkdir(parents=True, exist_ok=True)
    with open(arguments.out, "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    print(
        f"wrote {arguments.out}; Wang below the direct value in {sum(r['wang_below_direct'] for r in rows)} "
        f"of {len(rows)}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
