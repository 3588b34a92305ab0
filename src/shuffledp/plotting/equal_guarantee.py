"""Equal-guarantee figures: TV against n per epsilon, and the map of the TV ratio. Drawing only.

``plot_*`` take ``ax=None`` plus keyword-only options and return the Axes; ``figure_*`` lay out a
whole figure from the frames of :mod:`shuffledp.experiments.equal_guarantee` (``equal_guarantee.csv``
and the ratio table) and return the Figure. Nothing here computes a statistic: the means, intervals,
ratios and verdicts are columns of those frames. Colours, hatching and wording follow
:mod:`shuffledp.plotting.style`.
"""

from __future__ import annotations

import math
import string
import textwrap

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.colors import LogNorm
from matplotlib.patches import Rectangle

from shuffledp.plotting import style

__all__ = [
    "TV_MECHANISMS",
    "LINESTYLES",
    "COINCIDE_RELATIVE",
    "coincides",
    "plot_tv_against_n",
    "figure_tv",
    "plot_ratio_map",
    "figure_ratio",
]

#: mechanisms drawn in the TV figure (the shuffled ones at the weak-adversary eps0). Every one is a
#: distribution (TV <= 1): the raw Gaussian histogram / n is not, its ½·L1 "TV" reached ~8, so it is left
#: to the CSV (and to the ratio map's "best Gaussian variant")
TV_MECHANISMS = ("shuffle+INV", "shuffle+IBU", "gaussian+proj", "geometric+proj")
_LABELS = {
    **style.MECHANISM_LABELS,
    "shuffle+IBU": "shuffle+IBU (MLE)",
    "shuffle+INV-unprojected": "shuffle+INV (½·L1, unprojected)",
    "geometric": "geometric (pure ε)",
    "geometric+proj": "geometric + projection (pure ε)",
}
#: one line style per delta rule (fixed deltas first, then the rules in n)
LINESTYLES = ("-", "--", ":", "-.")
#: ticks of the ratio colour bar (those inside its range are shown)
_RATIO_TICKS = (0.2, 0.25, 1 / 3, 0.5, 2 / 3, 0.8, 1.0, 1.25, 1.5, 2.0, 3.0, 4.0, 5.0)


def _colours(mechanisms) -> dict[str, str]:
    return style.colours_for(mechanisms)  # one colour per mechanism in every figure (style.MECHANISM_COLOURS)


def _delta_rules(frame) -> list[str]:
    """Delta rules in display order: fixed deltas first (as they appear), then the rules in n."""
    rules = list(dict.fromkeys(frame["delta_rule"]))
    return sorted(rules, key=lambda rule: (not str(rule).startswith("fixed"), rules.index(rule)))


def _axes(ax):
    return ax if ax is not None else plt.gca()


def _dataset_label(dataset: str, k: int) -> str:
    return f"{dataset.replace('_', ' ')} (k = {int(k)})"


#: two curves coincide when at every n their means differ by less than this (relative): 5% is under 1% of
#: the height of a log axis spanning three decades, so they are one line; the later one is not drawn, and a
#: note says which it coincides with
COINCIDE_RELATIVE = 0.05


def _series(frame, mechanism: str, rule: str, calibration: str):
    rows = frame[(frame["mechanism"] == mechanism) & (frame["delta_rule"] == rule)]
    if mechanism.startswith("shuffle"):
        rows = rows[rows["calibration"] == calibration]
    return rows.sort_values("n_users")


def coincides(first, second, *, relative: float = COINCIDE_RELATIVE) -> bool:
    """True when two curves (rows with n_users, l1_half_mean) have the same n and means within ``relative``.

    Args:
        first: one curve's rows.
        second: the other's.
        relative: the largest relative difference of two means that still draws as one line.

    Returns:
        Whether the second would be drawn on top of the first.
    """
    if first.empty or list(first["n_users"]) != list(second["n_users"]):
        return False
    a, b = first["l1_half_mean"].to_numpy(float), second["l1_half_mean"].to_numpy(float)
    return bool(np.all(np.abs(a - b) <= relative * np.maximum(np.abs(a), np.abs(b))))


