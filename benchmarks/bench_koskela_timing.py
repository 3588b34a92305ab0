"""Benchmark: Koskela et al.'s timing claim, measured side by side with Feldman et al.'s code.

Claim (Koskela, Heikkilä & Honkela, Sec. 3.3; the paper text is shared/papers/000_* beside the checkout): "for a single round protocol,
evaluating tight bounds for [the Fig. 1 setting] took approximately 4 times longer than using the method of
Feldman et al. (2021), taking approximately one minute on a standard CPU."

Peer: Feldman, McMillan & Talwar's numerical method, ``apple/ml-shuffling-amplification``
(``computeamplification.py``: ``numericalanalysis`` = binary search over ``deltacomp``) -- imported at run
time from a checkout (``--feldman <dir>`` or FELDMAN_SHUFFLING_AMPLIFICATION); nothing is copied. Without a
checkout the peer rows are skipped with a message and only ours are timed. Koskela et al.'s own code is
optional the same way (``--koskela``).

Setting: Fig. 1's n = 10^4, eps0 = 4; delta = 1e-6 and their example.py's search parameters
(num_iterations = 10, step = 100). Both sides bound the same pair (Thm 3.2: C ~ Bin(n - 1, e^-eps0); ours
``feldman-numerical``). Cases, each in its own fresh process (no cache shared), seconds by perf_counter
around the computation only (imports excluded):

* ``their eps(delta)`` -- ``numericalanalysis(n, eps0, delta, 10, 100, True)``;
* ``their eps(delta), step 1, 20 iterations`` and ``their lower ...`` -- the same at its finest step (every c)
  and a 2^-20 search, as an upper and as a lower bound (their ``upperbound`` flag): how close their method gets;
* ``their delta(eps) x 60`` -- ``deltacomp`` at Fig. 1's 60 eps (upper bound);
* ``ours PLD eps(delta)`` -- the pessimistic PLD of one round (grid 1e-5, what compose uses) built, then
  eps(delta) read from it: the PLD approach the claim is about;
* ``ours exact eps(delta)`` -- the accountant's own log-space exact eps(delta), one round;
* ``ours PLD delta(eps) x 60, n_c = 4`` -- Fig. 1's composed curve (PLD built, composed, 60 eps).

* ``their delta(eps) x 60, step 1`` -- the same curve at their finest step;
* ``Koskela PLD formed ...`` -- with ``--koskela <checkout of DPBayes/numerical-shuffler-experiments>``, their own
  PLD of the Fig. 1 round (``get_omega``, nx = 1e7: what their script times as "forming PLD"), alone and with
  delta at the 60 eps: the computation the claim is about.

Writes results/benchmarks/koskela_timing.csv (case, method, seconds, value, ratio to their eps(delta)).

Run: python benchmarks/bench_koskela_timing.py --feldman PATH/TO/ml-shuffling-amplification --koskela PATH/TO/numerical-shuffler-experiments
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

N, EPS0, DELTA, ITERATIONS, STEP = 10_000, 4.0, 1e-6, 10, 100
EPSILONS = np.linspace(0.1, 1.0, 60)  # Koskela et al.'s Fig. 1 grid (delta_shuffler_fa.py lines 136-137)
OUT = Path(__file__).resolve().parents[1] / "results" / "benchmarks" / "koskela_timing.csv"
CASES = {
    "their eps(delta)": "Feldman et al. code",
    "their eps(delta), step 1, 20 iterations": "Feldman et al. code",
    "their lower eps(delta), step 1, 20 iterations": "Feldman et al. code",
    "their delta(eps) x 60": "Feldman et al. code",
    "their delta(eps) x 60, step 1": "Feldman et al. code",
    "Koskela PLD formed (get_omega, nx = 1e7)": "Koskela et al. code",
    "Koskela PLD formed + delta(eps) x 60": "Koskela et al. code",
    "ours PLD eps(delta)": "ours",
    "ours exact eps(delta)": "ours",
    "ours PLD delta(eps) x 60, n_c = 4": "ours",
}


def _peer(directory: str):
    spec = importlib.util.spec_from_file_location(
        "computeamplification", Path(directory) / "computeamplification.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _koskela(case: str, checkout: str) -> tuple[float, float]:
    """Their Fig. 1 single round (clones_comparison_fig1/delta_shuffler_fa.py lines 134-170): get_omega at
    nx = 1e7, L = 20, the time their script prints as 'Time of forming PLD', then delta at the 60 eps as their
    lines 158-163 compute it (their function run from the checkout by tools/_peer_functions.py)."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))
    from _peer_functions import load_functions, quiet

    functions = load_functions(Path(checkout) / "clones_comparison_fig1" / "delta_shuffler_fa.py")
    nx, half_width = int(1e7), 20.0
    start = time.perf_counter()
    omega, grid, _ = quiet(functions["get_omega"], N, 1, EPS0, nx, half_width)
    value = float(omega.sum())
    if case.endswith("x 60"):
        step = 2 * half_width / nx
        value = max(
            float(
                np.sum(
                    (1 - np.exp(e - grid[int(np.ceil((half_width + e) / step)) :]))
                    * omega[int(np.ceil((half_width + e) / step)) :]
                )
            )
            for e in EPSILONS
        )
    return time.perf_counter() - start, value


