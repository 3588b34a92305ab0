"""Benchmark: the bracket of any randomizer with output types -- upper epsilon (``weak-adversary``: k-RR's
own weak view, the type view for every other randomizer) and lower epsilon (``types-lower``: explicit
datasets' type counts, stepped down from the upper epsilon by 1e-4, 2e-4, 4e-4, ... relative until its
delta exceeds the target, then bisected to 1e-4 relative between the last two steps: a valid lower end) at delta = 1e-6, for n in {10^3, 10^4, 10^6}, k in {16, 192, 408}, eps0 in {1, 4}.

Any registered randomizer key can be named (``--randomizers krr oue ...``: each is built by its class's
``from_parameters(epsilon_local=eps0, k=k)``); ``--test-oue`` adds the OUE channel written in
tests/accounting/types_channels.py (its types by brute force over the 2^k outputs: k = 16 only);
``--types-krr`` adds k-RR's own types under another class, so that ``weak-adversary`` takes the type view
(its numbers beside k-RR's own view, and its cost at n = 10^6). A point
the type view cannot sum (more count vectors than its cap: randomizers with four or more pair types at large
n) is recorded with its one-line refusal instead of a number. CPU seconds per bound are recorded beside
wall seconds (the machine may be shared).

Writes results/benchmarks/types_bracket.csv.

Run: python benchmarks/types_bracket.py [--randomizers krr] [--test-oue] [--users 1000 10000 1000000]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "accounting"))  # the test suite's OUE channel

from shuffledp.accounting import get_accountant  # noqa: E402
from shuffledp.accounting.randomizers import randomizer_class  # noqa: E402
from shuffledp.io import atomic_write_text  # noqa: E402

OUTPUT = ROOT / "results" / "benchmarks" / "types_bracket.csv"
DELTA = 1e-6
USERS = (10**3, 10**4, 10**6)
DOMAINS = (16, 192, 408)
LOCAL_EPSILONS = (1.0, 4.0)
TOLERANCE = 1e-4  # relative step of the lower end below the upper epsilon
SEARCH_TOLERANCE = 1e-7  # the upper search's final bracket: relative above epsilon = 1, absolute below


def _timed(function):
    start, start_cpu = time.perf_counter(), time.process_time()
    try:
        value, status = function(), "ok"
    except ValueError as error:
        value, status = None, str(error)
    return value, status, time.perf_counter() - start, time.process_time() - start_cpu


def _upper(randomizer, n: int) -> float:
    accountant = get_accountant("weak-adversary", randomizer=randomizer, n_users=n)
    return accountant.epsilon_for_delta(DELTA, tolerance=SEARCH_TOLERANCE)


def _lower(randomizer, n: int, start: float | None) -> float:
    """An epsilon where ``types-lower``'s delta is still above DELTA (the true epsilon is at least it): stepped
    down from ``start`` (the upper epsilon) by 1e-4, 2e-4, 4e-4, ... relative, then bisected to 1e-4 relative
    between the last two steps; the search of the accountant when there is no upper epsilon."""
    accountant = get_accountant("types-lower", randomizer=randomizer, n_users=n)
    if start is None:
        return accountant.epsilon_for_delta(DELTA, tolerance=SEARCH_TOLERANCE)
    step, high = TOLERANCE, start
    while step < 1.0:
        low = start * (1.0 - step)
        if accountant.delta_for_epsilon(low)[0] > DELTA:
            # bisect (low, high]: high's delta is not above DELTA, low's is; the doubling alone resolves the
            # lower end only to its last step (up to 41 % of epsilon), which would be read as a wide bracket
            while (high - low) > TOLERANCE * high:
                middle = 0.5 * (low + high)
                if accountant.delta_for_epsilon(middle)[0] > DELTA:
                    low = middle
                else:
                    high = middle
            return low
        high = low
        step *= 2.0
    return 0.0


def _randomizers(keys, test_oue: bool, types_krr: bool):
    for key in keys:
        cls = randomizer_class(key)
        for k in DOMAINS:
            for e0 in LOCAL_EPSILONS:
                yield key, k, e0, cls.from_parameters(epsilon_local=e0, k=k)
    if types_krr:
        from types_channels import TypesOnly

        for k in DOMAINS:
            for e0 in LOCAL_EPSILONS:
                yield "krr types (type view)", k, e0, TypesOnly(randomizer_class("krr")(e0, k))
    if test_oue:
        from types_channels import oue

        for e0 in LOCAL_EPSILONS:
            yield "oue (test channel)", 16, e0, oue(e0, 16)


def run(keys, test_oue: bool, types_krr: bool, users, output: Path) -> pd.DataFrame:
    rows = []
    for label, k, e0, randomizer in _randomizers(keys, test_oue, types_krr):
        for n in users:
            row = {"randomizer": label, "k": k, "epsilon_local": e0, "n_users": n, "delta": DELTA}
            upper = _timed(lambda: _upper(randomizer, n))  # noqa: B023 - called at once
            lower = _timed(lambda: _lower(randomizer, n, upper[0]))  # noqa: B023 - called at once
            for side, (value, status, wall, cpu) in (("upper", upper), ("lower", lower)):
                row |= {f"{side}_epsilon": value, f"{side}_status": status}
                row |= {f"{side}_seconds": wall, f"{side}_cpu_seconds": cpu}
            row["upper_over_lower"] = (
                row["upper_epsilon"] / row["lower_epsilon"]
                if row["upper_epsilon"] is not None and row["lower_epsilon"]
                else None
            )
            row["load_average_1min"] = os.getloadavg()[0]
            rows.append(row)
            atomic_write_text(output, pd.DataFrame(rows).to_csv(index=False))  # kept after every point
            print({key: row[key] for key in ("randomizer", "k", "epsilon_local", "n_users")}, flush=True)
            print(
                "   ",
                row["upper_epsilon"],
                row["lower_epsilon"],
                f"{row['upper_cpu_seconds']:.1f}s",
                f"{row['lower_cpu_seconds']:.1f}s",
                flush=True,
            )
    return pd.DataFrame(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--randomizers", nargs="*", default=["krr"], help="registered randomizer keys")
    parser.add_argument("--test-oue", action="store_true", help="add the test suite's OUE channel (k = 16)")
    parser.add_argument(
        "--types-krr", action="store_true", help="add k-RR's types under another class (the type view's path)"
    )
    parser.add_argument("--output", default=None, help=f"the CSV written (default {OUTPUT})")
    parser.add_argument("--users", nargs="*", type=int, default=list(USERS))
    arguments = parser.parse_args()
    output = OUTPUT if arguments.output is None else Path(arguments.output)
    output.parent.mkdir(parents=True, exist_ok=True)
    run(arguments.randomizers, arguments.test_oue, arguments.types_krr, arguments.users, output)
    print(f"wrote {output}")


if __name__ == "__main__":
    main()