def plot_tv_against_n(
    frame,
    *,
    ax=None,
    mechanisms=TV_MECHANISMS,
    calibration: str = "weak-adversary",
    delta_rules=None,
    colours=None,
    title: str = "",
    drawn: dict | None = None,
):
    """Mean TV (with its Monte-Carlo interval as error bars) against n on log-log axes, one line per
    mechanism and delta rule (line style) for the rows of one (dataset, epsilon).

    Shuffled mechanisms are drawn at ``calibration``'s eps0; the pure-epsilon geometric rows do not
    depend on delta and are drawn once (solid). A curve that :func:`coincides` with one already drawn is
    not drawn again: ``drawn`` (when given) collects ``(mechanism, rule) -> None`` for every curve drawn and
    ``(mechanism, rule) -> (mechanism, rule)`` of the curve it coincides with, so the figure can say so.
    """
    ax = _axes(ax)
    delta_rules = _delta_rules(frame) if delta_rules is None else list(delta_rules)
    colours = colours or _colours(mechanisms)
    shown: list[tuple[tuple[str, str], object]] = []
    for mechanism in mechanisms:
        rules = delta_rules[:1] if mechanism.startswith("geometric") else delta_rules
        for rule, linestyle in zip(rules, LINESTYLES):
            rows = _series(frame, mechanism, rule, calibration)
            if rows.empty:
                continue
            same = next((key for key, other in shown if coincides(other, rows)), None)
            if drawn is not None:
                drawn.setdefault((mechanism, rule), same)
            if same is not None:
                continue
            shown.append(((mechanism, rule), rows))
            mean = rows["l1_half_mean"].to_numpy(float)
            error = np.vstack(
                [mean - rows["l1_half_low"].to_numpy(float), rows["l1_half_high"].to_numpy(float) - mean]
            )
            ax.errorbar(
                rows["n_users"],
                mean,
                yerr=np.clip(error, 0, None),
                color=colours[mechanism],
                linestyle=linestyle,
                marker="o",
                markersize=3,
                capsize=2,
                linewidth=1.2,
                zorder=2.0,
                label=f"{mechanism}|{rule}",
            )
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("n (users)")
    ax.set_ylabel("TV distance")
    if title:
        ax.set_title(title)
    return ax


def _coincidence_note(drawn: dict) -> str:
    pairs = sorted({(key, same) for key, same in drawn.items() if same is not None})
    if not pairs:
        return ""
    words = "; ".join(
        f"{_LABELS.get(m, m)}, δ {r} = {_LABELS.get(m2, m2)}, δ {r2}" for (m, r), (m2, r2) in pairs
    )
    return (
        f"Coincident curves drawn once (means within {COINCIDE_RELATIVE:.0%} at every n, in at least one "
        f"panel): {words}"
    )


