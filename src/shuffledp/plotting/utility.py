"""Utility figures (paper Figures 2, 4-7, and the crossover sweep). Drawing only.

``plot_*`` functions take ``ax=None`` plus keyword-only options and return the Axes; ``figure_*``
functions lay out one whole figure from the tidy frames written by the utility workflow
(``shuffledp.experiments``) and return the Figure, so the workflow scripts only read, call and save.
Nothing here computes a statistic beyond grouping rows for display. Colours, box styling, maps,
flags and the wording of δ̂ and σ come from :mod:`shuffledp.plotting.style`.
"""

from __future__ import annotations

import contextlib
import string
import textwrap

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.artist import Artist
from matplotlib.colors import TwoSlopeNorm
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from shuffledp.plotting import style

__all__ = [
    "COLOURS",
    "LABELS",
    "plot_tv_boxes",
    "plot_cell_distribution",
    "plot_crossover",
    "BOX_MECHANISMS",
    "calibration_groups",
    "figure_tv_vs_n",
    "figure_tv_boxplots",
    "figure_heatmaps",
    "figure_crossover",
    "crossover_log_ratio",
]

COLOURS = style.MECHANISM_COLOURS
#: the raw Gaussian histogram / n is not a distribution: its "TV" is ½·L1 and may exceed 1 (the label says so)
LABELS = style.MECHANISM_LABELS
#: the Gaussian drawn in the box plots: projected onto the simplex (a distribution, so TV <= 1)
BOX_MECHANISMS = ("gaussian+proj", "shuffle", "shuffle+INV")
#: boxes with at most this many draws also show every draw as a dot
_MAX_DRAWS_SHOWN = 30
#: characters per title line before wrapping
_WRAP = 95

FLOORED_LABEL = "hatched: δ̂ below the floor (or 0), Gaussian calibrated at the floor δ"
#: mechanisms whose rows depend on δ̂ (only these carry the floored flag in a figure)
_CALIBRATED = ("gaussian", "gaussian+proj")


def _axes(ax):
    return plt.gca() if ax is None else ax


@contextlib.contextmanager
def _no_redraws(figure):
    """Build ``figure`` without the full redraws matplotlib asks for while it is being built.

    An Axes sharing its y axis with an Axes of another subfigure makes every limit change call the
    other subfigure's ``canvas.draw_idle`` (``Axis._set_lim``), which on a non-interactive canvas is a
    full draw of the whole figure, constrained layout included: Figure 2 would be drawn 12 times before it
    is saved (most of the job's CPU time). Nothing is shown while a figure is built, so ``draw_idle``
    does nothing inside this block, and ``savefig`` draws the figure once (the PNG is the same, byte for
    byte: tests/plotting/test_utility.py).
    """
    canvas = figure.canvas
    canvas.draw_idle = lambda *args, **kwargs: None
    try:
        yield figure
    finally:
        del canvas.draw_idle


def _wrap(text: str, width: int = _WRAP) -> str:
    return "\n".join(textwrap.fill(line, width) for line in text.split("\n"))


# ------------------------------------------------------------------------------------ box plots


def _box_style(colours) -> dict:
    return dict(
        boxprops={"facecolor": colours["fill"], "edgecolor": colours["edge"], "linewidth": 1.2},
        medianprops={"color": colours["median"], "linewidth": 2.0, "solid_capstyle": "butt"},
        whiskerprops={"color": colours["edge"], "linewidth": 1.2},
        capprops={"color": colours["edge"], "linewidth": 1.2},
        flierprops={
            "marker": "o",
            "markersize": 2.5,
            "markerfacecolor": colours["edge"],
            "markeredgecolor": colours["edge"],
        },
    )


