"""Phase diagram figure: shuffle+INV against the analytic Gaussian over (n, epsilon). Drawing only.

One panel per k: the exact ratio E TV(shuffle+INV) / E TV(Gaussian) of the grid frame of
:func:`shuffledp.experiments.phase_diagram.grid_job`, one flat-coloured cell per grid point actually
computed (cell edges half-way between grid points in log n and log epsilon; nothing is interpolated),
in the outcome colours of :mod:`shuffledp.plotting.style` (blue: shuffle better, red: curator better),
the cell edges where the winner changes, and the equal-guarantee Monte-Carlo verdicts of
:func:`shuffledp.experiments.phase_diagram.monte_carlo_verdicts` on top as markers (at their dataset's
k). Both layers compare the same *unprojected* pair (their "TV" is ½·L1); the background is on the
grid's data (``utility.phase_diagram.data``, e.g. uniform), the markers on the equal-guarantee
dataset of that k -- the figure says both. Nothing is computed here: ratios and verdicts are columns
of those frames.
"""

from __future__ import annotations

import math

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.colors import LogNorm

from shuffledp.plotting import style

__all__ = ["VERDICT_MARKERS", "log_edges", "plot_phase_panel", "figure_phase_diagram"]

#: verdict -> (marker, face colour, label): the outcome colours shared by every figure
VERDICT_MARKERS = {
    "shuffle": ("v", style.SHUFFLE_BETTER, "Monte Carlo: shuffle better"),
    "gaussian": ("o", style.CURATOR_BETTER, "Monte Carlo: Gaussian (curator) better"),
    "undecided": ("s", "none", "Monte Carlo: undecided (95% intervals overlap)"),
}
#: the colour scale spans ratios in [1 / _RATIO_SPAN, _RATIO_SPAN]
_RATIO_SPAN = 4.0


def log_edges(centres) -> np.ndarray:
    """Cell edges of log-spaced grid points: geometric means of neighbours, and as far beyond the ends
    (a single point gets a factor-2 cell)."""
    centres = np.log(np.asarray(centres, dtype=float))
    if centres.size == 1:
        return np.exp(np.array([centres[0] - math.log(2.0), centres[0] + math.log(2.0)]))
    middle = 0.5 * (centres[1:] + centres[:-1])
    return np.exp(np.concatenate([[2 * centres[0] - middle[0]], middle, [2 * centres[-1] - middle[-1]]]))


def _winner_edges(ax, log_ratio, x_edges, y_edges) -> int:
    """Draw the cell edges between neighbouring cells with opposite winners; returns how many."""
    sign = np.sign(log_ratio)
    segments = []
    rows, columns = sign.shape
    for i in range(rows):
        for j in range(columns):
            if j + 1 < columns and sign[i, j] * sign[i, j + 1] < 0:
                segments.append(([x_edges[j + 1]] * 2, [y_edges[i], y_edges[i + 1]]))
            if i + 1 < rows and sign[i, j] * sign[i + 1, j] < 0:
                segments.append(([x_edges[j], x_edges[j + 1]], [y_edges[i + 1]] * 2))
    for xs, ys in segments:
        ax.plot(xs, ys, color=style.INK, linewidth=2.0, solid_capstyle="butt", zorder=4, gid="winner-edge")
    return len(segments)


def plot_phase_panel(grid, *, verdicts=None, ax=None, title: str = "", colorbar: bool = False):
    """One k: the ratio cells over (n, epsilon), the edges where the winner changes and the verdict
    markers; returns the Axes."""
    ax = ax if ax is not None else plt.gca()
    table = grid.pivot(index="epsilon", columns="n_users", values="log_ratio")
    n_values, epsilons = table.columns.to_numpy(dtype=float), table.index.to_numpy(dtype=float)
    log_ratio = table.to_numpy(dtype=float)
    x_edges, y_edges = log_edges(n_values), log_edges(epsilons)
    norm = LogNorm(vmin=1 / _RATIO_SPAN, vmax=_RATIO_SPAN)
    mesh = ax.pcolormesh(
        x_edges,
        y_edges,
        np.ma.masked_invalid(np.exp(log_ratio)),
        norm=norm,
        cmap=style.outcome_cmap(),
        shading="flat",
        edgecolors="white",
        linewidth=0.3,
    )
    _winner_edges(ax, log_ratio, x_edges, y_edges)
    if verdicts is not None:
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


def figure_phase_diagram(grid, verdicts=None, *, delta_rule: str, data: str = "uniform"):
    """Every k of ``grid`` at ``delta_rule`` side by side; ``verdicts`` (optional) drawn at their k."""
    rows = grid[grid["delta_rule"] == delta_rule]
    ks = sorted(rows["k"].unique())
    columns = min(2, len(ks))
    with style.plot_style():
        figure, axes = plt.subplots(
            math.ceil(len(ks) / columns),
            columns,
            figsize=(5.6 * columns, 4.4 * math.ceil(len(ks) / columns) + 0.8),
            squeeze=False,
            layout="constrained",
        )
        for ax, k in zip(axes.flat, ks):
            panel = rows[rows["k"] == k]
            marks = None
            if verdicts is not None and len(verdicts):
                marks = verdicts[(verdicts["k"] == k) & (verdicts["delta_rule"] == delta_rule)]
            plot_phase_panel(panel, verdicts=marks, ax=ax, title=_panel_title(panel, marks), colorbar=True)
        for ax in list(axes.flat)[len(ks) :]:
            ax.set_visible(False)
        handles = [
            style.line_handle(
                "cell edge where the winner changes (exact, at the grid points)", colour=style.INK
            )
        ]
        handles += [
            plt.Line2D(
                [], [], marker=m, linestyle="none", markerfacecolor=f, markeredgecolor=style.INK, label=label
            )
            for m, f, label in VERDICT_MARKERS.values()
        ]
        figure.legend(handles=handles, loc="outside lower center", ncol=2, frameon=False)
        figure.suptitle(
            f"Shuffled k-RR + INV vs analytic Gaussian, both unprojected (½·L1 error), δ: {delta_rule}; "
            f"{style.OUTCOME_WORDS['shuffle']}, {style.OUTCOME_WORDS['curator']}\n"
            f"cells: exact expectation on {data} data, one cell per grid point;\n"
            "markers: Monte Carlo (equal-guarantee grid, ε0 of weak-adversary) on the real dataset of that k",
            fontsize="medium",
        )
    return figure
