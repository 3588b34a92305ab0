"""The CLI grid that guards the "no behaviour change" rule: every registered accountant's
``shuffle-dp epsilon ... --delta 1e-6 --json`` output on n in {10, 1e3, 1e6}, k in {2, 10},
eps0 in {0.5, 4}, and the composable ones (plus the RDP family) with ``--compositions 10``.

``python tests/golden/cli_grid.py record OUT.json`` records the outputs (stdout, or the one-line error
and exit status) of the code on the import path; ``tests/accounting/test_cli_grid.py`` re-runs every
call and compares it with ``cli_grid.json``, recorded at commit b5277a5 (before the accounting
package was reorganised into layers): text character for character, numbers within the machine-to-machine
budget of ``tests/golden_tolerance.py``.
"""

from __future__ import annotations

import contextlib
import io
import itertools
import json
import sys

N_USERS = (10, 1000, 1_000_000)
KS = (2, 10)
EPSILON_LOCALS = (0.5, 4.0)
DELTA = "1e-6"
COMPOSITIONS = "10"
#: accountants given --compositions 10 (composition.COMPOSABLE at b5277a5, plus the RDP family)
COMPOSED = (
    "strong-adversary",
    "weak-adversary",
    "feldman-numerical",
    "clones-krr",
    "worst-case-lower",
    "girgis-rdp",
    "girgis-rdp-simple",
)
#: single-round calls skipped because they take minutes (none at present)
SKIPPED: set = set()


def calls(names):
    """(key, argv) of every call of the grid."""
    from shuffledp.accounting import accountant_class

    for name, n, k, e0 in itertools.product(names, N_USERS, KS, EPSILON_LOCALS):
        base = [
            "epsilon",
            "--accountant",
            name,
            "--eps0",
            str(e0),
            "--n",
            str(n),
            "--k",
            str(k),
            "--delta",
            DELTA,
            "--json",
        ]
        if accountant_class(name).needs_n_x0:
            base += ["--nx0", str(n // 2)]
        key = f"{name} n={n} k={k} eps0={e0}"
        if key not in SKIPPED:
            yield key, base
        if name in COMPOSED:
            yield key + " T=10", base + ["--compositions", COMPOSITIONS]


def run(argv):
    from shuffledp.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(argv)
    return {"status": status, "stdout": out.getvalue(), "stderr": err.getvalue()}


if __name__ == "__main__":
    import time

    from shuffledp.accounting import list_accountants

    record = {}
    for key, argv in calls(list_accountants()):
        start = time.perf_counter()
        record[key] = run(argv)
        print(f"{time.perf_counter() - start:8.2f} s  {key}", file=sys.stderr, flush=True)
    with open(sys.argv[2], "w", encoding="utf-8") as handle:
        json.dump(record, handle, indent=1, sort_keys=True)
        handle.write("\n")