def _run(case: str, feldman: str | None, koskela: str | None = None) -> tuple[float, float]:
    """(seconds, value) of one case, timed in this process."""
    if case.startswith("their"):
        peer = _peer(feldman)
        start = time.perf_counter()
        if case == "their eps(delta)":
            value = peer.numericalanalysis(N, EPS0, DELTA, ITERATIONS, STEP, True)
        elif case.startswith(("their eps(delta), step 1", "their lower")):
            value = peer.numericalanalysis(N, EPS0, DELTA, 20, 1, not case.startswith("their lower"))
        else:
            step = 1 if case.endswith("step 1") else STEP
            value = max(peer.deltacomp(N, EPS0, float(e), 1.0, step, True) for e in EPSILONS)
        return time.perf_counter() - start, float(value)
    if case.startswith("Koskela"):
        return _koskela(case, koskela)
    from shuffledp.accounting import compose, get_accountant
    from shuffledp.accounting.composition import privacy_loss_distribution

    start = time.perf_counter()
    if case == "ours PLD eps(delta)":
        pld = privacy_loss_distribution("feldman-numerical", EPS0, N, 2, value_discretization_interval=1e-5)
        value = pld.get_epsilon_for_delta(DELTA)
    elif case == "ours exact eps(delta)":
        value = get_accountant("feldman-numerical", epsilon_local=EPS0, n_users=N, k=2).epsilon_for_delta(
            DELTA
        )
    else:
        value = (
            compose("feldman-numerical", epsilon_local=EPS0, n_users=N, k=2, compositions=4)
            .delta_for_epsilon(EPSILONS)
            .max()
        )
    return time.perf_counter() - start, float(value)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--feldman", default=os.environ.get("FELDMAN_SHUFFLING_AMPLIFICATION"))
    parser.add_argument("--koskela", default=os.environ.get("SHUFFLEDP_KOSKELA_CHECKOUT"))
    parser.add_argument("--case", help=argparse.SUPPRESS)  # one case, in a fresh process
    args = parser.parse_args()
    if args.case:
        print(json.dumps(_run(args.case, args.feldman, args.koskela)))
        return
    have = {
        "Feldman et al. code": bool(args.feldman)
        and (Path(args.feldman) / "computeamplification.py").is_file(),
        "Koskela et al. code": bool(args.koskela)
        and (Path(args.koskela) / "clones_comparison_fig1").is_dir(),
        "ours": True,
    }
    if not have["Feldman et al. code"]:
        print(
            "Feldman et al.'s code (apple/ml-shuffling-amplification) is not checked out: pass --feldman <dir> "
            "or set FELDMAN_SHUFFLING_AMPLIFICATION; its rows are skipped",
            file=sys.stderr,
        )
    if not have["Koskela et al. code"]:
        print(
            "Koskela et al.'s code (DPBayes/numerical-shuffler-experiments) is not checked out: pass --koskela "
            "<dir> or set SHUFFLEDP_KOSKELA_CHECKOUT; its rows are skipped",
            file=sys.stderr,
        )
    rows = []
    for case, method in CASES.items():
        if not have[method]:
            continue
        command = [sys.executable, __file__, "--case", case]
        command += ["--feldman", args.feldman] if have["Feldman et al. code"] else []
        command += ["--koskela", args.koskela] if have["Koskela et al. code"] else []
        seconds, value = json.loads(
            subprocess.run(command, check=True, capture_output=True, text=True).stdout
        )
        rows.append([case, method, seconds, value])
        print(f"{case:40s} {seconds:9.3f} s  value {value:.6g}", flush=True)
    reference = next((r[2] for r in rows if r[0] == "their eps(delta)"), float("nan"))
    from shuffledp.io import atomic_write_csv

    atomic_write_csv(
        OUT,
        [
            "case",
            "method",
            "seconds",
            "value",
            "seconds_over_their_eps_delta",
            "n_users",
            "epsilon_local",
            "delta",
        ],
        [[*r, r[2] / reference, N, EPS0, DELTA] for r in rows],
    )
    print(f"-> {OUT}")


if __name__ == "__main__":
    main()
