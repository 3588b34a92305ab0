"""Phase diagram figure: shuffle+INV against the analytic Gaussian over (n, epsilon). Drawing only.

One panel per k: the exact ratio E TV(shuffle+INV) / E TV(Gaussian) of the grid frame of
:func:`shuffledp.experiments.phase_diagram.grid_job`, one flat-coloured cell per grid point actually
computed (cell edges half-way between grid points in log n and log epsilon, the outermost cells ending at
the outermost computed points: nothing is painted beyond the computed range, nothing is interpolated),
in the outcome colours of :mod:`shuffledp.plotting.style` (blue: shuffle better, red: curator better;
grey: neither is useful, both errors at least that of guessing the uniform distribution),
the computed boundary (the interpolated crossings of :func:`shuffledp.experiments.phase_diagram.boundary`)
and the equal-guarantee Monte-Carlo verdicts of
:func:`shuffledp.experiments.phase_diagram.monte_carlo_verdicts` on top as markers (at their dataset's
k, each on the point computed at its own n and epsilon). Both layers compare the same *unprojected* pair (their "TV" is ½·L1); the background is on the
grid's data (``utility.phase_diagram.data``, e.g. uniform), the markers on the equal-guarantee
dataset of that k -- the figure says both. Nothing is computed here: ratios and verdicts are columns
of those frames.
"""

from __future__ import annotations

import math

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.colors import ListedColormap, LogNorm
from matplotlib.patches import Patch

from shuffledp.plotting import style

__all__ = ["VERDICT_MARKERS", "NEITHER_COLOUR", "log_edges", "plot_phase_panel", "figure_phase_diagram"]

#: verdict -> (marker, face colour, label): the outcome colours shared by every figure
VERDICT_MARKERS = {
    "shuffle": ("v", style.SHUFFLE_BETTER, "Monte Carlo: shuffle better"),
    "gaussian": ("o", style.CURATOR_BETTER, "Monte Carlo: Gaussian (curator) better"),
    "undecided": ("s", "none", "Monte Carlo: undecided (95% intervals overlap)"),
    "neither": ("X", style.NEITHER_USEFUL, "Monte Carlo: neither is useful (both mean ½·L1 ≥ 1 − 1/k)"),
}
#: cells where neither estimator beats guessing the uniform distribution (both E ½·L1 >= 1 - 1/k)
NEITHER_COLOUR = style.NEITHER_USEFUL
#: the colour scale spans ratios in [1 / _RATIO_SPAN, _RATIO_SPAN]
_RATIO_SPAN = 4.0


def log_edges(centres) -> np.ndarray:
    """Cell edges of log-spaced grid points: geometric means of neighbours inside, the outermost points
    themselves at the ends, so the cells cover exactly the computed range (nothing is painted beyond the
    first and last computed point). A single point gets a factor-1.25 cell either side."""
    values = np.asarray(centres, dtype=float)
    if values.size == 1:
        return np.array([values[0] / 1.25, values[0] * 1.25])
    middle = np.exp(0.5 * (np.log(values[1:]) + np.log(values[:-1])))
    return np.concatenate([[values[0]], middle, [values[-1]]])


def _boundary_lines(ax, crossings) -> int:
    """Draw the computed boundary (the interpolated crossings of :func:`shuffledp.experiments.phase_diagram.
    boundary`): the j-th crossing of one n joined to the j-th crossing of the next computed n when both
    exist and the same side wins below; crossings between two "neither is useful" points dotted. Returns
    how many crossings were drawn."""
    if crossings is None or crossings.empty:
        return 0
    columns = {n: group.sort_values("epsilon") for n, group in crossings.groupby("n_users", sort=True)}
    n_values = list(columns)
    for position, n_users in enumerate(n_values):
        here = columns[n_users]
        nxt = columns[n_values[position + 1]] if position + 1 < len(n_values) else None
        for j, point in enumerate(here.itertuples()):
            useless = bool(getattr(point, "neither_useful", False))
            ax.plot(
                [n_users],
                [point.epsilon],
                marker="o",
                markersize=3,
                color=style.INK,
                linestyle="none",
                zorder=4,
                gid="boundary-point",
            )
            if (
                nxt is not None
                and j < len(nxt)
                and nxt.iloc[j]["shuffle_wins_below"] == point.shuffle_wins_below
            ):
                ax.plot(
                    [n_users, n_values[position + 1]],
                    [point.epsilon, float(nxt.iloc[j]["epsilon"])],
                    color=style.INK,
                    linewidth=2.0,
                    linestyle=":" if useless else "-",
                    zorder=4,
                    gid="boundary",
                )
    return len(crossings)