def figure_tv(frame, *, mechanisms=TV_MECHANISMS, calibration: str = "weak-adversary"):
    """TV against n: one row of panels per dataset (k), one column per epsilon; delta rules by line style.
    Curves that coincide are drawn once and a note under the legend names them; the legend (8 pt) lists
    only the mechanisms and delta rules drawn."""
    datasets = list(dict.fromkeys(zip(frame["dataset"], frame["k"])))
    epsilons = sorted(frame["epsilon"].unique())
    delta_rules = _delta_rules(frame)
    colours = _colours(mechanisms)
    replicates = int(frame["replicates"].iloc[0])
    drawn: dict = {}
    with style.plot_style():
        figure, axes = plt.subplots(
            len(datasets),
            len(epsilons),
            figsize=(2.9 * len(epsilons), 2.6 * len(datasets) + 1.6),
            squeeze=False,
            sharex=True,
            layout="constrained",
        )
        for row, (dataset, k) in enumerate(datasets):
            for column, epsilon in enumerate(epsilons):
                ax = axes[row, column]
                subset = frame[(frame["dataset"] == dataset) & (frame["epsilon"] == epsilon)]
                plot_tv_against_n(
                    subset,
                    ax=ax,
                    mechanisms=mechanisms,
                    calibration=calibration,
                    delta_rules=delta_rules,
                    colours=colours,
                    title=f"({string.ascii_lowercase[(row * len(epsilons) + column) % 26]}) "
                    f"{_dataset_label(dataset, k)}, ε = {epsilon:g}",
                    drawn=drawn,
                )
                if column:
                    ax.set_ylabel("")
                if row < len(datasets) - 1:
                    ax.set_xlabel("")
        lines = [line.get_label().split("|") for ax in axes.flat for line in ax.get_lines()]
        lines += [
            str(c.get_label()).split("|")
            for ax in axes.flat
            for c in ax.containers
            if "|" in str(c.get_label())
        ]
        shown_mechanisms = {parts[0] for parts in lines if len(parts) == 2}
        shown_rules = {
            parts[1] for parts in lines if len(parts) == 2 and not parts[0].startswith("geometric")
        }
        handles = [
            style.line_handle(_LABELS.get(m, m), colour=colours[m])
            for m in mechanisms
            if m in shown_mechanisms
        ]
        handles += [
            style.line_handle(f"δ: {rule}", linestyle=linestyle)
            for rule, linestyle in zip(delta_rules, LINESTYLES)
            if rule in shown_rules
        ]
        note = _coincidence_note(drawn)
        if note:
            handles.append(style.line_handle(_wrap_note(note), colour="none"))
        figure.legend(handles=handles, loc="outside lower center", ncol=min(len(handles), 4), fontsize=8)
        figure.suptitle(
            f"Equal guarantee: TV against n at each target (ε, δ); shuffled k-RR at the largest ε0 certified by "
            f"{style.accountant_text(calibration)}; mean of {replicates} draws, bars = mean ± 1.96 SE; geometric at pure ε (δ = 0)",
            fontweight="bold",
            fontsize="medium",
        )
    return figure


def _wrap_note(text: str, width: int = 110) -> str:
    return "\n".join(textwrap.wrap(text, width))


def plot_ratio_map(
    ratio, *, ax=None, norm=None, title: str = "", epsilons=None, n_values=None, colorbar: bool = True
):
    """Map over (n, epsilon) of ``ratio`` (TV shuffle / TV best Gaussian) for one (dataset, delta rule).

    Colour: the ratio on a logarithmic diverging scale centred on 1 (blue: shuffle better, red: the
    Gaussian better). Each cell shows its ratio; cells whose winner is ``certain`` are outlined, the
    others hatched.
    """
    ax = _axes(ax)
    epsilons = sorted(ratio["epsilon"].unique()) if epsilons is None else list(epsilons)
    n_values = sorted(ratio["n_users"].unique()) if n_values is None else list(n_values)
    grid = np.full((len(epsilons), len(n_values)), np.nan)
    certain = np.zeros_like(grid, dtype=bool)
    present = np.zeros_like(grid, dtype=bool)
    for _, row in ratio.iterrows():
        i, j = epsilons.index(row["epsilon"]), n_values.index(row["n_users"])
        grid[i, j], certain[i, j], present[i, j] = row["ratio"], bool(row["certain"]), True
    if norm is None:
        finite = grid[np.isfinite(grid) & (grid > 0)]
        spread = max(float(np.max(np.abs(np.log(finite)))), math.log(1.1)) if finite.size else math.log(2.0)
        norm = LogNorm(vmin=math.exp(-spread), vmax=math.exp(spread))
    cmap = style.outcome_cmap()  # blue: shuffle better, red: curator better, as in every figure
    image = ax.imshow(
        np.ma.masked_invalid(grid),
        origin="lower",
        cmap=cmap,
        norm=norm,
        aspect="auto",
        interpolation="nearest",
    )
    style.hatch_cells(ax, present & ~certain)
    for i, j in zip(*np.nonzero(present & certain)):
        ax.add_patch(
            Rectangle((j - 0.5, i - 0.5), 1.0, 1.0, fill=False, edgecolor="black", linewidth=2.0, zorder=4)
        )
    for i, j in zip(*np.nonzero(present)):
        ax.text(
            j,
            i,
            f"{grid[i, j]:.2f}",
            ha="center",
            va="center",
            fontsize="x-small",
            color=style.INK,
            zorder=5,
            bbox={"boxstyle": "round,pad=0.1", "facecolor": "white", "alpha": 0.7, "linewidth": 0},
        )
    ax.set_xticks(range(len(n_values)), [f"{int(n):,}" for n in n_values])
    ax.set_yticks(range(len(epsilons)), [f"{e:g}" for e in epsilons])
    ax.set_xlabel("n (users)")
    ax.set_ylabel("ε")
    if title:
        ax.set_title(title)
    if colorbar:
        bar = ax.figure.colorbar(image, ax=ax, label="TV shuffle / TV best Gaussian")
        ticks = [t for t in _RATIO_TICKS if norm.vmin <= t <= norm.vmax]
        bar.ax.minorticks_off()
        bar.set_ticks(ticks, labels=[f"{t:.2g}" for t in ticks])
    return ax


