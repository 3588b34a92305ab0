"""Benchmark: k >= 3 peers side by side with our certified bracket, in one run.

Peers (imported at run time from checkouts; nothing of theirs is copied into this repository):

* Wang et al., "Privacy Amplification via Shuffling: Unified, Simplified, and Tightened" (VLDB 2024),
  ``wangsw/PrivacyAmplification``, ``unifiedamplification.py``. Their k-RR parameters come from
  ``computeUBParameters(eps0, "krr", k)``; ``amplificationUB`` bisects on ``Delta(...) + tol * n > delta``
  and ``amplificationLB`` on ``Delta(...) > delta`` (their lines 61-98), so their upper delta at eps is
  ``Delta + tol * n`` and their lower delta is ``Delta``; tol = 1e-19, the smallest their code uses.
  n is the number of users (``Delta`` takes a Binomial(n - 1, .) over the others).
* Su, Cheng & Wang, "Decomposition-Based Optimal Bounds for Privacy Amplification via Shuffling"
  (arXiv 2504.07414), ``Optimal-amplification-bound/Decomposition-Based-Optimal-Bounds-for-Shuffle-DP``:
  upper = ``FFTbound(RRMechanism(eps0, k)).get_delta(eps, eps0, n)``, lower =
  ``FFTLowerBound(RRMechanism_lowerbound(eps0, k)).get_delta(eps, eps0, n)`` (amplification_bounds.py,
  mechanisms.py; their test.py builds them this way). Their code imports CuPy; it runs on the CPU
  through ``benchmarks/peers/cupy_standin`` (a module that re-exports numpy), put on sys.path only here.
  n is the number of users, the victim included (checked: at n = 1 their upper delta is k-RR's own
  delta; at n = 2 their lower bound equals the exact delta of "the one other user holds x2" to within
  their grid; docs/decisions/weak-adversary.md). Their grid step is
  (e^eps0 - 1) / 1200 (upper: losses rounded up; lower: rounded down); ``threshold_delta`` clamps every
  delta into [1e-11, 1] (tol_delta = 10 * 1e-12), so a value of exactly 1e-11 is their floor, not a
  computed delta. The FFT is float64: an absolute error of order 1e-16 times the grid length is possible.

Part 1 (grid): n in {50, 100, 200}, k in {3, 4, 10}, eps0 in {1, 2, 4}, eps = (0.25, 0.5, 0.75) eps0:
log delta of our ``worst-case-lower``, ``worst-case-upper`` and ``weak-adversary``, Wang's UB / LB and
SCW's upper / lower, with wall seconds for each. A peer's upper bound below our certified lower bound
(by more than 1e-9 in log) is not an upper bound on the worst case over datasets there; a peer's lower
bound above our certified upper bound (``worst-case-upper``) is not a lower bound. Also counted: valid
inside our bracket and tighter than our end (upper below our upper; lower above our lower): not
refuted by our bracket, not certified by it either. SCW is skipped at a cell whose
FFT length would exceed ``--scw-max-length`` (recorded as skipped).
Writes results/benchmarks/peers_k3plus.csv.

Part 2 (tiny): every peer against the brute-force worst case over every dataset (tests/accounting/
brute_force.py, 30 digits) for n = 2..6, k in {3, 4}, eps0 in {0.5, 1, 2, 4}, eps = (0.1, 0.5, 0.9) eps0.
Writes results/benchmarks/peers_k3plus_tiny.csv.

Part 3 (``--eps-at-delta D``, instead of parts 1 and 2): epsilon at delta = D through each peer's own
search (Wang ``amplificationUB`` / ``amplificationLB`` with ``--steps`` bisection steps, SCW ``get_eps``)
beside our ``epsilon_for_delta``; the verdicts allow each search's resolution in the peer's favour.

Run: python benchmarks/bench_peers_k3plus.py --wang <dir> --scw <dir> [--users 50 100 200] [--skip-tiny]
     (or WANG_PRIVACY_AMPLIFICATION=<dir>, SCW_DECOMPOSITION=<dir>)
"""

