"""One plotting style for every figure of the project: colours, maps, ticks, flags and wording.

Drawing helpers only; nothing here computes a statistic. Choices, each stated once:

* **Colours.** Every mechanism and every accountant (also the planned ``weak-adversary`` and
  ``worst-case-lower``) has its own colour in :data:`PALETTE`; the 26 colours are taken from the
  colour-blind-safe sets of Okabe & Ito and of Paul Tol and are pairwise at least 15 CIELAB ΔE apart
  (the mechanisms and the accountants drawn together by default at least 30; tested). A name
  missing from the palette gets a reserve colour from :data:`RESERVE_COLOURS`, distinct within a figure
  (:func:`colours_for`).
* **Boxes.** A box is filled with a light tint of its colour, outlined, whiskered and capped in the
  colour itself, and its median is a dark shade of the same colour: the median contrasts with its
  own fill (WCAG contrast ratio >= 3, tested) and still shows which mechanism it belongs to when a
  box is thinner than its median line. With few draws every draw is also drawn as a dot.
* **Maps.** Sequential quantities use ``viridis`` and signed ones the diverging ``RdBu_r`` (both
  colour-blind safe). Skewed non-negative quantities (cell probabilities, counts) use a logarithmic
  colour scale (:func:`log_norm`); the colour bar says so. Panels that compare one quantity share
  one norm and one colour bar. Values outside the colour limits are never clipped silently: the
  colour bar is extended and a legend entry counts them (:func:`out_of_range_entries`).
* **Flags.** Cells or boxes carrying a flag (e.g. δ̂ floored) are hatched (:data:`FLAG_HATCH`) and
  the legend says what the hatching means (:func:`hatch_cells`, :func:`flag_patch`).
* **Outcomes.** Wherever a figure says who wins, one colour means "shuffle better"
  (:data:`SHUFFLE_BETTER`, blue) and one "curator better" (:data:`CURATOR_BETTER`, red: the central
  Gaussian or geometric); maps of a TV ratio shuffle / curator use :func:`outcome_cmap` (blue below 1).
  Every figure of the project (also Koskela, Balle, Girgis) takes them from here (:data:`OUTCOME_COLOURS`).
* **Curves.** Curves drawn together get distinct colours *and* line styles (:func:`curve_styles`), so
  two curves with close colours still differ; bounds are named with their kind (:func:`accountant_text`,
  e.g. "worst-case-upper (upper bound)").
* **Grid indices** get integer ticks (:func:`integer_ticks`).
* **Wording.** Titles state the parameters that produced a figure; :func:`delta_text`,
  :func:`accountant_text` and :func:`calibration_text` give δ̂, σ and the accountant one wording.
"""

from __future__ import annotations

import math
import textwrap
from collections import ChainMap
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

import matplotlib
import numpy as np
from cycler import cycler
from matplotlib.colors import LogNorm, to_rgb
from matplotlib.lines import Line2D
from matplotlib.patches import Patch, Rectangle
from matplotlib.ticker import MaxNLocator

from shuffledp import accounting

if TYPE_CHECKING:
    from matplotlib.typing import LineStyleType

__all__ = [
    "MECHANISM_COLOURS",
    "ACCOUNTANT_COLOURS",
    "PALETTE",
    "RESERVE_COLOURS",
    "MECHANISM_LABELS",
    "SEQUENTIAL_CMAP",
    "DIVERGING_CMAP",
    "EMPTY_COLOUR",
    "FLAG_HATCH",
    "NEGATIVE_HATCH",
    "RC_PARAMS",
    "SHUFFLE_BETTER",
    "CURATOR_BETTER",
    "UNDECIDED",
    "OUTCOME_COLOURS",
    "OUTCOME_WORDS",
    "NEITHER_USEFUL",
    "add_data_label",
    "run_label",
    "LINESTYLES",
    "outcome_cmap",
    "curve_styles",
    "DISTINCT_COLOURS",
    "MIN_CURVE_DELTA_E",
    "plot_style",
    "colour_of",
    "colours_for",
    "tint",
    "shade",
    "box_colours",
    "integer_ticks",
    "log_norm",
    "sequential_cmap",
    "hatch_cells",
    "flag_patch",
    "out_of_range_entries",
    "colorbar_extend",
    "cells_word",
    "line_handle",
    "move_legends_to_figure",
    "format_delta",
    "format_sigma",
    "accountant_kind",
    "accountant_text",
    "delta_text",
    "calibration_text",
    "MIN_FONT_POINTS",
    "RANDOMIZER_COLOURS",
    "randomizer_of",
    "title_and_label",
]

