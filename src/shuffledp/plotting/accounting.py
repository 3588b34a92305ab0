"""Accounting figures: delta over (epsilon, epsilon_0) (Figure 1) and delta curves of the sweeps.

Drawing only: inputs are log10 delta values already computed (``shuffledp.experiments_accounting``);
each function takes ``ax=None`` plus keyword-only options and returns the Axes. Colour and y axes
show log10 delta, so values far below the double range (1e-300 and beyond) are drawn faithfully;
delta = 0 (log10 = -inf) is drawn as a light grey cell or left out of a curve, never as a colour.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.patches import Patch

__all__ = ["plot_delta_surface", "plot_delta_curves", "ZERO_COLOUR"]

ZERO_COLOUR = "0.85"


def _axes(ax):
    return plt.gca() if ax is None else ax


def _edges(centres: np.ndarray) -> np.ndarray:
    centres = np.asarray(centres, dtype=float)
    if centres.size == 1:
        return np.array([centres[0] - 0.5, centres[0] + 0.5])
    middle = 0.5 * (centres[1:] + centres[:-1])
    return np.concatenate([[2 * centres[0] - middle[0]], middle, [2 * centres[-1] - middle[-1]]])


def plot_delta_surface(
    epsilons,
    epsilon_locals,
    log10_delta,
    *,
    ax=None,
    title: str = "",
    vmin: float | None = None,
    vmax: float | None = None,
    colorbar: bool = True,
    cmap: str = "viridis",
):
    """Heat map of log10 delta over (epsilon: x axis, epsilon_0: y axis); delta = 0 in light grey.

    ``log10_delta`` has shape (len(epsilon_locals), len(epsilons)).
    """
    ax = _axes(ax)
    values = np.asarray(log10_delta, dtype=float)
    finite = np.isfinite(values)
    x_edges, y_edges = _edges(epsilons), _edges(epsilon_locals)
    zero = np.where(np.isneginf(values), 1.0, np.nan)
    ax.pcolormesh(x_edges, y_edges, zero, cmap=plt.matplotlib.colors.ListedColormap([ZERO_COLOUR]), shading="flat")
    image = ax.pcolormesh(x_edges, y_edges, np.ma.masked_where(~finite, values), cmap=cmap, vmin=vmin, vmax=vmax,
                          shading="flat")
    ax.set_xlabel("ε (central)")
    ax.set_ylabel("ε0 (local k-RR)")
    ax.set_title(title)
    if colorbar:
        ax.figure.colorbar(image, ax=ax, label="log10 δ")
    if np.isneginf(values).any():
        ax.legend(handles=[Patch(facecolor=ZERO_COLOUR, label="δ = 0")], loc="upper left", fontsize="small")
    return ax


def plot_delta_curves(series, *, ax=None, xlabel: str = "", title: str = "", log_x: bool = False):
    """Curves of log10 delta: ``series`` maps a legend label to (x values, log10 delta).

    Points with delta = 0 are left out (the curve stops); a legend entry says how many were left out.
    """
    ax = _axes(ax)
    for label, (x, y) in series.items():
        x = np.asarray(x, dtype=float)
        y = np.asarray(y, dtype=float)
        zeros = int(np.isneginf(y).sum())
        shown = np.where(np.isfinite(y), y, np.nan)
        suffix = f" ({zeros} point(s) with δ = 0 not drawn)" if zeros else ""
        ax.plot(x, shown, marker="o", markersize=3, label=label + suffix)
    if log_x:
        ax.set_xscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel("log10 δ")
    ax.set_title(title)
    ax.grid(True, alpha=0.3)
    if series:
        ax.legend(fontsize="x-small")
    return ax