from __future__ import annotations

import argparse
import importlib
import math
import os
import sys
import time
from functools import partial
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

from bench_peers_krr import load_peer, machine_info, peer_delta  # noqa: E402

from shuffledp.accounting import get_accountant  # noqa: E402
from shuffledp.io import atomic_write_text  # noqa: E402

OUTPUT = ROOT / "results" / "benchmarks" / "peers_k3plus.csv"
OUTPUT_TINY = ROOT / "results" / "benchmarks" / "peers_k3plus_tiny.csv"
STANDIN = HERE / "peers" / "cupy_standin"
OURS = ("worst-case-lower", "worst-case-upper", "weak-adversary")
WANG_TOL = 1e-19
SCW_FLOOR = 1e-11  # their ShuffleAmplificationBound.tol_delta = 10 * tol_opt, tol_opt = 1e-12
MARGIN = 1e-9  # in log delta


def load_scw(path):
    """Import SCW's amplification_bounds / mechanisms with the CuPy stand-in first on sys.path."""
    path = Path(path).expanduser().resolve()
    if not (path / "amplification_bounds.py").is_file():
        raise SystemExit(f"--scw must name a checkout holding amplification_bounds.py; got {path}.")
    sys.path[:0] = [str(STANDIN), str(path)]
    try:
        bounds, mechanisms = (
            importlib.import_module("amplification_bounds"),
            importlib.import_module("mechanisms"),
        )
    finally:
        del sys.path[:2]
    assert bounds.cp.__file__.startswith(str(STANDIN)), "SCW must run on the numpy stand-in"
    return bounds, mechanisms


def scw_fft_length(eps, eps0, n, k, mechanisms, lower):
    """Length of SCW's FFT at this point (their fft_compute: 1 << bit_length(n (N - 1)))."""
    mech = mechanisms.RRMechanism_lowerbound(eps0, k) if lower else mechanisms.RRMechanism(eps0, k)
    support, _ = mech.get_gparv_distribution(eps)
    step = (math.exp(eps0) - 1) / 1200
    rounding = math.floor if lower else math.ceil
    grid = [rounding(x / step) for x in support]
    return 1 << int(n * (max(grid) - min(grid))).bit_length()


def scw_deltas(scw, eps, eps0, n, k):
    bounds, mechanisms = scw
    upper = bounds.FFTbound(mechanisms.RRMechanism(eps0, k)).get_delta(eps, eps0, n)
    lower = bounds.FFTLowerBound(mechanisms.RRMechanism_lowerbound(eps0, k)).get_delta(eps, eps0, n)
    return float(upper), float(lower)


def _timed(function):
    start = time.perf_counter()
    value = function()
    return value, time.perf_counter() - start


def _float(function, *args) -> float:
    """``function(*args)`` as a Python float (the peers return numpy scalars)."""
    return float(function(*args))


def _log(x: float) -> float:
    """log of a delta; nan (a skipped peer call) stays nan, 0 maps to -inf."""
    return math.nan if math.isnan(x) else (math.log(x) if x > 0 else -math.inf)


def grid_rows(wang, scw, users, domains, local_epsilons, fractions, max_length):
    rows = []
    for n in users:
        for k in domains:
            for e0 in local_epsilons:
                ours = {name: get_accountant(name, epsilon_local=e0, n_users=n, k=k) for name in OURS}
                for fraction in fractions:
                    eps = fraction * e0
                    row = {"n": n, "k": k, "eps0": e0, "eps": eps}
                    for name, accountant in ours.items():
                        value, seconds = _timed(
                            lambda a=accountant, eps=eps: float(a.log_delta_for_epsilon(eps)[0])
                        )
                        row[f"log_delta_{name}"], row[f"s_{name}"] = value, seconds
                    wang_delta, row["s_wang"] = _timed(partial(peer_delta, wang, n, k, e0, eps, WANG_TOL))
                    row["log_delta_wang_ub"] = _log(wang_delta)
                    row["log_delta_wang_lb"] = _log(wang_delta - WANG_TOL * n)
                    length = max(scw_fft_length(eps, e0, n, k, scw[1], lower) for lower in (False, True))
                    row["scw_fft_length"] = length
                    if length <= max_length:
                        (up, lo), row["s_scw"] = _timed(partial(scw_deltas, scw, eps, e0, n, k))
                    else:
                        up, lo, row["s_scw"] = math.nan, math.nan, math.nan
                    row["log_delta_scw_up"], row["log_delta_scw_lo"] = _log(up), _log(lo)
                    row["scw_lo_at_floor"] = lo == SCW_FLOOR
                    rows.append(row)
                    print(_describe(row), flush=True)
    return pd.DataFrame(rows)