def _draw_mechanism_boxes(ax, rows, *, mechanism, n_values, positions, width, show_draws, flagged) -> bool:
    """The boxes (and draws) of one mechanism; returns whether any box was hatched as flagged."""
    colours = style.box_colours(style.colour_of(mechanism))
    data = [rows[rows["n_users"] == n]["l1_half"].dropna().to_numpy() for n in n_values]
    keep = [i for i, values in enumerate(data) if values.size]
    if not keep:
        return False
    boxes = ax.boxplot(
        [data[i] for i in keep],
        positions=positions[keep],
        widths=width * 0.8,
        patch_artist=True,
        showfliers=not show_draws,
        manage_ticks=False,
        **_box_style(colours),
    )
    hatched = False
    for patch, median, i in zip(boxes["boxes"], boxes["medians"], keep):
        patch.set_gid(f"box:{mechanism}:{n_values[i]}")
        median.set_gid(f"median:{mechanism}:{n_values[i]}")
        if flagged is not None and flagged(rows[rows["n_users"] == n_values[i]]):
            patch.set_hatch(style.FLAG_HATCH)
            hatched = True
        if show_draws:
            values = np.sort(data[i])
            offsets = np.linspace(-0.28, 0.28, values.size) * width if values.size > 1 else np.zeros(1)
            ax.plot(
                positions[i] + offsets,
                values,
                linestyle="none",
                marker="o",
                markersize=2.8,
                markerfacecolor=colours["edge"],
                markeredgecolor="white",
                markeredgewidth=0.4,
                zorder=4,
                gid=f"draws:{mechanism}:{n_values[i]}",
            )
    return hatched


def plot_tv_boxes(
    frame,
    *,
    mechanisms,
    ax=None,
    title: str = "",
    log_scale: bool = True,
    flag_column: str = "delta_floored",
    flagged_mechanisms=_CALIBRATED,
    show_draws: bool | None = None,
):
    """Box plots of TV distance per n (x) and mechanism (colour).

    ``frame``: columns n_users, mechanism, l1_half, optionally ``flag_column``: a box of one of
    ``flagged_mechanisms`` with any flagged row is hatched and the legend explains the hatching (the
    shuffle's rows repeat the Gaussian's calibration columns but do not depend on δ̂). The legend sits
    inside the axes; the figure functions move it below the panels, where it covers no box. With
    ``show_draws`` (default: at most 30 draws per box) every draw is drawn as a dot beside the box
    statistics, so a box thinner than its median line is still visible. The raw Gaussian's "TV" is
    ½·L1 of a vector that is not a distribution (it can exceed 1): its legend entry says so.
    """
    ax = _axes(ax)
    n_values = sorted(frame["n_users"].unique())
    width = 0.8 / max(len(mechanisms), 1)
    per_box = frame.groupby(
        [c for c in ("calibration", "epsilon", "epsilon_local", "n_users", "mechanism") if c in frame.columns]
    )["l1_half"].count()
    if show_draws is None:
        show_draws = bool(len(per_box)) and int(per_box.max()) <= _MAX_DRAWS_SHOWN
    handles: list[Artist] = []
    flagged_any = False
    for j, mechanism in enumerate(mechanisms):
        rows = frame[frame["mechanism"] == mechanism]
        flagged = None
        if mechanism in flagged_mechanisms and flag_column in rows.columns:
            flagged = lambda at_n: bool(at_n[flag_column].astype(bool).any())
        positions = np.arange(len(n_values)) + (j - (len(mechanisms) - 1) / 2) * width
        flagged_any |= _draw_mechanism_boxes(
            ax,
            rows,
            mechanism=mechanism,
            n_values=n_values,
            positions=positions,
            width=width,
            show_draws=show_draws,
            flagged=flagged,
        )
        if len(rows):
            colours = style.box_colours(style.colour_of(mechanism))
            handles.append(
                Patch(
                    facecolor=colours["fill"],
                    edgecolor=colours["edge"],
                    label=LABELS.get(mechanism, mechanism),
                )
            )
    if show_draws and len(per_box):
        handles.append(
            Line2D(
                [],
                [],
                linestyle="none",
                marker="o",
                markersize=3,
                color="0.35",
                label=f"one draw ({int(per_box.max())} per box); line: median",
            )
        )
    if flagged_any:
        handles.append(style.flag_patch(FLOORED_LABEL))
    ax.set_xticks(np.arange(len(n_values)))
    ax.set_xticklabels([f"{n:,}" for n in n_values], rotation=45, ha="right")
    ax.set_xlim(-0.6, len(n_values) - 0.4)
    ax.set_xlabel("n (number of users)")
    unprojected = "gaussian" in mechanisms
    ax.set_ylabel(
        "½·L1 distance to the original distribution (TV where the estimate is a distribution)"
        if unprojected
        else "TV distance to the original distribution"
    )
    if log_scale:
        ax.set_yscale("log")
    ax.grid(True, axis="y", which="major", alpha=0.3)
    ax.set_title(title)
    ax.legend(handles=handles, fontsize="small", loc="best")
    return ax


