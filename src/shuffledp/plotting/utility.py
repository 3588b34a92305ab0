"""Utility figures (paper Figures 2, 4-7, and the crossover sweep). Drawing only.

Every function takes ``ax=None`` plus keyword-only options and returns the Axes. Inputs are the
tidy frames written by the utility workflow (``shuffledp.experiments``); nothing is computed here
beyond grouping rows for display.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.colors import LogNorm, TwoSlopeNorm

__all__ = ["plot_tv_boxes", "plot_cell_distribution", "plot_crossover"]

COLOURS = {"gaussian": "tab:blue", "gaussian+proj": "tab:cyan", "shuffle": "tab:orange", "shuffle+INV": "tab:green"}
LABELS = {"gaussian": "Gaussian", "gaussian+proj": "Gaussian + projection", "shuffle": "shuffle", "shuffle+INV": "shuffle+INV"}


def _axes(ax):
    return plt.gca() if ax is None else ax


def plot_tv_boxes(frame, *, mechanisms, ax=None, title: str = "", log_scale: bool = True):
    """Box plots of TV distance per n (x) and mechanism (colour). ``frame``: columns n_users, mechanism, tv."""
    ax = _axes(ax)
    n_values = sorted(frame["n_users"].unique())
    width = 0.8 / max(len(mechanisms), 1)
    for j, mechanism in enumerate(mechanisms):
        data = [frame[(frame["n_users"] == n) & (frame["mechanism"] == mechanism)]["tv"].dropna().to_numpy() for n in n_values]
        positions = np.arange(len(n_values)) + (j - (len(mechanisms) - 1) / 2) * width
        boxes = ax.boxplot(data, positions=positions, widths=width * 0.9, patch_artist=True, showfliers=True,
                           flierprops={"markersize": 2})
        for patch in boxes["boxes"]:
            patch.set_facecolor(COLOURS.get(mechanism, "grey"))
            patch.set_alpha(0.7)
        ax.plot([], [], color=COLOURS.get(mechanism, "grey"), linewidth=6, alpha=0.7, label=LABELS.get(mechanism, mechanism))
    ax.set_xticks(np.arange(len(n_values)))
    ax.set_xticklabels([f"{n:,}" for n in n_values], rotation=45, ha="right")
    ax.set_xlabel("n (number of users)")
    ax.set_ylabel("TV distance to the original distribution")
    if log_scale:
        ax.set_yscale("log")
    ax.set_title(title)
    ax.legend(fontsize="small")
    return ax


def plot_cell_distribution(values, *, n_lon: int, n_lat: int, ax=None, title: str = "", vmax=None):
    """Heat map of a distribution over grid cells (cell = lat_index * n_lon + lon_index, south at the bottom)."""
    ax = _axes(ax)
    grid = np.asarray(values, dtype=float).reshape(n_lat, n_lon)
    image = ax.imshow(np.clip(grid, 0, None), origin="lower", cmap="viridis", vmin=0, vmax=vmax, aspect="equal")
    ax.set_xlabel("longitude index (west to east)")
    ax.set_ylabel("latitude index (south to north)")
    ax.set_title(title)
    ax.figure.colorbar(image, ax=ax, shrink=0.8, label="probability")
    return ax


def plot_crossover(frame, *, ax=None, title: str = ""):
    """log10(TV Gaussian / TV shuffle+INV) over (epsilon, epsilon_local); < 0 (blue): Gaussian better.

    ``frame``: one accountant's rows with columns epsilon, epsilon_local, tv_gaussian_mean,
    tv_shuffle_inv_mean, delta_floored. Floored cells are hatched.
    """
    ax = _axes(ax)
    epsilons = sorted(frame["epsilon"].unique())
    locals_ = sorted(frame["epsilon_local"].unique())
    grid = np.full((len(locals_), len(epsilons)), np.nan)
    floored = np.zeros_like(grid, dtype=bool)
    for _, row in frame.iterrows():
        i, j = locals_.index(row["epsilon_local"]), epsilons.index(row["epsilon"])
        grid[i, j] = np.log10(row["tv_gaussian_mean"] / row["tv_shuffle_inv_mean"])
        floored[i, j] = bool(row["delta_floored"])
    limit = max(np.nanmax(np.abs(grid)), 1e-3) if np.isfinite(grid).any() else 1.0
    image = ax.imshow(grid, origin="lower", cmap="RdBu_r", norm=TwoSlopeNorm(0.0, -limit, limit), aspect="auto")
    for i, j in zip(*np.nonzero(floored)):
        ax.text(j, i, "floor", ha="center", va="center", fontsize=6)
    ax.set_xticks(range(len(epsilons)))
    ax.set_xticklabels([f"{e:g}" for e in epsilons])
    ax.set_yticks(range(len(locals_)))
    ax.set_yticklabels([f"{e:g}" for e in locals_])
    ax.set_xlabel("central epsilon")
    ax.set_ylabel("local epsilon_0")
    ax.set_title(title)
    ax.figure.colorbar(image, ax=ax, shrink=0.8, label="log10(TV Gaussian / TV shuffle+INV)")
    return ax
