"""Validity sweep over the whole supported domain: every accountant that claims a bound, on a deterministic grid.

Domain: eps0 in (0, 50], n in [2, 10^15], k in [2, 10^6], delta in [1e-300, 0.5]. The checks
(tests/accounting/validity_checks.py, shared with tests/accounting/test_validity_sweep.py):

* per setting (eps0, n, k), every accountant of ``checked_accountants()`` at eps = fraction x eps0 for
  13 fractions in [0, 1.2]: ``upper>=lower`` (each k-RR UPPER against each lower bound that answers),
  ``<=local`` (the tight ones), ``monotone``;
* ``eps(delta)`` for the tight accountants and ``strong-adversary`` on a sub-grid, delta in
  {1e-300, 1e-10, 1e-2};
* ``brute-force`` at n in {3, 8}, k in {2, 3, 4, 5} against the exact enumeration;
* ``composed<=chernoff``: weak-adversary composed over T in {10, 100} rounds, its optimistic composition against
  the certified Chernoff bound on the same pair and against the reported value (``vc.composed_margins``);
* ``profile>=lower``: worst-case-upper composed through the pair dominating its certified profile over T in
  {1, 10, 100} rounds, against the composed explicit datasets of worst-case-lower (``vc.profile_margins``;
  the note also gives how far below the composed weak adversary it is).

One row per (accountant, check, setting): status (pass / rounding / FAIL / refused / timeout), margin (a
natural-log difference that must be >= 0), note, seconds. Each call has a wall-clock limit (``--limit``,
default 2 s; a call over it is a "timeout" row, not a failure; each setting runs in a forked process killed
after ~20 limits, for calls that the alarm cannot interrupt). Writes results/benchmarks/validity_sweep.csv
and prints a summary.

Run: python benchmarks/sweep_validity.py [--quick] [--limit SECONDS]   (eps0 = 0.05, 0.5, 4: ~25 min loaded;
eps0 = 14.5, 25, 50: ~10 min, most of it the settings at n = 10^15 killed after their limit)
In pieces: --eps0 14.5 --n 1e3,1e6 --k 3 --parts grid --output results/benchmarks/validity_sweep_eps0_14.5.csv
"""

from __future__ import annotations

import argparse
import itertools
import math
import multiprocessing
import queue
import signal
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "accounting"))

import validity_checks as vc  # noqa: E402
from exact_enumeration import worst_case  # noqa: E402

from shuffledp.accounting import BoundKind, accountant_class  # noqa: E402
from shuffledp.io import atomic_write_csv  # noqa: E402

OUTPUT = ROOT / "results" / "benchmarks" / "validity_sweep.csv"
LOCAL_EPSILONS = (0.05, 0.5, 4.0, 14.5, 25.0, 50.0)
USERS = (2, 10, 1000, 10**6, 10**10, 10**15)
DOMAINS = (2, 3, 10, 10**6)
FRACTIONS = (0.0, 0.001, 0.01, 0.05, 0.1, 0.3, 0.5, 0.7, 0.9, 0.99, 0.999, 1.0, 1.2)
SUB = dict(eps0=(0.5, 15.0, 36.0), n=(10, 10**8), k=(3, 10**6))
DELTAS = (1e-300, 1e-10, 1e-2, 0.5)
BRUTE = dict(eps0=(0.5, 4.0, 15.0, 36.0), n=(3, 8), k=(2, 3, 4, 5))
COMPOSED = dict(eps0=(0.5, 4.0), n=(100, 1000), k=(2, 10), T=(10, 100))
PROFILE = dict(eps0=(0.5, 4.0), n=(30, 200, 1000), k=(2, 3, 10), T=(1, 10, 100))
QUICK = dict(eps0=(0.5, 15.0, 50.0), n=(10, 10**8), k=(3, 10**6))
COLUMNS = ["accountant", "check", "epsilon_local", "n", "k", "detail", "status", "margin", "note", "seconds"]


class Timeout(Exception):
    pass


def _alarm(signum, frame):
    raise Timeout()


def limited(limit, function, *args):
    """(result, seconds) or (Timeout(), seconds) when the call takes more than ``limit`` seconds."""
    signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, limit)
    start = time.perf_counter()
    try:
        out = function(*args)
    except Timeout as error:
        out = error
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    return out, time.perf_counter() - start


def _child(channel, function, args):
    channel.put(function(*args))


def isolated(function, args, limit: float, what: list):
    """function(*args) in a forked process, killed after ``limit`` seconds (a C-level loop ignores the alarm
    of :func:`limited`): the rows it returns, or one "timeout" row for the whole setting."""
    channel = multiprocessing.Queue()
    process = multiprocessing.Process(target=_child, args=(channel, function, args))
    process.start()
    try:
        out = channel.get(timeout=limit)
    except queue.Empty:
        out = [
            [
                "(every accountant)",
                what[0],
                *what[1:],
                "",
                "timeout",
                "",
                f"setting > {limit} s",
                f"{limit:.0f}",
            ]
        ]
    if process.is_alive():
        process.kill()
    process.join()
    return out