def _n_range(frame) -> str:
    n_values = sorted(int(n) for n in frame["n_users"].unique())
    return f"n = {n_values[0]:,}" if len(n_values) == 1 else f"n = {n_values[0]:,} … {n_values[-1]:,}"


def _draws_per_box(frame) -> int:
    keys = [
        c for c in ("calibration", "epsilon", "epsilon_local", "n_users", "mechanism") if c in frame.columns
    ]
    return int(frame.groupby(keys)["l1_half"].count().max())


_CALIBRATION_WORDS = {
    "as_printed": "Gaussian calibrated at δ̂ of eq. (6) as printed (the paper's choice)",
    "configured": "Gaussian calibrated at δ̂ of the configured accountant (tightest valid upper bound)",
    "lower": "Gaussian calibrated at δ̂ of the lower bound on the worst case",
}


def calibration_groups(frame) -> list[list[str]]:
    """Calibrations whose Gaussian is the same at every n (same δ used and σ): one group each, in the
    order as printed, configured, lower. Groups of one where they differ."""
    calibrations = [c for c in ("as_printed", "configured", "lower") if c in set(frame["calibration"])]
    calibrations += [c for c in dict.fromkeys(frame["calibration"]) if c not in calibrations]
    groups: dict[tuple, list[str]] = {}
    for calibration in calibrations:
        rows = frame[(frame["calibration"] == calibration) & (frame["mechanism"] == "gaussian+proj")]
        signature = tuple(
            sorted(
                {
                    (int(n), float(d), float(s))
                    for n, d, s in zip(rows["n_users"], rows["delta_used"], rows["sigma"])
                }
            )
        )
        groups.setdefault(signature, []).append(calibration)
    return list(groups.values())


def _group_title(group, frame, shown) -> str:
    data = frame[frame["calibration"] == shown]
    if len(group) == 1:
        words = _CALIBRATION_WORDS.get(group[0], f"calibration {group[0]}")
        return f"{words}: {style.calibration_text(data)}"
    names = ", ".join(group)
    accountants = "; ".join(
        f"{c}: {style.accountant_text(str(frame.loc[frame['calibration'] == c, 'accountant'].iloc[0]))}"
        for c in group
    )
    return (
        f"Calibrations {names} coincide (same δ̂ and σ at every n), so the experiment is drawn once "
        f"(draws of `{shown}`) [{accountants}]: {style.calibration_text(data)}"
    )


