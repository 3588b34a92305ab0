"""Accounting figures: delta over (epsilon, epsilon_0) (Figure 1), delta curves of the sweeps, and
epsilon at a fixed delta against n and eps0 (the comparison of guarantees, Figure-1 style of Koskela et al.).

Drawing only: inputs are log10 delta values already computed (``shuffledp.experiments.accounting``);
``plot_*`` functions take ``ax=None`` plus keyword-only options and return the Axes, ``figure_*``
functions lay out a whole figure and return it. Colour and y axes show log10 delta, so values far
below the double range (1e-300 and beyond) are drawn faithfully; delta = 0 (log10 = -inf) is drawn
as a light grey cell or left out of a curve (the legend counts it), never as a colour.

Sweep curves draw δ itself on a logarithmic axis (a symmetric-log axis of log10 δ would bend at -10
and hide how fast δ falls) down to 1e-300 (:data:`SWEEP_SMALLEST_LOG10`); values below that (log10 δ reaches
-27,000, far below the double range) and δ = 0 are marked on the bottom edge and counted in the legend,
never dropped silently: the exact log10 δ is in the CSV.
"""

from __future__ import annotations

import string
from typing import TYPE_CHECKING

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.patches import Patch
from matplotlib.ticker import FixedLocator

from shuffledp.plotting import style

if TYPE_CHECKING:
    from matplotlib.typing import LineStyleType

__all__ = [
    "plot_delta_surface",
    "plot_sweep",
    "sweep_legend_handles",
    "figure_delta_surfaces",
    "figure_sweep",
    "ZERO_COLOUR",
    "SWEEP_SMALLEST_LOG10",
    "SWEEP_X_LABELS",
    "ROLE_MARKERS",
    "comparison_styles",
    "EPSILON_X_LABELS",
    "plot_epsilon_against",
    "epsilon_legend_handles",
    "figure_epsilon_comparison",
]

ZERO_COLOUR = style.EMPTY_COLOUR
#: the sweeps draw δ itself on a log axis down to 10**SWEEP_SMALLEST_LOG10 (representable with full
#: precision: the smallest normal double is 2.2e-308); smaller δ and δ = 0 are marked on the bottom edge
SWEEP_SMALLEST_LOG10 = -300.0
_BOTTOM_MARKERS = {"below": "v", "zero": "X"}
#: bottom-edge marker rows (axes fraction): one row per curve that has such points, from the bottom up
_BOTTOM_FIRST, _BOTTOM_STEP = 0.02, 0.02
_BOTTOM_WORDS = {
    "below": "▼ bottom edge: δ < 1e-300 (exact log10 δ in the CSV)",
    "zero": "✕ bottom edge: δ = 0 exactly",
}
SWEEP_X_LABELS = {
    "n_users": "n (number of users)",
    "k": "k (domain size)",
    "epsilon_local": "ε0 (local)",
    "epsilon": "ε (central)",
    "n_x0_fraction": "n_x0 / n (share of the other users holding x0)",
}
_SHORT = {"n_users": "n", "k": "k", "epsilon_local": "ε0", "n_x0_fraction": "n_x0/n", "epsilon": "ε"}
_LINESTYLES = ("-", "--", ":", "-.")
_MARKERS = ("o", "s", "^", "D", "v", "P", "X")


def _axes(ax):
    return plt.gca() if ax is None else ax


def _edges(centres: np.ndarray) -> np.ndarray:
    centres = np.asarray(centres, dtype=float)
    if centres.size == 1:
        return np.array([centres[0] - 0.5, centres[0] + 0.5])
    middle = 0.5 * (centres[1:] + centres[:-1])
    return np.concatenate([[2 * centres[0] - middle[0]], middle, [2 * centres[-1] - middle[-1]]])


