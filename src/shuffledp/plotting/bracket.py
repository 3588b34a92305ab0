"""The worst-case bracket figure: how tight the bracket is at every n the report covers. Drawing only.

Input: the frame of :func:`shuffledp.experiments.guarantees.bracket_frame` (``bracket.csv``). One panel
per k; in each, how far the valid upper ε (``eps_upper``) is above the lower one (``eps_lower``) against
n, as ``eps_upper / eps_lower - 1 = (eps_upper - eps_lower) / eps_lower`` on a log axis (the ratios run
from 1 + 1e-10 to a few per cent, which a linear axis of the ratio would flatten onto 1), n on a log
axis. One series of markers per (ε0, δ): the colour is ε0's (one colour per ε0 in every panel), the
line style δ's on the lines that join neighbouring n at most ``JOIN_FACTOR`` (10) apart; a wider step
has no data between, so no line crosses it.
A point whose ``status`` is not "ok" (both ends at or within 1% of ε0, the upper end at ε0, lower bound
0) is hollow: its ratio says little about tightness. A value that a log axis cannot show is marked on
the panel edge, never dropped: ▼ at the bottom when the two ends are equal (excess 0), ▲ at the top
when the lower end is 0 (ratio infinite or undefined).

Reference lines: the goal ratio ``BRACKET_GOAL`` (1.01) in every panel, and in panels holding
large-ε0 ends (ε0 >= ``BRACKET_LARGE_EPS0``; the single settings ``accounting.bracket.extra``) their goal
``BRACKET_GOAL_LARGE`` (1.05). Each large-ε0 end is a star with a note "ε0 = 15, n = 1e8: ε ≤ …" (a
star with a cross when its upper ε is not below ε0, the second half of that goal). Every line and
marker carries a ``gid`` naming its setting, so tests read the drawn values back.
"""

from __future__ import annotations

import math

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from shuffledp.experiments.guarantees import BRACKET_GOAL, BRACKET_GOAL_LARGE, BRACKET_LARGE_EPS0
from shuffledp.plotting import style

__all__ = [
    "BRACKET_FIGURE_COLUMNS",
    "check_bracket_frame",
    "bracket_excess",
    "JOIN_FACTOR",
    "joined_neighbours",
    "plot_bracket_panel",
    "figure_bracket",
]

#: the columns of ``bracket.csv`` the figure reads
BRACKET_FIGURE_COLUMNS = ("n_users", "k", "epsilon_local", "delta", "eps_lower", "eps_upper", "status")
_OK = "ok"


def check_bracket_frame(frame: pd.DataFrame) -> None:
    """``ValueError`` (one line) naming the missing columns, or a frame without rows."""
    missing = [c for c in BRACKET_FIGURE_COLUMNS if c not in frame.columns]
    if missing:
        raise ValueError(
            f"`bracket data` must have columns {', '.join(BRACKET_FIGURE_COLUMNS)}; missing "
            f"{', '.join(missing)} (columns found: {', '.join(map(str, frame.columns)) or 'none'})."
        )
    if frame.empty:
        raise ValueError("`bracket data` must have at least one row; got none.")