def figure_tv_vs_n(frame, *, k: int, mechanism_sets=(BOX_MECHANISMS, ("gaussian+proj", "shuffle+INV"))):
    """Figure 2: TV distance vs n on synthetic data; one row per *distinct* calibration of the Gaussian
    (calibrations with the same δ̂ and σ at every n are one row, and its title says which coincide),
    one column per set of mechanisms; panels (a), (b), (c), ... in reading order, one shared y axis.

    The Gaussian is drawn projected onto the simplex (a distribution: TV <= 1). Each row's title
    states the accountant, δ̂ over n (where it was floored) and σ.
    """
    groups = calibration_groups(frame)
    first = frame.iloc[0]
    letters = iter(string.ascii_lowercase)
    with style.plot_style():
        figure = plt.figure(figsize=(14.0, 5.6 * len(groups) + 0.6), layout="constrained")
        with _no_redraws(figure):
            rows = figure.subfigures(len(groups), 1, squeeze=False)[:, 0]
            shared = None
            for subfigure, group in zip(rows, groups):
                shown = "configured" if "configured" in group else group[0]
                data = frame[frame["calibration"] == shown]
                axes = np.atleast_1d(subfigure.subplots(1, len(mechanism_sets)))
                shared = axes[0] if shared is None else shared
                for ax, mechanisms in zip(axes, mechanism_sets):
                    if ax is not shared:
                        ax.sharey(shared)  # one y axis for every panel: the same quantity throughout
                    names = ", ".join(LABELS.get(m, m) for m in mechanisms)
                    plot_tv_boxes(
                        data, mechanisms=list(mechanisms), ax=ax, title=f"({next(letters)}) {names}"
                    )
                subfigure.suptitle(_wrap(_group_title(group, frame, shown), 150), fontsize="medium")
            style.move_legends_to_figure(figure, figure.axes)
            figure.suptitle(
                f"Figure 2: TV distance vs n, synthetic data, k = {k}, ε = {first['epsilon']:g}, "
                f"ε0 = {first['epsilon_local']:g}, {_n_range(frame)}, {_draws_per_box(frame)} draws per box",
                fontweight="bold",
            )
    return figure


def figure_tv_boxplots(frame, *, label: str, mechanisms=BOX_MECHANISMS):
    """Figures 6/7: TV distance vs n over runs, one panel per privacy setting (ε, ε0), one shared y
    axis; each panel's title states ε, ε0, the accountant, δ̂ over n and σ. The Gaussian is drawn
    projected onto the simplex (TV <= 1)."""
    settings = frame[["epsilon", "epsilon_local"]].drop_duplicates().to_numpy().tolist()
    runs = int(frame["run"].nunique()) if "run" in frame.columns else _draws_per_box(frame)
    with style.plot_style():
        figure, axes = plt.subplots(
            1,
            len(settings),
            figsize=(8.0 * len(settings), 7.0),
            squeeze=False,
            sharey=True,
            layout="constrained",
        )
        for ax, letter, (epsilon, epsilon_local) in zip(axes[0], string.ascii_lowercase, settings):
            data = frame[(frame["epsilon"] == epsilon) & (frame["epsilon_local"] == epsilon_local)]
            title = f"({letter}) ε = {epsilon:g}, ε0 = {epsilon_local:g}\n{style.calibration_text(data)}"
            plot_tv_boxes(data, mechanisms=list(mechanisms), ax=ax, title=_wrap(title, 80))
        style.move_legends_to_figure(figure, axes[0])
        figure.suptitle(
            f"{label}: TV distance vs n ({_n_range(frame)}), {runs} runs per n; each run samples n check-ins "
            "from the region and computes δ̂ (eq. 10) from that sample",
            fontweight="bold",
        )
    return figure


# ------------------------------------------------------------------------------------ heat maps


