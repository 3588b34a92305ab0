"""Composed phase diagram figure: how the shuffle-or-curator verdict moves with the number of
rounds T. Drawing only.

One panel per k: the exact ratio E ½·L1(shuffle+INV) / E ½·L1(Gaussian), both unprojected, of the average
over T rounds (the ``average_l1_half_shuffle`` / ``average_l1_half_gaussian`` columns of
:func:`shuffledp.experiments.compare_rounds.rounds_grid_job`) at each computed T, one marker series per
(q, n, epsilon); below 1 the shuffle wins (the outcome colours of :mod:`shuffledp.plotting.style` shade
the two halves). Computed values of T are joined by a line only where a series has at least three of them
(two points joined would draw a trend that was not computed). The title names the total (epsilon, delta),
the accountants that calibrated each side and the data.
"""

from __future__ import annotations

import textwrap

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from shuffledp.plotting import style

__all__ = ["MIN_JOINED", "figure_rounds"]

#: a series' computed T values are joined by a line only when it has at least this many
MIN_JOINED = 3
_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")


def _title(frame: pd.DataFrame, data: str, shuffle_accountant: str) -> str:
    epsilons = ", ".join(f"{e:g}" for e in sorted(frame["epsilon"].unique())) if len(frame) else "-"
    deltas = ", ".join(style.format_delta(d) for d in sorted(frame["delta"].unique())) if len(frame) else "-"
    return (
        f"Shuffled k-RR + INV vs analytic Gaussian over T rounds, one total guarantee ε = {epsilons}, "
        f"δ = {deltas}\n"
        f"ε0 per round: composed {style.accountant_text(shuffle_accountant)} PLD; Gaussian σ: its exact "
        f"composition (q = 1) or dp_accounting's PLD (q < 1); exact expectations on {data} data"
    )


def figure_rounds(
    grid: pd.DataFrame,
    *,
    data: str = "uniform",
    data_label: str = "",
    shuffle_accountant: str = "weak-adversary",
) -> plt.Figure:
    """The figure (module docstring) of the computed points of ``grid``.

    Args:
        grid: ``phase_diagram_rounds.csv`` (k, compositions, subsample, n_users, epsilon, delta, skipped,
            log_ratio).
        data: the true histogram of the grid (``utility.phase_diagram_rounds.data``).
        data_label: which data and grid ran (:func:`shuffledp.plotting.style.run_label`), under the title.
        shuffle_accountant: the accountant whose composed PLD gave eps0 per round
            (``shuffledp.experiments.compare_rounds.SHUFFLE_ACCOUNTANT``).

    Returns:
        The Figure.
    """
    frame = grid[grid["skipped"].isna() | (grid["skipped"].astype(str) == "")].dropna(subset=["log_ratio"])
    ks = sorted(frame["k"].unique()) or [0]
    with style.plot_style():
        figure, axes = plt.subplots(
            1,
            len(ks),
            figsize=(max(4.4 * len(ks), 6.0), 4.8),
            squeeze=False,
            sharey=True,
            layout="constrained",
        )
        for axis, k in zip(axes[0], ks):
            panel = frame[frame["k"] == k]
            series = list(panel.groupby(["subsample", "n_users", "epsilon"], sort=True))
            colours = style.curve_styles([f"q = {q:g}, n = {int(n):,}, ε = {e:g}" for (q, n, e), _ in series])
            for index, ((q, n_users, epsilon), line) in enumerate(series):
                label = f"q = {q:g}, n = {int(n_users):,}, ε = {epsilon:g}"
                colour, linestyle = colours[label]
                line = line.sort_values("compositions")
                joined = len(line) >= MIN_JOINED
                axis.plot(
                    line["compositions"],
                    np.exp(line["log_ratio"]),
                    marker=_MARKERS[index % len(_MARKERS)],
                    color=colour,
                    linestyle=linestyle if joined else "none",
                    label=label + ("" if joined else " (computed T only)"),
                    gid="joined" if joined else "points",
                )
            axis.axhspan(1e-3, 1.0, color=style.SHUFFLE_BETTER, alpha=0.08)
            axis.axhspan(1.0, 1e3, color=style.CURATOR_BETTER, alpha=0.08)
            axis.axhline(1.0, color="black", linewidth=0.8)
            axis.set_xscale("log")
            axis.set_yscale("log")
            axis.set_xlabel("rounds T (total ε, δ fixed)")
            axis.set_title(f"k = {int(k)}")
            axis.legend(fontsize=8)
        values = np.exp(frame["log_ratio"]) if len(frame) else pd.Series([1.0])
        axes[0][0].set_ylim(
            min(0.5, values.min() / 1.2), max(2.0, values.max() * 1.2)
        )  # shared by every panel
        axes[0][0].set_ylabel(
            "E ½·L1 shuffle+INV / E ½·L1 Gaussian\n(both unprojected, average of T rounds;\n< 1: shuffle better)"
        )
        text = _title(frame, data, shuffle_accountant) + (f"\n{data_label}" if data_label else "")
        width = 48 * len(ks) + 10  # characters that fit over the panels at the medium font size
        figure.suptitle("\n".join(textwrap.fill(line, width) for line in text.split("\n")), fontsize="medium")
    return figure