def _describe(row) -> str:
    def d(key):
        return f"{math.exp(row[key]):.4e}" if np.isfinite(row[key]) else str(row[key])

    return (
        f"n={row['n']} k={row['k']} eps0={row['eps0']:g} eps={row['eps']:.3g}: ours lower {d('log_delta_worst-case-lower')}"
        f" upper {d('log_delta_worst-case-upper')} weak {d('log_delta_weak-adversary')} | Wang UB "
        f"{d('log_delta_wang_ub')} LB {d('log_delta_wang_lb')} | SCW up {d('log_delta_scw_up')} lo "
        f"{d('log_delta_scw_lo')} ({row['s_scw']:.1f} s, FFT {row['scw_fft_length']})"
    )


def verdicts(frame: pd.DataFrame) -> pd.DataFrame:
    """Per peer and kind: cells run; invalid (an upper bound below our certified lower bound, a lower
    bound above our certified upper bound), of which at SCW's 1e-11 floor; inside our bracket and
    tighter than our own end (not refuted by our bracket, not certified by it either; floor values
    excluded); and the rest (as loose as ours or looser)."""
    ours_lo, ours_up = frame["log_delta_worst-case-lower"], frame["log_delta_worst-case-upper"]
    out = []
    for peer, column, kind in (
        ("Wang UB", "log_delta_wang_ub", "upper"),
        ("Wang LB", "log_delta_wang_lb", "lower"),
        ("SCW upper", "log_delta_scw_up", "upper"),
        ("SCW lower", "log_delta_scw_lo", "lower"),
    ):
        theirs = frame[column]
        ran = theirs.notna() & (frame["s_scw"].notna() if column.startswith("log_delta_scw") else True)
        at_floor = (
            np.isclose(np.exp(theirs), SCW_FLOOR, rtol=1e-12, atol=0)
            if column.startswith("log_delta_scw")
            else pd.Series(False, index=frame.index)
        )
        if kind == "upper":
            invalid = ran & (theirs < ours_lo - MARGIN)
            tighter = ran & ~invalid & ~at_floor & (theirs < ours_up - MARGIN)
        else:
            invalid = ran & (theirs > ours_up + MARGIN)
            tighter = ran & ~invalid & ~at_floor & (theirs > ours_lo + MARGIN)
        out.append(
            {
                "peer": peer,
                "kind": kind,
                "cells": int(ran.sum()),
                "invalid": int(invalid.sum()),
                "invalid_at_their_floor": int((invalid & at_floor).sum()),
                "inside_bracket_tighter": int(tighter.sum()),
                "as_loose_or_looser": int((ran & ~invalid & ~tighter).sum()),
            }
        )
    return pd.DataFrame(out)


