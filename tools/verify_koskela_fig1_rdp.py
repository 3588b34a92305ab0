"""Verify Koskela, Heikkilä & Honkela's Fig. 1 "RDP" curves against our numerical RDP.

Runs ``get_RDP`` of their ``clones_comparison_fig1/delta_shuffler_renyi.py`` (loaded by
``tools/_peer_functions.py``; nothing copied) at their parameters (lines 120-137: n = 1e4, eps0 = 4,
orders 2..256) and compares, order by order, with

* ours: D_lambda of the same pair (:func:`shuffledp.accounting.views.clones.rdp.clones_log_moments`, exact in
  log space; the pair of ``clones-krr`` at k = 2);
* what their lines 110 and 114 compute, recomputed from our exact moments: line 110 adds
  exp(log p + lambda log(p / q)) = p^(lambda + 1) q^-lambda, the moment of order lambda + 1, and line 114
  divides its log by lambda - 1, so their "RDP of order lambda" is log M_(lambda + 1) / (lambda - 1) =
  lambda / (lambda - 1) D_(lambda + 1), not D_lambda = log M_lambda / (lambda - 1);
* the same, summed only over the atoms their loops visit (lines 63-65, 72, 77-81: Hoeffding windows with
  tol_ = 50 and no atom with b = 0), which is what their get_RDP returns below the float overflow of
  line 110 (no logsumexp, line 112).

Then converts each by Canonne et al.'s formula (their lines 146-173; ours: numerics.rdp_conversion.rdp_to_log_delta) for
n_c = 1..4 on their 60 epsilons and writes ``src/shuffledp/reference/koskela_fig1_rdp_check.csv``.

    python tools/verify_koskela_fig1_rdp.py /path/to/numerical-shuffler-experiments [--commit SHA]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _peer_functions import PEER_COMMIT, load_functions, quiet
from transcribe_koskela import _NumpyOnly

from shuffledp.accounting.numerics.rdp_conversion import rdp_to_log_delta
from shuffledp.accounting.params import ShuffleSetting
from shuffledp.accounting.views.clones.rdp import clones_atoms, clones_log_moments, log_moments
from shuffledp.io import atomic_write_csv

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "src" / "shuffledp" / "reference" / "koskela_fig1_rdp_check.csv"
SCRIPT = "clones_comparison_fig1/delta_shuffler_renyi.py"
COLUMNS = ["quantity", "variant", "compositions", "x", "value", "source"]
N, EPS0, ALPHA_MAX = 10_000, 4.0, 256  # their lines 120-121, 137
EPSILONS = np.linspace(0.1, 1.0, 60)  # their lines 122-123


def _visited_atoms():
    """(c, x) of the atoms get_RDP sums: rows i in [lo_i, hi_i) (Hoeffding, tol_ = 50, lines 63-65, 72),
    j in [lo_j, hi_j) (lines 77-81; the end is excluded, so b = i - j >= 1 and a = j + 1 >= 1); their state
    (a, b) is our (c, x) = (i, a)."""
    p, tol = 2.0 / (1.0 + np.exp(EPS0)), 50
    lo_i = int(max(0, np.floor((N - 1) * (p - np.sqrt(tol / (2 * (N - 1)))))))
    hi_i = int(min(N, np.ceil((N - 1) * (p + np.sqrt(tol / (2 * (N - 1)))))))
    cs, xs = [], []
    for i in range(lo_i, hi_i):
        lo_j = int(max(0, np.floor(i * (0.5 - np.sqrt(tol / (2 * (i + 1)))))))
        hi_j = int(min(i, np.ceil(i * (0.5 + np.sqrt(tol / (2 * (i + 1)))))))
        js = np.arange(lo_j, hi_j)
        cs.append(np.full(js.size, float(i)))
        xs.append(js + 1.0)
    return np.concatenate(cs), np.concatenate(xs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("checkout", type=Path)
    parser.add_argument("--commit", default=PEER_COMMIT)
    args = parser.parse_args()
    start = time.perf_counter()
    ns = load_functions(args.checkout / SCRIPT)
    theirs, alphas = quiet(ns["get_RDP"], N, EPS0, int(1e7), 20, alpha_max=ALPHA_MAX)
    print(f"their get_RDP: {time.perf_counter() - start:.0f} s", flush=True)
    orders = np.arange(2, ALPHA_MAX + 2, dtype=float)
    moments = clones_log_moments(
        ShuffleSetting(epsilon_local=EPS0, n_users=N, k=2), False, orders
    )  # log M_lambda, lambda = 2..257
    ours = moments[:-1] / (orders[:-1] - 1.0)
    their_line = moments[1:] / (orders[:-1] - 1.0)  # log M_(lambda + 1) / (lambda - 1)
    visited = log_moments(
        *clones_atoms(*_visited_atoms(), ShuffleSetting(epsilon_local=EPS0, n_users=N, k=2), False), orders
    )[1:] / (orders[:-1] - 1.0)
    rows = []
    tag = f" @ {args.commit[:12]}"
    for variant, values, source in (
        ("their get_RDP", theirs, SCRIPT + " lines 48-116" + tag),
        ("ours D_lambda", ours, "shuffledp.accounting.views.clones.rdp"),
        (
            "lines 110, 114 recomputed: log M_(lambda+1) / (lambda - 1)",
            their_line,
            "shuffledp.accounting.views.clones.rdp (their lines 110, 114)",
        ),
        (
            "lines 110, 114 recomputed on the atoms their loops visit",
            visited,
            "shuffledp.accounting.views.clones.rdp (their lines 63-65, 72, 77-81, 110, 114)",
        ),
    ):
        rows += [
            ["rdp", variant, 1, int(a), repr(float(v)), source] for a, v in zip(alphas, values, strict=True)
        ]
        for nc in (1, 2, 3, 4):
            delta = np.exp(rdp_to_log_delta(alphas, nc * np.asarray(values, dtype=float), EPSILONS))
            rows += [
                ["delta", variant, nc, repr(float(e)), repr(float(d)), source]
                for e, d in zip(EPSILONS, delta)
            ]
    for nc, suffix in ((1, ""), (2, "2"), (3, "3"), (4, "4")):
        name = f"clones_comparison_fig1/pickles/deltas_feldman{suffix}.p"
        with open(args.checkout / name, "rb") as handle:
            stored = np.asarray(_NumpyOnly(handle).load(), dtype=float)
        rows += [
            ["delta", "stored", nc, repr(float(e)), repr(float(d)), name + tag]
            for e, d in zip(EPSILONS, stored)
        ]
    atomic_write_csv(OUT, COLUMNS, rows)
    print(f"{len(rows)} rows -> {OUT} ({time.perf_counter() - start:.0f} s)")


if __name__ == "__main__":
    main()