#: every mechanism of the utility experiments, one colour per meaning in every figure (the four of the
#: paper's figures: Okabe-Ito blue, reddish purple, orange, bluish green; the equal-guarantee and
#: phase-diagram ones chosen at least 15 CIELAB Delta E from every other palette colour, tested). Figures
#: take mechanism colours from here only: orange is the raw shuffled histogram everywhere.
MECHANISM_COLOURS: dict[str, str] = {
    "gaussian": "#0072B2",
    "gaussian+proj": "#CC79A7",
    "shuffle": "#E69F00",
    "shuffle+INV": "#009E73",
    "shuffle+IBU": "#8073AC",
    "shuffle+INV-unprojected": "#66A61E",
    "geometric": "#A50026",
    "geometric+proj": "#B3B3B3",
}

#: every accountant's colour, read from its class in the registry (live: a registered accountant appears)
ACCOUNTANT_COLOURS: Mapping[str, str] = accounting.colours()

PALETTE: Mapping[str, str] = ChainMap(MECHANISM_COLOURS, ACCOUNTANT_COLOURS)  # type: ignore[arg-type]

#: colours for names missing from PALETTE (used in order of appearance within one figure)
RESERVE_COLOURS = ("#4477AA", "#AA3377", "#117733", "#CC6677", "#56B4E9", "#AAAA00")

MECHANISM_LABELS = {
    "gaussian": "Gaussian (½·L1, unprojected)",
    "gaussian+proj": "Gaussian + projection",
    "shuffle": "shuffle",
    "shuffle+INV": "shuffle+INV",
}

SEQUENTIAL_CMAP = "viridis"
DIVERGING_CMAP = "RdBu_r"
#: cells with nothing to colour (δ = 0, empty cell, probability 0)
EMPTY_COLOUR = "0.85"
#: flagged cells and boxes (e.g. δ̂ = 0 replaced by the floor)
FLAG_HATCH = "///"
#: negative estimates (the Gaussian's noisy histogram) on a log colour scale
NEGATIVE_HATCH = "xxx"
#: colour of hatch lines and of annotations
INK = "0.15"

#: who wins, one meaning in every figure: blue = shuffle better, red = curator (central mechanism) better
SHUFFLE_BETTER = "#2166AC"
CURATOR_BETTER = "#B2182B"
UNDECIDED = "0.6"
OUTCOME_COLOURS = {"shuffle": SHUFFLE_BETTER, "curator": CURATOR_BETTER, "undecided": UNDECIDED}
OUTCOME_WORDS = {"shuffle": "blue: shuffle better", "curator": "red: curator (central) better"}
#: neither estimator is useful: both expected errors at least that of guessing the uniform distribution
NEITHER_USEFUL = "0.72"
#: line styles cycled by :func:`curve_styles` (solid, dashed, dotted, dash-dot, long dash, dash-dot-dot)
LINESTYLES: tuple[LineStyleType, ...] = ("-", "--", ":", "-.", (0, (6, 2)), (0, (3, 1, 1, 1, 1, 1)))

RC_PARAMS = {
    "axes.prop_cycle": cycler(
        color=list(MECHANISM_COLOURS.values())
        + [
            ACCOUNTANT_COLOURS[name]
            for name in ("biswas-printed", "biswas-exact", "strong-adversary", "biswas-exact-both")
        ]
    ),
    "image.cmap": SEQUENTIAL_CMAP,
    "axes.titlesize": "medium",
    "figure.titlesize": "large",
    "legend.fontsize": "small",
    "legend.framealpha": 0.9,
    "hatch.linewidth": 0.8,
    "savefig.dpi": 150,
    "savefig.bbox": "tight",
}


def plot_style():
    """Context manager with the project's rc defaults (``with plot_style(): figure = ...``)."""
    return matplotlib.rc_context(RC_PARAMS)


# ------------------------------------------------------------------------------------- colours


def colour_of(name: str) -> str:
    """The palette colour of a mechanism or accountant; ``ValueError`` naming the palette if absent."""
    if name not in PALETTE:
        raise ValueError(
            f"`name` must be a mechanism or accountant of shuffledp.plotting.style.PALETTE; got {name!r}. "
            "Add it to MECHANISM_COLOURS, give its accountant class a `colour`, or use colours_for()."
        )
    return PALETTE[name]


