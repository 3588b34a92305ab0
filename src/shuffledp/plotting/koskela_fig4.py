"""Koskela, Heikkilä & Honkela's Figure 4 redrawn with our parameters: delta(eps) of shuffled Gaussian noise
for several numbers of users d. Importance-sampling estimate (line) with its CLT band (shaded), the
empirical-Bernstein upper bound (dotted), plain Monte Carlo for comparison (small dots) and, for
d <= 2, the exact integral (open markers).

Drawing only: the input is the frame of :func:`shuffledp.experiments.shuffled_gaussian.fig4_frame`. There is
no published curve to overlay (the figure's parameters and numbers are not available; see
docs/koskela-figures.md, "Fig. 4"). A frame without importance-sampling rows is drawn from its plain rows.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.artist import Artist
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from shuffledp.experiments.shuffled_gaussian import IMPORTANCE, PLAIN, band_width
from shuffledp.plotting import style

__all__ = ["figure_koskela_fig4"]


def _positive(values) -> np.ndarray:
    values = np.asarray(values, dtype=float)
    return np.where(values > 0, values, np.nan)  # log axis: zero estimates are not drawn


def _draw_dimension(ax, rows: pd.DataFrame, plain: pd.DataFrame, colour, floor: float) -> None:
    ax.semilogy(rows["epsilon"], _positive(rows["delta"]), color=colour, lw=1.6)
    low = rows["delta_low"].to_numpy(float)  # a band reaching 0 is drawn down to the axis floor
    ax.fill_between(
        rows["epsilon"],
        np.where(low > 0, low, floor),
        _positive(rows["delta_high"]),
        color=colour,
        alpha=0.25,
        lw=0,
    )
    ax.semilogy(rows["epsilon"], rows["delta_upper_bound"], color=colour, lw=0.9, linestyle=":")
    if len(plain) and plain is not rows:
        ax.semilogy(
            plain["epsilon"],
            _positive(plain["delta"]),
            linestyle="none",
            marker=".",
            markersize=3,
            color=colour,
        )
    exact = np.maximum(rows["exact_pq"].to_numpy(float), rows["exact_qp"].to_numpy(float))
    if np.isfinite(exact).any():
        ax.semilogy(
            rows["epsilon"],
            _positive(exact),
            linestyle="none",
            marker="o",
            markersize=4,
            markerfacecolor="none",
            color=style.shade(colour),
            markevery=2,
        )


def figure_koskela_fig4(frame: pd.DataFrame, *, confidence: float):
    """One panel: delta against eps (log delta), one colour per d."""
    main_name = IMPORTANCE if (frame["estimator"] == IMPORTANCE).any() else PLAIN
    main, plain = frame[frame["estimator"] == main_name], frame[frame["estimator"] == PLAIN]
    dimensions = sorted(main["dimension"].unique())
    cmap = plt.get_cmap(style.SEQUENTIAL_CMAP)
    colours = {d: cmap(x) for d, x in zip(dimensions, np.linspace(0.0, 0.85, len(dimensions)))}
    with style.plot_style():
        figure, ax = plt.subplots(figsize=(7.5, 5.6), layout="constrained")
        drawn = main[["delta", "delta_low"]].to_numpy(float)
        floor = 0.3 * float(drawn[drawn > 0].min()) if (drawn > 0).any() else 1e-12
        handles: list[Artist] = []
        for d in dimensions:
            rows = main[main["dimension"] == d].sort_values("epsilon")
            other = plain[plain["dimension"] == d].sort_values("epsilon") if main_name != PLAIN else rows
            _draw_dimension(ax, rows, other, colours[d], floor)
            handles.append(
                Line2D(
                    [],
                    [],
                    color=colours[d],
                    lw=1.6,
                    label=f"d = {int(d)} (band ±{band_width(rows):.1%} at most)",
                )
            )
        samples = int(main["samples"].iloc[0])
        what = "importance sampling" if main_name == IMPORTANCE else "plain Monte Carlo"
        handles += [
            Patch(
                color="0.5",
                alpha=0.3,
                label=f"{what}: CLT band, {confidence:.0%} (both directions, Bonferroni)",
            ),
            Line2D(
                [],
                [],
                color="0.3",
                lw=0.9,
                linestyle=":",
                label=f"empirical-Bernstein upper bound on this pair's δ, {confidence:.0%}",
            ),
            Line2D(
                [],
                [],
                color="0.3",
                linestyle="none",
                marker="o",
                markerfacecolor="none",
                label="exact integral (d ≤ 2)",
            ),
        ]
        if main_name != PLAIN and len(plain):
            handles.append(
                Line2D(
                    [],
                    [],
                    color="0.3",
                    linestyle="none",
                    marker=".",
                    label=f"plain Monte Carlo, N = {int(plain['samples'].iloc[0]):,} (for comparison)",
                )
            )
        ax.set_xlabel("ε")
        ax.set_ylabel("δ(ε) = max(H(P‖Q), H(Q‖P))")
        epsilons = main["epsilon"].astype(float)
        style.title_and_label(
            figure,
            f"Koskela et al. Fig. 4 setting: shuffled Gaussian, σ = {float(main['sigma'].iloc[0]):g}, "
            f"{what}, N = {samples:,} per d\n(σ, d and N are ours: the paper's are not published; "
            "δ of one dataset pair, not a guarantee)",
            f"grid: ε = {epsilons.min():g} to {epsilons.max():g} ({epsilons.nunique()} points), d ∈ "
            f"{{{', '.join(str(int(d)) for d in sorted(main['dimension'].unique()))}}}; data: koskela_fig4.csv",
        )
        ax.set_ylim(bottom=floor)
        ax.grid(True, which="major", alpha=0.3)
        figure.legend(
            handles=handles, loc="outside lower center", ncol=2, fontsize=max(style.MIN_FONT_POINTS, 9.0)
        )
    return figure