def plot_delta_surface(
    epsilons,
    epsilon_locals,
    log10_delta,
    *,
    ax=None,
    title: str = "",
    vmin: float | None = None,
    vmax: float | None = None,
    colorbar: bool = True,
    cmap: str = style.SEQUENTIAL_CMAP,
):
    """Heat map of log10 delta over (epsilon: x axis, epsilon_0: y axis); delta = 0 in light grey.

    ``log10_delta`` has shape (len(epsilon_locals), len(epsilons)).
    """
    ax = _axes(ax)
    values = np.asarray(log10_delta, dtype=float)
    finite = np.isfinite(values)
    x_edges, y_edges = _edges(epsilons), _edges(epsilon_locals)
    zero = np.where(np.isneginf(values), 1.0, np.nan)
    ax.pcolormesh(
        x_edges, y_edges, zero, cmap=plt.matplotlib.colors.ListedColormap([ZERO_COLOUR]), shading="flat"
    )
    image = ax.pcolormesh(
        x_edges, y_edges, np.ma.masked_where(~finite, values), cmap=cmap, vmin=vmin, vmax=vmax, shading="flat"
    )
    ax.set_xlabel("ε (central)")
    ax.set_ylabel("ε0 (local k-RR)")
    ax.set_title(title)
    if colorbar:
        ax.figure.colorbar(image, ax=ax, label="log10 δ")
    if np.isneginf(values).any():
        ax.legend(
            handles=[Patch(facecolor=ZERO_COLOUR, edgecolor=style.INK, label="δ = 0 exactly")],
            loc="upper center",
            bbox_to_anchor=(0.5, -0.13),
            fontsize="small",
            frameon=False,
        )  # below the axes: covers no cell
    return ax


def figure_delta_surfaces(frame, *, accountants, grid_of):
    """Figure 1: one log10 δ heat map per accountant, all on one colour scale with one colour bar.

    ``grid_of(frame, name)`` -> (epsilons, epsilon_locals, log10 delta grid) (e.g.
    :func:`shuffledp.experiments.accounting.fig1_grid`); titles give the accountant (label, registry
    name and kind) and n, k, n_x0.
    """
    grids = [grid_of(frame, name) for name in accountants]
    finite = np.concatenate([grid[np.isfinite(grid)] for _, _, grid in grids] + [np.array([0.0])])
    vmin, vmax = float(finite.min()), 0.0
    first = frame.iloc[0]
    with style.plot_style():
        figure, axes = plt.subplots(
            1,
            len(accountants),
            figsize=(5.6 * len(accountants) + 1.2, 5.4),
            squeeze=False,
            layout="constrained",
        )
        for ax, letter, name, (epsilons, epsilon_locals, grid) in zip(
            axes[0], string.ascii_lowercase, accountants, grids
        ):
            label = frame.loc[frame["accountant"] == name, "label"].iloc[0]
            plot_delta_surface(
                epsilons,
                epsilon_locals,
                grid,
                ax=ax,
                vmin=vmin,
                vmax=vmax,
                colorbar=False,
                title=f"({letter}) {label}\n[{style.accountant_text(name)}]",
            )
        figure.colorbar(
            axes[0, 0].collections[-1], ax=list(axes[0]), shrink=0.9, label="log10 δ (shared by all panels)"
        )
        style.move_legends_to_figure(figure, axes[0], frameon=False)  # one "δ = 0" entry for all panels
        figure.suptitle(
            f"Figure 1: δ over (ε, ε0), n = {int(first['n_users'])}, k = {int(first['k'])}, "
            f"n_x0 = {int(first['n_x0'])}",
            fontweight="bold",
        )
    return figure


# ---------------------------------------------------------------------------------------- sweeps


def _sweep_varying(frame, x: str) -> list[str]:
    return [
        p
        for p in ("n_users", "k", "epsilon_local", "n_x0_fraction", "epsilon")
        if p != x and frame[p].nunique() > 1
    ]


def _value_text(parameter: str, value) -> str:
    return (
        f"{_SHORT[parameter]} = {int(value):,}"
        if parameter in ("n_users", "k")
        else f"{_SHORT[parameter]} = {value:g}"
    )


def _sweep_styles(frame, x: str):
    varying = _sweep_varying(frame, x)
    accountants = list(dict.fromkeys(frame["accountant"]))
    combos = (
        list(dict.fromkeys(tuple(row) for row in frame[varying].itertuples(index=False))) if varying else [()]
    )
    styles = {
        combo: (_LINESTYLES[i % len(_LINESTYLES)], _MARKERS[i % len(_MARKERS)])
        for i, combo in enumerate(combos)
    }
    colours = {name: colour for name, (colour, _) in style.curve_styles(accountants).items()}
    return varying, accountants, colours, combos, styles


def _sweep_label(rows) -> str:
    """ "name (kind): label" of one accountant's rows, the label only where it says more than the name."""
    name, label = rows["accountant"].iloc[0], str(rows["label"].iloc[0])
    text = style.accountant_text(name)
    return text if label in ("", name, "nan") else f"{text}: {label}"


