"""Koskela, Heikkilä & Honkela's Figures 1-3 redrawn: our curves as lines, the curves stored in their public
code as open markers in the colour of the curve they belong to, so every difference is visible.

Drawing only: inputs are the frames of :func:`shuffledp.experiments.koskela.figure_frame` and the
transcribed points (``shuffledp.reference.load_reference("koskela_figures")``).

* Figure 1: delta against eps (log delta), one panel per n_c (drawn together the twelve curves merge at
  small eps), one colour and line style per curve.
* Figure 2: eps against n_c (log-log), one colour and line style per curve.
* Figure 3: eps against delta (log delta, axis reversed as in theirs), one panel per n_c, one colour and
  line style per curve; curves within :data:`COINCIDE_TOLERANCE` of each other are named in a note on the
  panel (:func:`coincident_curves`), and a curve with no finite value on the scale is left out of the
  legend and named under the title.

Every figure's title has a second line with the grid and the data file (``style.title_and_label``); legends
and notes are at least ``style.MIN_FONT_POINTS``.

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

__all__ = ["CURVE_STYLES", "COINCIDE_TOLERANCE", "curve_style", "coincident_curves", "figure_koskela"]

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


def _draw_fig1_panel(ax, frame, published, curves, compositions, smallest_delta) -> None:
    """One n_c of Fig. 1: each curve once, its stored values as open markers (one panel per n_c keeps
    the 3 curves of each n_c apart; drawn together the 12 merged at small ε)."""
    for curve, name in curves:
        colour, linestyle, marker = curve_style(curve, name)
        rows = frame[(frame["curve"] == curve) & (frame["compositions"] == compositions)].sort_values("x")
        ax.semilogy(
            rows["x"],
            rows["value"],
            color=colour,
            linestyle=linestyle,
            lw=1.6,
            gid=f"{curve} n_c={int(compositions)}",
        )
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
    if smallest_delta:
        ax.axhline(smallest_delta, color="0.6", lw=0.8, linestyle=":")
    ax.set_xlabel("ε")
    ax.set_ylabel("δ(ε)")
    ax.set_title(f"n_c = {int(compositions)}")


def _fig1_extra(smallest_delta) -> list:
    if not smallest_delta:
        return []
    return [
        Line2D(
            [],
            [],
            color="0.6",
            lw=0.8,
            linestyle=":",
            label=f"δ = {smallest_delta:g}: below, not judged (linear-space round-off)",
        )
    ]


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


def _draw_fig3_panel(ax, frame, published, curves, compositions) -> float:
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
            textwrap.fill(
                f"{BALLE_FORMULA_CURVE}: ε = {formula.min():.3g}–{formula.max():.3g} (off scale)", 46
            ),
            xy=(0.02, 0.97),
            xycoords="axes fraction",
            va="top",
            fontsize=style.MIN_FONT_POINTS,
            color=curve_style(BALLE_FORMULA_CURVE, "")[0],
        )
    ax.set_ylim(0.0, top)
    panel = frame[(frame["compositions"] == compositions) & (frame["curve"] != BALLE_FORMULA_CURVE)]
    notes = [
        f"coincide within {gap:.2%}: {', '.join(_short(c) for c in members)}"
        for members, gap in coincident_curves(panel[["curve", "x", "value"]])
    ]
    if notes:  # lines on each other: say which, and how close
        ax.annotate(
            "\n".join(textwrap.fill(note, 46) for note in notes),
            xy=(0.02, 0.84),
            xycoords="axes fraction",
            va="top",
            fontsize=style.MIN_FONT_POINTS,
            color="0.2",
            gid="coincide",
        )
    ax.invert_xaxis()
    ax.set_xlabel("δ")
    ax.set_ylabel("ε")
    ax.set_title(f"n_c = {int(compositions)}")
    return top


#: two curves closer than this (relative, at every point of a panel) are drawn as one: a note names them
COINCIDE_TOLERANCE = 0.01


def coincident_curves(
    panel: pd.DataFrame, tolerance: float = COINCIDE_TOLERANCE
) -> list[tuple[list[str], float]]:
    """Groups of curves of one panel (columns ``curve``, ``x``, ``value``) within ``tolerance`` of each other
    (relative to the smaller, at every common x with finite values): (curve labels, largest relative gap)."""
    table = panel.pivot_table(index="x", columns="curve", values="value", aggfunc="first")
    names = [c for c in table.columns if np.isfinite(table[c].astype(float)).any()]
    parent = {name: name for name in names}

    def root(name):
        while parent[name] != name:
            name = parent[name]
        return name

    gaps: dict[tuple[str, str], float] = {}
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            both = table[[a, b]].astype(float).dropna()
            values = both.to_numpy()
            both = both[np.all(np.isfinite(values) & (values > 0), axis=1)]
            if both.empty:
                continue
            gap = float((abs(both[a] - both[b]) / both.min(axis=1)).max())
            if gap <= tolerance:
                parent[root(b)] = root(a)
                gaps[(a, b)] = gap
    groups: dict[str, list[str]] = {}
    for name in names:
        groups.setdefault(root(name), []).append(name)
    return [
        (members, max(g for (a, b), g in gaps.items() if a in members and b in members))
        for members in groups.values()
        if len(members) > 1
    ]


def _short(curve: str) -> str:
    return curve.split(" (")[0] if not curve.startswith("clones (") else curve


def _drawn(frame: pd.DataFrame, curve: str, top: dict) -> bool:
    """True when some value of ``curve`` is finite and on scale (below its panel's top, where one is set)."""
    rows = frame[frame["curve"] == curve]
    values = rows["value"].to_numpy(dtype=float)
    limits = rows["compositions"].map(lambda c: top.get(c, np.inf)).to_numpy(dtype=float)
    return bool(np.any(np.isfinite(values) & (values <= limits)))


def _why_hidden(frame: pd.DataFrame, curve: str) -> str:
    finite = np.isfinite(frame.loc[frame["curve"] == curve, "value"].astype(float)).any()
    return f"{curve} ({'off scale, values in the panel notes' if finite else 'no finite value here'})"


def figure_koskela(
    frame: pd.DataFrame, published: pd.DataFrame, *, number: int, section, smallest_delta: float = 0.0
):
    """The figure ``number`` (1, 2, 3); ``section`` is the ``koskela.fig<N>`` config slice (for titles)."""
    published = _published(published)
    curves = list(frame[["curve", "accountant"]].drop_duplicates().itertuples(index=False, name=None))
    with style.plot_style():
        if number in (1, 3):
            ncs = sorted(frame["compositions"].unique())
            columns = len(ncs) if number == 3 else min(2, len(ncs))
            rows_of_panels = -(-len(ncs) // columns)
            figure, grid = plt.subplots(
                rows_of_panels,
                columns,
                figsize=(5.4 * columns, 4.4 * rows_of_panels + 1.8),
                layout="constrained",
                squeeze=False,
                sharey=number == 1,
            )
            axes = list(grid.ravel())
            top: dict = {}
            for ax, compositions in zip(axes, ncs):
                if number == 3:
                    top[compositions] = _draw_fig3_panel(ax, frame, published, curves, compositions)
                else:
                    _draw_fig1_panel(ax, frame, published, curves, compositions, smallest_delta)
            for ax in axes[len(ncs) :]:
                ax.set_visible(False)
            drawn = [(c, n) for c, n in curves if _drawn(frame, c, top)]
            handles = _curve_handles(frame, drawn, published)
            if number == 1:
                handles += _fig1_extra(smallest_delta)
                title = (
                    f"Koskela et al. Fig. 1: clones pair, n = {int(section['n_users']):,}, "
                    f"ε0 = {float(section['epsilon_local']):g}, one panel per number of compositions n_c"
                )
            else:
                title = (
                    f"Koskela et al. Fig. 3: shuffled k-RR, n = {int(section['n_users']):,}, "
                    f"k = {int(section['k'])}, ε0 = {float(section['epsilon_local']):.4g}"
                )
            hidden = [c for c, _ in curves if (c, _) not in drawn]
            x = frame["x"].astype(float)
            label = (
                f"grid: {frame['x_name'].iloc[0] if 'x_name' in frame.columns else 'x'} = {x.min():.3g} to "
                f"{x.max():.3g} ({x.nunique()} points) at n_c ∈ {{{', '.join(str(int(c)) for c in ncs)}}}; "
                f"data: koskela_fig{number}.csv"
                + (f"\nnot drawn: {'; '.join(_why_hidden(frame, c) for c in hidden)}" if hidden else "")
            )
        else:
            figure, ax = plt.subplots(figsize=(9.0, 5.6), layout="constrained")
            axes = [ax]
            handles = _draw_fig2(ax, frame, published, curves, section)
            title = ax.get_title()
            ax.set_title("")
            x = frame["x"].astype(float)
            label = f"grid: n_c = {x.min():g} to {x.max():g} ({x.nunique()} values); data: koskela_fig2.csv"
        style.title_and_label(figure, title, label)
        for ax in axes:
            ax.grid(True, which="major", alpha=0.3)
        figure.legend(
            handles=handles,
            loc="outside lower center",
            ncol=2 if number == 3 else 1,
            fontsize=max(style.MIN_FONT_POINTS, 9.0),
        )
    return figure
