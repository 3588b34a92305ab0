"""Benchmark: the bracket of any randomizer with output types -- upper epsilon (``weak-adversary``: k-RR's
own weak view, the type view for every other randomizer) and lower epsilon (``types-lower``: explicit
datasets' type counts) at delta = 1e-6, for n in {10^3, 10^4, 10^6}, k in {16, 192, 408}, eps0 in {1, 4}.

The upper end (every randomizer but k-RR, which keeps its view's own search) is searched down from the type
view's Chernoff epsilon by steps of 0.8 and then Illinois to 1e-7 (absolute below epsilon = 1): an evaluated
point where the certified delta meets the target. The lower end is the largest point of a geometric grid
(1e-4 relative, from the upper epsilon down to 0.4 x it) where ``types-lower``'s delta, the whole grid in
one pass (``TypesLower.log_delta_grid``), exceeds the target: a valid lower end; below the grid a per-epsilon
search. Randomizers with the same output types (to 1e-10 in log) at one n share one bracket (column
``same_types_as``). The evaluations of each end are recorded (``*_evaluations``; the lower end's are passes
plus per-epsilon evaluations).

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
     [--domains 16 192 408] [--local-epsilons 1 4] [--output CSV]
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "accounting"))  # the test suite's OUE channel

from shuffledp.accounting import get_accountant  # noqa: E402
from shuffledp.accounting.accountants.types_lower import TypesLower  # noqa: E402
from shuffledp.accounting.numerics.search import descend_to_crossing, first_not_above  # noqa: E402
from shuffledp.accounting.randomizers import KRR, randomizer_class  # noqa: E402
from shuffledp.io import atomic_write_text  # noqa: E402

OUTPUT = ROOT / "results" / "benchmarks" / "types_bracket.csv"
DELTA = 1e-6
USERS = (10**3, 10**4, 10**6)
DOMAINS = (16, 192, 408)
LOCAL_EPSILONS = (1.0, 4.0)
TOLERANCE = 1e-4  # relative step of the lower end below the upper epsilon
SEARCH_TOLERANCE = 1e-7  # the upper search's final bracket: relative above epsilon = 1, absolute below
GRID_BOTTOM = 0.4  # the lower end's one-pass grid spans [GRID_BOTTOM, 1] x the upper epsilon


def _timed(function):
    start, start_cpu = time.perf_counter(), time.process_time()
    try:
        value, status = function(), "ok"
    except ValueError as error:
        value, status = None, str(error)
    return value, status, time.perf_counter() - start, time.process_time() - start_cpu


class _Counted:
    """An accountant's log delta at one epsilon, counting the evaluations (each epsilon evaluated once)."""

    def __init__(self, accountant):
        self.accountant, self.evaluations, self.known = accountant, 0, {}

    def __call__(self, epsilon: float) -> float:
        if epsilon not in self.known:
            self.evaluations += 1
            self.known[epsilon] = float(self.accountant.log_delta_for_epsilon(epsilon)[0])
        return self.known[epsilon]


def _upper(randomizer, n: int) -> tuple[float, int]:
    """(upper epsilon, evaluations): k-RR's own certified search; for every other randomizer the type view
    searched down (steps of 0.8, then Illinois to SEARCH_TOLERANCE: absolute below epsilon = 1, relative above,
    as the accountant's own search) from where its Chernoff bound meets DELTA (found without a sum, checked
    by one evaluation): the upper end of the bracket meets DELTA."""
    accountant = get_accountant("weak-adversary", randomizer=randomizer, n_users=n)
    if isinstance(randomizer, KRR):
        return accountant.epsilon_for_delta(DELTA, tolerance=SEARCH_TOLERANCE), 0
    view = accountant.view()
    log_target = math.log(DELTA)
    start = first_not_above(lambda e: view.log_chernoff(e) > log_target, tolerance=1e-3)
    log_delta = _Counted(accountant)
    while log_delta(start) > log_target:  # the sum's certified remainder may lift it above the Chernoff bound
        start = min(1.25 * start, accountant.setting.epsilon_local)
    bracket = descend_to_crossing(
        log_delta, log_target, start, tolerance=SEARCH_TOLERANCE, absolute=SEARCH_TOLERANCE, factor=0.8
    )
    return bracket.high, log_delta.evaluations


