"""Koskela, Heikkilä & Honkela's Figures 1-3: accounting of repeated (composed, subsampled) shuffled
collection, beside the curves stored in their public code.

* Figure 1 -- delta(eps) of the clones pair after n_c = 1..4 compositions (n = 1e4, eps0 = 4).
* Figure 2 -- eps(delta = 1e-5) of the subsampled shuffler against n_c (n = 1e5, q = 0.01, eps0 = 3):
  PLD of the subsampled dominating pair vs Girgis et al.'s RDP upper bound.
* Figure 3 -- eps(delta) of shuffled k-RR (n = 1000, k = 4, eps0 = log 13) after n_c = 1, 4, 16
  compositions: strong adversary, weak adversary, the clones bound, and our lower bound.

Every curve comes from :func:`shuffledp.accounting.compose` (privacy loss distributions through
dp_accounting) or, for accountants that compose themselves (``girgis-rdp``), from the registry with
``compositions`` / ``subsample``. The published curves are the numbers their plotting scripts read
(transcribed in :mod:`shuffledp.reference`, ``koskela_figures``); :func:`curve_verdicts` judges each
of our curves against its counterpart with the report's verdict vocabulary.

Room: the library side of ``workflow/rules/koskela.smk``. Imports the accountants, the reference
values and :mod:`shuffledp.tables` (verdict labels); nothing from utility, report or plotting.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping

import numpy as np
import pandas as pd

from shuffledp.accounting import accountant_class, compose, get_accountant
from shuffledp.tables import NOT_REPRODUCED, REPRODUCED

__all__ = ["FIGURES", "CURVE_COLUMNS", "VERDICT_COLUMNS", "KNOWN_DIFFERENCES", "composed", "figure_frame",
           "curve_verdicts"]

FIGURES = (1, 2, 3)
#: documented causes of differences from their stored curves ("figure/curve" -> sentence; details and
#: evidence in docs/reproduction-notes.md, "Compositions"); added to a curve's note when it is not reproduced
KNOWN_DIFFERENCES = {
    "3/strong adversary": (
        "their script composes the pair ((A + 1, C), (A, C + 1)) alone, without the probability gamma that the "
        "differing user's own report came from the blanket (loss 0), and drops c = 0; ours is the strong "
        "adversary's view of their Def. 1, whose single-round delta brute-force enumeration confirms"),
    "3/clones (Feldman et al. 2023)": (
        "their script (blankets_fig4/pld_for_clones.py) mixes pairs: the masses come from get_logP2 as redefined "
        "at line 50 (a generic clones pair, C ~ Bin(n - 1, e^-eps0)), the losses (lines 117-118) carry an extra "
        "factor (1 - q) in the denominator and the trinomial ratio of u's third branch uses p = 2 p_in instead of "
        "p_in. Check: their script run as published (nx = 2e6) gives their stored values (0.4221 at n_c = 1, "
        "delta = 1e-4); with those three lines corrected it gives 0.3889 / 0.8422 / 1.8481 at n_c = 1 / 4 / 16, "
        "within 0.05% of ours (clones-krr-2023)"),
    "2/PLD": (
        "their PLD is rebuilt from the delta curve sampled at 500 points of eps in [-0.2, 0.2] with nearest-point "
        "rounding and grows like n_c, ours like sqrt(n_c) as many small independent losses do; the cause is "
        "likely their reconstruction (not verified)"),
}
#: columns of :func:`figure_frame`
CURVE_COLUMNS = ["figure", "curve", "accountant", "kind", "compositions", "x_name", "x", "value_name", "value",
                 "seconds"]
#: columns of :func:`curve_verdicts`
VERDICT_COLUMNS = ["figure", "curve", "accountant", "compositions", "points", "compared", "max_relative_difference",
                   "median_relative_difference", "tolerance", "verdict", "note", "known_cause"]


def composed(name: str, *, epsilon_local: float, n_users: int, k: int, compositions: int, subsample: float = 1.0):
    """The accountant ``name`` after ``compositions`` rounds, each sampling ``subsample`` x ``n_users``
    users from the population ``n_users`` (the papers' convention): the registry's own composition where
    the accountant has one (RDP bounds), else :func:`shuffledp.accounting.compose`."""
    if getattr(accountant_class(name), "accepts_compositions", False):
        return get_accountant(name, epsilon_local=epsilon_local, n_users=n_users, k=k, compositions=compositions,
                              subsample=subsample)
    return compose(name, epsilon_local=epsilon_local, n_users=n_users, k=k, compositions=compositions,
                   subsample=subsample)


def _epsilon_grid(spec) -> np.ndarray:
    if isinstance(spec, Mapping):
        return np.linspace(float(spec["start"]), float(spec["stop"]), int(spec["num"]))
    return np.asarray(spec, dtype=float)


def _delta_grid(spec) -> np.ndarray:
    if isinstance(spec, Mapping):  # {log10_start, log10_stop, num}: their np.logspace-style grids
        return 10.0 ** np.linspace(float(spec["log10_start"]), float(spec["log10_stop"]), int(spec["num"]))
    return np.asarray(spec, dtype=float)


def _row(figure, curve, name, compositions, x_name, x, value_name, value, seconds) -> dict:
    return {"figure": figure, "curve": curve, "accountant": name, "kind": accountant_class(name).kind.value,
            "compositions": int(compositions), "x_name": x_name, "x": float(x), "value_name": value_name,
            "value": float(value), "seconds": seconds}


def figure_frame(number: int, section: Mapping) -> pd.DataFrame:
    """The curves of Koskela et al.'s Figure ``number`` (1, 2 or 3) from the ``koskela.fig<N>`` config
    slice ``section``: one row per point (see :data:`CURVE_COLUMNS`); ``curve`` is the label of the
    published curve it is compared with (``accountants`` maps curve label -> accountant), or the
    accountant's own name for curves we add (``extra_accountants``)."""
    if number not in FIGURES:
        raise ValueError(f"`number` must be one of {', '.join(map(str, FIGURES))}; got {number!r}.")
    curves = [(label, name) for label, name in section["accountants"].items()]
    curves += [(name, name) for name in section.get("extra_accountants", [])]
    common = {"epsilon_local": float(section["epsilon_local"]), "k": int(section["k"])}
    rows = []
    for label, name in curves:
        for compositions in section["compositions"]:
            start = time.perf_counter()
            if number == 1:
                accountant = composed(name, n_users=int(section["n_users"]), compositions=int(compositions), **common)
                epsilons = _epsilon_grid(section["epsilon"])
                values = accountant.delta_for_epsilon(epsilons)
                seconds = (time.perf_counter() - start) / len(epsilons)
                rows += [_row(1, label, name, compositions, "epsilon", e, "delta", d, seconds) for e, d in zip(epsilons, values)]
            elif number == 2:
                q = float(section["subsample"])
                accountant = composed(name, n_users=int(section["n_users"]), compositions=int(compositions),
                                      subsample=q, **common)
                value = accountant.epsilon_for_delta(float(section["delta"]))
                rows.append(_row(2, label, name, compositions, "compositions", compositions, "epsilon", value,
                                 time.perf_counter() - start))
            else:
                accountant = composed(name, n_users=int(section["n_users"]), compositions=int(compositions), **common)
                for delta in _delta_grid(section["delta"]):
                    point = time.perf_counter()
                    value = accountant.epsilon_for_delta(float(delta))
                    rows.append(_row(3, label, name, compositions, "delta", delta, "epsilon", value,
                                     time.perf_counter() - point))
    return pd.DataFrame(rows, columns=CURVE_COLUMNS)


def curve_verdicts(ours: pd.DataFrame, reference: pd.DataFrame, *, tolerance: float, smallest_delta: float,
                   notes: Mapping | None = None) -> pd.DataFrame:
    """One verdict per published curve (figure, curve, n_c): *reproduced* when every compared point of
    ours is within ``tolerance`` (relative) of the published value, else *not reproduced*.

    Points are matched on x (relative match 1e-9). A delta-valued point whose published value is below
    ``smallest_delta`` is drawn but not compared: both computations are in linear space there (FFT
    round-off of about 1e-15 per convolution). ``notes`` maps "figure/curve" to a known cause of a
    difference (documented in docs/reproduction-notes.md), given in ``known_cause`` when the curve is
    not reproduced.
    """
    notes = dict(notes or {})
    rows = []
    reference = reference.assign(compositions=pd.to_numeric(reference["compositions"], errors="coerce"))
    for (figure, curve), theirs in reference.groupby(["figure", "curve"], sort=False):
        mine_all = ours[(ours["figure"] == int(figure)) & (ours["curve"] == curve)]
        for compositions, published in theirs.groupby(theirs["compositions"].fillna(-1), sort=False):
            mine = mine_all if compositions == -1 else mine_all[mine_all["compositions"] == int(compositions)]
            differences, compared = [], 0
            for _, point in published.iterrows():
                x, value = float(point["x"]), float(point["value"])
                match = mine[np.isclose(mine["x"], x, rtol=1e-9, atol=0.0)] if len(mine) else mine
                if point["value_name"] == "delta" and value < smallest_delta:
                    continue
                if match.empty:
                    continue
                compared += 1
                ours_value = float(match["value"].iloc[0])
                differences.append(abs(ours_value - value) / abs(value) if value else math.inf)
            accountant = mine_all["accountant"].iloc[0] if len(mine_all) else ""
            if not compared:
                verdict, note = NOT_REPRODUCED, "no point of ours matches this curve (not computed in this run)"
                largest = median = math.nan
            else:
                largest, median = float(np.max(differences)), float(np.median(differences))
                verdict = REPRODUCED if largest <= tolerance else NOT_REPRODUCED
                note = (f"{compared} of {len(published)} points compared; largest relative difference "
                        f"{largest:.2%} (tolerance {tolerance:.0%})")
            extra = notes.get(f"{int(figure)}/{curve}")
            rows.append({"figure": int(figure), "curve": curve, "accountant": accountant,
                         "compositions": "" if compositions == -1 else int(compositions), "points": len(published),
                         "compared": compared, "max_relative_difference": largest,
                         "median_relative_difference": median, "tolerance": tolerance, "verdict": verdict,
                         "note": note, "known_cause": extra if extra and verdict != REPRODUCED else ""})
    return pd.DataFrame(rows, columns=VERDICT_COLUMNS)
