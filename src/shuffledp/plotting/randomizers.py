"""Which randomizer to shuffle: expected half L1 against n, one curve per randomizer and curator. Drawing only.

:func:`figure_randomizers` lays out the rows of :mod:`shuffledp.experiments.randomizer_grid`
(``randomizers.csv``): one row of panels per dataset (k in the title), one column per target epsilon, at one
delta rule; x = n (log), y = the exact expected half L1 of each shuffled randomizer (at its own certified eps0)
and of the Gaussian and geometric curators (log); the first fixed delta rule unless another is named. Nothing here computes a statistic. Colours and line styles
come from :func:`shuffledp.plotting.style.curve_styles` (no two curves of a panel alike).
"""

from __future__ import annotations

import textwrap

import matplotlib.pyplot as plt

from shuffledp.plotting import style

__all__ = ["figure_randomizers"]

#: curve labels of the curators (the randomizers are labelled by their keys)
_CURATOR_LABELS = {"gaussian": "Gaussian curator", "geometric": "geometric curator (pure ε)"}


def figure_randomizers(frame, *, delta_rule: str | None = None):
    """The figure (module docstring).

    Args:
        frame: the tidy rows (``dataset``, ``k``, ``n_users``, ``epsilon``, ``delta_rule``, ``randomizer``,
            ``l1_half``).
        delta_rule: the delta rule drawn (None: the first in the frame).

    Returns:
        The matplotlib Figure.

    Raises:
        ValueError: an empty frame or an unknown ``delta_rule``.
    """
    if frame.empty:
        raise ValueError("`frame` must hold at least one row; got none.")
    rules = list(dict.fromkeys(frame["delta_rule"]))
    rules.sort(key=lambda name: not str(name).startswith("fixed"))  # fixed deltas first, as the other figures
    rule = rules[0] if delta_rule is None else delta_rule
    if rule not in rules:
        raise ValueError(f"`delta_rule` must be one of {', '.join(map(repr, rules))}; got {rule!r}.")
    frame = frame[frame["delta_rule"] == rule]
    datasets = list(dict.fromkeys(frame["dataset"]))
    epsilons = sorted(frame["epsilon"].unique())
    names = list(dict.fromkeys(frame["randomizer"]))
    styles = style.curve_styles(names)
    with style.plot_style():
        # one target epsilon: a figure at least 6 in wide (a data label, wrapped at 60 characters, fits the
        # title), the title on two lines, the legend on two columns
        narrow = 2.6 * len(epsilons) + 1.5 < 6.0
        width = max(2.6 * len(epsilons) + 1.5, 6.0)
        figure, axes = plt.subplots(
            len(datasets),
            len(epsilons),
            figsize=(width, 2.4 * len(datasets) + (1.6 if narrow else 0.6)),
            squeeze=False,
            sharex=True,
            layout="constrained",  # laid out when drawn: a data label added to the title later gets its room
        )
        for row, dataset in enumerate(datasets):
            for column, epsilon in enumerate(epsilons):
                ax = axes[row][column]
                panel = frame[(frame["dataset"] == dataset) & (frame["epsilon"] == epsilon)]
                for name in names:
                    curve = panel[panel["randomizer"] == name].sort_values("n_users")
                    if curve.empty:
                        continue
                    colour, linestyle = styles[name]
                    ax.plot(
                        curve["n_users"],
                        curve["l1_half"],
                        color=colour,
                        linestyle=linestyle,
                        marker="o",
                        markersize=2.5,
                        label=_CURATOR_LABELS.get(name, name),
                    )
                ax.set_xscale("log")
                ax.set_yscale("log")
                n_values = sorted(frame["n_users"].unique())
                ax.set_xticks(n_values, [f"{n:.0e}".replace("e+0", "e") for n in n_values], minor=False)
                ax.set_xticks([], minor=True)
                k = int(panel["k"].iloc[0]) if not panel.empty else 0
                ax.set_title(f"{dataset} (k = {k}), ε = {epsilon:g}", fontsize="small")
                if column == 0:
                    ax.set_ylabel("expected ½·L1")
                if row == len(datasets) - 1:
                    ax.set_xlabel("n")
        handles, labels = axes[0][0].get_legend_handles_labels()
        figure.legend(handles, labels, loc="outside lower center", ncol=2 if narrow else 4, fontsize="small")
        title = f"Each shuffled randomizer at its tightest certified ε0, and the curators ({rule})"
        if narrow:
            figure.suptitle(textwrap.fill(title, 52, break_long_words=False), fontsize="medium")
        else:
            figure.suptitle(title)
    return figure