def plot_phase_panel(
    grid, *, verdicts=None, crossings=None, ax=None, title: str = "", colorbar: bool = False
):
    """One k: the ratio cells over (n, epsilon) where computed (grey: neither is useful), the computed
    boundary where the winner changes and the verdict markers at their own (n, epsilon); returns the Axes.

    Args:
        grid: one k's and one delta rule's rows of ``phase_diagram.csv`` (n_users, epsilon, log_ratio and,
            when present, verdict).
        verdicts: Monte-Carlo verdicts of that k and rule (n_users, epsilon, verdict) or None; only those at
            a computed (n, epsilon) of ``grid`` are drawn.
        crossings: that k's and rule's rows of ``phase_diagram_boundary.csv`` or None.
        ax: the Axes (default: the current one).
        title: the panel title.
        colorbar: draw the ratio's colour bar.

    Returns:
        The Axes.
    """
    ax = ax if ax is not None else plt.gca()
    table = grid.pivot(index="epsilon", columns="n_users", values="log_ratio")
    n_values, epsilons = table.columns.to_numpy(dtype=float), table.index.to_numpy(dtype=float)
    log_ratio = table.to_numpy(dtype=float)
    useless = np.zeros_like(log_ratio, dtype=bool)
    if "verdict" in grid.columns:
        useless = (
            grid.pivot(index="epsilon", columns="n_users", values="verdict").reindex_like(table).to_numpy()
            == "neither"
        )
    x_edges, y_edges = log_edges(n_values), log_edges(epsilons)
    norm = LogNorm(vmin=1 / _RATIO_SPAN, vmax=_RATIO_SPAN)
    mesh = ax.pcolormesh(
        x_edges,
        y_edges,
        np.ma.masked_where(useless | ~np.isfinite(log_ratio), np.exp(log_ratio)),
        norm=norm,
        cmap=style.outcome_cmap(),
        shading="flat",
        edgecolors="white",
        linewidth=0.3,
    )
    if useless.any():
        ax.pcolormesh(
            x_edges,
            y_edges,
            np.ma.masked_where(~useless, np.ones_like(log_ratio)),
            cmap=ListedColormap([NEITHER_COLOUR]),
            shading="flat",
            edgecolors="white",
            linewidth=0.3,
            gid="neither-useful",
        )
    _boundary_lines(ax, crossings)
    if verdicts is not None:
        computed = set(zip(grid["n_users"].astype(float), grid["epsilon"].round(12)))
        on_grid = [
            (float(n), round(float(e), 12)) in computed
            for n, e in zip(verdicts["n_users"], verdicts["epsilon"])
        ]
        verdicts = verdicts[np.asarray(on_grid, dtype=bool)]
        for verdict, (marker, face, _) in VERDICT_MARKERS.items():
            chosen = verdicts[verdicts["verdict"] == verdict]
            ax.scatter(
                chosen["n_users"],
                chosen["epsilon"],
                marker=marker,
                s=46,
                facecolors=face,
                edgecolors=style.INK,
                linewidths=1.0,
                zorder=5,
                gid=f"verdict:{verdict}",
            )
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(x_edges[0], x_edges[-1])
    ax.set_ylim(y_edges[0], y_edges[-1])
    ax.set_xlabel("number of users n")
    ax.set_ylabel("target ε")
    ax.set_title(title)
    if colorbar:
        bar = ax.figure.colorbar(mesh, ax=ax, extend="both")
        bar.set_label("E ½·L1 shuffle+INV / E ½·L1 Gaussian\n(both unprojected; blue < 1: shuffle better)")
    return ax