def tiny_rows(wang, scw):
    sys.path.insert(0, str(ROOT / "tests" / "accounting"))
    import brute_force as bf

    rows = []
    for k, users in ((3, range(2, 7)), (4, range(2, 6))):
        for n in users:
            for e0 in (0.5, 1.0, 2.0, 4.0):
                for fraction in (0.1, 0.5, 0.9):
                    eps = fraction * e0
                    truth = float(bf.true_worst_case_delta(eps, e0, n, k, dps=30).delta)
                    wang_ub = peer_delta(wang, n, k, e0, eps, WANG_TOL)
                    up, lo = scw_deltas(scw, eps, e0, n, k)
                    ours = {
                        name: float(
                            get_accountant(name, epsilon_local=e0, n_users=n, k=k).delta_for_epsilon(eps)[0]
                        )
                        for name in OURS
                    }
                    rows.append(
                        {
                            "n": n,
                            "k": k,
                            "eps0": e0,
                            "eps": eps,
                            "truth": truth,
                            "wang_ub": wang_ub,
                            "wang_lb": wang_ub - WANG_TOL * n,
                            "scw_up": up,
                            "scw_lo": lo,
                            **ours,
                        }
                    )
    frame = pd.DataFrame(rows)
    for column, kind in (
        ("wang_ub", "upper"),
        ("wang_lb", "lower"),
        ("scw_up", "upper"),
        ("scw_lo", "lower"),
        ("worst-case-lower", "lower"),
        ("worst-case-upper", "upper"),
        ("weak-adversary", "upper"),
    ):
        bad = (
            (frame[column] < frame["truth"] * (1 - 1e-9))
            if kind == "upper"
            else (frame[column] > frame["truth"] * (1 + 1e-9))
        )
        frame[f"{column}_invalid"] = bad
        ratio = frame[column] / frame["truth"]
        print(
            f"tiny: {column:18s} ({kind}) invalid in {int(bad.sum())} of {len(frame)}; value / truth in "
            f"[{ratio.min():.6f}, {ratio.max():.6f}]"
        )
    return frame


def eps_rows(wang, scw, users, domains, local_epsilons, delta, steps):
    """Epsilon at ``delta`` through each peer's own search: Wang's amplificationUB / amplificationLB
    (``steps`` bisection steps on [0, eps0]; UB returns the upper end, LB the lower end) and SCW's
    ``get_eps`` (bisection to 1e-5, returns the upper end for both of their bounds), beside ours."""
    bounds, mechanisms = scw
    rows = []
    for n in users:
        for k in domains:
            for e0 in local_epsilons:
                row = {"n": n, "k": k, "eps0": e0, "delta": delta}
                for name in OURS:
                    accountant = get_accountant(name, epsilon_local=e0, n_users=n, k=k)
                    row[f"eps_{name}"], row[f"s_{name}"] = _timed(
                        partial(accountant.epsilon_for_delta, delta)
                    )
                p, beta, q0, q1 = wang.computeUBParameters(e0, "krr", k)
                wang_args = (p, beta, q0, q1, n, delta, steps)
                row["eps_wang_ub"], row["s_wang_ub"] = _timed(
                    partial(_float, wang.amplificationUB, *wang_args)
                )
                row["eps_wang_lb"], row["s_wang_lb"] = _timed(
                    partial(_float, wang.amplificationLB, *wang_args)
                )
                up = bounds.FFTbound(mechanisms.RRMechanism(e0, k))
                lo = bounds.FFTLowerBound(mechanisms.RRMechanism_lowerbound(e0, k))
                row["eps_scw_up"], row["s_scw_up"] = _timed(partial(_float, up.get_eps, e0, n, delta))
                row["eps_scw_lo"], row["s_scw_lo"] = _timed(partial(_float, lo.get_eps, e0, n, delta))
                rows.append(row)
                print(
                    f"n={n} k={k} eps0={e0:g} delta={delta:g}: ours [{row['eps_worst-case-lower']:.6g}, "
                    f"{row['eps_worst-case-upper']:.6g}] weak {row['eps_weak-adversary']:.6g} | Wang UB "
                    f"{row['eps_wang_ub']:.6g} LB {row['eps_wang_lb']:.6g} | SCW up {row['eps_scw_up']:.6g} "
                    f"lo {row['eps_scw_lo']:.6g} ({row['s_scw_up'] + row['s_scw_lo']:.0f} s)",
                    flush=True,
                )
    return pd.DataFrame(rows)