def bracket_excess(frame: pd.DataFrame) -> np.ndarray:
    """(eps_upper - eps_lower) / eps_lower of every row: the ratio minus 1 without the rounding of 1 + tiny."""
    lower, upper = frame["eps_lower"].to_numpy(dtype=float), frame["eps_upper"].to_numpy(dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        return (upper - lower) / lower


def _eps0_styles(frame: pd.DataFrame) -> dict[float, str]:
    eps0s = sorted(float(e) for e in frame["epsilon_local"].unique())
    colours = style.curve_styles([f"ε0 = {e:g}" for e in eps0s])
    return {e: colours[f"ε0 = {e:g}"][0] for e in eps0s}


def _delta_styles(frame: pd.DataFrame) -> dict[float, object]:
    deltas = sorted((float(d) for d in frame["delta"].unique()), reverse=True)
    return {d: style.LINESTYLES[i % len(style.LINESTYLES)] for i, d in enumerate(deltas)}


def _limits(excess: np.ndarray) -> tuple[float, float]:
    drawable = excess[np.isfinite(excess) & (excess > 0)]
    low = float(drawable.min()) / 3.0 if drawable.size else 1e-6
    high = max(float(drawable.max()) * 3.0 if drawable.size else 0.0, (BRACKET_GOAL_LARGE - 1.0) * 3.0)
    return low, high


def _draw_points(ax, rows, excess, colour, *, marker, size, gid, zorder=3):
    """Filled markers where the status is ok, hollow where not (drawable points only)."""
    ok = (rows["status"] == _OK).to_numpy()
    n_values = rows["n_users"].to_numpy(dtype=float)
    for filled, chosen in ((True, ok), (False, ~ok)):
        if chosen.any():
            ax.plot(
                n_values[chosen],
                excess[chosen],
                linestyle="none",
                marker=marker,
                markersize=size,
                markerfacecolor=colour if filled else "white",
                markeredgecolor=colour,
                zorder=zorder,
                gid=f"{gid}:{'ok' if filled else 'flagged'}",
            )


def _edge_marks(ax, rows, excess, colour, limits, gid):
    """▼ on the bottom edge where the two ends are equal, ▲ on the top edge where the ratio is undefined."""
    n_values = rows["n_users"].to_numpy(dtype=float)
    for where, chosen, marker, y in (
        ("equal", np.isfinite(excess) & (excess <= 0), "v", limits[0]),
        ("undefined", ~np.isfinite(excess), "^", limits[1]),
    ):
        if chosen.any():
            ax.plot(
                n_values[chosen],
                np.full(int(chosen.sum()), y),
                linestyle="none",
                marker=marker,
                markersize=7,
                color=colour,
                clip_on=False,
                zorder=4,
                gid=f"{gid}:edge-{where}",
            )


def _large_end(ax, row, excess: float, colour, limits) -> None:
    eps0, n_users = float(row["epsilon_local"]), int(row["n_users"])
    below = float(row["eps_upper"]) < eps0
    gid = f"bracket-end k={int(row['k'])} eps0={eps0:g} delta={float(row['delta']):g} n={n_users}"
    y = excess if math.isfinite(excess) and excess > 0 else limits[0] if math.isfinite(excess) else limits[1]
    ax.plot(
        [n_users],
        [y],
        linestyle="none",
        marker="*" if below else "X",
        markersize=13,
        color=colour,
        markeredgecolor=style.INK,
        clip_on=False,
        zorder=5,
        gid=gid,
    )
    ratio = f"ratio 1 + {excess:.2g}" if math.isfinite(excess) else "ratio undefined"
    note = (
        f"ε0 = {eps0:g}, n = {n_users:.0e}, δ = {float(row['delta']):g}:\nε ≤ {float(row['eps_upper']):.4g}, "
        f"{ratio}" + ("" if below else "\nupper ε not below ε0")
    )
    ax.annotate(
        note,
        (n_users, y),
        xytext=(-8, 10),
        textcoords="offset points",
        ha="right",
        fontsize=style.MIN_FONT_POINTS,
        color=style.INK,
    )


#: neighbouring n of a drawn (ε0, δ) series are joined by a line only when at most this factor apart: a
#: wider step has no data between (the quick grid jumps from n = 10 to n = 1,000), so its points stay apart
JOIN_FACTOR = 10.0


def joined_neighbours(n_users) -> list[tuple[int, int]]:
    """Index pairs (i, i + 1) of the sorted ``n_users`` joined by a line: those at most :data:`JOIN_FACTOR` apart.

    Args:
        n_users: the n of one series, ascending.

    Returns:
        The pairs of neighbours to join.
    """
    values = np.asarray(n_users, dtype=float)
    return [(i, i + 1) for i in range(len(values) - 1) if values[i + 1] <= JOIN_FACTOR * values[i]]


def plot_bracket_panel(panel: pd.DataFrame, *, ax=None, eps0_colours=None, delta_styles=None, limits=None):
    """One k: a line per (ε0, δ) below ``BRACKET_LARGE_EPS0``, the large-ε0 ends as stars, the goal lines."""
    ax = ax if ax is not None else plt.gca()
    eps0_colours = eps0_colours or _eps0_styles(panel)
    delta_styles = delta_styles or _delta_styles(panel)
    excess_all = bracket_excess(panel)
    limits = limits or _limits(excess_all)
    k = int(panel["k"].iloc[0])
    large = panel["epsilon_local"].astype(float) >= BRACKET_LARGE_EPS0
    for (eps0, delta), rows in panel[~large].groupby(["epsilon_local", "delta"], sort=True):
        rows = rows.sort_values("n_users")
        excess, colour = bracket_excess(rows), eps0_colours[float(eps0)]
        gid = f"bracket k={k} eps0={float(eps0):g} delta={float(delta):g}"
        drawable = np.isfinite(excess) & (excess > 0)
        n_drawn, y_drawn = rows["n_users"].to_numpy(dtype=float)[drawable], excess[drawable]
        ax.plot(n_drawn, y_drawn, color=colour, linestyle="none", gid=gid)  # the values; markers below
        for i, (left, right) in enumerate(joined_neighbours(n_drawn)):  # no line across a gap in n
            ax.plot(
                n_drawn[[left, right]],
                y_drawn[[left, right]],
                color=colour,
                linestyle=delta_styles[float(delta)],
                linewidth=1.5,
                gid=f"{gid}:segment {i}",
            )
        _draw_points(ax, rows[drawable], excess[drawable], colour, marker="o", size=4, gid=gid)
        _edge_marks(ax, rows, excess, colour, limits, gid)
    for (_, row), excess in zip(panel[large].iterrows(), excess_all[large.to_numpy()]):
        _large_end(ax, row, float(excess), eps0_colours[float(row["epsilon_local"])], limits)
    ax.axhline(BRACKET_GOAL - 1.0, color=style.INK, linewidth=1.0, linestyle="-", gid="goal")
    if large.any():
        ax.axhline(BRACKET_GOAL_LARGE - 1.0, color=style.INK, linewidth=1.0, linestyle="--", gid="goal-large")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_ylim(*limits)
    ax.set_xlabel("number of users n")
    ax.set_ylabel("ε_upper / ε_lower − 1")
    ax.set_title(f"k = {k}")
    ax.grid(True, which="major", alpha=0.3)
    return ax


def _legend_handles(frame, eps0_colours, delta_styles) -> list:
    handles = [
        style.line_handle(f"ε0 = {e:g}", colour=c, marker="o" if e < BRACKET_LARGE_EPS0 else "*")
        for e, c in eps0_colours.items()
    ]
    handles += [style.line_handle(f"δ = {d:g}", linestyle=s) for d, s in delta_styles.items()]
    handles.append(style.line_handle(f"goal: ratio ≤ {BRACKET_GOAL:g}", colour=style.INK))
    if (frame["epsilon_local"].astype(float) >= BRACKET_LARGE_EPS0).any():
        handles.append(
            style.line_handle(
                f"goal at ε0 ≥ {BRACKET_LARGE_EPS0:g}: ratio ≤ {BRACKET_GOAL_LARGE:g} and "
                "upper ε < ε0 (★ met, ✕ upper not below ε0)",
                colour=style.INK,
                linestyle="--",
            )
        )
    handles.append(
        plt.Line2D(
            [],
            [],
            linestyle="none",
            marker="o",
            markerfacecolor="white",
            markeredgecolor="0.3",
            label="hollow: ε at or near ε0, or lower ε 0 (status in bracket.csv)",
        )
    )
    return handles


def figure_bracket(frame: pd.DataFrame):
    """Every k of ``frame`` in its own panel (up to three per row), one legend, colours shared by ε0."""
    check_bracket_frame(frame)
    ks = sorted(int(k) for k in frame["k"].unique())
    columns = min(3, len(ks))
    rows_of_panels = math.ceil(len(ks) / columns)
    eps0_colours, delta_styles = _eps0_styles(frame), _delta_styles(frame)
    limits = _limits(bracket_excess(frame))
    upper = frame["upper"].iloc[0] if "upper" in frame.columns else "the upper end"
    lower = frame["lower"].iloc[0] if "lower" in frame.columns else "the lower end"
    with style.plot_style():
        figure, axes = plt.subplots(
            rows_of_panels,
            columns,
            figsize=(4.6 * columns, 3.8 * rows_of_panels + 1.2),
            squeeze=False,
            layout="constrained",
            sharey=True,
        )
        for ax, k in zip(axes.flat, ks):
            plot_bracket_panel(
                frame[frame["k"] == k],
                ax=ax,
                eps0_colours=eps0_colours,
                delta_styles=delta_styles,
                limits=limits,
            )
        for ax in list(axes.flat)[len(ks) :]:
            ax.set_visible(False)
        handles = _legend_handles(frame, eps0_colours, delta_styles)
        figure.legend(
            handles=handles,
            loc="outside lower center",
            ncol=min(len(handles), 4),
            frameon=False,
            fontsize=max(style.MIN_FONT_POINTS, 9.0),
        )
        grid = frame[frame["epsilon_local"].astype(float) < BRACKET_LARGE_EPS0]
        ends = len(frame) - len(grid)
        style.title_and_label(
            figure,
            f"Worst-case bracket of shuffled k-RR at fixed δ: how far ε of `{upper}` (valid for every "
            f"dataset) is above ε of `{lower}` (attained), against n",
            f"grid: n ∈ {{{', '.join(f'{int(n):,}' for n in sorted(grid['n_users'].unique()))}}} × "
            f"{grid['k'].nunique()} k × {grid['epsilon_local'].nunique()} ε0 × {grid['delta'].nunique()} δ"
            + (f" and {ends} large-ε0 end{'s' if ends > 1 else ''}" if ends else "")
            + f"; lines join only n at most {JOIN_FACTOR:g}× apart; data: bracket.csv",
        )
    return figure
