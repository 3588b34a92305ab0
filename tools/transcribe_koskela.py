"""Transcribe the data behind Koskela, Heikkilä & Honkela's Figures 1-3 into a cited CSV.

Reads the pickled curves of their public experiment code (a checkout of
``DPBayes/numerical-shuffler-experiments``) with a restricted unpickler (numpy arrays and scalars
only; nothing else is executed) and writes ``src/shuffledp/reference/koskela_figures.csv``: one row
per plotted point, with the figure, the curve as labelled in their plotting script, n_c, the x value,
the plotted value and the pickle it comes from. The x grids are those of their scripts (file and line
in ``docs/koskela-figures.md``). Run once; the CSV is committed.

    python tools/transcribe_koskela.py /path/to/numerical-shuffler-experiments [--commit SHA]
"""

from __future__ import annotations

import argparse
import importlib
import pickle
from pathlib import Path

import numpy as np

from shuffledp.io import atomic_write_csv

OUT = Path(__file__).resolve().parents[1] / "src" / "shuffledp" / "reference" / "koskela_figures.csv"
COLUMNS = ["paper", "figure", "curve", "compositions", "x_name", "x", "value_name", "value", "source"]
PAPER = "Koskela, Heikkila, Honkela (2021/2023), Numerical accounting in the shuffle model of DP"


class _NumpyOnly(pickle.Unpickler):
    def find_class(self, module, name):
        if module.split(".")[0] == "numpy":
            return getattr(importlib.import_module(module), name)
        raise pickle.UnpicklingError(f"refusing to load {module}.{name}")


def _load(root: Path, relative: str) -> np.ndarray:
    with open(root / relative, "rb") as handle:
        return np.real(np.asarray(_NumpyOnly(handle).load())).astype(float)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("checkout", type=Path)
    parser.add_argument("--commit", default="75068f330d06f6abb3f2554944880237d6a63784")
    args = parser.parse_args()
    root, rows = args.checkout, []

    def add(figure, curve, compositions, x_name, xs, value_name, values, source):
        for x, value in zip(xs, values, strict=True):
            rows.append(
                [
                    PAPER,
                    figure,
                    curve,
                    compositions,
                    x_name,
                    repr(float(x)),
                    value_name,
                    repr(float(value)),
                    f"{source} @ {args.commit[:12]}",
                ]
            )

    # Fig. 1: delta(eps) of the clones pair (n = 1e4, eps0 = 4) after n_c = 1..4 compositions, PLD + FFT
    epsilons = np.linspace(0.1, 1.0, 60)  # clones_comparison_fig1/delta_shuffler_fa.py lines 136-137
    pld = _load(root, "clones_comparison_fig1/pickles/deltas_pld.p")
    for i, row in enumerate(pld):
        add(1, "PLD", i + 1, "epsilon", epsilons, "delta", row, "clones_comparison_fig1/pickles/deltas_pld.p")
    # the solid "RDP, n_c" curves (deltas_plot.py lines 16-19, 34-37, 51-54): delta_shuffler_renyi.py's output
    for compositions, suffix in ((1, ""), (2, "2"), (3, "3"), (4, "4")):
        source = f"clones_comparison_fig1/pickles/deltas_feldman{suffix}.p"
        add(1, "RDP", compositions, "epsilon", epsilons, "delta", _load(root, source), source)
    # Fig. 2: eps(delta = 1e-5) of the subsampled shuffler (n = 1e5, q = 0.01, eps0 = 3) against n_c
    ncs = [10, int(10**1.5), 10**2, int(10**2.5), 10**3, int(10**3.5), 10**4]  # plot_fig_main_text.py line 30
    for curve, name in (("Girgis et al. RDP", "eps_fig1_girgis_upper.p"), ("PLD", "eps_fig1_pld.p")):
        source = f"clones_girgis_comparison_fig3/pickles/{name}"
        add(2, curve, "", "compositions", ncs, "epsilon", _load(root, source), source)
    # Fig. 3: eps(delta) of shuffled k-RR (n = 1000, k = 4, gamma = 0.25) for n_c = 1, 4, 16
    deltas = 10 ** np.linspace(-4, -7, 5)  # blankets_fig4/plot_epsilons_fig4.py lines 16-17
    for curve, stem in (
        ("weak adversary", "eps_blanket_weak"),
        ("strong adversary", "eps_blanket_strong"),
        ("clones (Feldman et al. 2023)", "eps_blanket_feldman_fa"),
    ):
        for compositions in (1, 4, 16):
            source = f"blankets_fig4/pickles/{stem}{compositions}.p"
            add(3, curve, compositions, "delta", deltas, "epsilon", _load(root, source), source)

    atomic_write_csv(OUT, COLUMNS, rows)
    print(f"{len(rows)} rows -> {OUT}")


if __name__ == "__main__":
    main()
