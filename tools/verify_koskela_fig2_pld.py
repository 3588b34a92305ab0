"""Verify why Koskela, Heikkilä & Honkela's Fig. 2 PLD curve differs from ours.

Runs the functions of their script ``clones_girgis_comparison_fig3/numerical_subsample_substitute_doroshenko.py``
piecewise (loaded by ``tools/_peer_functions.py``; nothing copied), at their parameters (lines 475-488:
eps0 = 3, q = 0.01, m = q n = 1000 users per round, nx = 2e6, L = 20, delta = 1e-5), and recomputes what
two of their lines compute:

* line 125, the denominator of the loss in ``get_omega``: ``q*(b/a) + p2*(1-q)*(1-q)`` where the pair's
  Q/P ratio (line 44, and line 87 of the Fig. 1 script) is ``q*(b/a) + p2*(1-q)`` (p2 = 1). We rebuild
  their ``omega`` atom by atom (masses from their ``get_logP2``) with the line as written -- it must equal
  theirs bin for bin -- and with the pair's own ratio;
* line 455 (with line 432): ``j_start = ceil((L + eps)/dx)`` after ``dx`` was set to 1.0, so the sum of
  line 456 starts near x = -L instead of x = eps: it is E[1 - e^(eps - X)] over (almost) every loss, not
  the hockey-stick E[(1 - e^(eps - X))_+]. Such a sum is 1 - e^eps E[e^-X] (minus the mass below -L);
  we recompute E[e^-X] of their one-round PLD and predict their eps(n_c) from it.

Each variant's eps(delta = 1e-5) is written to ``src/shuffledp/reference/koskela_fig2_pld_check.csv``
with the hockey-stick evaluated by dp_accounting (pessimistic, grid 1e-5) where the line is replaced.

    python tools/verify_koskela_fig2_pld.py /path/to/numerical-shuffler-experiments [--commit SHA]
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np
from dp_accounting.pld import privacy_loss_distribution as pld_lib

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _peer_functions import PEER_COMMIT, load_functions, quiet
from transcribe_koskela import _NumpyOnly

from shuffledp.io import atomic_write_csv

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "src" / "shuffledp" / "reference" / "koskela_fig2_pld_check.csv"
SCRIPT = "clones_girgis_comparison_fig3/numerical_subsample_substitute_doroshenko.py"
COLUMNS = ["variant", "compositions", "epsilon", "what", "source"]
EPS0, GAMMA, N_TOTAL, NX, L, DELTA = 3.0, 0.01, 100_000, 2_000_000, 20.0, 1e-5  # their lines 475-488
NCS = [10, 31, 100, 316, 1000, 3162, 10000]  # their line 479


def _atoms(namespace: dict, m: int):
    """(log mass, b/a) of every atom their get_omega visits, in its order (windows of lines 104-119)."""
    p = 2.0 / (1.0 + math.exp(EPS0))
    tol = 42
    lo_i = int(max(0, np.floor((m - 1) * (p - np.sqrt(tol / (2 * (m - 1)))))))
    hi_i = int(min(m, np.ceil((m - 1) * (p + np.sqrt(tol / (2 * (m - 1)))))))
    masses, ratios = [], []
    for i in range(lo_i, hi_i):
        lo_j = int(max(0, np.floor(i * (0.5 - np.sqrt(tol / (2 * (i + 1)))))))
        hi_j = int(min(i, np.ceil(i * (0.5 + np.sqrt(tol / (2 * (i + 1)))))))
        for j in range(lo_j, hi_j):
            masses.append(namespace["get_logP2"](i, j, m, EPS0, GAMMA))
            ratios.append((i - j) / (j + 1))
    return np.array(masses), np.array(ratios)


def _omega(log_mass, loss):
    """Their binning (line 137): mass at the right end point of its cell of width 2L/nx."""
    dx = 2 * L / NX
    omega = np.zeros(NX)
    index = np.ceil((loss + L) / dx).astype(int)
    np.add.at(omega, index, np.exp(log_mass))
    return omega


def _binned_deficit(P, Q) -> float:
    """-log E[e^-X] of the normalised one-round PLD that get_epsilon_PQ composes (lines 411-430:
    losses log(P/Q) in (-L, L), each rounded up to the grid of width 2L/nx, masses P renormalised)."""
    dx = 2 * L / NX
    keep = (P > 0) & (Q > 0)
    loss = np.log(P[keep] / Q[keep])
    inside = (loss > -L) & (loss < L)
    rounded = -L + np.ceil((loss[inside] + L) / dx) * dx
    mass = P[keep][inside]
    return -math.log(np.sum(mass * np.exp(-rounded)) / np.sum(mass))


def _epsilon_hockey_stick(P, Q, compositions: int) -> float:
    """eps(delta) of the pair (P, Q) on their 500 points, composed, by dp_accounting (pessimistic)."""
    upper = {i: math.log(v) for i, v in enumerate(P) if v > 0}
    lower = {i: math.log(v) for i, v in enumerate(Q) if v > 0}
    pld = pld_lib.from_two_probability_mass_functions(
        lower, upper, pessimistic_estimate=True, value_discretization_interval=1e-5
    )
    return float(pld.self_compose(compositions).get_epsilon_for_delta(DELTA))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("checkout", type=Path)
    parser.add_argument("--commit", default=PEER_COMMIT)
    args = parser.parse_args()
    ns = load_functions(args.checkout / SCRIPT)
    m = int(GAMMA * N_TOTAL)  # line 488
    start = time.perf_counter()
    rows = []

    def add(variant, nc, eps, what, source):
        rows.append([variant, nc, repr(float(eps)), what, f"{source} @ {args.commit[:12]}"])
        print(variant, nc, eps, f"({time.perf_counter() - start:.0f} s)", flush=True)

    with open(args.checkout / "clones_girgis_comparison_fig3/pickles/eps_fig1_pld.p", "rb") as handle:
        stored = np.asarray(_NumpyOnly(handle).load(), dtype=float)
    omega, _ = quiet(ns["get_omega"], m, EPS0, NX, L, GAMMA)
    omega2, _ = quiet(ns["get_omega2"], m, EPS0, NX, L, GAMMA)
    log_mass, ba = _atoms(ns, m)
    q = math.exp(EPS0) / (1 + math.exp(EPS0))
    as_written = np.log(GAMMA * (q + (1 - q) * ba) / (q * ba + (1 - q) * (1 - q)) + 1 - GAMMA)  # line 125
    pair_ratio = np.log(GAMMA * (q + (1 - q) * ba) / (q * ba + (1 - q)) + 1 - GAMMA)  # the pair's ratio
    rebuilt = _omega(log_mass, as_written)
    add(
        "check: line 125 as written rebuilds their omega (max abs difference)",
        "",
        np.max(np.abs(rebuilt - omega)),
        "max |omega_rebuilt - omega| over the 2e6 cells",
        SCRIPT + " lines 104-145",
    )
    weights = np.exp(log_mass)
    for name, loss in (("line 125 as written", as_written), ("pair's ratio", pair_ratio)):
        add(
            f"one round, {name}: E[X] (KL of the subsampled pair)",
            1,
            np.sum(weights * loss) / weights.sum(),
            "mean loss under gamma P + (1 - gamma) Q",
            SCRIPT + " line 125",
        )
        add(
            f"one round, {name}: -log E[e^-X]",
            1,
            -math.log(np.sum(weights * np.exp(-loss)) / weights.sum()),
            "0 for a valid privacy loss distribution",
            SCRIPT + " line 125",
        )
    P, Q = quiet(ns["get_PQ2"], omega, omega2, nx=NX, L=L)
    add(
        "their (P, Q): -log E_P[e^-X]",
        1,
        -math.log(np.sum(Q[P > 0])),
        "before get_epsilon_PQ's binning",
        SCRIPT + " get_PQ2",
    )
    deficit = _binned_deficit(P, Q)
    add(
        "their (P, Q) on get_epsilon_PQ's grid: -log E[e^-X]",
        1,
        deficit,
        "per-round deficit that line 455 turns into eps (losses rounded up, line 425)",
        SCRIPT + " lines 411-430",
    )
    fixed = _omega(log_mass, pair_ratio)
    P_fix, Q_fix = quiet(ns["get_PQ2"], fixed, omega2, nx=NX, L=L)
    for index, nc in enumerate(NCS):
        add("stored (eps_fig1_pld.p)", nc, stored[index], "their plotted value", "pickles/eps_fig1_pld.p")
        add(
            "their functions as written",
            nc,
            quiet(ns["get_epsilon_PQ"], P, Q, DELTA, ncomp=nc, nx=NX, L=L),
            "get_omega, get_omega2, get_PQ2, get_epsilon_PQ",
            SCRIPT + " lines 489-511",
        )
        add(
            "prediction from line 455: log(1 - delta) + n_c x deficit",
            nc,
            math.log1p(-DELTA) + nc * deficit,
            "their eps if line 456 sums 1 - e^(eps - X) over every loss",
            SCRIPT + " lines 432, 455-456",
        )
        add(
            "their (P, Q), hockey-stick (line 455 replaced)",
            nc,
            _epsilon_hockey_stick(P, Q, nc),
            "dp_accounting, losses > eps only",
            SCRIPT + " get_PQ2",
        )
        add(
            "line 125 replaced, their get_epsilon_PQ",
            nc,
            quiet(ns["get_epsilon_PQ"], P_fix, Q_fix, DELTA, ncomp=nc, nx=NX, L=L),
            "pair's ratio in get_omega; line 455 as written",
            SCRIPT + " get_PQ2, get_epsilon_PQ",
        )
        add(
            "lines 125 and 455 replaced",
            nc,
            _epsilon_hockey_stick(P_fix, Q_fix, nc),
            "pair's ratio; their get_PQ2; dp_accounting hockey-stick",
            SCRIPT + " get_PQ2",
        )
    atomic_write_csv(OUT, COLUMNS, rows)
    print(f"{len(rows)} rows -> {OUT}")


if __name__ == "__main__":
    main()
