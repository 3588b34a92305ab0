"""Balle, Bell, Gascon & Nissim's Figure 3 redrawn: four panels, our curves as lines, the values of
their code as open markers on top, and our tight references (grey) underneath.

Drawing only: inputs are the frames of :func:`shuffledp.experiments.balle.panel_frame` (all panels
concatenated) and the transcribed points (``shuffledp.reference.load_reference("balle_figures")``).
Panel (i) plots eps against n, panels (ii)-(iv) the largest eps0 against n (log n axis, as theirs).
Each panel's legend sits to the right of its axes (outside the data, at 8 pt or more); the key at the
bottom names each line style by what it is: solid / dashed / dotted = Hoeffding / Bennett / EFMRTT'19
(Erlingsson et al.'s closed form), and each colour by its randomizer (generic, RR-2, RR-100, RR-k,
Laplace: :data:`shuffledp.plotting.style.RANDOMIZER_COLOURS`, the same meaning in every panel); grey with
x markers = our reference curves (named, with their kind, in the panel's legend). Also their Figure 2 (:func:`figure_blanket`), from :func:`shuffledp.experiments.balle.blanket_densities`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.lines import Line2D

from shuffledp.plotting import style

if TYPE_CHECKING:
    from matplotlib.typing import LineStyleType

__all__ = ["figure_balle", "figure_blanket"]

_PALETTE = ("#4477AA", "#EE6677", "#228833", "#CCBB44", "#AA3377", "#66CCEE")  # the inputs of Fig. 2
# grey, and no pattern a published curve uses (solid, dashed, dotted): a reference cannot pass for one
_REFERENCE_STYLES: tuple[tuple[str, LineStyleType], ...] = (
    ("0.35", "-."),
    ("0.55", (0, (7, 2))),
    ("0.2", (0, (5, 2, 1, 2))),
)
_TITLES = {
    "i": "(i) generic, ε0 = {epsilon_local:g}, δ = {delta}",
    "ii": "(ii) ε = {epsilon:g}, δ = {delta}",
    "iii": "(iii) ε = {epsilon:g}, δ = {delta}",
    "iv": "(iv) RR_k, ε = {epsilon:g}, δ = 1/n², k = ⌊n^(1/3)⌋",
}


def _reference_kind(curve: str, accountant: str) -> str:
    """What a reference curve is: the worst case itself (tight) where its label says so, else its kind and
    that it need not be tight."""
    kind = style.accountant_kind(accountant)
    if curve.lower().startswith("worst case") and kind == "upper bound":
        return "the worst case, tight"
    return f"{kind}, not necessarily tight" if kind == "upper bound" else kind


def _linestyle(curve: str) -> LineStyleType:
    return "--" if curve.startswith("Bennett") else ":" if curve.startswith("EFMRTT") else "-"


def _panel(ax, panel: str, frame: pd.DataFrame, published: pd.DataFrame, section) -> None:
    mine = frame[frame["panel"] == panel]
    curves = list(dict.fromkeys(mine.loc[mine["role"] == "published", "curve"]))
    for curve in curves:
        rows = mine[(mine["curve"] == curve) & (mine["role"] == "published")].sort_values("n")
        colour = style.RANDOMIZER_COLOURS.get(
            style.randomizer_of(curve, str(rows["accountant"].iloc[0])), "0.3"
        )  # one colour per randomizer in every panel
        ax.semilogx(
            rows["n"],
            rows["value"],
            color=colour,
            linestyle=_linestyle(curve),
            lw=1.6,
            label=f"ours: {curve}",
            gid=f"ours {panel} {curve}",
        )
        theirs = published[(published["curve"] == curve) & (published["code"] == "current")].sort_values("x")
        ax.semilogx(
            theirs["x"],
            theirs["value"],
            linestyle="none",
            marker="o",
            markersize=4,
            markerfacecolor="none",
            color=style.shade(colour),
            markevery=7,
            label=f"their code: {curve}",
        )
        release = published[(published["curve"] == curve) & (published["code"] == "2019")].sort_values("x")
        if len(release) and not np.allclose(
            release["value"].to_numpy(), theirs["value"].to_numpy(), rtol=1e-6, equal_nan=True
        ):
            ax.semilogx(
                release["x"],
                release["value"],
                linestyle="none",
                marker="^",
                markersize=5,
                markerfacecolor="none",
                color=colour,
                markevery=(3, 7),
                label=f"their 2019 code (paper's figure): {curve}",
            )
    references = list(dict.fromkeys(mine.loc[mine["role"] == "reference", "curve"]))
    for j, curve in enumerate(references):
        colour, linestyle = _REFERENCE_STYLES[j % len(_REFERENCE_STYLES)]
        rows = mine[(mine["curve"] == curve) & (mine["role"] == "reference")].sort_values("n")
        ax.semilogx(
            rows["n"],
            rows["value"],
            color=colour,
            linestyle=linestyle,
            lw=2.2,
            marker="x",
            markersize=5,
            label=f"reference: {curve} ({_reference_kind(curve, str(rows['accountant'].iloc[0]))})",
        )
    delta = section["delta"]
    ax.set_title(
        _TITLES[panel].format(
            epsilon=float(section.get("epsilon", 0)),
            epsilon_local=float(section.get("epsilon_local", 0)),
            delta=delta if isinstance(delta, str) else f"{float(delta):g}",
        ),
        fontsize="medium",
    )
    ax.set_xlabel("n")
    ax.set_ylabel("ε" if section["value"] == "epsilon" else "ε0")
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(
        fontsize=style.MIN_FONT_POINTS,
        ncol=1,
        loc="upper left",
        bbox_to_anchor=(1.02, 1.0),
        borderaxespad=0.0,
    )


def figure_balle(frame: pd.DataFrame, published: pd.DataFrame, *, sections):
    """The four panels; ``sections`` is the ``balle.panels`` config (titles, axes)."""
    published = published.copy()
    if "code" not in published.columns:
        published["code"] = "current"
    for column in ("x", "value"):
        published[column] = published[column].astype(float)
    panels = [p for p in ("i", "ii", "iii", "iv") if p in set(frame["panel"])]
    with style.plot_style():
        figure, axes = plt.subplots(2, 2, figsize=(21.0, 11.5), layout="constrained", squeeze=False)
        for ax, panel in zip(axes.ravel(), panels):
            _panel(ax, panel, frame, published[published["panel"] == panel], sections[panel])
        for ax in axes.ravel()[len(panels) :]:
            ax.set_visible(False)
        drawn = list(
            dict.fromkeys(
                style.randomizer_of(curve, str(accountant))
                for curve, accountant in frame.loc[
                    frame["role"] == "published", ["curve", "accountant"]
                ].itertuples(index=False)
            )
        )
        figure.legend(
            handles=[
                Line2D([], [], color=style.INK, lw=1.6, label="solid: Hoeffding"),
                Line2D([], [], color=style.INK, lw=1.6, linestyle="--", label="dashed: Bennett"),
                Line2D(
                    [],
                    [],
                    color=style.INK,
                    lw=1.6,
                    linestyle=":",
                    label="dotted: EFMRTT'19 (Erlingsson et al.'s closed form)",
                ),
                *[
                    Line2D(
                        [], [], color=style.RANDOMIZER_COLOURS.get(name, "0.3"), lw=4, label=f"colour: {name}"
                    )
                    for name in drawn
                ],
                *[
                    Line2D(
                        [],
                        [],
                        color=colour,
                        lw=2.2,
                        linestyle=linestyle,
                        marker="x",
                        markersize=5,
                        label=f"grey {name}: our reference curve (named in the panel's legend)",
                    )
                    for (colour, linestyle), name in zip(
                        _REFERENCE_STYLES, ("dash-dot", "long-dashed", "dash-dot-dash")
                    )
                ],
            ],
            loc="outside lower center",
            ncol=4,
            fontsize=max(style.MIN_FONT_POINTS, 9.0),
        )
        ns = frame["n"].astype(float)
        style.title_and_label(
            figure,
            "Balle et al. (CRYPTO 2019) Fig. 3 — lines: ours (colour: the randomizer, the same in every panel; "
            "style: the bound); ○: their current code; △: their 2019 code where it differs (every 7th point); "
            "grey: our references",
            f"grid: n = {ns.min():,.0f} to {ns.max():,.0f} ({ns.nunique()} values over the panels); data: "
            "balle_fig3.csv",
        )
    return figure


def figure_blanket(frame: pd.DataFrame):
    """Their Figure 2 redrawn from :func:`~shuffledp.experiments.balle.blanket_densities`: left, each input's
    output density mu_x and the part gamma omega every input shares (shaded); right, the blanket omega and
    the data-dependent densities omega_x, with mu_x = gamma omega + (1 - gamma) omega_x."""
    eps0, gamma = float(frame["epsilon_local"].iloc[0]), float(frame["gamma"].iloc[0])
    blanket = frame[frame["component"] == "blanket"].sort_values("y")
    inputs = sorted(frame.loc[frame["component"] == "output", "input"].unique())
    with style.plot_style():
        figure, (left, right) = plt.subplots(1, 2, figsize=(12.0, 5.6), layout="constrained", sharey=True)
        left.fill_between(
            blanket["y"],
            gamma * blanket["density"],
            color="0.85",
            label=f"γ·ω, shared by every input (γ = e^(−ε0/2) = {gamma:.3f})",
        )
        right.plot(
            blanket["y"], blanket["density"], color="black", lw=2.0, label="blanket ω = Lap(1/2, 1/ε0)"
        )
        for i, x in enumerate(inputs):
            colour = _PALETTE[i % len(_PALETTE)]
            for ax, component, linestyle in ((left, "output", "-"), (right, "data-dependent", "--")):
                rows = frame[(frame["component"] == component) & (frame["input"] == x)].sort_values("y")
                name = "output density μ_x" if component == "output" else "data-dependent ω_x"
                same = np.allclose(
                    rows["density"].to_numpy(), blanket["density"].to_numpy(), rtol=1e-9, atol=0.0
                )
                ax.plot(
                    rows["y"],
                    rows["density"],
                    color=colour,
                    lw=1.6,
                    linestyle=linestyle,
                    label=f"{name}, x = {x:g}" + (" (equals ω)" if same else ""),
                )
        for ax, title in (
            (left, "outputs of R(x) = x + Lap(1/ε0)"),
            (right, "blanket and data-dependent parts"),
        ):
            ax.axvspan(0.0, 1.0, color="0.6", alpha=0.12, lw=0)
            ax.set_title(title, fontsize="medium")
            ax.set_xlabel("output y (inputs x in [0, 1], band)")
            ax.grid(True, alpha=0.3)
            ax.legend(fontsize=style.MIN_FONT_POINTS, loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=2)
        left.set_ylabel("density")
        ys = frame["y"].astype(float)
        style.title_and_label(
            figure,
            f"Balle et al. (CRYPTO 2019) Fig. 2 redrawn: Laplace randomizer on [0, 1], ε0 = {eps0:g}; "
            "μ_x = γ ω + (1 − γ) ω_x",
            f"grid: y = {ys.min():g} to {ys.max():g} ({ys.nunique()} points), x ∈ "
            f"{{{', '.join(f'{x:g}' for x in inputs)}}} (ε0 and x are ours); data: balle_fig2.csv",
        )
    return figure