def eps_verdicts(frame: pd.DataFrame, steps: int) -> pd.DataFrame:
    """As :func:`verdicts`, in epsilon; a peer's search resolution is allowed in its favour (Wang:
    eps0 / 2^steps, SCW: 1e-5), so 'invalid' needs a margin beyond it."""
    ours_lo, ours_up = frame["eps_worst-case-lower"], frame["eps_worst-case-upper"]
    out = []
    for peer, column, kind, slack in (
        ("Wang UB", "eps_wang_ub", "upper", frame["eps0"] / 2**steps),
        ("Wang LB", "eps_wang_lb", "lower", frame["eps0"] / 2**steps),
        ("SCW upper", "eps_scw_up", "upper", 1e-5),
        ("SCW lower", "eps_scw_lo", "lower", 1e-5),
    ):
        theirs = frame[column]
        invalid = theirs < ours_lo - slack if kind == "upper" else theirs > ours_up + slack
        tighter = ~invalid & ((theirs < ours_up - slack) if kind == "upper" else (theirs > ours_lo + slack))
        out.append(
            {
                "peer": peer,
                "kind": kind,
                "cells": len(frame),
                "invalid": int(invalid.sum()),
                "inside_bracket_tighter": int(tighter.sum()),
                "as_loose_or_looser": int((~invalid & ~tighter).sum()),
            }
        )
    return pd.DataFrame(out)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--wang", default=os.environ.get("WANG_PRIVACY_AMPLIFICATION"))
    parser.add_argument("--scw", default=os.environ.get("SCW_DECOMPOSITION"))
    parser.add_argument("--users", type=int, nargs="+", default=[50, 100, 200])
    parser.add_argument("--domains", type=int, nargs="+", default=[3, 4, 10])
    parser.add_argument("--local-epsilons", type=float, nargs="+", default=[1.0, 2.0, 4.0])
    parser.add_argument("--fractions", type=float, nargs="+", default=[0.25, 0.5, 0.75])
    parser.add_argument("--scw-max-length", type=int, default=1 << 24)
    parser.add_argument("--skip-tiny", action="store_true")
    parser.add_argument(
        "--eps-at-delta",
        type=float,
        help="instead of the grid: epsilon at this delta through "
        "each peer's own search (Wang amplificationUB/LB, SCW get_eps)",
    )
    parser.add_argument("--steps", type=int, default=20, help="Wang's bisection steps T (their default 12)")
    parser.add_argument("--from-csv", type=Path, help="only print the verdicts of an earlier run's CSV")
    parser.add_argument("--output", type=Path, default=OUTPUT, help="CSV of the grid (default %(default)s)")
    args = parser.parse_args(argv)
    if args.from_csv is not None:  # re-print the verdicts of a finished run
        print(verdicts(pd.read_csv(args.from_csv)).to_string(index=False))
        return 0
    if not args.wang or not args.scw:
        raise SystemExit(
            "--wang and --scw must name checkouts of the two peers' repositories; got "
            f"wang={args.wang!r}, scw={args.scw!r}."
        )
    wang, scw = load_peer(args.wang), load_scw(args.scw)
    if args.eps_at_delta is not None:
        table = eps_rows(
            wang, scw, args.users, args.domains, args.local_epsilons, args.eps_at_delta, args.steps
        )
        atomic_write_text(args.output, table.to_csv(index=False))
        print("\n" + eps_verdicts(table, args.steps).to_string(index=False))
        seconds = [c for c in table.columns if c.startswith("s_")]
        print(table[seconds].agg(["median", "max"]).T.to_string())
        return 0
    if not args.skip_tiny:
        tiny = tiny_rows(wang, scw)
        atomic_write_text(OUTPUT_TINY, tiny.to_csv(index=False))
    frame = grid_rows(
        wang, scw, args.users, args.domains, args.local_epsilons, args.fractions, args.scw_max_length
    )
    for key, value in machine_info().items():
        frame[key] = value
    atomic_write_text(args.output, frame.to_csv(index=False))
    print("\n" + verdicts(frame).to_string(index=False))
    seconds = [c for c in frame.columns if c.startswith("s_")]
    print("\nwall seconds per point (median / max):")
    print(frame[seconds].agg(["median", "max"]).T.to_string())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
