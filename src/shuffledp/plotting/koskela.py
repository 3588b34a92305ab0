"""Koskela, Heikkilä & Honkela's Figures 1-3 redrawn: our curves as lines, the curves stored in their public
code as open markers in the colour of the curve they belong to, so every difference is visible.

Drawing only: inputs are the frames of :func:`shuffledp.experiments.koskela.figure_frame` and the
transcribed points (``shuffledp.reference.load_reference("koskela_figures")``).

* Figure 1: delta against eps (log delta), one colour per curve, one line style per n_c.
* Figure 2: eps against n_c (log-log), one colour and line style per curve.
* Figure 3: eps against delta (log delta, axis reversed as in theirs), one panel per n_c, one colour and
  line style per curve.

Colours: :data:`CURVE_STYLES` gives every curve of these figures its own colour (Okabe & Ito's
colour-blind-safe set, black for the lower bounds), line style and stored-marker shape, distinct within
each figure (tested); the registry colours of the accountants are not distinct enough here (the PLD and
RDP clones curves are two browns, the weak adversary, lower bound and 2023 pair three purples). Every
legend entry names the bound and says whether it is a guarantee (an upper bound for every dataset).
"""

from __future__ import annotations

import textwrap
from typing import TYPE_CHECKING

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.lines import Line2D

from shuffledp.experiments.koskela import BALLE_CURVE, BALLE_FORMULA_CURVE, LOWER_CURVE
from shuffledp.plotting import style

if TYPE_CHECKING:
    from matplotlib.typing import LineStyleType

__all__ = ["CURVE_STYLES", "curve_style", "figure_koskela"]

#: curve label or accountant -> (colour, line style, stored-marker shape); a curve label takes precedence
CURVE_STYLES = {
    "clones-krr": ("#0072B2", "-", "o"),  # blue
    "clones-krr-rdp": ("#D55E00", "--", "s"),  # vermillion
    "feldman-numerical": ("#009E73", "-.", "^"),  # bluish green
    "girgis-rdp": ("#D55E00", "--", "s"),
    LOWER_CURVE: ("#000000", ":", "v"),
    "weak-adversary": ("#E69F00", "-", "o"),  # orange
    "strong-adversary": ("#56B4E9", "--", "s"),  # sky blue
    "clones-krr-2023": ("#CC79A7", (0, (5, 1, 1, 1, 1, 1)), "D"),  # reddish purple, dash-dot-dot
    "worst-case-lower": ("#000000", ":", "v"),
    "worst-case-upper": ("#EE3377", "-.", "D"),  # magenta (its registry colour): Fig. 2's curve of ours
    BALLE_CURVE: ("#882255", (0, (8, 3)), "P"),  # wine, long dashes
    BALLE_FORMULA_CURVE: ("#999933", (0, (3, 2)), "X"),  # olive, short dashes
}
_NC_STYLES: tuple[LineStyleType, ...] = ("-", "--", "-.", ":")
_WIDTHS = {
    "weak-adversary": 3.2,
    "clones-krr-2023": 2.0,
    "worst-case-lower": 1.3,
}  # lines on each other stay visible


def curve_style(curve: str, name: str) -> tuple:
    """(colour, line style, marker) of a curve: by its label, else by its accountant."""
    if curve in CURVE_STYLES:
        return CURVE_STYLES[curve]
    if name in CURVE_STYLES:
        return CURVE_STYLES[name]
    return (style.colours_for([name])[name], "-", "o")


def _short_guarantee(kind: str) -> str:
    if kind == "upper bound":
        return "guarantee: upper bound, every dataset"
    if kind == "lower bound":
        return "not a guarantee: certified lower bound"
    return f"not a guarantee: {kind}"


def _label(curve: str, name: str, kind: str, values: pd.Series) -> str:
    text = (f"{curve} [ours: {name}]" if curve != name else f"ours: {name}") + f" — {_short_guarantee(kind)}"
    if not np.isfinite(values.astype(float)).any():
        text += "; no finite value here (not drawn)"
    return text


def _published(published: pd.DataFrame) -> pd.DataFrame:
    frame = published.copy()
    for column in ("x", "value"):
        frame[column] = frame[column].astype(float)
    frame["compositions"] = pd.to_numeric(frame["compositions"], errors="coerce")
    return frame