def _bottom_counts(log10_delta) -> tuple[int, int]:
    """(points below the smallest drawn δ, points with δ = 0) of log10 δ values."""
    values = np.asarray(log10_delta, dtype=float)
    return int((np.isfinite(values) & (values < SWEEP_SMALLEST_LOG10)).sum()), int(np.isneginf(values).sum())


def sweep_legend_handles(frame, *, x: str):
    """Legend of :func:`plot_sweep`: (colour handles, their title, line-style handles, their title).

    A colour entry names the accountant with its kind (e.g. "worst-case-upper (upper bound)") and its
    label where that says more, and counts its points drawn at the bottom edge (δ below 1e-300, δ = 0);
    line styles name the values of the other parameters that vary; then one entry per bottom marker.
    """
    varying, accountants, colours, combos, styles = _sweep_styles(frame, x)
    colour_handles = []
    for accountant in accountants:
        rows = frame[frame["accountant"] == accountant]
        label = _sweep_label(rows)
        below, zeros = _bottom_counts(rows["log10_delta"])
        notes = [f"{below} point(s) δ < 1e-300" for _ in [0] if below] + [
            f"{zeros} point(s) δ = 0" for _ in [0] if zeros
        ]
        if notes:
            label += f" ({'; '.join(notes)}: bottom edge)"
        colour_handles.append(style.line_handle(label, colour=colours[accountant]))
    below, zeros = _bottom_counts(frame["log10_delta"])
    if below:
        colour_handles.append(
            style.line_handle(
                _BOTTOM_WORDS["below"], colour="0.4", linestyle="none", marker=_BOTTOM_MARKERS["below"]
            )
        )
    if zeros:
        colour_handles.append(
            style.line_handle(
                _BOTTOM_WORDS["zero"], colour="0.4", linestyle="none", marker=_BOTTOM_MARKERS["zero"]
            )
        )
    style_handles = [
        style.line_handle(
            ", ".join(_value_text(p, v) for p, v in zip(varying, combo)),
            linestyle=styles[combo][0],
            marker=styles[combo][1],
        )
        for combo in combos
        if varying
    ]
    return (
        colour_handles,
        "colour: accountant (kind)",
        style_handles,
        "line: " + ", ".join(_SHORT[p] for p in varying),
    )


def _draw_sweep_curve(ax, selected, *, x: str, colour, linestyle, marker, gid: str, stagger: dict):
    """One curve: δ (not log10 δ) where δ >= 1e-300; below that and at δ = 0 a marker on the bottom edge."""
    xs = selected[x].to_numpy(dtype=float)
    log10 = selected["log10_delta"].to_numpy(dtype=float)
    drawable = np.isfinite(log10) & (log10 >= SWEEP_SMALLEST_LOG10)
    delta = np.where(drawable, np.power(10.0, np.where(drawable, log10, 0.0)), np.nan)
    ax.plot(xs, delta, color=colour, linestyle=linestyle, marker=marker, markersize=4, linewidth=1.5, gid=gid)
    for what, chosen in (("below", np.isfinite(log10) & ~drawable), ("zero", np.isneginf(log10))):
        if chosen.any():
            y = _BOTTOM_FIRST + stagger.get("rows", 0) * _BOTTOM_STEP
            stagger["rows"] = stagger.get("rows", 0) + 1
            ax.plot(
                xs[chosen],
                np.full(int(chosen.sum()), y),
                linestyle="none",
                marker=_BOTTOM_MARKERS[what],
                markersize=6,
                color=colour,
                markeredgecolor=style.INK,
                markeredgewidth=0.5,
                transform=ax.get_xaxis_transform(),
                clip_on=False,
                gid=f"{gid}:{what}",
            )