def plot_cell_distribution(
    values, *, n_lon: int, n_lat: int, norm, ax=None, title: str = "", colorbar: bool = True
):
    """Heat map of a distribution over grid cells (cell = lat_index * n_lon + lon_index, south at the
    bottom) on the given (logarithmic) ``norm``, with integer cell-index ticks.

    Cells equal to 0 are grey; negative cells (a noisy Gaussian histogram) are grey and cross-hatched;
    positive cells below ``norm.vmin`` take the colour map's "under" colour (white) and cells above
    ``norm.vmax`` its "over" colour. The legend counts every such cell, so nothing is clipped silently.
    """
    ax = _axes(ax)
    grid = np.asarray(values, dtype=float).reshape(n_lat, n_lon)
    cmap = style.sequential_cmap(under="white", over="magenta")
    image = ax.imshow(
        np.ma.masked_less_equal(grid, 0.0),
        origin="lower",
        cmap=cmap,
        norm=norm,
        aspect="equal",
        interpolation="nearest",
    )
    negative = grid < 0
    style.hatch_cells(ax, negative, hatch=style.NEGATIVE_HATCH, facecolor=style.EMPTY_COLOUR)
    handles = []
    zero = int((grid == 0).sum())
    if zero:
        handles.append(
            Patch(
                facecolor=style.EMPTY_COLOUR,
                edgecolor=style.INK,
                label=f"= 0: {zero} {style.cells_word(zero)}",
            )
        )
    if negative.any():
        handles.append(
            style.flag_patch(
                f"< 0: {int(negative.sum())} {style.cells_word(int(negative.sum()))} (Gaussian noise)",
                hatch=style.NEGATIVE_HATCH,
                facecolor=style.EMPTY_COLOUR,
            )
        )
    handles += style.out_of_range_entries(
        grid[grid > 0],
        vmin=norm.vmin,
        vmax=norm.vmax,
        below="0 < p < 1/n: {count} {cells} (white)",
        above="above the scale: {count} {cells} (magenta)",
        colours=("white", "magenta"),
    )
    if handles:
        ax.legend(
            handles=handles,
            loc="upper center",
            bbox_to_anchor=(0.5, -0.16),
            ncol=min(len(handles), 3),
            fontsize="small",
            frameon=False,
        )
    style.integer_ticks(ax)
    ax.set_xlabel("longitude index (west to east)")
    ax.set_ylabel("latitude index (south to north)")
    ax.set_title(title)
    if colorbar:
        ax.figure.colorbar(
            image,
            ax=ax,
            shrink=0.8,
            label="cell probability (log scale)",
            extend=style.colorbar_extend(grid[grid > 0], vmin=norm.vmin, vmax=norm.vmax),
        )
    return ax


def figure_heatmaps(
    cells, summary, *, n_lon: int, n_lat: int, label: str, columns=("original", "gaussian", "shuffle+INV")
):
    """Figures 4/5: original, Gaussian and shuffle+INV distributions over the cells on one shared
    logarithmic colour scale, from 1/n (one check-in) to the largest value of any panel.

    The log scale is chosen because a few cells hold most check-ins (the colour bar says "log scale");
    ``summary`` (one row of :func:`shuffledp.experiments.utility.heatmap_job`) gives n, ε, ε0, δ̂, σ and TV.
    """
    row = summary.iloc[0]
    values = cells[list(columns)].to_numpy(dtype=float)
    n_users = int(row["n_users"])
    norm = style.log_norm(1.0 / n_users, float(np.nanmax(values)))
    titles = {
        "original": f"(a) original: n = {n_users:,} check-ins, {n_lon * n_lat} cells",
        "gaussian": f"(b) Gaussian, σ = {style.format_sigma(row['sigma'])}: TV = {row['l1_half_gaussian']:.3g}",
        "shuffle+INV": f"(c) shuffle+INV: TV = {row['l1_half_shuffle_inv']:.3g}",
    }
    with style.plot_style():
        figure, axes = plt.subplots(
            1,
            len(columns),
            figsize=(5.4 * len(columns) + 1.0, 0.75 * 5.4 * n_lat / n_lon + 1.9),
            layout="constrained",
        )
        for ax, column in zip(axes, columns):
            plot_cell_distribution(
                cells[column],
                n_lon=n_lon,
                n_lat=n_lat,
                norm=norm,
                ax=ax,
                title=titles.get(column, column),
                colorbar=False,
            )
        vmin, vmax = norm.vmin, norm.vmax
        assert vmin is not None and vmax is not None  # style.log_norm sets both
        figure.colorbar(
            axes[0].images[0],
            ax=list(axes),
            shrink=0.75,
            label="cell probability, log scale shared by all panels\n(lower end 1/n = one check-in)",
            extend=style.colorbar_extend(values[values > 0], vmin=vmin, vmax=vmax),
        )
        delta = style.delta_text(
            row["delta"],
            accountant=row["accountant"],
            epsilon=row["epsilon"],
            epsilon_local=row["epsilon_local"],
            floored=bool(row["delta_floored"]),
            delta_used=row["delta_used"],
        )
        figure.suptitle(
            _wrap(
                f"{label}: ε = {row['epsilon']:g}, ε0 = {row['epsilon_local']:g}, {delta}, "
                f"σ = {style.format_sigma(row['sigma'])}",
                150,
            ),
            fontweight="bold",
        )
    return figure


