"""Koskela, Heikkilä & Honkela's Figures 1-3 redrawn: our composed curves as lines, the curves stored
in their public code as open markers on top, so every difference is visible.

Drawing only: inputs are the frames of :func:`shuffledp.experiments.koskela.figure_frame` and the
transcribed points (``shuffledp.reference.load_reference("koskela_figures")``).

* Figure 1: delta against eps (log delta), one line per n_c.
* Figure 2: eps against n_c (log-log), one line per accountant.
* Figure 3: eps against delta (log delta, axis reversed as in theirs), one panel per n_c.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd
from matplotlib.lines import Line2D

from shuffledp.plotting import style

__all__ = ["figure_koskela"]

_MARKERS = ("o", "s", "^", "D", "v", "P")
_LINESTYLES = ("-", "--", "-.", ":")


def _published(published: pd.DataFrame) -> pd.DataFrame:
    frame = published.copy()
    for column in ("x", "value"):
        frame[column] = frame[column].astype(float)
    frame["compositions"] = pd.to_numeric(frame["compositions"], errors="coerce")
    return frame


def _handles(curves, colours, extra) -> list:
    handles = [Line2D([], [], color=colours[name], label=f"ours: {label} ({style.accountant_text(name)})")
               for label, name in curves]
    handles.append(Line2D([], [], linestyle="none", marker="o", markerfacecolor="none", color="0.25",
                          label="Koskela et al.'s stored curve (open markers)"))
    return handles + extra


def figure_koskela(frame: pd.DataFrame, published: pd.DataFrame, *, number: int, section, smallest_delta: float = 0.0):
    """The figure ``number`` (1, 2, 3); ``section`` is the ``koskela.fig<N>`` config slice (for titles)."""
    published = _published(published)
    curves = list(frame[["curve", "accountant"]].drop_duplicates().itertuples(index=False, name=None))
    colours = style.colours_for([name for _, name in curves])
    with style.plot_style():
        if number == 3:
            ncs = sorted(frame["compositions"].unique())
            figure, axes = plt.subplots(1, len(ncs), figsize=(5.0 * len(ncs), 4.6), layout="constrained", squeeze=False)
            axes = axes[0]
        else:
            figure, ax = plt.subplots(figsize=(7.5, 5.2), layout="constrained")
            axes = [ax]
        extra = []
        if number == 1:
            ax = axes[0]
            for i, compositions in enumerate(sorted(frame["compositions"].unique())):
                for label, name in curves:
                    rows = frame[(frame["curve"] == label) & (frame["compositions"] == compositions)].sort_values("x")
                    ax.semilogy(rows["x"], rows["value"], color=colours[name], linestyle=_LINESTYLES[i % 4], lw=1.6)
                    theirs = published[(published["curve"] == label) & (published["compositions"] == compositions)]
                    ax.semilogy(theirs["x"], theirs["value"], linestyle="none", marker=_MARKERS[i % 6], markersize=4,
                                markerfacecolor="none", color=style.shade(colours[name]), markevery=3)
                extra.append(Line2D([], [], color="0.3", linestyle=_LINESTYLES[i % 4], marker=_MARKERS[i % 6],
                                    markerfacecolor="none", label=f"n_c = {int(compositions)}"))
            if smallest_delta:
                ax.axhline(smallest_delta, color="0.6", lw=0.8, linestyle=":")
                extra.append(Line2D([], [], color="0.6", lw=0.8, linestyle=":",
                                    label=f"δ = {smallest_delta:g}: below, not judged (linear-space round-off)"))
            ax.set_xlabel("ε")
            ax.set_ylabel("δ(ε) after n_c compositions")
            ax.set_title(f"Koskela et al. Fig. 1: clones pair, n = {int(section['n_users']):,}, "
                         f"ε0 = {float(section['epsilon_local']):g}")
        elif number == 2:
            ax = axes[0]
            for label, name in curves:
                rows = frame[frame["curve"] == label].sort_values("x")
                ax.loglog(rows["x"], rows["value"], color=colours[name], lw=1.6, marker=".")
                theirs = published[published["curve"] == label].sort_values("x")
                ax.loglog(theirs["x"], theirs["value"], linestyle="none", marker="o", markerfacecolor="none",
                          color=style.shade(colours[name]), markersize=6)
            ax.set_xlabel("number of compositions n_c")
            ax.set_ylabel(f"ε at δ = {float(section['delta']):g}")
            ax.set_title(f"Koskela et al. Fig. 2: subsampled shuffler, ε0 = {float(section['epsilon_local']):g}, "
                         f"n = {int(section['n_users']):,}, q = {float(section['subsample']):g}")
        else:
            for ax, compositions in zip(axes, sorted(frame["compositions"].unique())):
                for label, name in curves:
                    rows = frame[(frame["curve"] == label) & (frame["compositions"] == compositions)].sort_values("x")
                    ax.semilogx(rows["x"], rows["value"], color=colours[name], lw=1.6,
                                linestyle="--" if style.accountant_kind(name) == "lower bound" else "-")
                    theirs = published[(published["curve"] == label) & (published["compositions"] == compositions)]
                    ax.semilogx(theirs["x"], theirs["value"], linestyle="none", marker="o", markerfacecolor="none",
                                color=style.shade(colours[name]), markersize=6)
                ax.invert_xaxis()
                ax.set_xlabel("δ")
                ax.set_ylabel("ε")
                ax.set_title(f"n_c = {int(compositions)}")
            figure.suptitle(f"Koskela et al. Fig. 3: shuffled k-RR, n = {int(section['n_users']):,}, "
                            f"k = {int(section['k'])}, ε0 = {float(section['epsilon_local']):.4g}")
        for ax in axes:
            ax.grid(True, which="major", alpha=0.3)
        figure.legend(handles=_handles(curves, colours, extra), loc="outside lower center", ncol=2, fontsize="small")
    return figure

