"""Composed phase diagram figure: how the shuffle-or-curator verdict moves with the number of
rounds T. Drawing only.

One panel per k: the exact ratio E TV(shuffle+INV) / E TV(Gaussian) of the average over T rounds (the
``average_l1_half_shuffle`` / ``average_l1_half_gaussian`` columns of
:func:`shuffledp.experiments.compare_rounds.rounds_grid_job`) against T, one line per (q, n, epsilon);
below 1 the shuffle wins (the outcome colours of :mod:`shuffledp.plotting.style` shade the two halves).
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from shuffledp.plotting import style

__all__ = ["figure_rounds"]


def figure_rounds(grid: pd.DataFrame) -> plt.Figure:
    """The figure (module docstring) of the computed points of ``grid``."""
    frame = grid[grid["skipped"].isna() | (grid["skipped"].astype(str) == "")].dropna(subset=["log_ratio"])
    ks = sorted(frame["k"].unique()) or [0]
    figure, axes = plt.subplots(1, len(ks), figsize=(4.2 * len(ks), 3.6), squeeze=False, sharey=True)
    for axis, k in zip(axes[0], ks):
        panel = frame[frame["k"] == k]
        for (q, n_users, epsilon), line in panel.groupby(["subsample", "n_users", "epsilon"], sort=True):
            line = line.sort_values("compositions")
            axis.plot(
                line["compositions"],
                np.exp(line["log_ratio"]),
                marker="o" if q == 1 else "s",
                linestyle="-" if q == 1 else "--",
                label=f"q = {q:g}, n = {int(n_users):,}, ε = {epsilon:g}",
            )
        axis.axhspan(1e-3, 1.0, color=style.SHUFFLE_BETTER, alpha=0.08)
        axis.axhspan(1.0, 1e3, color=style.CURATOR_BETTER, alpha=0.08)
        axis.axhline(1.0, color="black", linewidth=0.8)
        axis.set_xscale("log")
        axis.set_yscale("log")
        axis.set_xlabel("rounds T (total ε, δ fixed)")
        axis.set_title(f"k = {int(k)}")
        axis.legend(fontsize=6)
    values = np.exp(frame["log_ratio"]) if len(frame) else pd.Series([1.0])
    axes[0][0].set_ylim(min(0.5, values.min() / 1.2), max(2.0, values.max() * 1.2))  # shared by every panel
    axes[0][0].set_ylabel("E TV shuffle+INV / E TV Gaussian\n(average of T rounds; < 1: shuffle better)")
    figure.tight_layout()
    return figure