def colours_for(names: Iterable[str]) -> dict[str, str]:
    """Colours of ``names`` for one figure: the palette's, and distinct reserve colours for the rest."""
    colours, reserve = {}, iter(RESERVE_COLOURS)
    for name in names:
        if name in colours:
            continue
        if name in PALETTE:
            colours[name] = PALETTE[name]
        else:
            colours[name] = next(reserve, "#777777")
    return colours


#: well-separated colours (Okabe & Ito, Paul Tol's muted set) that :func:`curve_styles` takes, in this
#: order, for a curve whose palette colour is too close to one already in its figure
DISTINCT_COLOURS = (
    "#0072B2",
    "#E69F00",
    "#009E73",
    "#CC79A7",
    "#D55E00",
    "#56B4E9",
    "#332288",
    "#999933",
    "#882255",
    "#44AA99",
    "#000000",
    "#DDCC77",
    "#AA4499",
    "#117733",
    "#88CCEE",
    "#CC6677",
)
#: two curves of one figure are at least this far apart (CIELAB ΔE, CIE 1976) after :func:`curve_styles`
MIN_CURVE_DELTA_E = 35.0


def _lab(colour) -> np.ndarray:
    """CIELAB (D65) of an sRGB colour (CIE 1976)."""
    rgb = np.asarray(to_rgb(colour), dtype=float)
    linear = np.where(rgb <= 0.04045, rgb / 12.92, ((rgb + 0.055) / 1.055) ** 2.4)
    xyz = np.array([[0.4124, 0.3576, 0.1805], [0.2126, 0.7152, 0.0722], [0.0193, 0.1192, 0.9505]]) @ linear
    xyz = xyz / np.array([0.95047, 1.0, 1.08883])
    f = np.where(xyz > (6 / 29) ** 3, np.cbrt(xyz), xyz / (3 * (6 / 29) ** 2) + 4 / 29)
    return np.array([116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])])


def _far_from(colour, chosen) -> bool:
    return all(float(np.linalg.norm(_lab(colour) - _lab(other))) >= MIN_CURVE_DELTA_E for other in chosen)


def curve_styles(names: Iterable[str]) -> dict[str, tuple[str, LineStyleType]]:
    """(colour, line style) of each of ``names`` drawn together in one Axes.

    Colour: the palette colour (or a reserve one, as :func:`colours_for`) unless it is within
    :data:`MIN_CURVE_DELTA_E` of a colour already given in this figure; then the first of
    :data:`DISTINCT_COLOURS` far from all of them. Line style: cycled over :data:`LINESTYLES`, so no two
    neighbours in ``names`` share one.
    """
    names = list(dict.fromkeys(names))
    wanted = colours_for(names)
    chosen: list[str] = []
    result = {}
    for i, name in enumerate(names):
        colour = wanted[name]
        if not _far_from(colour, chosen):
            colour = next((c for c in DISTINCT_COLOURS if _far_from(c, chosen)), colour)
        chosen.append(colour)
        result[name] = (colour, LINESTYLES[i % len(LINESTYLES)])
    return result


def outcome_cmap():
    """Diverging map of a ratio TV shuffle / TV curator: low (shuffle better) in :data:`SHUFFLE_BETTER`
    blue, high (curator better) in :data:`CURATOR_BETTER` red, white at 1; masked cells in the empty colour."""
    from matplotlib.colors import LinearSegmentedColormap

    return LinearSegmentedColormap.from_list(
        "outcome", [SHUFFLE_BETTER, "#F7F7F7", CURATOR_BETTER]
    ).with_extremes(bad=EMPTY_COLOUR)


def _mix(colour, other, amount: float) -> tuple[float, float, float]:
    rgb, target = np.asarray(to_rgb(colour)), np.asarray(other, dtype=float)
    red, green, blue = (float(v) for v in (1.0 - amount) * rgb + amount * target)
    return red, green, blue


def tint(colour, amount: float = 0.6) -> tuple[float, float, float]:
    """``colour`` mixed with white (``amount`` of white): a box fill."""
    return _mix(colour, (1.0, 1.0, 1.0), amount)


def shade(colour, amount: float = 0.55) -> tuple[float, float, float]:
    """``colour`` mixed with black (``amount`` of black): a median line on a tinted fill."""
    return _mix(colour, (0.0, 0.0, 0.0), amount)


def box_colours(colour) -> dict:
    """Fill, edge and median colours of one box: a tint, the colour itself and a dark shade."""
    return {"fill": tint(colour), "edge": to_rgb(colour), "median": shade(colour)}


# ------------------------------------------------------------------------------- axes and maps


