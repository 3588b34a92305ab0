"""Phase diagram figure (issue 20): shuffle+INV against the analytic Gaussian over (n, epsilon). Drawing only.

One panel per k: the exact ratio E TV(shuffle+INV) / E TV(Gaussian) of the grid frame of
:func:`shuffledp.experiments.phase_diagram.grid_job` as a diverging colour map (blue: the shuffle is
better), the line where the two are equal (a contour at ratio 1), and the equal-guarantee Monte-Carlo
verdicts of :func:`shuffledp.experiments.phase_diagram.monte_carlo_verdicts` on top as markers (at their
dataset's k). Nothing is computed here: ratios and verdicts are columns of those frames.
"""

from __future__ import annotations

import math

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.colors import LogNorm

from shuffledp.plotting import style

__all__ = ["VERDICT_MARKERS", "plot_phase_panel", "figure_phase_diagram"]

#: verdict -> (marker, face colour, label)
VERDICT_MARKERS = {
    "shuffle": ("v", "#2166AC", "Monte Carlo: shuffle better"),
    "gaussian": ("o", "#B2182B", "Monte Carlo: Gaussian better"),
    "undecided": ("s", "none", "Monte Carlo: undecided (95% intervals overlap)"),
}
#: the colour scale spans ratios in [1 / _RATIO_SPAN, _RATIO_SPAN]
_RATIO_SPAN = 4.0


def plot_phase_panel(grid, *, verdicts=None, ax=None, title: str = "", colorbar: bool = False):
    """One k: the ratio map over (n, epsilon), the ratio-1 contour and the verdict markers; returns the Axes."""
    ax = ax if ax is not None else plt.gca()
    table = grid.pivot(index="epsilon", columns="n_users", values="log_ratio")
    n_values, epsilons = table.columns.to_numpy(dtype=float), table.index.to_numpy(dtype=float)
    ratio = np.exp(table.to_numpy())
    norm = LogNorm(vmin=1 / _RATIO_SPAN, vmax=_RATIO_SPAN)
    cmap = plt.get_cmap(style.DIVERGING_CMAP).with_extremes(bad=style.EMPTY_COLOUR)
    mesh = ax.pcolormesh(n_values, epsilons, np.clip(ratio, 1 / _RATIO_SPAN, _RATIO_SPAN), norm=norm, cmap=cmap,
                         shading="gouraud" if min(ratio.shape) > 1 else "nearest")
    if min(ratio.shape) > 1 and np.nanmin(ratio) < 1 < np.nanmax(ratio):
        ax.contour(n_values, epsilons, np.log(ratio), levels=[0.0], colors=[style.INK], linewidths=2.0)
    if verdicts is not None:
        for verdict, (marker, face, _) in VERDICT_MARKERS.items():
            chosen = verdicts[verdicts["verdict"] == verdict]
            ax.scatter(chosen["n_users"], chosen["epsilon"], marker=marker, s=46, facecolors=face,
                       edgecolors=style.INK, linewidths=1.0, zorder=5)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("number of users n")
    ax.set_ylabel("target ε")
    ax.set_title(title)
    if colorbar:
        bar = ax.figure.colorbar(mesh, ax=ax, extend="both")
        bar.set_label("E TV shuffle+INV / E TV Gaussian")
    return ax


def figure_phase_diagram(grid, verdicts=None, *, delta_rule: str, data: str = "uniform"):
    """Every k of ``grid`` at ``delta_rule`` side by side; ``verdicts`` (optional) drawn at their k."""
    rows = grid[grid["delta_rule"] == delta_rule]
    ks = sorted(rows["k"].unique())
    columns = min(2, len(ks))
    with style.plot_style():
        figure, axes = plt.subplots(math.ceil(len(ks) / columns), columns, figsize=(5.2 * columns, 4.0 * math.ceil(len(ks) / columns)),
                                    squeeze=False, layout="constrained")
        for ax, k in zip(axes.flat, ks):
            panel = rows[rows["k"] == k]
            marks = None
            if verdicts is not None and len(verdicts):
                marks = verdicts[(verdicts["k"] == k) & (verdicts["delta_rule"] == delta_rule)]
            accountant = ", ".join(sorted(panel["accountant"].unique()))
            plot_phase_panel(panel, verdicts=marks, ax=ax, title=f"k = {int(k)} (ε0: {accountant})", colorbar=True)
        for ax in list(axes.flat)[len(ks):]:
            ax.set_visible(False)
        handles = [style.line_handle("equal expected TV (exact)", colour=style.INK)]
        handles += [plt.Line2D([], [], marker=m, linestyle="none", markerfacecolor=f, markeredgecolor=style.INK, label=label)
                    for m, f, label in VERDICT_MARKERS.values()]
        figure.legend(handles=handles, loc="outside lower center", ncol=2, frameon=False)
        figure.suptitle(f"Shuffled k-RR + INV vs analytic Gaussian (both unprojected), δ: {delta_rule}, data: {data}; "
                        "blue: shuffle better")
    return figure