def _lower(randomizer, n: int, start: float | None) -> tuple[float, int]:
    """(lower epsilon, passes): the largest epsilon of a geometric grid (step 1e-4 relative, from ``start``,
    the upper epsilon, down to 0.4 x it) where ``types-lower``'s delta -- all of the grid in one pass over the
    datasets' count vectors (``TypesLower.log_delta_grid``) -- is still above DELTA (the true epsilon is at
    least it); below the grid, the per-epsilon search down from its lowest point (steps of 0.7, Illinois to
    1e-4 relative), and the accountant's own search when there is no upper epsilon. Refuses a lower bound
    above DELTA at the upper epsilon itself (the two bounds would cross)."""
    accountant = get_accountant("types-lower", randomizer=randomizer, n_users=n)
    if start is None:
        return accountant.epsilon_for_delta(DELTA, tolerance=SEARCH_TOLERANCE), 0
    assert isinstance(accountant, TypesLower)
    log_target = math.log(DELTA)
    grid = start * np.exp(-TOLERANCE * np.arange(int(math.log(1.0 / GRID_BOTTOM) / TOLERANCE) + 1))
    above = np.flatnonzero(accountant.log_delta_grid(grid) > log_target)
    if above.size and above.min() == 0:
        raise ValueError(
            f"types-lower's delta exceeds {DELTA} at the upper epsilon {start!r}: the bounds cross."
        )
    if above.size:
        return float(grid[above.min()]), 1
    log_delta = _Counted(accountant)
    bracket = descend_to_crossing(log_delta, log_target, float(grid[-1]), tolerance=TOLERANCE, factor=0.7)
    return bracket.low, 1 + log_delta.evaluations


def _types_key(randomizer, n: int):
    """What both bounds read of a randomizer at n: eps0 and its output types over (x_0, x_1, x_2), their logs
    rounded to 1e-10 (the same channel built for another k differs by rounding alone; the searches resolve
    1e-7 at best), None when it has none; two randomizers with one key have one bracket."""
    types = randomizer.output_types(3) if randomizer.k is None or randomizer.k >= 3 else None
    if types is None:
        return None
    arrays = (types.log_blanket_mass, types.log_ratios)
    return (n, type(randomizer).__name__ == "KRR", types.epsilon_local, types.log_gamma) + tuple(
        np.round(a, 10).tobytes() + str(a.shape).encode() for a in arrays
    )


def _randomizers(keys, test_oue: bool, types_krr: bool, domains=DOMAINS, local_epsilons=LOCAL_EPSILONS):
    for key in keys:
        cls = randomizer_class(key)
        for k in domains:
            for e0 in local_epsilons:
                yield key, k, e0, cls.from_parameters(epsilon_local=e0, k=k)
    if types_krr:
        from types_channels import TypesOnly

        for k in domains:
            for e0 in local_epsilons:
                yield "krr types (type view)", k, e0, TypesOnly(randomizer_class("krr")(e0, k))
    if test_oue:
        from types_channels import oue

        for e0 in local_epsilons:
            yield "oue (test channel)", 16, e0, oue(e0, 16)


def _point(randomizer, n: int) -> dict:
    """Both bounds at one point, with their evaluations, wall and CPU seconds."""
    row: dict = {}
    upper = _timed(lambda: _upper(randomizer, n))
    upper_epsilon = None if upper[0] is None else upper[0][0]
    lower = _timed(lambda: _lower(randomizer, n, upper_epsilon))
    for side, (value, status, wall, cpu) in (("upper", upper), ("lower", lower)):
        epsilon, evaluations = (None, None) if value is None else value
        row |= {f"{side}_epsilon": epsilon, f"{side}_status": status, f"{side}_evaluations": evaluations}
        row |= {f"{side}_seconds": wall, f"{side}_cpu_seconds": cpu}
    row["upper_over_lower"] = (
        row["upper_epsilon"] / row["lower_epsilon"]
        if row["upper_epsilon"] is not None and row["lower_epsilon"]
        else None
    )
    return row


def run(
    keys, test_oue: bool, types_krr: bool, users, output: Path, domains=DOMAINS, local_epsilons=LOCAL_EPSILONS
) -> pd.DataFrame:
    rows: list[dict] = []
    done: dict = {}  # types key -> (row, label and k it was computed for)
    for label, k, e0, randomizer in _randomizers(keys, test_oue, types_krr, domains, local_epsilons):
        for n in users:
            row = {"randomizer": label, "k": k, "epsilon_local": e0, "n_users": n, "delta": DELTA}
            key = _types_key(randomizer, n)
            if key is not None and key in done:  # the same output types: the same bracket, not recomputed
                earlier, source = done[key]
                row |= {name: earlier[name] for name in earlier if name.endswith(("epsilon", "status"))}
                row |= {name: 0.0 for name in earlier if name.endswith("seconds")}
                row |= {"upper_over_lower": earlier["upper_over_lower"], "same_types_as": source}
            else:
                row |= _point(randomizer, n)
                row["same_types_as"] = ""
                if key is not None:
                    done[key] = (row, f"{label} k={k}")
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
                row["same_types_as"],
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
    parser.add_argument("--domains", nargs="*", type=int, default=list(DOMAINS), help="the k values")
    parser.add_argument("--local-epsilons", nargs="*", type=float, default=list(LOCAL_EPSILONS), help="eps0")
    arguments = parser.parse_args()
    output = OUTPUT if arguments.output is None else Path(arguments.output)
    output.parent.mkdir(parents=True, exist_ok=True)
    run(
        arguments.randomizers,
        arguments.test_oue,
        arguments.types_krr,
        arguments.users,
        output,
        arguments.domains,
        arguments.local_epsilons,
    )
    print(f"wrote {output}")


if __name__ == "__main__":
    main()