def integer_ticks(ax, *, axis: str = "both"):
    """Ticks at whole numbers only (grid-cell indices): no 2.5 on an axis of cells."""
    if axis in ("x", "both"):
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    if axis in ("y", "both"):
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    return ax


def log_norm(vmin: float, vmax: float) -> LogNorm:
    """A logarithmic colour scale from ``vmin`` > 0 to ``vmax`` (at least one decade wide)."""
    if not (vmin > 0 and math.isfinite(vmin)):
        raise ValueError(f"`vmin` must be a positive finite number for a log colour scale; got {vmin!r}.")
    return LogNorm(vmin=vmin, vmax=max(float(vmax), 10.0 * vmin))


def sequential_cmap(*, under: str | None = None, over: str | None = None):
    """The sequential colour map with the empty colour for masked cells."""
    cmap = matplotlib.colormaps[SEQUENTIAL_CMAP].with_extremes(bad=EMPTY_COLOUR)
    if under is not None or over is not None:
        cmap = cmap.with_extremes(under=under, over=over)
    return cmap


def hatch_cells(
    ax, mask, *, hatch: str = FLAG_HATCH, facecolor="none", edgecolor=INK, x_values=None, y_values=None
):
    """Hatch the cells where ``mask`` (rows = y, columns = x) is True on an image drawn with cell
    centres at integer positions (``imshow`` default extent), or at ``x_values`` / ``y_values``.

    Returns the patches drawn (one per flagged cell).
    """
    mask = np.asarray(mask, dtype=bool)
    patches = []
    for row, column in zip(*np.nonzero(mask)):
        x = column if x_values is None else x_values[column]
        y = row if y_values is None else y_values[row]
        patch = Rectangle(
            (x - 0.5, y - 0.5),
            1.0,
            1.0,
            facecolor=facecolor,
            edgecolor=edgecolor,
            hatch=hatch,
            linewidth=0.0,
            zorder=3,
        )
        ax.add_patch(patch)
        patches.append(patch)
    return patches


def flag_patch(label: str, *, hatch: str = FLAG_HATCH, facecolor="none") -> Patch:
    """Legend handle explaining a hatching."""
    return Patch(facecolor=facecolor, edgecolor=INK, hatch=hatch, label=label)


def out_of_range_entries(values, *, vmin: float, vmax: float, below: str, above: str, colours=None) -> list:
    """Legend handles counting finite values below ``vmin`` / above ``vmax`` (drawn in the colour bar's
    end colours): no value is clipped without the legend saying how many and where.

    ``below`` / ``above`` are format strings with ``{count}`` and ``{cells}`` ("cell" or "cells");
    ``colours`` = (low end, high end).
    """
    values = np.asarray(values, dtype=float)
    finite = values[np.isfinite(values)]
    handles = []
    low_colour, high_colour = colours if colours is not None else ("0.3", "0.7")
    n_below, n_above = int((finite < vmin).sum()), int((finite > vmax).sum())
    if n_below:
        handles.append(
            Patch(
                facecolor=low_colour,
                edgecolor=INK,
                label=below.format(count=n_below, cells=cells_word(n_below)),
            )
        )
    if n_above:
        handles.append(
            Patch(
                facecolor=high_colour,
                edgecolor=INK,
                label=above.format(count=n_above, cells=cells_word(n_above)),
            )
        )
    return handles


def cells_word(count: int) -> str:
    return "cell" if count == 1 else "cells"


def colorbar_extend(values, *, vmin: float, vmax: float) -> str:
    """``extend`` argument of a colour bar: which ends have finite values beyond the limits."""
    values = np.asarray(values, dtype=float)
    finite = values[np.isfinite(values)]
    low, high = bool((finite < vmin).any()), bool((finite > vmax).any())
    return {(False, False): "neither", (True, False): "min", (False, True): "max", (True, True): "both"}[
        (low, high)
    ]


def line_handle(label: str, *, colour="0.3", linestyle="-", marker=None) -> Line2D:
    """Legend proxy for a line style or colour."""
    return Line2D([], [], color=colour, linestyle=linestyle, marker=marker, markersize=4, label=label)


def move_legends_to_figure(
    figure, axes, *, loc: str = "outside lower center", ncol: int | None = None, **options
):
    """Replace the legends of ``axes`` by one figure legend (entries with the same label shown once),
    placed outside the axes so it covers no data (``figure`` must use the constrained layout)."""
    handles, labels = [], []
    for ax in axes:
        legend = ax.get_legend()
        if legend is None:
            continue
        for handle, text in zip(legend.legend_handles, legend.get_texts()):
            if text.get_text() not in labels:
                handles.append(handle)
                labels.append(text.get_text())
        legend.remove()
    if not handles:
        return None
    return figure.legend(handles, labels, loc=loc, ncol=ncol or min(len(handles), 3), **options)