def plot_sweep(frame, *, x: str, ax=None, title: str = "", legend: bool = True):
    """δ sweep curves: δ against ``x`` on a logarithmic δ axis, colour = accountant (palette), line
    style and marker = the other parameters that vary (e.g. ε).

    ``frame``: a :func:`shuffledp.experiments.accounting_figures.sweep_frame`. δ is drawn as a value
    down to 1e-300 (:data:`SWEEP_SMALLEST_LOG10`); smaller values (log10 δ down to −27,000 in the shipped
    sweeps, exact in the CSV) and δ = 0 are marked on the bottom edge in the accountant's colour (▽ below
    1e-300, ✕ δ = 0) and counted in the accountant's legend entry (:func:`sweep_legend_handles`;
    ``legend=False`` leaves the legend to the caller). Where ``n_x0`` was capped at n - 1 (a fraction of
    1), a dotted line and a note mark the capped points, and say so where eq. (6) as printed meets the exact δ there.
    """
    ax = _axes(ax)
    varying, accountants, colours, combos, styles = _sweep_styles(frame, x)
    stagger: dict = {}
    for accountant in accountants:
        rows = frame[frame["accountant"] == accountant]
        for combo in combos:
            selected = rows
            for parameter, value in zip(varying, combo):
                selected = selected[selected[parameter] == value]
            if selected.empty:
                continue
            linestyle, marker = styles[combo]
            _draw_sweep_curve(
                ax,
                selected.sort_values(x),
                x=x,
                colour=colours[accountant],
                linestyle=linestyle,
                marker=marker,
                gid=f"sweep:{accountant}:{combo}",
                stagger=stagger,
            )
    if x == "n_users":
        ax.set_xscale("log")
    ax.set_yscale("log")
    log10 = frame["log10_delta"].to_numpy(dtype=float)
    drawn = log10[np.isfinite(log10) & (log10 >= SWEEP_SMALLEST_LOG10)]
    lowest, top = (float(drawn.min()) if drawn.size else -10.0) - 0.5, 0.5
    # room under the lowest curve for the bottom-edge marker rows (axes fraction `share`)
    share = _BOTTOM_FIRST + stagger.get("rows", 0) * _BOTTOM_STEP + 0.02 if stagger.get("rows") else 0.0
    low = (lowest - share * top) / (1.0 - share)
    ax.set_ylim(10.0 ** max(low, -323.0), 10.0**top)  # δ <= 1: nothing to show above
    ax.yaxis.set_major_locator(FixedLocator(_decade_ticks(max(low, -323.0))))
    _mark_n_x0_cap(ax, frame, x)
    ax.set_xlabel(SWEEP_X_LABELS.get(x, x))
    ax.set_ylabel("δ (log scale)")
    ax.grid(True, which="major", alpha=0.3)
    ax.set_title(title)
    if legend:
        colour_handles, colour_title, style_handles, style_title = sweep_legend_handles(frame, x=x)
        first = ax.legend(
            handles=colour_handles,
            title=colour_title,
            loc="upper left",
            bbox_to_anchor=(1.01, 1.0),
            fontsize="small",
        )
        if style_handles:
            ax.add_artist(first)
            ax.legend(
                handles=style_handles,
                title=style_title,
                loc="lower left",
                bbox_to_anchor=(1.01, 0.0),
                fontsize="small",
            )
    return ax


