"""Girgis, Data, Diggavi, Kairouz, Suresh (CCS 2021), Section 4's comparison (their Fig. 2): the Renyi-DP
upper bounds of Thm 3.1 (``girgis-rdp``) and Thm 3.3 (``girgis-rdp-simple``) against the lower bound of
Thm 3.4 (``girgis-rdp-lower``), as RDP epsilon(lambda) against the order lambda, one panel per eps0.

The text of the paper we compare against does not give the figure's parameters or plotted values, nor
the formula of the earlier bound it quotes as (9) ([21, Remark 1]) in legible form. The comparison is drawn at parameters chosen and stated in
config (``girgis.fig2``), with (9) as reconstructed in ``erlingsson-rdp``
(:mod:`shuffledp.accounting.accountants.girgis`), and every curve's verdict is *not reproducible as
specified* with that cause. What the text does claim is checked on our curves (:func:`verdicts`): Remark 4,
"our first upper bound presented in Theorem 3.1 is better than our second upper bound presented in Theorem
3.3 for all parameter ranges of interest; see also Figure 2"; "both our bounds outperform the above bound
in (9) in all cases"; and that the lower bound sits below every upper bound.

Room: the library side of ``workflow/rules/girgis.smk``; imports the accountants and
:mod:`shuffledp.tables` (verdict labels); nothing from plotting or report.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from typing import Protocol, cast

import numpy as np
import pandas as pd

from shuffledp.accounting import accountant_class, get_accountant
from shuffledp.tables import NOT_REPRODUCED, NOT_REPRODUCIBLE, REPRODUCED

__all__ = ["CURVE_COLUMNS", "VERDICT_COLUMNS", "UNAVAILABLE", "EQ9", "figure_frame", "verdicts"]

#: columns of :func:`figure_frame`
CURVE_COLUMNS = ["curve", "accountant", "kind", "epsilon_local", "n_users", "order", "rdp", "seconds"]
#: columns of :func:`verdicts`
VERDICT_COLUMNS = [
    "figure",
    "curve",
    "accountant",
    "claim",
    "points",
    "max_relative_difference",
    "verdict",
    "note",
    "known_cause",
]
#: why no curve can be compared with the published figure
UNAVAILABLE = (
    "the figure's parameters and plotted values are not in the text of the paper we compare against; "
    "drawn at parameters stated in config"
)
#: the earlier bound of their comparison, eq. (9)
EQ9 = "erlingsson-rdp"
#: why eq. (9)'s curve is less certain than the others
EQ9_CAUSE = (
    "; its formula is not legible in our copy either: drawn as our reconstruction, Erlingsson et al. (2019) "
    "Thm 7's per-step bound converted to RDP, 2 lambda e^(4 eps0) (e^eps0 - 1)^2 / n"
)


class _RdpAccountant(Protocol):
    def rdp_at(self, orders) -> np.ndarray: ...


def _orders(spec) -> np.ndarray:
    if isinstance(spec, Mapping):  # {start, stop}: every integer order
        return np.arange(int(spec["start"]), int(spec["stop"]) + 1, dtype=float)
    return np.asarray(spec, dtype=float)


def figure_frame(section: Mapping) -> pd.DataFrame:
    """RDP epsilon(lambda) of every configured curve (``accountants``: curve label -> accountant) at every
    eps0 of ``epsilon_local`` and every order of ``orders``, for ``n_users`` users, one round."""
    orders = _orders(section["orders"])
    n = int(section["n_users"])
    rows = []
    for label, name in section["accountants"].items():
        for eps0 in section["epsilon_local"]:
            start = time.perf_counter()
            # the configured curves are RDP accountants (the registry returns the common base type)
            accountant = cast(_RdpAccountant, get_accountant(name, epsilon_local=float(eps0), n_users=n, k=2))
            values = accountant.rdp_at(orders)
            seconds = time.perf_counter() - start
            rows += [
                {
                    "curve": label,
                    "accountant": name,
                    "kind": accountant_class(name).kind.value,
                    "epsilon_local": float(eps0),
                    "n_users": n,
                    "order": float(o),
                    "rdp": float(v),
                    "seconds": seconds / len(orders),
                }
                for o, v in zip(orders, values)
            ]
    return pd.DataFrame(rows, columns=CURVE_COLUMNS)


def _pivot(frame: pd.DataFrame, name: str) -> pd.Series:
    rows = frame[frame["accountant"] == name]
    return rows.set_index(["epsilon_local", "order"])["rdp"].astype(float)


def _ordered(frame, low_name, high_name, claim, cause_if_broken) -> dict:
    """One claim row: the curve ``low_name`` is <= ``high_name`` at every common point."""
    low, high = _pivot(frame, low_name), _pivot(frame, high_name)
    common = low.index.intersection(high.index)
    if not len(common):
        return {
            "figure": 2,
            "curve": claim,
            "accountant": f"{low_name} <= {high_name}",
            "claim": claim,
            "points": 0,
            "max_relative_difference": math.nan,
            "verdict": NOT_REPRODUCIBLE,
            "note": "one of the two curves is not in this run",
            "known_cause": "",
        }
    ratio = (high[common] / low[common]).replace([np.inf, -np.inf], np.nan)
    broken = int((high[common] < low[common] * (1 - 1e-12)).sum())
    verdict = REPRODUCED if broken == 0 else NOT_REPRODUCED
    by_eps0 = ratio.groupby(level="epsilon_local").min()
    note = (
        f"{len(common) - broken} of {len(common)} points hold; {high_name} / {low_name} ranges "
        f"{ratio.min():.3g} to {ratio.max():.3g}; smallest by eps0: "
        + ", ".join(f"{e:g}: {v:.3g}" for e, v in by_eps0.items())
    )
    return {
        "figure": 2,
        "curve": claim,
        "accountant": f"{low_name} <= {high_name}",
        "claim": claim,
        "points": len(common),
        "max_relative_difference": float(ratio.max() - 1.0),
        "verdict": verdict,
        "note": note,
        "known_cause": cause_if_broken if broken else "",
    }


def verdicts(frame: pd.DataFrame, section: Mapping) -> pd.DataFrame:
    """One row per curve (``not reproducible as specified``: nothing published to compare with, see
    :data:`UNAVAILABLE`; eq. (9)'s also names its reconstruction) plus one per claim of the text that our
    curves can check (Remark 4; both bounds below eq. (9); lower below every upper), and one per configured
    ``unavailable_curves`` entry (not drawn)."""
    rows = []
    for (label, name), group in frame.groupby(["curve", "accountant"], sort=False):
        rows.append(
            {
                "figure": 2,
                "curve": label,
                "accountant": name,
                "claim": "",
                "points": len(group),
                "max_relative_difference": math.nan,
                "verdict": NOT_REPRODUCIBLE,
                "note": f"{len(group)} points computed, none published to compare with",
                "known_cause": UNAVAILABLE + (EQ9_CAUSE if name == EQ9 else ""),
            }
        )
    for label in section.get("unavailable_curves", []):
        rows.append(
            {
                "figure": 2,
                "curve": label,
                "accountant": "",
                "claim": "",
                "points": 0,
                "max_relative_difference": math.nan,
                "verdict": NOT_REPRODUCIBLE,
                "note": "not drawn",
                "known_cause": "its formula is not legible in our copy of the paper (only its source, [21, Remark "
                "1], and that it is a DP-to-RDP conversion are) and was not found elsewhere here",
            }
        )
    names = set(frame["accountant"])
    if {"girgis-rdp", "girgis-rdp-simple"} <= names:
        rows.append(
            _ordered(
                frame,
                "girgis-rdp",
                "girgis-rdp-simple",
                "Remark 4: Thm 3.1 below Thm 3.3 at every plotted point",
                "Remark 4 fails here",
            )
        )
    for upper in ("girgis-rdp", "girgis-rdp-simple"):
        if {upper, EQ9} <= names:
            rows.append(
                _ordered(
                    frame,
                    upper,
                    EQ9,
                    f'Section 3.1: {upper} below eq. (9) at every point ("both our '
                    'bounds outperform the above bound in (9) in all cases")',
                    "eq. (9) (as reconstructed) is below their bound here",
                )
            )
    for upper in ("girgis-rdp", "girgis-rdp-simple", EQ9):
        if {upper, "girgis-rdp-lower"} <= names:
            rows.append(
                _ordered(
                    frame,
                    "girgis-rdp-lower",
                    upper,
                    f"Thm 3.4 (lower) below {upper} at every point",
                    "a lower bound above an upper bound: one of them is wrong",
                )
            )
    return pd.DataFrame(rows, columns=VERDICT_COLUMNS)