def _curve_handles(
    frame: pd.DataFrame, curves, published: pd.DataFrame, *, by_linestyle: bool = True
) -> list:
    handles = []
    for curve, name in curves:
        colour, linestyle, marker = curve_style(curve, name)
        rows = frame[frame["curve"] == curve]
        handles.append(
            Line2D(
                [],
                [],
                color=colour,
                linestyle=linestyle if by_linestyle else "-",
                lw=_WIDTHS.get(name, 1.6),
                label=_label(curve, name, rows["kind"].iloc[0], rows["value"]),
            )
        )
        if (published["curve"] == curve).any():
            handles.append(
                Line2D(
                    [],
                    [],
                    linestyle="none",
                    marker=marker,
                    markerfacecolor="none",
                    color=colour,
                    label=_stored_label(curve, frame, published),
                )
            )
    for handle in handles:  # long labels wrap, so the legend stays within the figure's width
        handle.set_label(textwrap.fill(str(handle.get_label()), 100, subsequent_indent="  "))
    return handles


def _stored_label(curve: str, frame: pd.DataFrame, published: pd.DataFrame) -> str:
    """Their stored curve: a claimed upper bound, and NOT a guarantee where it is below one of our lower
    bounds at the same point (n_c, x)."""
    text = f"{curve}: Koskela et al.'s stored values (open markers), claimed upper bound"
    lower = frame[frame["kind"] == "lower bound"][["compositions", "x", "value"]]
    theirs = published[published["curve"] == curve]
    if lower.empty or theirs.empty:
        return text
    merged = theirs.merge(lower, on="x", suffixes=("", "_lower"))
    same = merged["compositions"].isna() | (merged["compositions"] == merged["compositions_lower"])
    below = merged[same & (merged["value"] < merged["value_lower"] * (1 - 1e-9))]
    if len(below):
        name = {"compositions": "n_c", "delta": "δ", "epsilon": "ε"}.get(str(below["x_name"].iloc[0]), "x")
        text += "; NOT a guarantee: below our certified lower bound at " + ", ".join(
            f"{name} = {x:g}" + ("" if pd.isna(c) or name == "n_c" else f" (n_c = {int(c)})")
            for x, c in zip(below["x"], below["compositions"])
        )
    return text


def _draw_fig1(ax, frame, published, curves, section, smallest_delta) -> list:
    extra = []
    for i, compositions in enumerate(sorted(frame["compositions"].unique())):
        for curve, name in curves:
            colour, _, marker = curve_style(curve, name)
            rows = frame[(frame["curve"] == curve) & (frame["compositions"] == compositions)].sort_values("x")
            ax.semilogy(rows["x"], rows["value"], color=colour, linestyle=_NC_STYLES[i % 4], lw=1.6)
            theirs = published[(published["curve"] == curve) & (published["compositions"] == compositions)]
            ax.semilogy(
                theirs["x"],
                theirs["value"],
                linestyle="none",
                marker=marker,
                markersize=4,
                markerfacecolor="none",
                color=colour,
                markevery=3,
            )
        extra.append(
            Line2D([], [], color="0.3", linestyle=_NC_STYLES[i % 4], label=f"n_c = {int(compositions)}")
        )
    if smallest_delta:
        ax.axhline(smallest_delta, color="0.6", lw=0.8, linestyle=":")
        extra.append(
            Line2D(
                [],
                [],
                color="0.6",
                lw=0.8,
                linestyle=":",
                label=f"δ = {smallest_delta:g}: below, not judged (linear-space round-off)",
            )
        )
    ax.set_xlabel("ε")
    ax.set_ylabel("δ(ε) after n_c compositions")
    ax.set_title(
        f"Koskela et al. Fig. 1: clones pair, n = {int(section['n_users']):,}, "
        f"ε0 = {float(section['epsilon_local']):g}"
    )
    return _curve_handles(frame, curves, published, by_linestyle=False) + extra


def _draw_fig2(ax, frame, published, curves, section) -> list:
    for curve, name in curves:
        colour, linestyle, marker = curve_style(curve, name)
        rows = frame[frame["curve"] == curve].sort_values("x")
        ax.loglog(rows["x"], rows["value"], color=colour, linestyle=linestyle, lw=1.6, marker=".")
        theirs = published[published["curve"] == curve].sort_values("x")
        ax.loglog(
            theirs["x"],
            theirs["value"],
            linestyle="none",
            marker=marker,
            markerfacecolor="none",
            color=colour,
            markersize=7,
        )
    ax.set_xlabel("number of compositions n_c")
    ax.set_ylabel(f"ε at δ = {float(section['delta']):g}")
    ax.set_title(
        f"Koskela et al. Fig. 2: subsampled shuffler, ε0 = {float(section['epsilon_local']):g}, "
        f"n = {int(section['n_users']):,}, q = {float(section['subsample']):g}"
    )
    return _curve_handles(frame, curves, published)