# ------------------------------------------------------------------------------------ crossover


#: the Gaussian compared in the crossover figure: projected onto the simplex (columns ``tv_gaussian_proj_*``)
CROSSOVER_GAUSSIAN = "tv_gaussian_proj_mean"


def crossover_log_ratio(frame):
    """log10(mean TV shuffle+INV / mean TV Gaussian + projection) of each row: < 0 where the shuffle is better."""
    return np.log10(
        frame["l1_half_shuffle_inv_mean"].to_numpy(float) / frame[CROSSOVER_GAUSSIAN].to_numpy(float)
    )


def _crossover_grid(frame, epsilons, locals_):
    grid = np.full((len(locals_), len(epsilons)), np.nan)
    floored = np.zeros_like(grid, dtype=bool)
    for (_, row), ratio in zip(frame.iterrows(), crossover_log_ratio(frame)):
        i, j = locals_.index(row["epsilon_local"]), epsilons.index(row["epsilon"])
        grid[i, j] = ratio
        floored[i, j] = bool(row["delta_floored"])
    return grid, floored


def plot_crossover(
    frame, *, ax=None, title: str = "", norm=None, colorbar: bool = True, epsilons=None, epsilon_locals=None
):
    """log10(mean TV shuffle+INV / mean TV Gaussian + projection) over (ε, ε0) in the outcome colours
    of :mod:`shuffledp.plotting.style`: < 0 (blue) shuffle better, > 0 (red) curator (Gaussian) better.

    ``frame``: one accountant's rows with columns epsilon, epsilon_local, l1_half_shuffle_inv_mean,
    tv_gaussian_proj_mean, delta_floored. Floored cells are hatched (legend entry); ``norm`` (default:
    symmetric about 0 over this frame) lets panels share one colour scale.
    """
    ax = _axes(ax)
    epsilons = sorted(frame["epsilon"].unique()) if epsilons is None else list(epsilons)
    locals_ = sorted(frame["epsilon_local"].unique()) if epsilon_locals is None else list(epsilon_locals)
    grid, floored = _crossover_grid(frame, epsilons, locals_)
    if norm is None:
        limit = max(float(np.nanmax(np.abs(grid))), 1e-3) if np.isfinite(grid).any() else 1.0
        norm = TwoSlopeNorm(0.0, -limit, limit)
    cmap = style.outcome_cmap().with_extremes(bad="white")
    image = ax.imshow(
        np.ma.masked_invalid(grid),
        origin="lower",
        cmap=cmap,
        norm=norm,
        aspect="auto",
        interpolation="nearest",
    )
    style.hatch_cells(ax, floored)
    handles = []
    if floored.any():
        handles.append(
            style.flag_patch(
                f"δ̂ below the floor (or 0): Gaussian at the floor δ ({int(floored.sum())} {style.cells_word(int(floored.sum()))})"
            )
        )
    if np.isnan(grid).any():
        handles.append(Patch(facecolor="white", edgecolor=style.INK, label="not computed (ε ≥ ε0)"))
    if handles:
        ax.legend(
            handles=handles,
            loc="upper center",
            bbox_to_anchor=(0.5, -0.14),
            ncol=len(handles),
            fontsize="small",
            frameon=False,
        )
    ax.set_xticks(range(len(epsilons)))
    ax.set_xticklabels([f"{e:g}" for e in epsilons])
    ax.set_yticks(range(len(locals_)))
    ax.set_yticklabels([f"{e:g}" for e in locals_])
    ax.set_xlabel("central ε")
    ax.set_ylabel("local ε0")
    ax.set_title(title)
    if colorbar:
        ax.figure.colorbar(image, ax=ax, shrink=0.8, label="log10(TV shuffle+INV / TV Gaussian + projection)")
    return ax


