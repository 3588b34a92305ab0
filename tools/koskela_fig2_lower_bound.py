"""A certified lower bound on the composed epsilon of Koskela et al.'s Fig. 2 setting.

Is their plotted Fig. 2 PLD curve an upper bound at all? Their setting: shuffled k-RR with k = 2,
eps0 = 3, a population of n = 1e5 users of which m = q n = 1000 (q = 0.01) are sampled uniformly each
round, delta = 1e-5. A lower bound on the true eps comes from one explicit pair of neighbouring
datasets: D, every user on x0, and D', the differing user u on x1 (the "all on x0" dataset of
``worst-case-lower``, whose exact (h_x0, h_x1) view of m users is P for D and Q for D').

Subsampled: when u is not sampled, the m reports come from m users on x0 under *both* datasets, i.e.
have law P. So the subsampled pair is exactly (P, q Q + (1 - q) P) (and its reverse): the mixture is on
the Q side. (The composition layer's ``(q P + (1 - q) Q, Q)`` is Zhu et al.'s dominating-pair
construction, meant for upper bounds; it is not this dataset pair, so we do not use it here.) Losses:
L = log(P/Q) binned optimistically by the view (rounded down); under q Q + (1 - q) P vs P the loss is
log(q e^-L + 1 - q), rounded down from its smallest value over the bin; the reverse is its negative.
Both directions are composed by dp_accounting (optimistic PMFs); its truncation is allowed for by
asking for delta + 2 n_c x 1e-15 (so the returned eps is smaller, still a lower bound).

The pair's PLD and its composition are the library's (:func:`shuffledp.experiments.koskela.subsampled_all_x0_pld`,
which the workflow's Fig. 2 also draws). Writes ``src/shuffledp/reference/koskela_fig2_lower_check.csv`` (n_c, our lower bound, their stored
value, whether theirs is below).

    python tools/koskela_fig2_lower_bound.py /path/to/numerical-shuffler-experiments
"""

from __future__ import annotations

import argparse
import csv
import math
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _peer_functions import PEER_COMMIT
from transcribe_koskela import _NumpyOnly

from shuffledp.experiments.koskela import subsampled_all_x0_pld, subsampled_lower_epsilon

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "src" / "shuffledp" / "reference" / "koskela_fig2_lower_check.csv"
EPS0, Q_RATE, N_TOTAL, DELTA, TAIL, INTERVAL = 3.0, 0.01, 100_000, 1e-5, 1e-15, 1e-5
NCS = [10, 31, 100, 316, 1000, 3162, 10000]  # their girgis_upper.py line 52


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("checkout", type=Path)
    parser.add_argument("--commit", default=PEER_COMMIT)
    args = parser.parse_args()
    with open(args.checkout / "clones_girgis_comparison_fig3/pickles/eps_fig1_pld.p", "rb") as handle:
        stored = np.asarray(_NumpyOnly(handle).load(), dtype=float)
    one = subsampled_all_x0_pld(EPS0, 2, int(Q_RATE * N_TOTAL), Q_RATE, interval=INTERVAL)
    rows = []
    for nc, theirs in zip(NCS, stored, strict=True):
        lower = subsampled_lower_epsilon(one, nc, DELTA, tail=TAIL)
        rows.append(
            [
                nc,
                repr(lower),
                repr(float(theirs)),
                str(bool(theirs < lower)),
                f"clones_girgis_comparison_fig3/pickles/eps_fig1_pld.p @ {args.commit[:12]}",
            ]
        )
        print(nc, lower, theirs, flush=True)
    with open(OUT, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(["compositions", "lower_bound", "stored", "stored_below_lower_bound", "source"])
        writer.writerows(rows)
    print(f"{len(rows)} rows -> {OUT} ({math.nan if not rows else len(rows)} n_c)")


if __name__ == "__main__":
    main()