def _panel_title(panel, marks) -> str:
    accountants = ", ".join(style.accountant_text(a) for a in sorted(panel["accountant"].unique()))
    title = f"k = {int(panel['k'].iloc[0])} (ε0: {accountants})"
    if marks is not None and len(marks) and "dataset" in marks.columns:
        title += "\nmarkers: " + ", ".join(str(d).replace("_", " ") for d in dict.fromkeys(marks["dataset"]))
    return title


def figure_phase_diagram(
    grid, verdicts=None, *, delta_rule: str, data: str = "uniform", crossings=None, data_label: str = ""
):
    """Every k of ``grid`` at ``delta_rule`` side by side.

    Args:
        grid: ``phase_diagram.csv``.
        verdicts: ``phase_diagram_monte_carlo.csv`` or None; drawn at their k where the grid computed
            their (n, epsilon) (the others are counted in the legend, not drawn in a neighbour's cell).
        delta_rule: the rule drawn.
        data: the grid's true histogram (``utility.phase_diagram.data``).
        crossings: ``phase_diagram_boundary.csv`` or None: the boundary line is drawn through them.
        data_label: which data and grid ran (:func:`shuffledp.plotting.style.data_label`), shown under the title.

    Returns:
        The Figure.
    """
    rows = grid[grid["delta_rule"] == delta_rule]
    ks = sorted(rows["k"].unique())
    columns = min(2, len(ks))
    off_grid = 0
    with style.plot_style():
        figure, axes = plt.subplots(
            math.ceil(len(ks) / columns),
            columns,
            figsize=(5.6 * columns, 4.4 * math.ceil(len(ks) / columns) + 1.2),
            squeeze=False,
            layout="constrained",
        )
        for ax, k in zip(axes.flat, ks):
            panel = rows[rows["k"] == k]
            marks = None
            if verdicts is not None and len(verdicts):
                marks = verdicts[(verdicts["k"] == k) & (verdicts["delta_rule"] == delta_rule)]
                computed = set(zip(panel["n_users"].astype(float), panel["epsilon"].round(12)))
                off_grid += sum(
                    (float(n), round(float(e), 12)) not in computed
                    for n, e in zip(marks["n_users"], marks["epsilon"])
                )
            lines = (
                None
                if crossings is None
                else crossings[(crossings["k"] == k) & (crossings["delta_rule"] == delta_rule)]
            )
            plot_phase_panel(
                panel, verdicts=marks, crossings=lines, ax=ax, title=_panel_title(panel, marks), colorbar=True
            )
        for ax in list(axes.flat)[len(ks) :]:
            ax.set_visible(False)
        handles = [
            style.line_handle(
                "where the winner changes (interpolated crossings of phase_diagram_boundary.csv; dotted: "
                "between cells where neither is useful)",
                colour=style.INK,
                marker="o",
            ),
            Patch(
                facecolor=NEITHER_COLOUR,
                edgecolor="white",
                label="neither is useful: both E ½·L1 ≥ 1 − 1/k (the error of guessing the uniform distribution)",
            ),
        ]
        handles += [
            plt.Line2D(
                [], [], marker=m, linestyle="none", markerfacecolor=f, markeredgecolor=style.INK, label=label
            )
            for m, f, label in VERDICT_MARKERS.values()
        ]
        if off_grid:
            handles.append(
                style.line_handle(
                    f"{off_grid} Monte-Carlo verdict(s) outside the computed grid: not drawn", colour="none"
                )
            )
        figure.legend(handles=handles, loc="outside lower center", ncol=2, frameon=False, fontsize=8)
        figure.suptitle(
            f"Shuffled k-RR + INV vs analytic Gaussian, both unprojected (½·L1 error), δ: {delta_rule}; "
            f"{style.OUTCOME_WORDS['shuffle']}, {style.OUTCOME_WORDS['curator']}\n"
            f"cells: exact expectation on {data} data, one cell per computed point, drawn only over the "
            "computed range;\n"
            "markers: Monte Carlo (equal-guarantee grid, ε0 of weak-adversary) on the real dataset of that k, "
            "each on the cell of its own n and ε" + (f"\n{data_label}" if data_label else ""),
            fontsize="medium",
        )
    return figure
