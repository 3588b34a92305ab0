"""Benchmark: Wang et al.'s variation-ratio bounds for randomizers with finitely many outputs, side by side with
the exact worst case over every dataset and with ours (``weak-adversary`` over output types, ``types-lower``).

Peer: Wang et al., "Privacy Amplification via Shuffling: Unified, Simplified, and Tightened" (VLDB 2024),
repository ``wangsw/PrivacyAmplification``, module ``unifiedamplification.py``, imported at run time from a
checkout (nothing is copied; see benchmarks/bench_peers_krr.py for how to get one). Their delta at eps is
``Delta(eps, alpha, r0, r1, n, p, tol) + tol n`` (tol = 1e-19) with their variation-ratio parameters
(p, beta, q): ``computeUBParameters`` for k-RR ("krr", k), local hashing ("localhash", g) and subset
selection ("subset", (d, size)); basic RAPPOR (symmetric unary encoding) from their README's table
(p = q = e^eps0, beta = (e^(eps0/2) - 1) / (e^(eps0/2) + 1)); OUE is not in their table, so their bound
for "general mechanisms" (beta = (e^eps0 - 1) / (e^eps0 + 1)) is the one that applies to it.

The channels are written from first principles in tests/accounting/types_channels.py (OLH with the
exhaustive hash family), and the truth is the exact worst case of the shuffled reports over every dataset
(every multiset of the others' inputs, every ordered pair of the differing user's values, the full output
histogram), computed there by enumeration. A row is flagged ``wang_below_truth`` where their delta is below
the truth by more than a relative 1e-9: there their number is not an upper bound.

Writes results/benchmarks/types_vs_wang.csv and prints a summary per randomizer.

Run: python benchmarks/types_vs_wang.py --wang DIR   (or set WANG_PRIVACY_AMPLIFICATION=DIR)
"""

from __future__ import annotations

import argparse
import math
import os
import sys
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "accounting"))  # the test suite's channels and exact enumeration
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_peers_krr import ENVIRONMENT_VARIABLE, PEER_TOLERANCE, load_peer  # noqa: E402
from types_channels import (  # noqa: E402
    ChannelRandomizer,
    exact_worst_case,
    krr_channel,
    olh,
    oue,
    rappor,
    subset_selection,
)

from shuffledp.accounting import get_accountant  # noqa: E402
from shuffledp.io import atomic_write_text  # noqa: E402

OUTPUT = ROOT / "results" / "benchmarks" / "types_vs_wang.csv"
LOCAL_EPSILONS = (0.5, 1.0, 2.0, 4.0)
FRACTIONS = (0.05, 0.1, 0.2, 0.35, 0.5, 0.7, 0.85)
SLACK = 1e-9


def _krr3(e0: float) -> ChannelRandomizer:
    return ChannelRandomizer("k-RR(k=3)", e0, krr_channel(e0, 3))


#: (label, channel factory, largest n, their parameters (p, beta, q) from their code or README)
def _cases(peer):
    def general(e0):
        return math.exp(e0), math.expm1(e0) / (math.exp(e0) + 1), math.exp(e0)

    def basic_rappor(e0):
        return math.exp(e0), math.expm1(e0 / 2) / (math.exp(e0 / 2) + 1), math.exp(e0)

    def theirs(mechanism, options):
        return lambda e0: peer.computeUBParameters(e0, mechanism, options)[:3]

    return [
        ("k-RR(k=3)", _krr3, 7, theirs("krr", 3)),
        ("RAPPOR(d=3)", rappor, 6, basic_rappor),
        ("OUE(d=3), their general bound", oue, 6, general),
        ("OLH(d=3,g=2)", olh, 4, theirs("localhash", 2)),
        ("subset(d=4,size=2)", subset_selection, 6, theirs("subset", (4, 2))),
    ]


def peer_delta(peer, params, n: int, eps: float) -> float:
    """Their delta at eps, as their amplificationUB tests it: Delta(...) + tol n."""
    p, beta, q = params
    alpha = beta / (p - 1)
    return (
        float(peer.Delta(eps, alpha, alpha * p / q, alpha * p / q, n, p, PEER_TOLERANCE)) + PEER_TOLERANCE * n
    )


def run(peer) -> pd.DataFrame:
    rows = []
    for label, factory, largest_n, parameters in _cases(peer):
        for e0 in LOCAL_EPSILONS:
            randomizer = factory(e0)
            eps = np.array(FRACTIONS) * e0
            for n in range(2, largest_n + 1):
                truth = exact_worst_case(randomizer.channel, n, eps)
                upper = get_accountant("weak-adversary", randomizer=randomizer, n_users=n).delta_for_epsilon(
                    eps
                )
                lower = get_accountant("types-lower", randomizer=randomizer, n_users=n).delta_for_epsilon(eps)
                for i, e in enumerate(eps):
                    wang = peer_delta(peer, parameters(e0), n, float(e))
                    rows.append(
                        {
                            "randomizer": label,
                            "epsilon_local": e0,
                            "n_users": n,
                            "epsilon": float(e),
                            "exact_worst_case": truth[i],
                            "weak_adversary_types": upper[i],
                            "types_lower": lower[i],
                            "wang_vldb24": wang,
                            "wang_below_truth": bool(wang < truth[i] * (1 - SLACK)),
                            "truth_over_wang": truth[i] / wang if wang > 0 else math.inf,
                            "wang_over_truth": wang / truth[i] if truth[i] > 1e-14 else math.nan,
                            "ours_over_truth": upper[i] / truth[i] if truth[i] > 1e-14 else math.nan,
                        }
                    )
        print(label, flush=True)
    return pd.DataFrame(rows)


def summary(frame: pd.DataFrame) -> pd.DataFrame:
    positive = frame[frame["exact_worst_case"] > 1e-12]
    return positive.groupby("randomizer").agg(
        points=("epsilon", "size"),
        wang_below=("wang_below_truth", "sum"),
        worst_truth_over_wang=("truth_over_wang", "max"),
        loosest_wang_over_truth=("wang_over_truth", "max"),
        loosest_ours_over_truth=("ours_over_truth", "max"),
        ours_below=("ours_over_truth", lambda r: int((r < 1 - SLACK).sum())),
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--wang", default=os.environ.get(ENVIRONMENT_VARIABLE), help="checkout of their repository"
    )
    arguments = parser.parse_args()
    if not arguments.wang:
        parser.error(f"pass --wang DIR or set {ENVIRONMENT_VARIABLE}")
    frame = run(load_peer(arguments.wang))
    OUTPUT.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(OUTPUT, frame.to_csv(index=False))
    with pd.option_context("display.width", 200, "display.max_columns", 20):
        print(summary(frame))
    print(f"wrote {OUTPUT}")


if __name__ == "__main__":
    main()