def _draw_fig3_panel(ax, frame, published, curves, compositions) -> None:
    bounded = []
    for curve, name in curves:
        colour, linestyle, marker = curve_style(curve, name)
        rows = frame[(frame["curve"] == curve) & (frame["compositions"] == compositions)].sort_values("x")
        ax.semilogx(rows["x"], rows["value"], color=colour, lw=_WIDTHS.get(name, 1.6), linestyle=linestyle)
        theirs = published[(published["curve"] == curve) & (published["compositions"] == compositions)]
        ax.semilogx(
            theirs["x"],
            theirs["value"],
            linestyle="none",
            marker=marker,
            markerfacecolor="none",
            color=colour,
            markersize=7,
        )
        if curve != BALLE_FORMULA_CURVE:
            bounded += [*rows["value"], *theirs["value"]]
    finite = np.asarray(bounded, dtype=float)
    top = 1.15 * float(finite[np.isfinite(finite)].max())
    formula = frame[(frame["curve"] == BALLE_FORMULA_CURVE) & (frame["compositions"] == compositions)][
        "value"
    ]
    if len(formula) and float(formula.min()) > top:
        ax.annotate(
            f"{BALLE_FORMULA_CURVE}: ε = {formula.min():.3g}–{formula.max():.3g} (off scale)",
            xy=(0.02, 0.97),
            xycoords="axes fraction",
            va="top",
            fontsize="x-small",
            color=curve_style(BALLE_FORMULA_CURVE, "")[0],
        )
    ax.set_ylim(0.0, top)
    pair = frame[frame["compositions"] == compositions].pivot_table(
        index="x", columns="accountant", values="value"
    )
    if {"weak-adversary", "worst-case-lower"} <= set(pair.columns):  # lines on each other: say how close
        gap = float(((pair["weak-adversary"] - pair["worst-case-lower"]) / pair["worst-case-lower"]).max())
        ax.annotate(
            f"weak adversary ≤ {gap:.2%} above the lower bound",
            xy=(0.02, 0.90),
            xycoords="axes fraction",
            va="top",
            fontsize="x-small",
            color="0.2",
        )
    ax.invert_xaxis()
    ax.set_xlabel("δ")
    ax.set_ylabel("ε")
    ax.set_title(f"n_c = {int(compositions)}")


def figure_koskela(
    frame: pd.DataFrame, published: pd.DataFrame, *, number: int, section, smallest_delta: float = 0.0
):
    """The figure ``number`` (1, 2, 3); ``section`` is the ``koskela.fig<N>`` config slice (for titles)."""
    published = _published(published)
    curves = list(frame[["curve", "accountant"]].drop_duplicates().itertuples(index=False, name=None))
    with style.plot_style():
        if number == 3:
            ncs = sorted(frame["compositions"].unique())
            figure, grid = plt.subplots(
                1, len(ncs), figsize=(5.0 * len(ncs), 4.8), layout="constrained", squeeze=False
            )
            axes = list(grid[0])
            for ax, compositions in zip(axes, ncs):
                _draw_fig3_panel(ax, frame, published, curves, compositions)
            handles = _curve_handles(frame, curves, published)
            figure.suptitle(
                f"Koskela et al. Fig. 3: shuffled k-RR, n = {int(section['n_users']):,}, "
                f"k = {int(section['k'])}, ε0 = {float(section['epsilon_local']):.4g}"
            )
        else:
            figure, ax = plt.subplots(figsize=(9.0, 5.6), layout="constrained")
            axes = [ax]
            handles = (
                _draw_fig1(ax, frame, published, curves, section, smallest_delta)
                if number == 1
                else _draw_fig2(ax, frame, published, curves, section)
            )
        for ax in axes:
            ax.grid(True, which="major", alpha=0.3)
        figure.legend(
            handles=handles, loc="outside lower center", ncol=1 if number == 2 else 2, fontsize="small"
        )
    return figure