def setting_rows(eps0, n, k, limit):
    eps = np.array([f * eps0 for f in FRACTIONS])
    local = vc.local_log_delta(eps0, k, eps)
    values, rows = {}, []
    for name in vc.checked_accountants():
        out, seconds = limited(limit, vc.log_deltas, name, eps0, n, k, eps)
        base = [name, None, eps0, n, k]
        if isinstance(out, Timeout):
            rows.append([name, "evaluate", eps0, n, k, "", "timeout", "", f"> {limit} s", f"{seconds:.2f}"])
            continue
        logs, note = out
        if logs is None:
            rows.append([name, "evaluate", eps0, n, k, "", "refused", "", note, f"{seconds:.2f}"])
            continue
        values[name] = logs
        if accountant_class(name).monotone_in_epsilon:
            m = vc.monotone_margin(logs)
            rows.append(
                base[:1]
                + ["monotone"]
                + base[2:]
                + ["13 eps in [0, 1.2 eps0]", vc.status(m), f"{m:.6g}", note, f"{seconds:.2f}"]
            )
        if name in vc.TIGHT:
            m = vc.margin_above(local, logs)
            rows.append(
                base[:1] + ["<=local"] + base[2:] + ["", vc.status(m), f"{m:.6g}", note, f"{seconds:.2f}"]
            )
    for upper in vc.claimed_uppers():
        if upper not in values:
            continue
        for lower in vc.LOWERS:
            if lower in values:
                m = vc.margin_above(values[upper], values[lower])
                worst = int(
                    np.argmin(np.where(np.isneginf(values[lower]), np.inf, values[upper] - values[lower]))
                )
                rows.append(
                    [
                        upper,
                        "upper>=lower",
                        eps0,
                        n,
                        k,
                        f"vs {lower}",
                        vc.status(m),
                        f"{m:.6g}",
                        f"worst at eps = {eps[worst]:.6g}",
                        "",
                    ]
                )
    return rows


def epsilon_rows(eps0, n, k, limit):
    rows = []
    for name in ("weak-adversary", "worst-case-upper", "worst-case-lower", "strong-adversary"):
        for delta in DELTAS:
            out, seconds = limited(limit, vc.epsilon_for_delta_margin, name, eps0, n, k, delta)
            if isinstance(out, Timeout):
                rows.append(
                    [
                        name,
                        "eps(delta)",
                        eps0,
                        n,
                        k,
                        f"delta = {delta:g}",
                        "timeout",
                        "",
                        f"> {limit} s",
                        f"{seconds:.2f}",
                    ]
                )
                continue
            if isinstance(out, BaseException):
                raise out
            m, note = out
            state = "refused" if math.isnan(m) else vc.status(m)
            rows.append(
                [
                    name,
                    "eps(delta)",
                    eps0,
                    n,
                    k,
                    f"delta = {delta:g}",
                    state,
                    "" if math.isnan(m) else f"{m:.6g}",
                    note,
                    f"{seconds:.2f}",
                ]
            )
    return rows


def brute_rows(eps0, n, k, limit):
    eps = [f * eps0 for f in FRACTIONS]
    truths = worst_case(eps, eps0, n, k)
    with np.errstate(divide="ignore"):
        low = np.log([t.low for t in truths])  # -inf where the truth is 0 (eps >= eps0)
        high = np.log([t.high for t in truths])
    rows = []
    for name in vc.checked_accountants():
        if name in vc.OTHER_MECHANISM:
            continue
        out, seconds = limited(limit, vc.log_deltas, name, eps0, n, k, eps)
        if isinstance(out, Timeout) or out[0] is None:
            continue
        logs = out[0]
        if accountant_class(name).kind is BoundKind.UPPER:
            m, detail = vc.margin_above(logs, low), "upper >= exact worst case"
        else:
            m, detail = vc.margin_above(high, logs), "<= exact worst case"
        rows.append(
            [name, "brute-force", eps0, n, k, detail, vc.status(m), f"{m:.6g}", out[1], f"{seconds:.2f}"]
        )
    return rows


def composed_rows(eps0, n, k, compositions, limit):
    eps = [f * eps0 for f in (0.2, 0.5, 1.0, 2.0, 4.0)]
    out, seconds = limited(limit, vc.composed_margins, "weak-adversary", eps0, n, k, compositions, eps)
    base = ["weak-adversary", "composed<=chernoff", eps0, n, k]
    if isinstance(out, Timeout):
        return [base + [f"T = {compositions}", "timeout", "", f"> {limit} s", f"{seconds:.2f}"]]
    if out is None:
        return [base + [f"T = {compositions}", "refused", "", "no certified tail", f"{seconds:.2f}"]]
    chernoff, reported = out
    m = min(chernoff, reported)
    return [
        base
        + [
            f"T = {compositions}",
            vc.status(m),
            f"{m:.6g}",
            f"chernoff - optimistic {chernoff:.3g}, reported - optimistic {reported:.3g}",
            f"{seconds:.2f}",
        ]
    ]