def figure_ratio(ratio):
    """The ratio map: one row of panels per dataset (k), one column per delta rule, one shared colour scale."""
    datasets = list(dict.fromkeys(zip(ratio["dataset"], ratio["k"])))
    delta_rules = _delta_rules(ratio)
    epsilons, n_values = sorted(ratio["epsilon"].unique()), sorted(ratio["n_users"].unique())
    values = ratio["ratio"].to_numpy(float)
    finite = values[np.isfinite(values) & (values > 0)]
    spread = max(float(np.max(np.abs(np.log(finite)))), math.log(1.1)) if finite.size else math.log(2.0)
    norm = LogNorm(vmin=math.exp(-spread), vmax=math.exp(spread))
    mechanism = str(ratio["shuffle_mechanism"].iloc[0])
    with style.plot_style():
        figure, axes = plt.subplots(
            len(datasets),
            len(delta_rules),
            figsize=(4.8 * len(delta_rules) + 1.5, 3.4 * len(datasets) + 1.0),
            squeeze=False,
            layout="constrained",
        )
        for row, (dataset, k) in enumerate(datasets):
            for column, rule in enumerate(delta_rules):
                subset = ratio[(ratio["dataset"] == dataset) & (ratio["delta_rule"] == rule)]
                plot_ratio_map(
                    subset,
                    ax=axes[row, column],
                    norm=norm,
                    epsilons=epsilons,
                    n_values=n_values,
                    colorbar=False,
                    title=f"({string.ascii_lowercase[(row * len(delta_rules) + column) % 26]}) "
                    f"{_dataset_label(dataset, k)}, δ: {rule}",
                )
        bar = figure.colorbar(
            axes[0, 0].images[0],
            ax=list(axes.flat),
            shrink=0.8,
            label=f"mean TV {mechanism} (weak-adversary ε0) / mean TV best Gaussian variant\n"
            "blue < 1: shuffle better; red > 1: Gaussian better",
        )
        ticks = [t for t in _RATIO_TICKS if norm.vmin <= t <= norm.vmax]
        bar.ax.minorticks_off()
        bar.set_ticks(ticks, labels=[f"{t:.2g}" for t in ticks])
        handles = [
            Rectangle(
                (0, 0),
                1,
                1,
                fill=False,
                edgecolor="black",
                linewidth=2.0,
                label="winner certain: same under weak-adversary and worst-case-lower ε0, intervals apart",
            ),
            style.flag_patch("winner not certain (calibrations disagree or Monte-Carlo intervals overlap)"),
        ]
        figure.legend(handles=handles, loc="outside lower center", ncol=1)
        figure.suptitle(
            f"Equal guarantee: TV ratio {mechanism} / best central Gaussian at each target (ε, δ)",
            fontweight="bold",
            fontsize="medium",
        )
    return figure
