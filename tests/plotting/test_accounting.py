"""Accounting drawing functions: return the Axes, log10 delta axes, delta = 0 not coloured."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest

from shuffledp.plotting.accounting import plot_delta_surface


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


def test_plot_delta_surface_returns_axes_and_marks_zero():
    figure, ax = plt.subplots()
    grid = np.array([[-5.0, -np.inf], [-2.0, -400.0]])  # -400: far below the double range, still drawn
    returned = plot_delta_surface([0.5, 1.5], [1.0, 2.0], grid, ax=ax, title="as printed", vmin=-400, vmax=0)
    assert returned is ax
    assert ax.get_title() == "as printed"
    assert ax.get_xlabel() == "ε (central)" and ax.get_ylabel() == "ε0 (local k-RR)"
    legend = ax.get_legend()
    assert legend is not None and [t.get_text() for t in legend.get_texts()] == ["δ = 0 exactly"]
    coloured = ax.collections[-1].get_array()
    assert np.ma.count_masked(coloured) == 1  # only the delta = 0 cell is left out of the colour scale
    assert len(figure.axes) == 2  # the colour bar (log10 delta)
    assert figure.axes[1].get_ylabel() == "log10 δ"


def test_plot_delta_surface_without_zero_has_no_legend():
    figure, ax = plt.subplots()
    plot_delta_surface([0.5], [1.0], np.array([[-3.0]]), ax=ax, colorbar=False)
    assert ax.get_legend() is None
    assert len(figure.axes) == 1


# ------------------------------------------------- whole figures from the real frames

from figure_checks import figure_text, legend_texts  # noqa: E402

from shuffledp.experiments.accounting_grids import fig1_frame, fig1_grid, sweep_frame  # noqa: E402
from shuffledp.plotting import style  # noqa: E402
from shuffledp.plotting.accounting import SWEEP_SMALLEST_LOG10, figure_delta_surfaces, figure_sweep  # noqa: E402

FIG1 = {
    "epsilon": {"start": 0.2, "stop": 2.0, "num": 4},
    "epsilon_local": {"start": 0.5, "stop": 2.5, "num": 3},
    "n_users": 40,
    "k": 5,
    "n_x0": {"rule": "fixed", "value": 30},
    "accountants": ["biswas-printed", "biswas-exact"],
}


def test_fig1_panels_share_colour_limits_and_titles_carry_the_accountant():
    frame = fig1_frame(FIG1)
    figure = figure_delta_surfaces(frame, accountants=FIG1["accountants"], grid_of=fig1_grid)
    panels = [ax for ax in figure.axes if ax.collections and ax.get_title()]
    assert len(panels) == 2
    limits = {ax.collections[-1].get_clim() for ax in panels}
    finite = frame["log10_delta"][np.isfinite(frame["log10_delta"])]
    assert limits == {(finite.min(), 0.0)}  # one scale, from the smallest delta of either panel to delta = 1
    for ax, name in zip(panels, FIG1["accountants"]):
        assert style.accountant_text(name) in ax.get_title()
    assert "n = 40, k = 5, n_x0 = 30" in figure.get_suptitle()
    # eps >= eps0 cells exist in this grid: one figure legend says so once, none inside a panel
    assert legend_texts(figure) == ["δ = 0 exactly"] and all(ax.get_legend() is None for ax in panels)


def _sweep(x: str, **lists):
    sweep = {
        "n_users": [200],
        "k": [10],
        "epsilon_local": [2.0],
        "epsilon": [0.5, 1.0],
        "n_x0_fraction": [0.8],
        "accountants": ["biswas-printed", "biswas-exact", "strong-adversary"],
        "x": x,
        **lists,
    }
    return sweep_frame("test", sweep)


def test_sweep_draws_delta_on_a_log_axis_and_marks_what_it_cannot_draw():
    """δ itself on a log axis (not log10 δ on a symmetric-log axis, which bends at -10),
    every point either on its curve (δ >= 1e-300) or a marker on the bottom edge (δ < 1e-300 or δ = 0)."""
    frame = _sweep("n_users", n_users=[100, 1000, 10000])
    figure = figure_sweep(frame, x="n_users", name="test")
    (ax,) = figure.axes
    assert ax.get_yscale() == "log" and ax.get_xscale() == "log"
    assert "log10" not in ax.get_ylabel()
    figure.canvas.draw()
    curves = {line.get_gid(): line for line in ax.get_lines() if (line.get_gid() or "").startswith("sweep:")}
    lines = [line for gid, line in curves.items() if gid.count(":") == 2]
    assert len(lines) == frame.groupby(["accountant", "epsilon"]).ngroups  # one curve each, none merged
    log10 = frame["log10_delta"].to_numpy(float)
    drawable = np.isfinite(log10) & (log10 >= SWEEP_SMALLEST_LOG10)
    assert (~drawable).any() and drawable.any()  # the data has both kinds
    drawn = np.concatenate([np.asarray(line.get_ydata(), float) for line in lines])
    assert np.isfinite(drawn).sum() == drawable.sum()
    # the drawn values are δ itself: 10 ** log10 δ, to double precision
    assert np.sort(drawn[np.isfinite(drawn)]) == pytest.approx(np.sort(10.0 ** log10[drawable]), rel=1e-12)
    bottom = sum(len(line.get_xdata()) for gid, line in curves.items() if gid.endswith((":below", ":zero")))
    assert bottom == int((~drawable).sum())
    low, high = ax.get_ylim()
    assert low <= np.nanmin(drawn) and high <= 10.0**0.5  # nothing cut off below, nothing far above δ = 1
    colours = {line.get_gid().split(":")[1]: line.get_color() for line in lines}
    assert len(set(colours.values())) == 3 and colours["biswas-exact"] == style.PALETTE["biswas-exact"]
    assert "▼ bottom edge: δ < 1e-300 (exact log10 δ in the CSV)" in legend_texts(figure)


def test_sweep_draws_delta_down_to_1e_minus_300_and_marks_zero():
    frame = pd.DataFrame(
        {
            "sweep": "t",
            "accountant": ["strong-adversary"] * 3,
            "kind": "upper bound",
            "label": "upper bound",
            "n_users": [10, 100, 1000],
            "k": 10,
            "epsilon_local": 2.0,
            "n_x0_fraction": 0.8,
            "n_x0": [8, 80, 800],
            "epsilon": 0.5,
            "delta": [1e-5, 1e-300, 0.0],
            "log10_delta": [-5.0, -300.0, -np.inf],
        }
    )
    figure = figure_sweep(frame, x="n_users")
    (ax,) = figure.axes
    figure.canvas.draw()
    (line,) = [drawn for drawn in ax.get_lines() if drawn.get_gid() == "sweep:strong-adversary:()"]
    assert np.asarray(line.get_ydata(), float)[:2].tolist() == pytest.approx([1e-5, 1e-300], rel=1e-12)
    assert ax.get_ylim()[0] <= 1e-300
    (zero,) = [drawn for drawn in ax.get_lines() if (drawn.get_gid() or "").endswith(":zero")]
    assert zero.get_xdata().tolist() == [1000]
    texts = legend_texts(figure)
    assert "✕ bottom edge: δ = 0 exactly" in texts
    assert any("1 point(s) δ = 0" in t for t in texts)


def test_sweep_title_states_fixed_parameters_and_legend_names_accountants():
    frame = _sweep("n_users", n_users=[100, 1000])
    figure = figure_sweep(frame, x="n_users", name="delta_vs_n")
    title = figure.axes[0].get_title()
    assert "δ against n: k = 10, ε0 = 2, n_x0 = round(0.8 n)" in title and "delta_vs_n" in title
    texts = legend_texts(figure)
    for accountant in ("biswas-printed", "biswas-exact", "strong-adversary"):
        assert any(text.startswith(f"{accountant} ({style.accountant_kind(accountant)})") for text in texts)
    assert "ε = 0.5" in texts and "ε = 1" in texts


def test_sweep_legend_names_each_bound_with_its_kind_and_no_doubled_label():
    """The legend names each bound once: never `worst-case-upper: worst-case-upper` (the label is the name)."""
    frame = _sweep("n_users", n_users=[100, 1000], accountants=["worst-case-upper", "biswas-exact"])
    texts = legend_texts(figure_sweep(frame, x="n_users"))
    (upper,) = [t for t in texts if t.startswith("worst-case-upper")]
    assert upper.startswith("worst-case-upper (upper bound)")
    assert "worst-case-upper: worst-case-upper" not in upper
    assert len(texts) == len(set(texts))


def test_sweep_marks_the_n_x0_cap_and_says_where_printed_meets_exact():
    frame = _sweep("n_x0_fraction", n_users=[100], n_x0_fraction=[0.5, 0.9, 1.0])
    capped = frame[frame["n_x0_fraction"] == 1.0]
    assert (capped["n_x0"] == 99).all()  # the rule's cap at n - 1
    figure = figure_sweep(frame, x="n_x0_fraction")
    text = figure_text(figure)
    assert "n_x0 capped at n − 1 = 99" in text
    printed = capped[capped["accountant"] == "biswas-printed"].set_index("epsilon")["log10_delta"]
    exact = capped[capped["accountant"] == "biswas-exact"].set_index("epsilon")["log10_delta"]
    # with N = n - n_x0 = 1 the printed v_s squares (s - R)/N in {0, 1}: it equals the exact loss
    # (shuffledp.accounting.accountants.biswas docstring), so the data must agree and the note must say so
    assert np.allclose(printed, exact.loc[printed.index], atol=1e-6)
    assert "eq. (6) as printed\nequals the exact single-bin δ" in text


def test_sweep_without_cap_has_no_cap_note():
    frame = _sweep("n_x0_fraction", n_users=[100], n_x0_fraction=[0.2, 0.5])
    assert "capped" not in figure_text(figure_sweep(frame, x="n_x0_fraction"))


# ------------------------------------------------- epsilon at a fixed delta
from shuffledp.experiments.guarantees import epsilon_comparison_frame  # noqa: E402
from shuffledp.plotting.accounting import ROLE_MARKERS, comparison_styles, figure_epsilon_comparison  # noqa: E402

COMPARISON = {
    "delta": 1e-3,
    "k": 5,
    "against_n": {"epsilon_local": 1.0, "n_users": [20, 60, 200]},
    "against_epsilon_local": {"n_users": 40, "epsilon_local": [0.5, 1.0, 2.0]},
    "n_x0": {"rule": "fraction", "value": 0.8},
    "accountants": [
        "strong-adversary",
        "weak-adversary",
        "worst-case-lower",
        "balle-bennett-krr",
        "biswas-printed",
        "biswas-exact",
    ],
}


@pytest.fixture(scope="module")
def comparison_frame():
    return epsilon_comparison_frame(COMPARISON)


def _panels(figure):
    return [ax for ax in figure.axes if ax.get_title().startswith(("(a)", "(b)"))]


def test_epsilon_comparison_is_log_log_with_one_legend(comparison_frame):
    figure = figure_epsilon_comparison(comparison_frame)
    panels = _panels(figure)
    assert len(panels) == 2
    assert all(ax.get_xscale() == "log" and ax.get_yscale() == "log" for ax in panels)
    assert all(ax.get_legend() is None for ax in panels) and len(figure.legends) == 1
    assert panels[0].get_title() == "(a) against n: k = 5, ε0 = 1"
    assert panels[1].get_title() == "(b) against ε0: k = 5, n = 40"
    assert "δ = 0.001" in figure.get_suptitle()


def test_epsilon_comparison_draws_every_point_or_marks_it(comparison_frame):
    """Every (accountant, point) is either on its curve or an edge marker; none disappears."""
    figure = figure_epsilon_comparison(comparison_frame)
    for ax, panel in zip(_panels(figure), ["against n", "against eps0"]):
        rows = comparison_frame[comparison_frame["panel"] == panel]
        lines = {line.get_gid(): line for line in ax.get_lines() if line.get_gid()}
        for accountant, group in rows.groupby("accountant"):
            curve = lines[f"epsilon:{accountant}"]
            assert curve.get_color() == comparison_styles(comparison_frame)[accountant][0]
            y = np.asarray(curve.get_ydata(), dtype=float)
            drawn = int(np.isfinite(y).sum())
            marked = sum(
                len(line.get_xdata())
                for gid, line in lines.items()
                if gid.startswith("epsilon-edge:") and gid.endswith(":" + accountant)
            )
            assert drawn + marked == len(group), accountant
            hollow = lines.get(f"epsilon-hollow:{accountant}")
            assert (len(hollow.get_xdata()) if hollow is not None else 0) == int(
                (group["status"] == "at or above eps0").sum()
            )
        for status in ("unreachable", "epsilon = 0"):
            expected = int((rows["status"] == status).sum())
            got = sum(
                len(line.get_xdata())
                for gid, line in lines.items()
                if gid.startswith(f"epsilon-edge:{status}:")
            )
            assert got == expected, status
    # the tiny setting has both kinds of edge markers, and the legend explains each
    texts = legend_texts(figure)
    assert (
        comparison_frame["status"] == "unreachable"
    ).any() and "▲ at the top edge: no ε reaches δ" in texts
    assert (
        comparison_frame["status"] == "epsilon = 0"
    ).any() and "▼ at the bottom edge: ε = 0 already meets δ" in texts


def test_epsilon_comparison_legend_says_what_each_curve_is(comparison_frame):
    texts = legend_texts(figure_epsilon_comparison(comparison_frame))
    for accountant in COMPARISON["accountants"]:
        (entry,) = [t for t in texts if t.startswith(accountant + ":")]
        role = comparison_frame.loc[comparison_frame["accountant"] == accountant, "role"].iloc[0]
        if role == "one dataset, not a guarantee":
            assert "one dataset (n_x0 = round(0.8 n), at most n − 1), not a guarantee" in entry
        elif role == "guarantee, all datasets":
            assert "valid for every dataset" in entry
        unreachable = int(
            (
                (comparison_frame["accountant"] == accountant) & (comparison_frame["status"] == "unreachable")
            ).sum()
        )
        assert (f"no ε at {unreachable}" in entry) == (unreachable > 0)
    assert "grey dashed: ε = ε0 (k-RR's own local guarantee)" in texts


def test_epsilon_comparison_curves_differ_in_colour_and_line_style():
    """Eleven curves and no two look alike (no near-identical greens): every pair of curves is at least
    MIN_CURVE_DELTA_E apart in CIELAB and no two share a line style pattern within the first six."""
    import itertools

    from figure_checks import delta_e

    accountants = [
        "strong-adversary",
        "weak-adversary",
        "worst-case-lower",
        "feldman-numerical",
        "balle-blanket",
        "balle-hoeffding-generic",
        "balle-hoeffding-krr",
        "balle-bennett-generic",
        "balle-bennett-krr",
        "biswas-printed",
        "biswas-exact",
    ]
    styles = style.curve_styles(accountants)
    colours = [colour for colour, _ in styles.values()]
    assert min(delta_e(a, b) for a, b in itertools.combinations(colours, 2)) >= style.MIN_CURVE_DELTA_E
    assert len({(c, str(ls)) for c, ls in styles.values()}) == len(accountants)
    # the old palette colours of these accountants include pairs closer than that (the near-identical greens)
    old = [style.PALETTE[name] for name in accountants]
    assert min(delta_e(a, b) for a, b in itertools.combinations(old, 2)) < style.MIN_CURVE_DELTA_E


def test_epsilon_comparison_markers_say_the_role(comparison_frame):
    texts = legend_texts(figure_epsilon_comparison(comparison_frame))
    assert len(texts) == len(set(texts))
    figure = figure_epsilon_comparison(comparison_frame)
    handles = figure.legends[0].legend_handles
    for handle, text in zip(handles, figure.legends[0].get_texts()):
        name = text.get_text().split(":")[0]
        if name in COMPARISON["accountants"]:
            role = comparison_frame.loc[comparison_frame["accountant"] == name, "role"].iloc[0]
            assert handle.get_marker() == ROLE_MARKERS[role]


def _overlaps(legend, ax) -> bool:
    renderer = legend.figure.canvas.get_renderer()
    return legend.get_window_extent(renderer).overlaps(ax.get_window_extent(renderer))


def test_legends_cover_no_data():
    """Legends outside the data (a "δ = 0" legend inside the axes would hide Figure 1's upper-left cells)."""
    figure, ax = plt.subplots(layout="constrained")
    plot_delta_surface([0.5, 1.5], [1.0, 2.0], np.array([[-5.0, -np.inf], [-2.0, -4.0]]), ax=ax)
    figure.canvas.draw()
    assert not _overlaps(ax.get_legend(), ax)
    sweep = figure_sweep(_sweep("n_users", n_users=[100, 1000]), x="n_users")
    sweep.canvas.draw()
    assert sweep.legends and not any(_overlaps(legend, sweep.axes[0]) for legend in sweep.legends)