def profile_rows(eps0, n, k, compositions, limit):
    eps = [f * eps0 for f in (0.0, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0)]
    out, seconds = limited(limit, vc.profile_margins, eps0, n, k, compositions, eps)
    base = ["worst-case-upper", "profile>=lower", eps0, n, k, f"T = {compositions}"]
    if isinstance(out, Timeout):
        return [base + ["timeout", "", f"> {limit} s", f"{seconds:.2f}"]]
    valid, tighter = out
    note = f"log weak - log profile {tighter:.3g}"
    return [base + [vc.status(valid), f"{valid:.6g}", note, f"{seconds:.2f}"]]


def _import_everything() -> None:
    """Import every accountant and the composition layer in the parent, before any fork: a module imported lazily
    inside a time-limited call can be cut by the alarm half-way, and the child then fails with a NameError."""
    import shuffledp.accounting.composition
    import shuffledp.accounting.composition_tail  # noqa: F401

    for name in vc.checked_accountants():
        accountant_class(name)


def _selected(axis, chosen: str) -> tuple:
    """The values of one grid axis named in ``chosen`` (comma-separated numbers; empty: the whole axis)."""
    if not chosen:
        return axis
    wanted = [float(text) for text in chosen.split(",")]
    kept = tuple(value for value in axis if any(math.isclose(value, w, rel_tol=1e-12) for w in wanted))
    if len(kept) != len(wanted):
        raise SystemExit(f"grid values must be among {axis}; got {chosen}")
    return kept


def main() -> None:
    _import_everything()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a small grid (smoke run)")
    parser.add_argument(
        "--parts", default="grid,eps,brute,composed,profile", help="which parts to run (comma-separated)"
    )
    parser.add_argument("--output", default=str(OUTPUT), help="the CSV to write")
    parser.add_argument("--limit", type=float, default=2.0, help="wall-clock seconds per call")
    for axis in ("eps0", "n", "k"):
        parser.add_argument(
            f"--{axis}",
            default="",
            help=f"only these {axis} of the grid (comma-separated; "
            "the grid is run in pieces on a shared machine)",
        )
    args = parser.parse_args()
    grid = (QUICK["eps0"], QUICK["n"], QUICK["k"]) if args.quick else (LOCAL_EPSILONS, USERS, DOMAINS)
    grid = tuple(_selected(axis, getattr(args, name)) for axis, name in zip(grid, ("eps0", "n", "k")))
    sub = QUICK if args.quick else SUB
    start = time.perf_counter()
    rows = []
    output, parts = Path(args.output), args.parts.split(",")
    for eps0, n, k in itertools.product(*grid) if "grid" in parts else ():
        rows += isolated(
            setting_rows, (eps0, n, k, args.limit), 20 * args.limit + 30, ["evaluate", eps0, n, k]
        )
        atomic_write_csv(output, COLUMNS, rows)  # so far (a run cut short keeps what it measured)
        print(
            f"eps0={eps0} n={n:.0e} k={k}: {len(rows)} rows, {time.perf_counter() - start:.0f} s", flush=True
        )
    for eps0, n, k in itertools.product(sub["eps0"], sub["n"], sub["k"]) if "eps" in parts else ():
        rows += isolated(
            epsilon_rows, (eps0, n, k, args.limit), 12 * args.limit + 30, ["eps(delta)", eps0, n, k]
        )
    for eps0, n, k in itertools.product(BRUTE["eps0"], BRUTE["n"], BRUTE["k"]) if "brute" in parts else ():
        rows += isolated(
            brute_rows, (eps0, n, k, args.limit), 22 * args.limit + 30, ["brute-force", eps0, n, k]
        )
    for eps0, n, k, t in itertools.product(*COMPOSED.values()) if "composed" in parts else ():
        rows += isolated(
            composed_rows,
            (eps0, n, k, t, 10 * args.limit),
            12 * args.limit + 30,
            ["composed<=chernoff", eps0, n, k],
        )
    for eps0, n, k, t in itertools.product(*PROFILE.values()) if "profile" in parts else ():
        rows += isolated(
            profile_rows,
            (eps0, n, k, t, 30 * args.limit),
            32 * args.limit + 30,
            ["profile>=lower", eps0, n, k],
        )
    atomic_write_csv(output, COLUMNS, rows)
    counts = Counter((row[1], row[6]) for row in rows)
    for (check, state), count in sorted(counts.items()):
        print(f"{check:14s} {state:9s} {count}")
    for row in rows:
        if row[6] in ("FAIL", "rounding"):
            print("  ", row)
    print(f"wrote {output} ({len(rows)} rows, {time.perf_counter() - start:.0f} s)")


if __name__ == "__main__":
    main()