# ------------------------------------------------------------------------------------- wording


def format_delta(delta: float) -> str:
    """δ as shown in titles: "0" for exactly 0, else 3 significant digits ("1.35e-103")."""
    delta = float(delta)
    if delta == 0.0:
        return "0"
    if math.isnan(delta):
        return "n/a"
    return f"{delta:.3g}"


def format_sigma(sigma: float) -> str:
    return f"{float(sigma):.3g}"


def accountant_kind(name: str) -> str:
    """What the accountant's δ is ("as printed", "exact", "upper bound", ...); "" if not registered."""
    from shuffledp.accounting import accountant_class

    try:
        return accountant_class(name).kind.value
    except ValueError:
        return ""


def accountant_text(name: str) -> str:
    """``name (kind)``, e.g. "strong-adversary (upper bound)"."""
    kind = accountant_kind(name)
    return f"{name} ({kind})" if kind else name


def delta_text(
    delta: float,
    *,
    accountant: str,
    epsilon: float,
    epsilon_local: float,
    floored: bool = False,
    delta_used: float | None = None,
) -> str:
    """One δ̂ as a title states it: value, accountant and kind, the floor if applied, and at ε ≥ ε0 that
    δ = 0 also holds (post-processing of ε0-LDP k-RR), so a positive δ̂ there is a loose bound."""
    notes = [accountant_text(accountant)]
    if floored:
        notes.append(
            f"below the floor: Gaussian at δ = {format_delta(delta_used if delta_used is not None else 0.0)}"
        )
    elif float(delta) > 0 and float(epsilon) >= float(epsilon_local):
        notes.append("at ε ≥ ε0 δ = 0 also holds")
    return f"δ̂ = {format_delta(delta)} [{'; '.join(notes)}]"


def calibration_text(frame, *, n_column: str = "n_users") -> str:
    """δ̂ and σ of the Gaussian rows of ``frame`` (columns accountant, delta, delta_used, delta_floored,
    sigma, epsilon, epsilon_local, n_users), over n: the range, where δ̂ was floored, and the accountant.

    Example: "δ̂ [strong-adversary (upper bound)] from 3.32e-07 (n = 1,000) to 9.53e-293 (n = 50,000);
    δ̂ = 0 at n = 100,000: Gaussian at the floor δ = 1e-300; σ from 1.76 to 13.1".
    """
    gaussian = frame[frame["mechanism"] == "gaussian"] if "mechanism" in frame.columns else frame
    if gaussian.empty:
        return ""
    accountants = ", ".join(accountant_text(a) for a in dict.fromkeys(gaussian["accountant"]))
    is_floored = gaussian["delta_floored"].astype(bool)
    floored, kept = gaussian[is_floored], gaussian[~is_floored]
    pieces = []
    if len(kept):
        high, low = kept.loc[kept["delta"].idxmax()], kept.loc[kept["delta"].idxmin()]
        if high["delta"] == low["delta"]:
            pieces.append(f"= {format_delta(high['delta'])}")
        else:
            pieces.append(
                f"from {format_delta(high['delta'])} (n = {int(high[n_column]):,}) "
                f"to {format_delta(low['delta'])} (n = {int(low[n_column]):,})"
            )
    if len(floored):
        floor = format_delta(floored["delta_used"].iloc[0])
        below = "= 0" if (floored["delta"] == 0).all() else f"< {floor} (floor)"
        if len(kept):
            n_values = sorted(int(n) for n in floored[n_column].unique())
            pieces.append(
                f"δ̂ {below} at n = {', '.join(f'{n:,}' for n in n_values)}: Gaussian at the floor δ = {floor}"
            )
        else:
            pieces.append(f"{below} at every n: Gaussian at the floor δ = {floor}")
    text = f"δ̂ [{accountants}] " + "; ".join(pieces)
    if ((kept["epsilon"] >= kept["epsilon_local"]) & (kept["delta"] > 0)).any():
        text += " (at ε ≥ ε0 δ = 0 also holds)"
    sigma_low, sigma_high = float(gaussian["sigma"].min()), float(gaussian["sigma"].max())
    sigma = (
        f"σ = {format_sigma(sigma_low)}"
        if math.isclose(sigma_low, sigma_high, rel_tol=1e-9)
        else f"σ from {format_sigma(sigma_low)} to {format_sigma(sigma_high)}"
    )
    return f"{text}; {sigma}"


