"""Judging figures: one sentence-level reading per figure or table, derived from that figure's own
data (never written in advance).

Room: functions ``read_<figure kind>(frame) -> str`` on frames produced by
:mod:`shuffledp.report.read` or the stage CSVs; they compute what they state (ranges, ratios,
crossovers) and say when the data cannot support a reading. Imports read helpers only.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd

from shuffledp.accounting import accountant_class
from shuffledp.experiments.utility_tables import merge_coincident_calibrations
from shuffledp.report.read import (
    GROUP_COLUMNS,
    N_COLUMNS,
    first_column,
    format_cell,
    method_roles,
    method_summary,
)
from shuffledp.report.verdicts import is_guarantee


def _group_label(row, groups) -> str:
    parts = []
    for column in groups:
        val = row[column]
        if column in N_COLUMNS:
            parts.append(f"n = {int(val):,}")
        elif column == "epsilon":
            parts.append(f"ε = {val}")
        elif column == "epsilon_local":
            parts.append(f"ε0 = {val}")
        else:
            parts.append(f"{column} = {val}")
    return ", ".join(parts) or "all runs"


def read_method_comparison(frame: pd.DataFrame) -> str:
    """One paragraph of facts from a ½L1-error-per-method table: who is lowest where, and by how much.
    Calibrations of the Gaussian that coincide (the same σ at every n: one experiment) are counted once
    (:func:`shuffledp.experiments.utility_tables.merge_coincident_calibrations`)."""
    frame = merge_coincident_calibrations(frame)
    summary = method_summary(frame)
    methods = [c for c in summary.columns if c not in (*GROUP_COLUMNS, "best")]
    groups = [c for c in GROUP_COLUMNS if c in summary.columns]
    roles = method_roles(methods)
    total = len(summary)
    sentences = []
    best_counts = summary["best"].value_counts()
    ranking = ", ".join(f"{m} in {int(best_counts.get(m, 0))}" for m in methods)
    constant = [c for c in GROUP_COLUMNS if c in frame.columns and frame[c].nunique(dropna=False) == 1]
    context = f" (in every row: {_group_label(frame.iloc[0], constant)})" if constant else ""
    sentences.append(
        f"Lowest median ½L1 error per configuration ({total} configuration(s): "
        f"{', '.join(groups) or 'one'}){context}: {ranking}."
    )
    if "coincides_with" in frame.columns:
        merged = frame.drop_duplicates("calibration")
        merged = merged[merged["coincides_with"] != ""]
        if len(merged):
            sentences.append(
                "Counted once: "
                + "; ".join(
                    f"calibration `{row.calibration}` = `{'`, `'.join(str(row.coincides_with).split(', '))}` "
                    "(the same σ at every n: one experiment)"
                    for row in merged.itertuples()
                )
                + "."
            )
    gaussian, inv, shuffle = roles.get("gaussian"), roles.get("shuffle+inv"), roles.get("shuffle")
    if inv and shuffle:
        wins = int((summary[inv] < summary[shuffle]).sum())
        sentences.append(f"shuffle+INV is below shuffle in {wins} of {total}.")
    if inv and gaussian:
        wins = int((summary[gaussian] < summary[inv]).sum())
        sentences.append(f"The Gaussian mechanism is below shuffle+INV in {wins} of {total}.")
        n_column = first_column(summary, N_COLUMNS)
        ratio = summary[inv] / summary[gaussian]
        if n_column is not None and summary[n_column].nunique() > 1:
            smallest = summary[summary[n_column] == summary[n_column].min()]
            largest = summary[summary[n_column] == summary[n_column].max()]
            sentences.append(
                "Median ½L1 ratio shuffle+INV / Gaussian: "
                + "; ".join(
                    f"{_group_label(row, groups)}: {format_cell(ratio[index])}"
                    for index, row in pd.concat([smallest, largest]).iterrows()
                )
                + "."
            )
        else:
            sentences.append(
                "Median ½L1 ratio shuffle+INV / Gaussian: "
                + "; ".join(
                    f"{_group_label(row, groups)}: {format_cell(ratio[index])}"
                    for index, row in summary.iterrows()
                )
                + "."
            )
    return " ".join(sentences)


def read_delta_surface(frame: pd.DataFrame) -> str:
    """Facts from a δ(ε, ε0) grid: monotonicity in ε and ε0, and printed vs exact.

    ``frame`` columns: ``epsilon``, ``epsilon_local`` and either ``delta`` with ``accountant`` (long
    form) or one ``delta_<accountant>`` column per accountant (wide form).
    """
    eps = first_column(frame, ("epsilon", "eps"))
    eps0 = first_column(frame, ("epsilon_local", "eps0", "epsilon0"))
    if eps is None or eps0 is None:
        raise ValueError(
            "`figure 1 data` must have columns `epsilon` and `epsilon_local`; "
            f"got {', '.join(map(str, frame.columns))}."
        )
    if "accountant" in frame.columns and "delta" in frame.columns:
        wide = frame.pivot_table(index=[eps, eps0], columns="accountant", values="delta", aggfunc="first")
    else:
        columns = [c for c in frame.columns if str(c).startswith("delta")]
        if not columns:
            raise ValueError("`figure 1 data` has no `delta` column.")
        wide = frame.set_index([eps, eps0])[columns]
        wide.columns = [str(c).removeprefix("delta_") or "delta" for c in columns]
    wide = wide.sort_index()
    sentences = []
    for name in wide.columns:
        grid = wide[name].unstack(eps0)  # rows: epsilon ascending, columns: epsilon_local ascending
        values = grid.to_numpy(dtype=float)
        tolerance = 1e-12
        with np.errstate(invalid="ignore"):
            down_eps = np.diff(values, axis=0) <= tolerance * np.maximum(1e-300, np.abs(values[:-1]))
            up_eps0 = np.diff(values, axis=1) >= -tolerance * np.maximum(1e-300, np.abs(values[:, :-1]))
        pairs_eps = int(np.isfinite(np.diff(values, axis=0)).sum())
        pairs_eps0 = int(np.isfinite(np.diff(values, axis=1)).sum())
        zero = int((values == 0).sum())
        sentences.append(
            f"`{name}`: δ is non-increasing in ε in {int(down_eps.sum())} of {pairs_eps} neighbouring "
            f"pairs and non-decreasing in ε0 in {int(up_eps0.sum())} of {pairs_eps0}; "
            f"{zero} of {values.size} grid points have δ = 0."
        )
    printed = [c for c in wide.columns if "printed" in str(c)]
    exact = [c for c in wide.columns if "exact" in str(c)]
    if printed and exact:
        p, e = wide[printed[0]].to_numpy(float), wide[exact[0]].to_numpy(float)
        both = (p > 0) & (e > 0)
        if both.any():
            log_ratio = np.log10(p[both] / e[both])
            sentences.append(
                f"Where both are positive ({int(both.sum())} points), log10(printed / exact) ranges from "
                f"{log_ratio.min():.2f} to {log_ratio.max():.2f}."
            )
        only = int(((p == 0) & (e > 0)).sum())
        if only:
            sentences.append(f"At {only} point(s) the printed δ is 0 while the exact δ is positive.")
    return " ".join(sentences)


def read_heatmap_summary(frame: pd.DataFrame) -> str:
    """Facts from a heat-map summary (one row per region and calibration: ``l1_half_gaussian``,
    ``l1_half_shuffle_inv``, δ used)."""
    needed = ("l1_half_gaussian", "l1_half_shuffle_inv")
    if not all(c in frame.columns for c in needed):
        raise ValueError(
            f"`heat-map data` must have columns {', '.join(needed)}; got {', '.join(map(str, frame.columns))}."
        )
    sentences = []
    for _, row in frame.iterrows():
        where = ", ".join(
            part
            for part in (
                str(row["region"]) if "region" in frame.columns else "",
                f"n = {int(row['n_users']):,}" if "n_users" in frame.columns else "",
                f"ε = {row['epsilon']}" if "epsilon" in frame.columns else "",
                f"ε0 = {row['epsilon_local']}" if "epsilon_local" in frame.columns else "",
                f"Gaussian calibration {row['calibration']} ({row['accountant']})"
                if "calibration" in frame.columns
                else "",
            )
            if part
        )
        gaussian, inv = float(row["l1_half_gaussian"]), float(row["l1_half_shuffle_inv"])
        text = (
            f"{where}: ½L1 distance to the original distribution {format_cell(gaussian)} (Gaussian) and "
            f"{format_cell(inv)} (shuffle+INV); the {'Gaussian' if gaussian < inv else 'shuffle+INV'} "
            f"estimate is closer (ratio shuffle+INV / Gaussian {format_cell(inv / gaussian if gaussian else math.inf)})"
        )
        if "delta_used" in frame.columns:
            text += f", calibrated at δ̂ = {format_cell(row['delta_used'])}"
            if "delta_floored" in frame.columns and bool(row["delta_floored"]):
                text += " (δ̂ = 0 replaced by the configured floor)"
        sentences.append(text + ".")
    return " ".join(sentences)


def _kind(accountant) -> str:
    try:
        return accountant_class(str(accountant)).kind.value
    except (KeyError, ValueError):
        return ""


def read_crossover(frame: pd.DataFrame, *, upper: str | None = None, lower: str | None = None) -> str:
    """Facts from the crossover sweep: per accountant, in how many (ε0, ε) cells the Gaussian wins;
    with ``upper`` and ``lower`` (the bracket's accountants), in how many cells the winner is certain:
    the same under both, with means more than 2 Monte-Carlo standard errors apart under both."""
    needed = ("epsilon_local", "epsilon", "accountant", "gaussian_better")
    if not all(c in frame.columns for c in needed):
        raise ValueError(
            f"`crossover data` must have columns {', '.join(needed)}; got {', '.join(map(str, frame.columns))}."
        )
    # the figure compares shuffle+INV with the Gaussian *with projection* (a distribution, TV <= 1) where the
    # sweep has it; the reading counts the same comparison
    projected = {"gaussian_proj_better", "tv_gaussian_proj_mean", "tv_gaussian_proj_se"} <= set(frame.columns)
    if projected:
        frame = frame.assign(
            gaussian_better=frame["gaussian_proj_better"],
            l1_half_gaussian_mean=frame["tv_gaussian_proj_mean"],
            l1_half_gaussian_se=frame["tv_gaussian_proj_se"],
        )
    gaussian_name = "the Gaussian with projection" if projected else "the Gaussian"
    better = frame.assign(gaussian_better=frame["gaussian_better"].astype(bool))
    sentences = []
    # the valid accountants lead (upper bounds: guarantees; then lower bounds); a formula that is neither
    # (eq. (6) as printed) comes last, marked as such, with the cells its floor decided
    groups = list(better.groupby("accountant", sort=False))
    groups.sort(key=lambda item: 0 if is_guarantee(item[0]) else 1 if _kind(item[0]) == "lower bound" else 2)
    for accountant, group in groups:
        kind = _kind(accountant)
        role = (
            "an upper bound: a guarantee"
            if is_guarantee(accountant)
            else "a lower bound: no analysis certifies less δ"
            if kind == "lower bound"
            else f"{kind or 'not registered'}: not a guarantee, shown for the paper's comparison only"
        )
        text = (
            f"With δ̂ from `{accountant}` ({role}) {gaussian_name} has the lower mean TV in "
            f"{int(group['gaussian_better'].sum())} of {len(group)} (ε0, ε) cells"
        )
        if not is_guarantee(accountant) and "delta_floored" in group.columns:
            floored = group[group["delta_floored"].astype(bool)]
            if len(floored):
                floor = (
                    f" δ = {format_cell(float(floored['delta_used'].min()))}"
                    if "delta_used" in floored.columns
                    else " δ"
                )
                text += (
                    f"; in {len(floored)} of them δ̂ was below the floor and the Gaussian was calibrated at the "
                    f"floor{floor}, so those cells show the floor, not the accountant"
                )
        sentences.append(text + ".")
    wide = better.pivot_table(
        index=["epsilon_local", "epsilon"], columns="accountant", values="gaussian_better", aggfunc="first"
    )
    printed = [c for c in wide.columns if "printed" in str(c)]
    if printed:
        for other in [c for c in wide.columns if c != printed[0]]:
            both = wide[[printed[0], other]].dropna()
            changed = int((both[printed[0]] != both[other]).sum())
            sentences.append(
                f"The winner changes between `{printed[0]}` and `{other}` in {changed} of {len(both)} cells."
            )
    if upper in wide.columns and lower in wide.columns:
        clear = (
            better.assign(
                clear=(better["l1_half_gaussian_mean"] - better["l1_half_shuffle_inv_mean"]).abs()
                > 2.0 * np.hypot(better["l1_half_gaussian_se"], better["l1_half_shuffle_inv_se"])
            )
            if {"l1_half_gaussian_se", "l1_half_shuffle_inv_se"} <= set(better.columns)
            else better.assign(clear=True)
        )
        cells = clear.pivot_table(
            index=["epsilon_local", "epsilon"],
            columns="accountant",
            values=["gaussian_better", "clear"],
            aggfunc="first",
        ).dropna()
        same = cells[("gaussian_better", upper)] == cells[("gaussian_better", lower)]
        certain = same & cells[("clear", upper)].astype(bool) & cells[("clear", lower)].astype(bool)
        gaussian = int((certain & cells[("gaussian_better", upper)].astype(bool)).sum())
        sentences.append(
            f"Under the bracket (δ̂ of `{upper}`, an upper bound, and of `{lower}`, a lower bound) the winner is "
            f"certain in {int(certain.sum())} of {len(cells)} cells (the Gaussian in {gaussian}, shuffle+INV in "
            f"{int(certain.sum()) - gaussian}); in the other {len(cells) - int(certain.sum())} it depends on where "
            "the true δ lies between the bounds or is within Monte-Carlo error."
        )
    return " ".join(sentences)


#: log10 slack when comparing two accountants' delta (values are computed independently)
_LOG10_DELTA_SLACK = 1e-9


def read_sweep(frame: pd.DataFrame) -> str:
    """Facts from a δ sweep: per accountant the δ range, and where labelled bounds sit vs the exact δ.

    ``frame``: one row per (setting, accountant) with ``accountant``, ``kind`` (as printed / exact /
    upper bound / lower bound ...), ``delta`` and optionally ``log10_delta`` (kept when δ underflows).
    """
    needed = ("accountant", "kind", "delta")
    if not all(c in frame.columns for c in needed):
        raise ValueError(
            f"`sweep data` must have columns {', '.join(needed)}; got {', '.join(map(str, frame.columns))}."
        )
    frame = frame.copy()
    if "log10_delta" not in frame.columns:
        with np.errstate(divide="ignore"):
            frame["log10_delta"] = np.log10(frame["delta"].astype(float))
    keys = [
        c for c in frame.columns if c not in ("sweep", "accountant", "kind", "label", "delta", "log10_delta")
    ]
    sentences = []
    for (name, kind), group in frame.groupby(["accountant", "kind"], sort=False):
        finite = group["log10_delta"][np.isfinite(group["log10_delta"])]
        span = f"log10 δ from {finite.min():.1f} to {finite.max():.1f}" if len(finite) else "δ = 0 throughout"
        sentences.append(
            f"`{name}` ({kind}): {len(group)} points, {span}, {int((group['log10_delta'] == -np.inf).sum())} with δ = 0."
        )
    exact = frame[frame["kind"] == "exact"]
    if len(exact) and keys:
        reference = exact.drop_duplicates(keys).set_index(keys)["log10_delta"]
        for (name, kind), group in frame[frame["kind"] != "exact"].groupby(
            ["accountant", "kind"], sort=False
        ):
            joined = (
                group.set_index(keys)["log10_delta"]
                .to_frame("other")
                .join(reference.rename("exact"), how="inner")
            )
            if joined.empty:
                continue
            below = int((joined["other"] < joined["exact"] - _LOG10_DELTA_SLACK).sum())
            above = int((joined["other"] > joined["exact"] + _LOG10_DELTA_SLACK).sum())
            sentences.append(
                f"`{name}` is below `{exact['accountant'].iloc[0]}` at {below} and above it at {above} of {len(joined)} points"
                + (" (an upper bound must never be below)" if kind == "upper bound" else "")
                + (" (a lower bound must never be above)" if kind == "lower bound" else "")
                + "."
            )
    return " ".join(sentences)


#: relative slack when comparing two accountants' epsilon (each search stops at a relative 1e-9)
_EPSILON_SLACK = 1e-6


_COMPARISON_NEEDED = (
    "panel",
    "accountant",
    "role",
    "n_users",
    "epsilon_local",
    "k",
    "delta",
    "epsilon",
    "status",
)


_DRAWN = ("ok", "at or above eps0")


def _where(x: str, values) -> str:
    values = sorted(float(v) for v in values)
    if x == "n_users":
        return "n = " + ", ".join(f"{int(v):,}" for v in values)
    return "ε0 = " + ", ".join(f"{v:g}" for v in values)


def _ratio_range(ratio: pd.Series, x: str) -> str:
    """ "a to b (largest at x = ...)" of a ratio indexed by the panel's x values."""
    ratio = ratio.dropna()
    if ratio.empty:
        return "no common point"
    return f"{ratio.min():.5f} to {ratio.max():.5f} (largest at {_where(x, [ratio.idxmax()])})"


def read_epsilon_comparison(frame: pd.DataFrame) -> str:
    """Facts from the ε-at-fixed-δ comparison (``epsilon_comparison.csv``), per panel: which valid
    guarantee is smallest and how far the others and the lower bound are from it, whether any
    guarantee falls below the lower bound (it must not), and every point without a drawable ε.
    """
    if not all(c in frame.columns for c in _COMPARISON_NEEDED):
        raise ValueError(
            f"`epsilon comparison data` must have columns {', '.join(_COMPARISON_NEEDED)}; "
            f"got {', '.join(map(str, frame.columns))}."
        )
    axes = {"against n": "n_users", "against eps0": "epsilon_local"}
    sentences = []
    for panel, rows in frame.groupby("panel", sort=False):
        x = axes.get(panel)
        if x is not None:
            sentences.append(_epsilon_panel_reading(panel, rows, x))
    return " ".join(sentences)


def _epsilon_panel_reading(panel: str, rows: pd.DataFrame, x: str) -> str:
    """One panel of the ε comparison (``x``: the column along its axis)."""
    fixed = (
        f"k = {int(rows['k'].iloc[0])}, ε0 = {rows['epsilon_local'].iloc[0]:g}"
        if x == "n_users"
        else f"k = {int(rows['k'].iloc[0])}, n = {int(rows['n_users'].iloc[0]):,}"
    )
    wide = rows.pivot_table(index=x, columns="accountant", values="epsilon", aggfunc="first")
    status = rows.pivot_table(index=x, columns="accountant", values="status", aggfunc="first")
    drawn = wide.where(status.isin(_DRAWN))
    roles = rows.drop_duplicates("accountant").set_index("accountant")["role"]
    guarantees = [a for a in wide.columns if roles[a] == "guarantee, all datasets"]
    lowers = [a for a in wide.columns if roles[a] == "lower bound on the worst case"]
    text = f"({panel}, {fixed}, δ = {rows['delta'].iloc[0]:g}, {len(wide)} points)"
    if guarantees:
        text += _smallest_guarantee_text(drawn, guarantees, x) + "."
        text += _lower_bound_text(drawn, guarantees, lowers, x)
    text += _special_points_text(status[wide.columns], roles, x)
    per_dataset = [a for a in wide.columns if roles[a] == "one dataset, not a guarantee"]
    for accountant in per_dataset:
        for lower in lowers:
            both = drawn[[accountant, lower]].dropna()
            if len(both):
                text += (
                    f" `{accountant}` (one dataset) is below `{lower}` at {int((both[accountant] < both[lower]).sum())}"
                    f" of {len(both)} points, as a single dataset's value may be."
                )
    return text


def _smallest_guarantee_text(drawn: pd.DataFrame, guarantees: Sequence[str], x: str) -> str:
    """Which guarantee is smallest at how many points, its range, and how far the others exceed it."""
    winner = drawn[guarantees].idxmin(axis=1, skipna=True).dropna()
    counts = winner.value_counts()
    text = " Smallest valid guarantee: " + ", ".join(f"`{a}` at {int(c)}" for a, c in counts.items())
    text += f" of {len(drawn)} points"
    top = counts.index[0] if len(counts) else None
    if top is None:
        return text
    span = drawn[top].dropna()
    if len(span) > 1:
        low, high = span.idxmin(), span.idxmax()
        text += (
            f"; `{top}` gives ε from {span[high]:.4g} ({_where(x, [high])}) to "
            f"{span[low]:.4g} ({_where(x, [low])})"
        )
    factors = []
    for other in [a for a in guarantees if a != top]:
        ratio = drawn[other] / drawn[top]
        if ratio.notna().any():
            factors.append(f"`{other}` {ratio.min():.3g}× to {ratio.max():.3g}×")
    if factors:
        text += "; the other guarantees exceed it by " + ", ".join(factors)
    return text


def _lower_bound_text(drawn: pd.DataFrame, guarantees: Sequence[str], lowers: Sequence[str], x: str) -> str:
    """The smallest guarantee against each lower bound, and the points where a guarantee is below it."""
    best = drawn[guarantees].min(axis=1, skipna=True)
    text = ""
    for lower in lowers:
        ratio = best / drawn[lower]
        text += (
            f" Smallest guarantee / `{lower}`: {_ratio_range(ratio, x)}"
            " (the true worst-case ε lies between them)."
        )
        below = 0
        for guarantee in guarantees:
            both = drawn[[guarantee, lower]].dropna()
            below += int((both[guarantee] < both[lower] * (1 - _EPSILON_SLACK)).sum())
        text += f" A guarantee below the lower bound: {below} points (must be 0)."
    return text


def _special_points_text(status: pd.DataFrame, roles: pd.Series, x: str) -> str:
    """Every accountant's (column's) points without a drawable ε (unreachable, refused, ε = 0, at or above ε0)."""
    text = ""
    for accountant in status.columns:
        special = []
        for word, key in (
            ("no ε reaches δ", "unreachable"),
            ("refused", "error"),
            ("ε = 0 meets δ", "epsilon = 0"),
            ("reached only at ε ≥ ε0", "at or above eps0"),
        ):
            where = status.index[status[accountant] == key]
            if len(where) == len(status):
                special.append(f"{word} at every point")
            elif len(where):
                special.append(f"{word} at {_where(x, where)}")
        if special:
            text += f" `{accountant}` ({roles[accountant]}): " + "; ".join(special) + "."
    return text


#: a bracket setting is *without amplification* when its upper ε is at least (1 - this) · ε0: the guarantee
#: gains less than 1 % over local ε0-DP, so a ratio near 1 there says nothing about how tight the bracket is
NO_AMPLIFICATION_TOLERANCE = 0.01


def amplified(frame: pd.DataFrame) -> pd.Series:
    """True for the bracket rows with amplification: upper ε below (1 - :data:`NO_AMPLIFICATION_TOLERANCE`) · ε0.

    Args:
        frame: rows of ``bracket.csv`` (columns ``eps_upper``, ``epsilon_local``).

    Returns:
        A boolean series on the frame's index.
    """
    upper = pd.to_numeric(frame["eps_upper"], errors="coerce")
    eps0 = pd.to_numeric(frame["epsilon_local"], errors="coerce")
    return upper < (1.0 - NO_AMPLIFICATION_TOLERANCE) * eps0


def read_bracket(frame: pd.DataFrame, *, utility_accountant: str | None = None) -> str:
    """Facts from the worst-case bracket table (``bracket.csv``): the ratio upper / lower measured
    (min / median / max over the settings with amplification, :func:`amplified`; per k over all), where it
    is widest, how many settings have no amplification, and which accountant comparisons needing a
    guarantee should use."""
    needed = ("n_users", "k", "epsilon_local", "delta", "eps_lower", "eps_upper", "ratio", "status", "upper")
    if not all(c in frame.columns for c in needed):
        raise ValueError(
            f"`bracket data` must have columns {', '.join(needed)}; got {', '.join(map(str, frame.columns))}."
        )
    if frame.empty:
        return "The bracket table has no rows."
    with_amplification = amplified(frame)
    kept = frame[with_amplification] if with_amplification.any() else frame
    ratio = kept["ratio"].astype(float)
    widest = kept.loc[ratio.idxmax()]
    upper, lower = (
        frame["upper"].iloc[0],
        frame["lower"].iloc[0] if "lower" in frame.columns else "the lower bound",
    )
    left = int((~with_amplification).sum())
    text = (
        f"Bracket of the worst-case ε over {len(frame)} settings (n {int(frame['n_users'].min()):,} to "
        f"{int(frame['n_users'].max()):,}; k {', '.join(str(k) for k in sorted(frame['k'].unique()))}; ε0 "
        f"{', '.join(f'{e:g}' for e in sorted(frame['epsilon_local'].unique()))}; δ "
        f"{', '.join(f'{d:g}' for d in sorted(frame['delta'].unique(), reverse=True))}), over the "
        f"{len(kept) if with_amplification.any() else 0} with amplification (upper ε below "
        f"{1 - NO_AMPLIFICATION_TOLERANCE:g}·ε0; {left} without, where a ratio near 1 says nothing about "
        f"tightness): ε(`{upper}`) / ε(`{lower}`) from {ratio.min():.5f} to {ratio.max():.5f}, median "
        f"{float(ratio.median()):.5f}; widest at n = {int(widest['n_users']):,}, k = {int(widest['k'])}, "
        f"ε0 = {widest['epsilon_local']:g}, δ = {widest['delta']:g} (ε {widest['eps_lower']:.4g} to "
        f"{widest['eps_upper']:.4g})."
    )
    ratio = frame["ratio"].astype(float)
    per_k = []
    for k, group in frame.groupby("k"):
        r = group["ratio"].astype(float)
        per_k.append(f"k = {int(k)}: median {float(r.median()):.5f}, max {r.max():.5f}")
    text += " Per k: " + "; ".join(per_k) + "."
    text += f" {int((ratio <= 1.01).sum())} of {len(frame)} settings are within 1%."
    text += (
        f" `{upper}` is valid for every dataset and within this ratio of the true worst case, so comparisons that "
        f"need a guarantee (δ̂ of the Gaussian baseline, the crossover, ε0 calibration) should use `{upper}`"
    )
    if upper == "worst-case-upper":
        text += (
            " (for k = 2 it is the certified maximum over every dataset, to 1e-9 relative for n ≤ 10,000 and "
            "within ~0.3% in ε up to n = 10⁸; for k = 3 and n ≤ 200 the exact worst case; for k ≥ 4 and n ≤ 32 "
            "the own-value-hit bound, never above `weak-adversary`; otherwise `weak-adversary`'s value)"
        )
    if utility_accountant and utility_accountant != upper:
        same = upper == "worst-case-upper" and utility_accountant == "weak-adversary"
        text += f"; this run's `utility.accountant` is `{utility_accountant}`" + (
            ", the same bound at k ≥ 4 above n = 32 and at k = 3 above n = 200" if same else ""
        )
    return text + "."
