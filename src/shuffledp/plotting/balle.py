"""Balle, Bell, Gascon & Nissim's Figure 3 redrawn: four panels, our curves as lines, the values of
their code as open markers on top, and our tight references (grey) underneath.

Drawing only: inputs are the frames of :func:`shuffledp.experiments.balle.panel_frame` (all panels
concatenated) and the transcribed points (``shuffledp.reference.load_reference("balle_figures")``).
Panel (i) plots eps against n, panels (ii)-(iv) the largest eps0 against n (log n axis, as theirs).
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.lines import Line2D

from shuffledp.plotting import style

__all__ = ["figure_balle"]

_PALETTE = ("#4477AA", "#EE6677", "#228833", "#CCBB44", "#AA3377", "#66CCEE")
_REFERENCE_STYLES = (("0.35", "-."), ("0.55", ":"), ("0.2", (0, (5, 2, 1, 2))))
_TITLES = {
    "i": "(i) generic, ε0 = {epsilon_local:g}, δ = {delta}",
    "ii": "(ii) ε = {epsilon:g}, δ = {delta}",
    "iii": "(iii) ε = {epsilon:g}, δ = {delta}",
    "iv": "(iv) RR_k, ε = {epsilon:g}, δ = 1/n², k = ⌊n^(1/3)⌋",
}


def _linestyle(curve: str) -> str:
    return "--" if curve.startswith("Bennett") else ":" if curve.startswith("EFMRTT") else "-"


def _panel(ax, panel: str, frame: pd.DataFrame, published: pd.DataFrame, section) -> None:
    mine = frame[frame["panel"] == panel]
    curves = list(dict.fromkeys(mine.loc[mine["role"] == "published", "curve"]))
    for i, curve in enumerate(curves):
        colour = _PALETTE[i % len(_PALETTE)]
        rows = mine[(mine["curve"] == curve) & (mine["role"] == "published")].sort_values("n")
        ax.semilogx(rows["n"], rows["value"], color=colour, linestyle=_linestyle(curve), lw=1.6,
                    label=f"ours: {curve}")
        theirs = published[(published["curve"] == curve) & (published["code"] == "current")].sort_values("x")
        ax.semilogx(theirs["x"], theirs["value"], linestyle="none", marker="o", markersize=4, markerfacecolor="none",
                    color=style.shade(colour), markevery=7, label=f"their code: {curve}")
        release = published[(published["curve"] == curve) & (published["code"] == "2019")].sort_values("x")
        if len(release) and not np.allclose(release["value"].to_numpy(), theirs["value"].to_numpy(), rtol=1e-6,
                                            equal_nan=True):
            ax.semilogx(release["x"], release["value"], linestyle="none", marker="^", markersize=5,
                        markerfacecolor="none", color=colour, markevery=(3, 7),
                        label=f"their 2019 code (paper's figure): {curve}")
    references = list(dict.fromkeys(mine.loc[mine["role"] == "reference", "curve"]))
    for j, curve in enumerate(references):
        colour, linestyle = _REFERENCE_STYLES[j % len(_REFERENCE_STYLES)]
        rows = mine[(mine["curve"] == curve) & (mine["role"] == "reference")].sort_values("n")
        ax.semilogx(rows["n"], rows["value"], color=colour, linestyle=linestyle, lw=2.2, marker="x", markersize=5,
                    label=f"reference: {curve} ({style.accountant_kind(rows['accountant'].iloc[0])})")
    delta = section["delta"]
    ax.set_title(_TITLES[panel].format(epsilon=float(section.get("epsilon", 0)),
                                       epsilon_local=float(section.get("epsilon_local", 0)),
                                       delta=delta if isinstance(delta, str) else f"{float(delta):g}"), fontsize="medium")
    ax.set_xlabel("n")
    ax.set_ylabel("ε" if section["value"] == "epsilon" else "ε0")
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize="x-small", ncol=1, loc="best")


def figure_balle(frame: pd.DataFrame, published: pd.DataFrame, *, sections):
    """The four panels; ``sections`` is the ``balle.panels`` config (titles, axes)."""
    published = published.copy()
    if "code" not in published.columns:
        published["code"] = "current"
    for column in ("x", "value"):
        published[column] = published[column].astype(float)
    panels = [p for p in ("i", "ii", "iii", "iv") if p in set(frame["panel"])]
    with style.plot_style():
        figure, axes = plt.subplots(2, 2, figsize=(13.0, 10.5), layout="constrained", squeeze=False)
        for ax, panel in zip(axes.ravel(), panels):
            _panel(ax, panel, frame, published[published["panel"] == panel], sections[panel])
        for ax in axes.ravel()[len(panels):]:
            ax.set_visible(False)
        figure.suptitle("Balle et al. (CRYPTO 2019) Fig. 3 — lines: ours; ○: their current code; △: their 2019 code "
                        "where it differs (every 7th point); grey: our references")
        figure.legend(handles=[Line2D([], [], color="0.3", lw=1.6, label="Hoeffding"),
                               Line2D([], [], color="0.3", lw=1.6, linestyle="--", label="Bennett"),
                               Line2D([], [], color="0.3", lw=1.6, linestyle=":", label="Erlingsson et al.")],
                      loc="outside lower center", ncol=3, fontsize="small")
    return figure
