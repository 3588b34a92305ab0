"""Transcribe the curves of Balle, Bell, Gascon & Nissim's Figure 3 (CRYPTO 2019) into a cited CSV.

Their public repository (``BorjaBalle/amplification-by-shuffling``) publishes the figure's code, not
its numbers: the notebook ``Bounds on Privacy Amplification by Shuffling.ipynb`` stores each panel
only as a PNG. This tool therefore *runs their code*: it imports their package ``shuffleddp`` from a
checkout (never copied into the project) and evaluates every curve of the notebook's four plotting
cells at the notebook's own grids and parameters (cells In [23]-[26]; ``docs/balle-figures.md``
gives file and line of each). It writes ``src/shuffledp/reference/balle_figures.csv``: one row per
plotted point, with the panel, the curve as labelled in the notebook's legend, the x value (n), k
where the curve's k depends on n, the plotted value, and the cell and functions it comes from. A
point where their code raises (an ``assert`` in ``get_eps0`` / ``Erlingsson.check_ranges``) is
written as ``nan`` with the exception in ``note``, exactly as the notebook would fail or plot a gap.

The paper's figure predates a fix in their code: commit 7994ad3 ("Fixed typo in Bennett bounds",
2020-07-06) changed ``BennettExact.get_delta``. The notebook of the initial release (89a5085,
2019-05-31, before the CRYPTO 2019 proceedings) stores the panels drawn by the old code, and the
paper's text describes those (e.g. "for every mechanism the Bennett bound is better than the
Hoeffding bound"). With ``--release CHECKOUT`` (a checkout of 89a5085, flat modules) every curve is
also computed with that code; column ``code`` says which: ``current`` or ``2019``.
Run once; the CSV is committed.

    python tools/transcribe_balle.py /path/to/checkout [--commit SHA] [--release /path/to/89a5085]
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import time
from pathlib import Path

import numpy as np

from shuffledp.io import atomic_write_csv

OUT = Path(__file__).resolve().parents[1] / "src" / "shuffledp" / "reference" / "balle_figures.csv"
COLUMNS = ["paper", "panel", "curve", "code", "x_name", "x", "k", "value_name", "value", "source", "note"]
PAPER = "Balle, Bell, Gascon, Nissim (CRYPTO 2019), The privacy blanket of the shuffle model, Figure 3"
NOTEBOOK = "Bounds on Privacy Amplification by Shuffling.ipynb"
#: the plotting cells of the 2019 notebook (identical code and parameters, other execution counts)
RELEASE_CELLS = {"i": "In [9]", "ii": "In [10]", "iii": "In [11]", "iv": "In [12]"}


def _panels(ab, mech):
    """The four plotting cells of the notebook: (panel, cell, x grid, curves, value function)."""
    ns_i = np.geomspace(1000, 1000000, num=100, dtype=int)  # cell In [23]
    ns = np.geomspace(100, 100000, num=100, dtype=int)  # cells In [24], In [25]
    ns_iv = np.geomspace(100, 100000, num=50, dtype=int)  # cell In [26]
    eps_of = lambda b, n: b.get_eps(0.5, n, 1e-6)
    eps0_of = lambda b, n: b.get_eps0(0.1, n, 1e-6)

    def eps0_iv(b, n):  # In [26]: k = int(n ** (1/3)), delta = 1 / n^2, eps = 0.1
        b.mechanism.set_k(int(n ** (1 / 3)))
        return b.get_eps0(0.1, n, 1.0 / n**2)

    yield (
        "i",
        "In [23]",
        "epsilon",
        ns_i,
        eps_of,
        [ab.Erlingsson(), ab.Hoeffding(mech.LDPMechanism()), ab.BennettExact(mech.LDPMechanism())],
        False,
    )
    yield (
        "ii",
        "In [24]",
        "epsilon_local",
        ns,
        eps0_of,
        [
            ab.Erlingsson(),
            ab.Hoeffding(mech.LDPMechanism()),
            ab.Hoeffding(mech.RRMechanism(k=2)),
            ab.Hoeffding(mech.RRMechanism(k=100)),
            ab.Hoeffding(mech.LaplaceMechanism()),
        ],
        True,
    )
    iii = []
    for m in (mech.RRMechanism(), mech.RRMechanism(k=100), mech.LaplaceMechanism()):
        iii += [ab.Hoeffding(m), ab.BennettExact(m)]
    yield ("iii", "In [25]", "epsilon_local", ns, eps0_of, iii, True)
    yield (
        "iv",
        "In [26]",
        "epsilon_local",
        ns_iv,
        eps0_iv,
        [ab.Hoeffding(mech.RRMechanism()), ab.BennettExact(mech.RRMechanism())],
        False,
    )


def _flat_module(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("checkout", type=Path)
    parser.add_argument("--commit", default="1778a0dd16405cb10d780d5f1878ed0b1fb76f2e")
    parser.add_argument("--release", type=Path, default=None)
    parser.add_argument("--release-commit", default="89a50859f5e5a326fbdf7b7beb63f1659f850fd9")
    args = parser.parse_args()
    sys.path.insert(0, str(args.checkout))
    import shuffleddp.amplification_bounds as ab  # their code, from the checkout
    import shuffleddp.mechanisms as mech

    rows = _rows(ab, mech, "current", args.commit, "shuffleddp/amplification_bounds.py")
    if args.release is not None:  # the 2019 release: flat modules amplification_bounds.py, mechanisms.py
        ab_2019 = _flat_module("amplification_bounds_2019", args.release / "amplification_bounds.py")
        mech_2019 = _flat_module("mechanisms_2019", args.release / "mechanisms.py")
        rows += _rows(ab_2019, mech_2019, "2019", args.release_commit, "amplification_bounds.py")
    atomic_write_csv(OUT, COLUMNS, rows)
    print(f"{len(rows)} rows -> {OUT}")


def _rows(ab, mech, code: str, commit: str, module: str) -> list:
    """Every point of the four panels computed with one version of their code."""
    rows = []
    for panel, cell, value_name, ns, value_of, bounds, with_mech in _panels(ab, mech):
        for bound in bounds:
            label = (
                bound.get_name(with_mech=with_mech)
                if isinstance(bound, ab.NumericShuffleAmplificationBound)
                else bound.get_name()
            )
            kind = type(bound).__name__
            mechanism = (
                type(getattr(bound, "mechanism", None)).__name__ if hasattr(bound, "mechanism") else ""
            )
            started = time.perf_counter()
            for n in ns:
                note = ""
                try:
                    value = float(value_of(bound, int(n)))
                except (AssertionError, ValueError) as error:  # the notebook has no guard: a gap / a stop
                    value, note = float("nan"), f"{type(error).__name__}: {error}".strip()
                k = getattr(getattr(bound, "mechanism", None), "k", "")
                if code == "2019":  # the same four cells, numbered In [9]-[12] in the 2019 notebook
                    cell = RELEASE_CELLS[panel]
                source = (
                    f"{NOTEBOOK} cell {cell} -> {module} {kind}"
                    + (f"({mechanism})" if mechanism else "")
                    + f" @ {commit[:12]}"
                )
                rows.append(
                    [PAPER, panel, label, code, "n", int(n), k, value_name, repr(value), source, note]
                )
            print(f"{code} panel {panel} {label}: {time.perf_counter() - started:.1f} s", flush=True)
    return rows


if __name__ == "__main__":
    main()
