"""Hypotheses for the cells the paper prints and we cannot reproduce: Table II's n = 1,000 "Our δ" cells
(eq. (6) as printed at n = 1,000, n_x0 = 800, ε0 = 0.49, k = 10 is 10^58 to 10^162 below the printed
values). Each hypothesis is one reading of the paper that differs from ours in one stated way, fixed
here in advance with its reason; every one is evaluated at every cell and reported, with how far it
lands, whichever comes closest. Nothing is searched or fitted ("never tune").

Room: the one room of the report that computes privacy quantities, through
:func:`shuffledp.experiments.accounting.log_delta`, in its own workflow rule
(``table2_hypotheses`` in ``workflow/rules/report.smk``); the report reads its CSV.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from decimal import Decimal

import pandas as pd

from shuffledp.experiments.accounting import format_delta, log_delta, n_x0_from_fraction

__all__ = ["HYPOTHESES", "HYPOTHESIS_COLUMNS", "table2_hypotheses", "closest_hypotheses"]

#: (name, accountant, changes to the block's setting, reason); the first is our own reading
HYPOTHESES: tuple[tuple[str, str, dict, str], ...] = (
    (
        "ours: eq. (6), n_x0 = 0.8 n",
        "biswas-printed",
        {},
        "config accounting.table2 (reproduces the n = 100 block)",
    ),
    (
        "eq. (6), n_x0 = 80",
        "biswas-printed",
        {"n_x0": 80},
        "the n = 100 block's n_x0 kept at n = 1,000 (the paper's text states n_x0 = 80)",
    ),
    (
        "eq. (6), n_x0 = 0.2 n",
        "biswas-printed",
        {"n_x0_fraction": 0.2},
        "the users not on x0 at n_x0 = 0.8 n, in case the roles were swapped",
    ),
    (
        "eq. (6), ε0 = 0.5",
        "biswas-printed",
        {"epsilon_local": 0.5},
        "the ε0 this block's rate columns were computed with",
    ),
    ("exact single-bin δ, forward", "biswas-exact", {}, "the corrected formula the paper meant"),
    (
        "exact single-bin δ, both directions",
        "biswas-exact-both",
        {},
        "the other direction of the neighbouring pair",
    ),
)
HYPOTHESIS_COLUMNS = [
    "hypothesis",
    "reason",
    "accountant",
    "n_users",
    "k",
    "n_x0",
    "epsilon_local",
    "epsilon",
    "paper",
    "ours",
    "log10_ours_over_paper",
]
_LOG10_E = 1.0 / math.log(10.0)


def _log10_printed(text: str) -> float:
    value = Decimal(str(text).strip().replace("E", "e"))
    return float(value.log10()) if value > 0 else -math.inf


def table2_hypotheses(table2: Mapping, paper: pd.DataFrame, *, block_label: str = "n=1,000") -> pd.DataFrame:
    """Every hypothesis at every printed "Our δ" cell of the Table II block ``block_label``.

    ``table2``: the config slice ``accounting.table2``; ``paper``: rows of ``table2_comparison.csv``
    (columns block, row, column, paper), of which the block's "Our delta" cells are read.
    """
    block = next((b for b in table2["blocks"] if b["label"] == block_label), None)
    if block is None:
        raise ValueError(
            f"config: `accounting.table2.blocks` must have a block labelled {block_label!r}; got "
            f"{[b['label'] for b in table2['blocks']]}."
        )
    cells = paper[(paper["block"] == block_label) & (paper["column"] == "Our delta")]
    epsilons = [float(str(row).removeprefix("eps=")) for row in cells["row"]]
    records = []
    for name, accountant, change, reason in HYPOTHESES:
        n_users = int(change.get("n_users", block["n_users"]))
        n_x0 = int(
            change.get(
                "n_x0", n_x0_from_fraction(change.get("n_x0_fraction", table2["n_x0_fraction"]), n_users)
            )
        )
        eps0 = float(change.get("epsilon_local", block["epsilon_local"]))
        logs = log_delta(
            accountant, epsilons, epsilon_local=eps0, n_users=n_users, k=int(table2["k"]), n_x0=n_x0
        )
        for epsilon, printed, value in zip(epsilons, cells["paper"].astype(str), logs):
            gap = value * _LOG10_E - _log10_printed(printed) if value > -math.inf else -math.inf
            records.append(
                {
                    "hypothesis": name,
                    "reason": reason,
                    "accountant": accountant,
                    "n_users": n_users,
                    "k": int(table2["k"]),
                    "n_x0": n_x0,
                    "epsilon_local": eps0,
                    "epsilon": epsilon,
                    "paper": printed,
                    "ours": format_delta(float(value)),
                    "log10_ours_over_paper": gap,
                }
            )
    return pd.DataFrame(records, columns=HYPOTHESIS_COLUMNS)


def closest_hypotheses(frame: pd.DataFrame) -> pd.DataFrame:
    """Per hypothesis: the cells, the median and the largest |log10(ours / printed)| (inf where a value
    underflows to 0), sorted closest first."""
    gap = pd.to_numeric(frame["log10_ours_over_paper"], errors="coerce").abs()
    summary = (
        frame.assign(gap=gap)
        .groupby("hypothesis", sort=False)
        .agg(cells=("gap", "size"), median_orders=("gap", "median"), largest_orders=("gap", "max"))
    )
    return summary.sort_values(["median_orders", "largest_orders"]).reset_index()