def add_data_label(figure, text: str):
    """Name the data (and grid) a figure was drawn from: a line under its title (the title, if it has none).

    Every figure of the utility stage carries it, so a figure read on its own still says whether it shows
    the SNAP file, the bundled subsets or local files (``shuffledp.data.source.data_label``), or synthetic
    data, and which grid profile ran (:func:`run_label`).

    Args:
        figure: a Matplotlib figure (constrained or tight layout leave room for the longer title).
        text: one line, e.g. ``"Data: bundled Gowalla subsets (not the full SNAP file): Paris, ..."``.

    Returns:
        The figure's title text object.

    Raises:
        ValueError: ``text`` is empty.
    """
    if not text or not str(text).strip():
        raise ValueError(f"`text` must be a non-empty line naming the data; got {text!r}.")
    # wrapped to the figure's width (about 10 characters per inch at the title's size): never cut off
    text = textwrap.fill(str(text), max(60, int(10 * figure.get_figwidth())))
    title = getattr(figure, "_suptitle", None)
    if title is not None and title.get_text():
        title.set_text(f"{title.get_text()}\n{text}")
        return title
    return figure.suptitle(text, fontsize="medium")


def run_label(grid_profile: str | None, data: str | None = None) -> str:
    """One line saying which data and which grid profile produced a figure.

    Args:
        grid_profile: the configuration's ``grid_profile`` ("default", "quick", ...; None: "default").
        data: the data line (``shuffledp.data.source.data_label`` / ``region_label``, or e.g. "Data:
            synthetic, uniform") or None.

    Returns:
        E.g. ``"Data: bundled Gowalla subsets (not the full SNAP file): Paris ...; grid: quick profile (coarse
        stand-in grid, not the configured one)"``.
    """
    profile = str(grid_profile or "default")
    grid = (
        "grid: default profile (config/config.yaml)"
        if profile == "default"
        else f"grid: {profile} profile (coarse stand-in grid, not config/config.yaml's)"
    )
    return f"{data}; {grid}" if data else grid


# --------------------------------------------------------------- the seed papers' figures: meanings and labels

#: the smallest font of a legend or a note on the seed papers' figures and the bracket figure, in points
MIN_FONT_POINTS = 8.0

#: one colour per randomizer in Balle et al.'s Figure 3: a bound keeps its randomizer's colour in every panel
#: (the line style says which bound: solid Hoeffding, dashed Bennett, dotted Erlingsson et al.)
RANDOMIZER_COLOURS: dict[str, str] = {
    "generic ε0-LDP": "#4477AA",  # blue
    "RR-2": "#EE6677",  # red
    "RR-100": "#228833",  # green
    "RR-k, k = ⌊n^(1/3)⌋": "#AA3377",  # purple
    "Laplace": "#CCBB44",  # yellow
}


def randomizer_of(curve: str, accountant: str) -> str:
    """The randomizer a Balle et al. bound is about, the key of :data:`RANDOMIZER_COLOURS`.

    Args:
        curve: the curve's legend label (their ``get_name``, e.g. "Hoeffding, RR-100").
        accountant: the registry name of our accountant for it (e.g. ``balle-hoeffding-krr``).

    Returns:
        "Laplace", "RR-<k>" (k from the label), "RR-k, k = ⌊n^(1/3)⌋" for a k-RR bound whose label
        names no k, else "generic ε0-LDP".
    """
    if "laplace" in accountant:
        return "Laplace"
    if accountant.endswith("-krr"):
        k = next((part for part in curve.replace(",", " ").split() if part.startswith("RR-")), None)
        return k if k in RANDOMIZER_COLOURS else (k or "RR-k, k = ⌊n^(1/3)⌋")
    return "generic ε0-LDP"


def title_and_label(figure, title: str, label: str):
    """Give a figure its title and, on a second line, what it was computed on (its grid, its data file).

    Args:
        figure: a Matplotlib figure.
        title: what the figure shows (paper, figure number, setting).
        label: the grid and data, e.g. "grid: n = 1,000 to 10⁶, 100 points; data: balle_fig3.csv".

    Returns:
        The title's text artist (gid "title-and-label"); the constrained layout keeps it clear of the axes.
    """
    figure.suptitle(title, fontsize="medium", gid="title-and-label")
    return add_data_label(figure, label)