def _crossover_order(accountant: str) -> int:
    """Panels of valid accountants first (upper bounds, then lower bounds), a formula that is neither last."""
    kind = style.accountant_kind(accountant)
    return {"upper bound": 0, "lower bound": 1}.get(kind, 2)


def _crossover_title(letter: str, accountant: str) -> str:
    kind = style.accountant_kind(accountant)
    if kind == "upper bound":
        return f"({letter}) δ̂ from {accountant}\n(upper bound: a guarantee)"
    if kind == "lower bound":
        return f"({letter}) δ̂ from {accountant}\n(lower bound on the worst case)"
    return f"({letter}) δ̂ from {accountant} ({kind or 'unregistered'}):\nNOT a guarantee, for the paper's comparison"


def figure_crossover(rows, *, data_label: str = ""):
    """The crossover sweep: one panel per accountant on one shared, symmetric colour scale; blue
    (shuffle better) and red (Gaussian better) as in every figure of the project. The valid accountants'
    panels come first; a panel whose δ̂ is not a guarantee (eq. (6) as printed) comes last and says so.
    ``data_label`` (:func:`shuffledp.plotting.style.run_label`) goes under the title."""
    accountants = sorted(dict.fromkeys(rows["accountant"]), key=_crossover_order)
    ratios = crossover_log_ratio(rows)
    limit = max(float(np.nanmax(np.abs(ratios))), 1e-3) if np.isfinite(ratios).any() else 1.0
    norm = TwoSlopeNorm(0.0, -limit, limit)
    epsilons, locals_ = sorted(rows["epsilon"].unique()), sorted(rows["epsilon_local"].unique())
    first = rows.iloc[0]
    with style.plot_style():
        figure, axes = plt.subplots(
            1,
            len(accountants),
            figsize=(6.0 * len(accountants) + 1.0, 5.6),
            squeeze=False,
            layout="constrained",
        )
        for ax, letter, accountant in zip(axes[0], string.ascii_lowercase, accountants):
            plot_crossover(
                rows[rows["accountant"] == accountant],
                ax=ax,
                norm=norm,
                colorbar=False,
                epsilons=epsilons,
                epsilon_locals=locals_,
                title=_crossover_title(letter, accountant),
            )
        figure.colorbar(
            axes[0, 0].images[0],
            ax=list(axes[0]),
            shrink=0.85,
            label="log10(mean TV shuffle+INV / mean TV Gaussian + projection)\n(one scale shared by all panels)",
        )
        figure.suptitle(
            _wrap(
                f"Crossover, synthetic data: n = {int(first['n_users']):,}, k = {int(first['k'])}, "
                f"{int(first['replicates'])} draws per cell, Gaussian calibrated at δ̂ (eq. 10) of each panel's "
                "accountant and projected onto the simplex (σ per cell in crossover.csv). "
                f"{style.OUTCOME_WORDS['shuffle'].capitalize()}; {style.OUTCOME_WORDS['curator']} (Gaussian)",
                150,
            )
            + (f"\n{data_label}" if data_label else ""),
            fontweight="bold",
        )
    return figure
