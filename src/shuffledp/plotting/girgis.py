"""Girgis et al. (CCS 2021) Section 4's comparison redrawn: RDP epsilon(lambda) against the order lambda
(log-log), one panel per eps0; their upper bounds solid, the lower bound dashed, the earlier bound of
eq. (9) dash-dotted, and the trivial bound epsilon(lambda) <= eps0 of any eps0-LDP report dotted grey (a
bound above it gains nothing there; the panel names such curves). Each legend entry says what the curve is (upper / lower bound, from the accountant's
kind when the configured label does not say it) and which accountant drew it.

Drawing only: the input is the frame of :func:`shuffledp.experiments.girgis.figure_frame`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import matplotlib.pyplot as plt
import pandas as pd
from matplotlib.lines import Line2D

from shuffledp.plotting import style

if TYPE_CHECKING:
    from matplotlib.typing import LineStyleType

__all__ = ["figure_girgis"]


#: the earlier bound of their comparison (eq. (9)), drawn dash-dotted
_EARLIER = "erlingsson-rdp"


def _linestyle(name: str) -> LineStyleType:
    if name == _EARLIER:
        return "-."
    return "--" if style.accountant_kind(name) == "lower bound" else "-"


def _legend_text(label: str, name: str) -> str:
    """``label`` plus the accountant; the kind too unless the label already says it."""
    kind = style.accountant_kind(name)
    return f"{label} [{name}]" if not kind or kind in label else f"{label} ({kind}) [{name}]"


def figure_girgis(frame: pd.DataFrame, *, n_users: int):
    """One panel per eps0 of ``frame``; legend: what each curve is and which accountant drew it."""
    curves = list(frame[["curve", "accountant"]].drop_duplicates().itertuples(index=False, name=None))
    colours = style.colours_for([name for _, name in curves])
    eps0s = sorted(frame["epsilon_local"].unique())
    with style.plot_style():
        figure, axes = plt.subplots(
            1, len(eps0s), figsize=(4.4 * len(eps0s), 4.4), layout="constrained", squeeze=False
        )
        for ax, eps0 in zip(axes[0], eps0s):
            for label, name in curves:
                rows = frame[(frame["curve"] == label) & (frame["epsilon_local"] == eps0)].sort_values(
                    "order"
                )
                ax.loglog(rows["order"], rows["rdp"], color=colours[name], lw=1.6, linestyle=_linestyle(name))
            ax.axhline(float(eps0), color="0.45", lw=1.2, linestyle=":", gid=f"trivial eps0={float(eps0):g}")
            above = sorted(
                {
                    label
                    for label, name in curves
                    if style.accountant_kind(name) != "lower bound"
                    and (
                        frame.loc[(frame["curve"] == label) & (frame["epsilon_local"] == eps0), "rdp"]
                        > float(eps0)
                    ).any()
                }
            )
            ax.set_title(
                f"ε0 = {float(eps0):g}"
                + (
                    f"\nabove ε0 at some λ: {'; '.join(label.split(',')[0] for label in above)}"
                    if above
                    else ""
                )
            )
            ax.set_xlabel("order λ")
            ax.set_ylabel("RDP ε(λ)")
            ax.grid(True, which="major", alpha=0.3)
        handles = [
            Line2D([], [], color=colours[name], linestyle=_linestyle(name), label=_legend_text(label, name))
            for label, name in curves
        ]
        handles.append(
            Line2D(
                [],
                [],
                color="0.45",
                lw=1.2,
                linestyle=":",
                label="trivial bound ε(λ) ≤ ε0 (any ε0-LDP report)",
            )
        )
        figure.legend(
            handles=handles,
            loc="outside lower center",
            ncol=min(len(handles), 2),
            fontsize=max(style.MIN_FONT_POINTS, 9.0),
        )
        orders = frame["order"].astype(float)
        style.title_and_label(
            figure,
            f"Girgis et al. (CCS 2021) Fig. 2 setting, shuffled ε0-LDP, n = {n_users:,}: n and ε0 are ours; "
            "eq. (9) as reconstructed",
            f"grid: λ = {orders.min():g} to {orders.max():g} ({orders.nunique()} orders), ε0 ∈ "
            f"{{{', '.join(f'{float(e):g}' for e in eps0s)}}}; data: girgis_fig2.csv",
        )
    return figure