def _decade_ticks(lowest: float) -> list[float]:
    """δ ticks at 10^0, 10^-step, ... down to 10^lowest, step 1, 2, 5, 10, 20, 50 or 100 decades (at most ~8)."""
    span = max(-lowest, 1.0)
    step = next(s for s in (1, 2, 5, 10, 20, 50, 100) if span / s <= 8)
    return [10.0 ** -(i * step) for i in range(int(span // step) + 1) if i * step <= 307]


def _mark_n_x0_cap(ax, frame, x: str) -> None:
    capped = frame[
        (frame["n_x0"] == frame["n_users"] - 1)
        & (frame["n_x0_fraction"] * frame["n_users"] >= frame["n_users"] - 0.5)
    ]
    if not (len(capped) and x == "n_x0_fraction"):
        return
    for value in sorted(capped[x].unique()):
        ax.axvline(value, color=style.INK, linestyle=":", linewidth=1.0)
    n_users = sorted(int(n) for n in capped["n_users"].unique())
    note = (
        "n_x0 capped at n − 1 = " + ", ".join(f"{n - 1:,}" for n in n_users) + "\n(every other user holds x0)"
    )
    if _printed_meets_exact(capped):
        note += ";\nthere eq. (6) as printed\nequals the exact single-bin δ"
    ax.annotate(  # outside the axes, right of the capped column: it covers no point
        note,
        xy=(1.0, 0.5),
        xycoords="axes fraction",
        xytext=(8, 0),
        textcoords="offset points",
        ha="left",
        va="center",
        fontsize="small",
        color=style.INK,
        bbox={"boxstyle": "round", "facecolor": "white", "edgecolor": "0.7"},
        annotation_clip=False,
        gid="n_x0-cap-note",
    )


def _printed_meets_exact(rows) -> bool:
    """Whether biswas-printed and biswas-exact give the same log10 δ (within 1e-6) at every one of ``rows``' settings."""
    keys = ["n_users", "k", "epsilon_local", "n_x0", "epsilon"]
    printed = rows[rows["accountant"] == "biswas-printed"].set_index(keys)["log10_delta"]
    exact = rows[rows["accountant"] == "biswas-exact"].set_index(keys)["log10_delta"]
    joined = printed.to_frame("printed").join(exact.rename("exact"), how="inner")
    if joined.empty:
        return False
    return bool(np.allclose(joined["printed"], joined["exact"], rtol=0.0, atol=1e-6))


def _fixed_text(frame, x: str) -> str:
    parts = []
    for parameter in ("n_users", "k", "epsilon_local", "epsilon", "n_x0_fraction"):
        if parameter == x or frame[parameter].nunique() != 1:
            continue
        value = frame[parameter].iloc[0]
        if parameter == "n_x0_fraction":
            parts.append(f"n_x0 = round({value:g} n)" + (", at most n − 1" if value >= 1 else ""))
        else:
            parts.append(_value_text(parameter, value))
    if x != "n_x0_fraction" and frame["n_x0_fraction"].nunique() == 1 and frame["n_users"].nunique() == 1:
        parts.append(f"(n_x0 = {int(frame['n_x0'].iloc[0]):,})")
    return ", ".join(parts)


def figure_sweep(frame, *, x: str, name: str = ""):
    """One δ sweep: the title states what is plotted against what and every fixed parameter
    (n, k, ε0, ε, n_x0 rule); the config group name is given last for reference."""
    subject = {"n_users": "n", "k": "k", "epsilon_local": "ε0", "epsilon": "ε", "n_x0_fraction": "n_x0 / n"}[
        x
    ]
    with style.plot_style():
        figure, ax = plt.subplots(figsize=(9.5, 6.5), layout="constrained")
        title = f"δ against {subject}: {_fixed_text(frame, x)}"
        if name:
            title += f"\n(sweep `{name}` of accounting.sweeps)"
        plot_sweep(frame, x=x, ax=ax, title=title, legend=False)
        colour_handles, colour_title, style_handles, style_title = sweep_legend_handles(frame, x=x)
        figure.legend(
            handles=colour_handles,
            title=colour_title,
            loc="outside lower left",
            fontsize="small",
            title_fontsize="small",
        )
        if style_handles:
            figure.legend(
                handles=style_handles,
                title=style_title,
                loc="outside lower right",
                fontsize="small",
                title_fontsize="small",
            )
    return figure


# ------------------------------------------------------------------ epsilon at a fixed delta (Figure-1 style)

#: marker of an accountant by what its epsilon is (``role`` column of the comparison frame); colour and
#: line style are the curve's own (distinct for every curve)
ROLE_MARKERS = {
    "guarantee, all datasets": "o",
    "lower bound on the worst case": "s",
    "one dataset, not a guarantee": "D",
    "not a bound": "P",
}
#: where the markers of points without a drawable epsilon sit (axes fraction) and their shapes
_EDGE_TOP, _EDGE_BOTTOM, _EDGE_STEP = 0.975, 0.025, 0.022
_EDGE_MARKERS = {"unreachable": "^", "error": "X", "epsilon = 0": "v"}
_EDGE_WORDS = {
    "unreachable": "▲ at the top edge: no ε reaches δ",
    "error": "✕ at the top edge: the accountant refused the setting (see the CSV note)",
    "epsilon = 0": "▼ at the bottom edge: ε = 0 already meets δ",
}
_HOLLOW_WORDS = "hollow marker: reached only at ε ≥ ε0 (no amplification)"
_EPSILON_LOCAL_WORDS = "grey dashed: ε = ε0 (k-RR's own local guarantee)"
EPSILON_X_LABELS = {
    "n_users": "n (number of users, log scale)",
    "epsilon_local": "ε0 (local k-RR, log scale)",
}


_ROLE_WORDS = {
    "guarantee, all datasets": ", valid for every dataset",
    "lower bound on the worst case": " on the worst case over datasets",
    "one dataset, not a guarantee": ", one dataset ({rule}), not a guarantee",
    "not a bound": ", not a bound",
}


def _comparison_label(rows) -> str:
    """ "name: kind, what it holds for (counts of special points)" for one accountant's rows."""
    first = rows.iloc[0]
    words = _ROLE_WORDS.get(first["role"], f" ({first['role']})").format(
        rule=str(first["n_x0_rule"]).replace("-", "−")
    )
    label = f"{first['accountant']}: {first['kind']}{words}"
    counts = rows["status"].value_counts()
    notes = [
        f"{words} at {int(counts[status])}"
        for status, words in (
            ("unreachable", "no ε"),
            ("error", "refused"),
            ("epsilon = 0", "ε = 0"),
            ("at or above eps0", "ε ≥ ε0"),
        )
        if counts.get(status, 0)
    ]
    return label + (f" ({'; '.join(notes)} of {len(rows)} points)" if notes else "")


def _draw_epsilon_curve(ax, rows, *, x: str, colour, linestyle, accountant: str, stagger: dict) -> None:
    """One accountant's ε curve, its markers (filled; hollow at ε ≥ ε0; role shape) and its edge markers."""
    xs = rows[x].to_numpy(dtype=float)
    eps = rows["epsilon"].to_numpy(dtype=float)
    status = rows["status"].to_numpy()
    drawable = np.isin(status, ["ok", "at or above eps0"]) & np.isfinite(eps) & (eps > 0)
    role = rows["role"].iloc[0]
    marker = ROLE_MARKERS.get(role, "o")
    # the lower bound often lies on the weak adversary's curve: drawn thinner and on top
    is_lower = role == "lower bound on the worst case"
    ax.plot(
        xs,
        np.where(drawable, eps, np.nan),
        color=colour,
        linestyle=linestyle,
        linewidth=1.3 if is_lower else 2.0,
        zorder=3 if is_lower else 2,
        gid=f"epsilon:{accountant}",
    )
    filled = drawable & (status == "ok")
    hollow = drawable & (status == "at or above eps0")
    ax.plot(xs[filled], eps[filled], linestyle="none", marker=marker, markersize=4, color=colour)
    ax.plot(
        xs[hollow],
        eps[hollow],
        linestyle="none",
        marker=marker,
        markersize=6,
        markerfacecolor="white",
        markeredgecolor=colour,
        markeredgewidth=1.3,
        gid=f"epsilon-hollow:{accountant}",
    )
    for edge_status, edge_marker in _EDGE_MARKERS.items():
        selected = status == edge_status
        if not selected.any():
            continue
        side = "bottom" if edge_status == "epsilon = 0" else "top"
        offset = stagger[side] * _EDGE_STEP
        y = _EDGE_BOTTOM + offset if side == "bottom" else _EDGE_TOP - offset
        stagger[side] += 1
        ax.plot(
            xs[selected],
            np.full(int(selected.sum()), y),
            linestyle="none",
            marker=edge_marker,
            markersize=7,
            color=colour,
            markeredgecolor=style.INK,
            markeredgewidth=0.5,
            transform=ax.get_xaxis_transform(),
            clip_on=False,
            gid=f"epsilon-edge:{edge_status}:{accountant}",
        )


def plot_epsilon_against(frame, *, x: str, ax=None, title: str = "", legend: bool = True):
    """ε at a fixed δ against ``x`` (``"n_users"`` or ``"epsilon_local"``), log-log, one curve per accountant.

    ``frame``: the rows of one panel of :func:`shuffledp.experiments.guarantees.epsilon_comparison_frame`.
    Every curve has its own colour and line style (:func:`shuffledp.plotting.style.curve_styles`: no two
    alike); the marker shape says the role (● guarantee, ■ lower bound, ◆ one dataset). Points
    reached only at ε ≥ ε0 get a hollow marker; points without a drawable ε are marked on the axes'
    edge in the accountant's colour (▲ top: no ε reaches δ; ✕ top: refused; ▼ bottom: ε = 0),
    staggered so that none hides another. A grey dashed line shows ε = ε0.
    """
    ax = _axes(ax)
    styles = comparison_styles(frame)
    stagger = {"top": 0, "bottom": 0}
    for accountant, (colour, linestyle) in styles.items():
        rows = frame[frame["accountant"] == accountant].sort_values(x)
        _draw_epsilon_curve(
            ax, rows, x=x, colour=colour, linestyle=linestyle, accountant=accountant, stagger=stagger
        )
    ax.set_xscale("log")
    ax.set_yscale("log")
    finite = frame["epsilon"].to_numpy(dtype=float)
    finite = finite[np.isfinite(finite) & (finite > 0)]
    if len(finite):
        ax.set_ylim(finite.min() / 2.0, finite.max() * 2.0)
    if x == "epsilon_local":
        values = np.sort(frame["epsilon_local"].unique().astype(float))
        ax.plot(values, values, color="0.55", linestyle=(0, (4, 3)), linewidth=1.0, gid="epsilon-local-line")
    else:
        for value in frame["epsilon_local"].unique():
            ax.axhline(
                float(value), color="0.55", linestyle=(0, (4, 3)), linewidth=1.0, gid="epsilon-local-line"
            )
    ax.set_xlabel(EPSILON_X_LABELS.get(x, x))
    ax.set_ylabel(f"ε at δ = {frame['delta'].iloc[0]:g} (log scale)")
    ax.grid(True, which="major", alpha=0.3)
    ax.set_title(title)
    if legend:
        ax.legend(
            handles=epsilon_legend_handles(frame),
            fontsize="x-small",
            loc="upper left",
            bbox_to_anchor=(1.01, 1.0),
        )
    return ax


def comparison_styles(frame) -> dict[str, tuple[str, LineStyleType]]:
    """(colour, line style) of every accountant of an ε comparison frame, distinct curve by curve."""
    return style.curve_styles(dict.fromkeys(frame["accountant"]))


def epsilon_legend_handles(frame) -> list:
    """Legend of the ε comparison: one entry per accountant (colour, line style = role, name, label,
    role, n_x0 rule for the per-dataset ones, counts of special points), then the meaning of each
    marker that occurs in ``frame`` and of the ε = ε0 line."""
    handles = []
    for accountant, (colour, linestyle) in comparison_styles(frame).items():
        rows = frame[frame["accountant"] == accountant]
        handles.append(
            style.line_handle(
                _comparison_label(rows),
                colour=colour,
                linestyle=linestyle,
                marker=ROLE_MARKERS.get(rows["role"].iloc[0], "o"),
            )
        )
    statuses = set(frame["status"])
    for edge_status, marker in _EDGE_MARKERS.items():
        if edge_status in statuses:
            handles.append(
                style.line_handle(_EDGE_WORDS[edge_status], colour="0.4", linestyle="none", marker=marker)
            )
    if "at or above eps0" in statuses:
        handle = style.line_handle(_HOLLOW_WORDS, colour="0.4", linestyle="none", marker="o")
        handle.set_markerfacecolor("white")
        handles.append(handle)
    handles.append(style.line_handle(_EPSILON_LOCAL_WORDS, colour="0.55", linestyle="--"))
    return handles


def figure_epsilon_comparison(frame):
    """Two panels, ε at a fixed δ against n and against ε0 (log-log), with one legend below them.

    ``frame``: :func:`shuffledp.experiments.guarantees.epsilon_comparison_frame`. Titles state δ, k and
    the fixed parameter of each panel; the legend states what each curve is (guarantee for every
    dataset, lower bound on the worst case, or one dataset's δ with its n_x0 rule).
    """
    panels = [("against n", "n_users"), ("against eps0", "epsilon_local")]
    present = [(panel, x) for panel, x in panels if (frame["panel"] == panel).any()]
    first = frame.iloc[0]
    with style.plot_style():
        figure, axes = plt.subplots(
            1, len(present), figsize=(7.0 * len(present), 7.6), squeeze=False, layout="constrained"
        )
        for ax, letter, (panel, x) in zip(axes[0], string.ascii_lowercase, present):
            rows = frame[frame["panel"] == panel]
            if x == "n_users":
                fixed = f"k = {int(first['k'])}, ε0 = {rows['epsilon_local'].iloc[0]:g}"
                subject = "n"
            else:
                fixed = f"k = {int(first['k'])}, n = {int(rows['n_users'].iloc[0]):,}"
                subject = "ε0"
            plot_epsilon_against(
                rows, x=x, ax=ax, title=f"({letter}) against {subject}: {fixed}", legend=False
            )
        figure.legend(
            handles=epsilon_legend_handles(frame), loc="outside lower center", ncol=2, fontsize="small"
        )
        figure.suptitle(
            f"ε at δ = {first['delta']:g} for shuffled k-RR: guarantees for every dataset (● markers), a lower bound on "
            "the worst case (■)\nand the paper's per-dataset δ (◆; not guarantees); every curve its own colour and line style",
            fontweight="bold",
        )
    return figure
