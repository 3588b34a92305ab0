"""Benchmark: our k-RR accountants side by side with Wang et al.'s public accountant.

Peer: Wang et al., "Privacy Amplification via Shuffling: Unified, Simplified, and Tightened"
(VLDB 2024), repository ``wangsw/PrivacyAmplification``, module ``unifiedamplification.py``. Their
code is NOT part of this repository: point this script at a checkout of it and it is imported at run
time (nothing is copied). Get one with the search tool's ``fetch`` and, for example,
``git --git-dir=<mirror>/repo archive HEAD | tar -x -C <dir>``.

How their k-RR bound is called (their README, "general RR on d options", and their
``computeUBParameters(epsilon, "krr", k)``): p = e^eps0, beta = (e^eps0 - 1)/(e^eps0 + k - 1),
q0 = q1 = e^eps0; ``amplificationUB(p, beta, q0, q1, n, delta, T)`` bisects T times on [0, eps0]
and returns the upper end (their default T = 12 resolves eps only to eps0 / 4096, i.e. ~10% at
n = 10^6, so T is a parameter here, default 20). Their delta at a given eps is
``Delta(eps, alpha, r0, r1, n, p, tol)`` with alpha = beta / (p - 1), r0 = alpha p / q0,
r1 = alpha p / q1, to which amplificationUB adds tol * n; here tol = 1e-19, the smallest their code
uses.

Part 1 (grid): for n in {10^4, 10^5, 10^6}, k in {10, 100}, eps0 in {1, 2, 4}: eps at delta = 1e-6
and wall / CPU seconds for theirs, ``feldman-numerical``, ``strong-adversary``, and -- when
registered -- ``weak-adversary`` and ``worst-case-lower`` (otherwise reported "not registered").
Writes results/benchmarks/peers_krr.csv and prints a side-by-side table.

Part 2 (tiny): their delta against the brute-force worst case over every dataset of the other
n - 1 users, both directions (tests/accounting/brute_force.py, 50-digit enumeration), for
n = 2..8, k = 2..4, eps0 in {0.5, 1, 2, 4}, eps < eps0. Cases where theirs falls below the true
worst case by more than a relative 1e-9 -- i.e. where their "upper bound" is not one -- go to
results/benchmarks/peers_krr_tiny.csv; the count checked is printed.

Part 3 (moderate n): their delta and their eps at delta = 1e-6 against the exact full-histogram
delta of one explicit dataset, "every other user holds x0" (``histogram-exact`` with n_x0 = n - 1,
both directions; validated against brute force and an mpmath reference in the tests), for
n in {50, 100, 300}, k in {10, 100}, eps0 in {1, 2, 4}. Any valid upper bound must be >= it.
Writes results/benchmarks/peers_krr_moderate.csv (every row, flagged).

Run: python benchmarks/bench_peers_krr.py --wang <dir> [--steps 20] [--skip-grid] [--skip-tiny]
     [--skip-moderate]
     (or set WANG_PRIVACY_AMPLIFICATION=<dir> instead of --wang).
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import os
import platform
import sys
import time
from functools import partial
from pathlib import Path

import numpy as np
import pandas as pd

from shuffledp.accounting import get_accountant, list_accountants
from shuffledp.io import atomic_write_text

ROOT = Path(__file__).resolve().parents[1]
OUTPUT = ROOT / "results" / "benchmarks" / "peers_krr.csv"
OUTPUT_TINY = ROOT / "results" / "benchmarks" / "peers_krr_tiny.csv"
OUTPUT_MODERATE = ROOT / "results" / "benchmarks" / "peers_krr_moderate.csv"
ENVIRONMENT_VARIABLE = "WANG_PRIVACY_AMPLIFICATION"
MODULE_FILE = "unifiedamplification.py"

DELTA = 1e-6
USERS = (10**4, 10**5, 10**6)
DOMAINS = (10, 100)
LOCAL_EPSILONS = (1.0, 2.0, 4.0)
OURS = ("feldman-numerical", "strong-adversary", "weak-adversary", "worst-case-lower")
PEER = "wang-vldb24-upper"

TINY_USERS = range(2, 9)
TINY_DOMAINS = (2, 3, 4)
TINY_LOCAL_EPSILONS = (0.5, 1.0, 2.0, 4.0)
TINY_EPSILONS = (0.0, 0.1, 0.25, 0.5, 0.75, 1.0, 1.5, 3.0)
PEER_TOLERANCE = 1e-19

MODERATE_USERS = (50, 100, 300)
MODERATE_DOMAINS = (10, 100)
MODERATE_LOCAL_EPSILONS = (1.0, 2.0, 4.0)
MODERATE_FRACTIONS = (0.25, 0.5, 0.75, 0.875, 0.95)  # eps / eps0


def load_peer(path) -> object:
    """Import their ``unifiedamplification`` module from a checkout directory (or the file itself)."""
    path = Path(path).expanduser().resolve()
    module_path = path / MODULE_FILE if path.is_dir() else path
    if not module_path.is_file():
        raise SystemExit(f"no {MODULE_FILE} under {path}: pass --wang DIR or set {ENVIRONMENT_VARIABLE}.")
    spec = importlib.util.spec_from_file_location("unifiedamplification", module_path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.__file_sha256__ = hashlib.sha256(module_path.read_bytes()).hexdigest()
    return module


def peer_epsilon(peer, n: int, k: int, eps0: float, delta: float, steps: int) -> float:
    p, beta, q0, q1 = peer.computeUBParameters(eps0, "krr", k)
    return float(peer.amplificationUB(p, beta, q0, q1, n, delta, steps))


def peer_delta(peer, n: int, k: int, eps0: float, eps: float, tol: float = PEER_TOLERANCE) -> float:
    """Their delta at eps, as amplificationUB tests it: Delta(...) + tol * n."""
    p, beta, q0, q1 = peer.computeUBParameters(eps0, "krr", k)
    alpha = beta / (p - 1)
    return float(peer.Delta(eps, alpha, alpha * p / q0, alpha * p / q1, n, p, tol)) + tol * n


def _timed(function):
    start, start_cpu = time.perf_counter(), time.process_time()
    value = function()
    return value, time.perf_counter() - start, time.process_time() - start_cpu


def machine_info() -> dict:
    return {
        "cpu_count": os.cpu_count(),
        "load_average_1min": os.getloadavg()[0],
        "python": platform.python_version(),
        "numpy": np.__version__,
        "platform": platform.platform(),
    }


def run_grid(peer, steps: int) -> pd.DataFrame:
    registered = set(list_accountants())
    rows = []
    for n in USERS:
        for k in DOMAINS:
            for eps0 in LOCAL_EPSILONS:
                base = {"n_users": n, "k": k, "epsilon_local": eps0, "delta": DELTA}
                load = os.getloadavg()[0]
                epsilon, wall, cpu = _timed(partial(peer_epsilon, peer, n, k, eps0, DELTA, steps))
                rows.append(
                    {
                        **base,
                        "method": PEER,
                        "epsilon": epsilon,
                        "seconds": wall,
                        "cpu_seconds": cpu,
                        "status": f"ok (T = {steps} bisection steps)",
                        "load_average_1min": load,
                    }
                )
                for name in OURS:
                    load = os.getloadavg()[0]
                    if name not in registered:
                        rows.append(
                            {
                                **base,
                                "method": name,
                                "epsilon": np.nan,
                                "seconds": np.nan,
                                "cpu_seconds": np.nan,
                                "status": "not registered",
                                "load_average_1min": load,
                            }
                        )
                        continue
                    try:
                        epsilon, wall, cpu = _timed(
                            lambda name=name, eps0=eps0, n=n, k=k: get_accountant(
                                name, epsilon_local=eps0, n_users=n, k=k
                            ).epsilon_for_delta(DELTA)
                        )
                        status = "ok"
                    except ValueError as error:  # e.g. no epsilon reaches delta
                        epsilon, wall, cpu, status = np.nan, np.nan, np.nan, f"error: {error}"
                    rows.append(
                        {
                            **base,
                            "method": name,
                            "epsilon": epsilon,
                            "seconds": wall,
                            "cpu_seconds": cpu,
                            "status": status,
                            "load_average_1min": load,
                        }
                    )
                print(f"n = {n:>8}, k = {k:>3}, eps0 = {eps0}: done", file=sys.stderr, flush=True)
    table = pd.DataFrame(rows)
    info = machine_info()
    table["cpu_count"] = info["cpu_count"]
    table["peer_module_sha256"] = peer.__file_sha256__
    return table


def side_by_side(table: pd.DataFrame) -> pd.DataFrame:
    wide = table.pivot_table(
        index=["n_users", "k", "epsilon_local"],
        columns="method",
        values=["epsilon", "seconds"],
        aggfunc="first",
        dropna=False,
    )
    columns = [m for m in [PEER, *OURS] if m in table["method"].unique()]
    out = pd.DataFrame(index=wide.index)
    for method in columns:
        out[f"eps {method}"] = wide.get(("epsilon", method), np.nan)
        out[f"s {method}"] = wide.get(("seconds", method), np.nan)
    return out.reset_index()


def run_tiny(peer) -> tuple[pd.DataFrame, int]:
    """Their delta vs the brute-force worst case over every dataset; returns (violations, number checked)."""
    sys.path.insert(0, str(ROOT / "tests" / "accounting"))  # the test suite's brute-force reference
    from brute_force import true_worst_case_delta

    rows, checked = [], 0
    for n in TINY_USERS:
        for k in TINY_DOMAINS:
            for eps0 in TINY_LOCAL_EPSILONS:
                for eps in TINY_EPSILONS:
                    if eps >= eps0:
                        continue
                    worst = true_worst_case_delta(eps, eps0, n, k)
                    theirs = peer_delta(peer, n, k, eps0, eps)
                    checked += 1
                    if theirs < float(worst.delta) * (1 - 1e-9):
                        rows.append(
                            {
                                "n_users": n,
                                "k": k,
                                "epsilon_local": eps0,
                                "epsilon": eps,
                                "peer_delta": theirs,
                                "true_worst_case_delta": float(worst.delta),
                                "ratio_true_over_peer": float(worst.delta) / theirs if theirs > 0 else np.inf,
                                "worst_dataset_counts": " ".join(map(str, worst.others)),
                                "worst_direction": worst.direction,
                            }
                        )
    return pd.DataFrame(rows), checked


def run_moderate(peer, steps: int) -> pd.DataFrame:
    """Their delta / eps against the exact delta of the dataset "every other user holds x0"."""
    rows = []
    for n in MODERATE_USERS:
        for k in MODERATE_DOMAINS:
            for eps0 in MODERATE_LOCAL_EPSILONS:
                exact = get_accountant(
                    "histogram-exact", epsilon_local=eps0, n_users=n, k=k, n_x0=n - 1, direction="both"
                )
                base = {"n_users": n, "k": k, "epsilon_local": eps0}
                for fraction in MODERATE_FRACTIONS:
                    eps = fraction * eps0
                    truth, theirs = float(exact.delta_for_epsilon(eps)[0]), peer_delta(peer, n, k, eps0, eps)
                    rows.append(
                        {
                            **base,
                            "quantity": "delta at eps",
                            "epsilon": eps,
                            "delta": np.nan,
                            "peer": theirs,
                            "exact_all_on_x0": truth,
                            "peer_below_exact": theirs < truth * (1 - 1e-9),
                        }
                    )
                theirs = peer_epsilon(peer, n, k, eps0, DELTA, steps)
                truth = exact.epsilon_for_delta(DELTA)
                rows.append(
                    {
                        **base,
                        "quantity": "eps at delta",
                        "epsilon": np.nan,
                        "delta": DELTA,
                        "peer": theirs,
                        "exact_all_on_x0": truth,
                        "peer_below_exact": theirs < truth - 1e-9,
                    }
                )
    return pd.DataFrame(rows)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--wang",
        default=os.environ.get(ENVIRONMENT_VARIABLE),
        help=f"checkout of wangsw/PrivacyAmplification (or ${ENVIRONMENT_VARIABLE})",
    )
    parser.add_argument("--steps", type=int, default=20, help="their bisection steps T (their default: 12)")
    parser.add_argument("--skip-grid", action="store_true")
    parser.add_argument("--skip-tiny", action="store_true")
    parser.add_argument("--skip-moderate", action="store_true")
    arguments = parser.parse_args(argv)
    if not arguments.wang:
        parser.error(f"pass --wang DIR or set {ENVIRONMENT_VARIABLE}")
    peer = load_peer(arguments.wang)
    info = machine_info()
    print("machine:", ", ".join(f"{key} = {value}" for key, value in info.items()))
    if not arguments.skip_grid:
        table = run_grid(peer, arguments.steps)
        atomic_write_text(OUTPUT, table.to_csv(index=False))
        with pd.option_context(
            "display.width", 250, "display.max_columns", 20, "display.float_format", lambda v: f"{v:.4g}"
        ):
            print(side_by_side(table).to_string(index=False))
        print(f"load average at the end: {os.getloadavg()[0]:.2f}; wrote {OUTPUT}")
    if not arguments.skip_tiny:
        violations, checked = run_tiny(peer)
        atomic_write_text(OUTPUT_TINY, violations.to_csv(index=False))
        print(
            f"tiny cases checked: {checked}; peer delta below the true worst case (rel. 1e-9): {len(violations)}"
        )
        if len(violations):
            with pd.option_context("display.width", 250, "display.max_columns", 20):
                print(
                    violations.sort_values("ratio_true_over_peer", ascending=False)
                    .head(15)
                    .to_string(index=False)
                )
        print(f"wrote {OUTPUT_TINY}")
    if not arguments.skip_moderate:
        moderate = run_moderate(peer, arguments.steps)
        atomic_write_text(OUTPUT_MODERATE, moderate.to_csv(index=False))
        below = moderate[moderate["peer_below_exact"]]
        print(
            f"moderate n: {len(moderate)} comparisons with the exact 'all others on x0' dataset; "
            f"peer below it in {len(below)}"
        )
        if len(below):
            with pd.option_context("display.width", 250, "display.max_columns", 20):
                print(below.to_string(index=False))
        print(f"wrote {OUTPUT_MODERATE}")


if __name__ == "__main__":
    main()
