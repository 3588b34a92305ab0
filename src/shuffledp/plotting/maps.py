"""Figure 3: check-in scatter maps and grid-cell heat maps, in km on a local planar projection; and the
data line every Gowalla figure carries (:func:`add_data_label`).

Drawing only. Coordinates come projected (``shuffledp.data.geometry.equirectangular_km``) and counts
come gridded (``shuffledp.data.geometry.counts_grid``); each function takes ``ax=None`` plus
keyword-only options and returns the Axes. Axes have equal aspect, so one km east-west is as long
as one km north-south. No basemap tiles are drawn.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.colors import LogNorm, Normalize

from shuffledp.plotting import style

__all__ = ["plot_checkins", "plot_cell_counts", "add_data_label", "X_LABEL", "Y_LABEL"]

X_LABEL = "east-west (km)"
Y_LABEL = "north-south (km)"


def _axes(ax):
    return plt.gca() if ax is None else ax


def _frame(ax, extent, title):
    x_min, x_max, y_min, y_max = extent
    ax.set_xlim(x_min, x_max)
    ax.set_ylim(y_min, y_max)
    ax.set_aspect("equal")
    ax.set_xlabel(X_LABEL)
    ax.set_ylabel(Y_LABEL)
    if title:
        ax.set_title(title)


def plot_checkins(
    x_km,
    y_km,
    *,
    extent,
    ax=None,
    title: str = "",
    color: str = "magenta",
    size: float = 1.0,
    alpha: float = 0.3,
    edges=None,
):
    """Scatter of check-ins at (x_km, y_km) inside ``extent`` = (x_min, x_max, y_min, y_max).

    ``edges`` = (x_edges, y_edges) optionally draws the grid lines (km).
    """
    ax = _axes(ax)
    ax.scatter(x_km, y_km, s=size, c=color, alpha=alpha, linewidths=0, rasterized=True)
    if edges is not None:
        x_edges, y_edges = edges
        ax.vlines(x_edges, extent[2], extent[3], colors="0.7", linewidths=0.3)
        ax.hlines(y_edges, extent[0], extent[1], colors="0.7", linewidths=0.3)
    _frame(ax, extent, title)
    return ax


def plot_cell_counts(
    counts,
    *,
    extent,
    ax=None,
    title: str = "",
    log_scale: bool = True,
    cmap: str = style.SEQUENTIAL_CMAP,
    colorbar: bool = True,
    colorbar_label: str = "check-ins per cell",
):
    """Heat map of an ``(n_lat, n_lon)`` count array (row 0 = south) over ``extent`` (km).

    With ``log_scale`` (for skewed counts; the colour bar label then says "log scale") empty cells
    are drawn in the colormap's "bad" colour (the style's light grey).
    """
    ax = _axes(ax)
    counts = np.asarray(counts, dtype=float)
    positive = counts[counts > 0]
    if log_scale and positive.size:
        norm: Normalize = LogNorm(vmin=positive.min(), vmax=max(positive.max(), positive.min() * 10))
        shown = np.ma.masked_less_equal(counts, 0)
    else:
        norm = Normalize(vmin=0, vmax=max(counts.max(initial=0), 1))
        shown = counts
    colormap = plt.get_cmap(cmap).with_extremes(bad=style.EMPTY_COLOUR)
    image = ax.imshow(shown, origin="lower", extent=extent, cmap=colormap, norm=norm, interpolation="nearest")
    if colorbar:
        label = colorbar_label + (" (log scale; empty cells grey)" if log_scale and positive.size else "")
        ax.figure.colorbar(image, ax=ax, label=label, shrink=0.8)
    _frame(ax, extent, title)
    return ax


def add_data_label(figure, text: str):
    """:func:`shuffledp.plotting.style.add_data_label` (kept here for the map figures' callers)."""
    return style.add_data_label(figure, text)
