"""Girgis et al. (CCS 2021) Section 4's comparison redrawn: RDP epsilon(lambda) against the order lambda
(log-log), one panel per eps0; upper bounds solid, the lower bound dashed.

Drawing only: the input is the frame of :func:`shuffledp.experiments.girgis.figure_frame`.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd
from matplotlib.lines import Line2D

from shuffledp.plotting import style

__all__ = ["figure_girgis"]


def figure_girgis(frame: pd.DataFrame, *, n_users: int):
    """One panel per eps0 of ``frame``; legend: curve label and the accountant's kind."""
    curves = list(frame[["curve", "accountant"]].drop_duplicates().itertuples(index=False, name=None))
    colours = style.colours_for([name for _, name in curves])
    eps0s = sorted(frame["epsilon_local"].unique())
    with style.plot_style():
        figure, axes = plt.subplots(1, len(eps0s), figsize=(4.4 * len(eps0s), 4.2), layout="constrained",
                                    squeeze=False)
        for ax, eps0 in zip(axes[0], eps0s):
            for label, name in curves:
                rows = frame[(frame["curve"] == label) & (frame["epsilon_local"] == eps0)].sort_values("order")
                ax.loglog(rows["order"], rows["rdp"], color=colours[name], lw=1.6,
                          linestyle="--" if style.accountant_kind(name) == "lower bound" else "-")
            ax.set_xlabel("order λ")
            ax.set_ylabel("RDP ε(λ)")
            ax.set_title(f"ε0 = {float(eps0):g}")
            ax.grid(True, which="major", alpha=0.3)
        handles = [Line2D([], [], color=colours[name], linestyle="--" if style.accountant_kind(name) == "lower bound"
                          else "-", label=f"{label} ({style.accountant_text(name)})") for label, name in curves]
        figure.legend(handles=handles, loc="outside lower center", ncol=len(handles), fontsize="small")
        figure.suptitle(f"Girgis et al. (CCS 2021) Section 4 comparison, shuffled ε0-LDP, n = {n_users:,} "
                        "(parameters chosen here; see config)")
    return figure
