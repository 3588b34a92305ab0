"""Accounting drawing functions: return the Axes, log10 delta axes, delta = 0 not coloured."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from shuffledp.plotting.accounting import plot_delta_curves, plot_delta_surface  # noqa: E402


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
    assert legend is not None and [t.get_text() for t in legend.get_texts()] == ["δ = 0"]
    coloured = ax.collections[-1].get_array()
    assert np.ma.count_masked(coloured) == 1  # only the delta = 0 cell is left out of the colour scale
    assert len(figure.axes) == 2  # the colour bar (log10 delta)
    assert figure.axes[1].get_ylabel() == "log10 δ"


def test_plot_delta_surface_without_zero_has_no_legend():
    figure, ax = plt.subplots()
    plot_delta_surface([0.5], [1.0], np.array([[-3.0]]), ax=ax, colorbar=False)
    assert ax.get_legend() is None
    assert len(figure.axes) == 1


def test_plot_delta_curves_leaves_out_zero_and_says_so():
    figure, ax = plt.subplots()
    series = {"exact": (np.array([10.0, 100.0, 1000.0]), np.array([-2.0, -30.0, -np.inf]))}
    returned = plot_delta_curves(series, ax=ax, xlabel="n", log_x=True)
    assert returned is ax
    (line,) = ax.get_lines()
    assert np.isnan(line.get_ydata()[-1]) and line.get_ydata()[0] == -2.0
    assert "1 point(s) with δ = 0 not drawn" in line.get_label()
    assert ax.get_xscale() == "log" and ax.get_ylabel() == "log10 δ"


def test_plot_delta_curves_defaults_to_current_axes():
    figure, ax = plt.subplots()
    assert plot_delta_curves({}, xlabel="k") is ax


# ------------------------------------------------- whole figures from the real frames (issue 13)

from figure_checks import figure_text, legend_texts  # noqa: E402

from shuffledp.experiments.accounting import fig1_frame, fig1_grid, sweep_frame  # noqa: E402
from shuffledp.plotting import style  # noqa: E402
from shuffledp.plotting.accounting import SWEEP_LINEAR_DECADES, figure_delta_surfaces, figure_sweep  # noqa: E402

FIG1 = {"epsilon": {"start": 0.2, "stop": 2.0, "num": 4}, "epsilon_local": {"start": 0.5, "stop": 2.5, "num": 3},
        "n_users": 40, "k": 5, "n_x0": {"rule": "fixed", "value": 30}, "accountants": ["biswas-printed", "biswas-exact"]}


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
    assert "δ = 0" in " ".join(legend_texts(panels[0]))  # eps >= eps0 cells exist in this grid


def _sweep(x: str, **lists):
    sweep = {"n_users": [200], "k": [10], "epsilon_local": [2.0], "epsilon": [0.5, 1.0], "n_x0_fraction": [0.8],
             "accountants": ["biswas-printed", "biswas-exact", "strong-adversary"], "x": x, **lists}
    return sweep_frame("test", sweep)


def test_sweep_draws_every_curve_on_a_symlog_axis_without_clipping():
    frame = _sweep("n_users", n_users=[100, 1000, 10000])
    figure = figure_sweep(frame, x="n_users", name="test")
    (ax,) = figure.axes
    assert ax.get_yscale() == "symlog" and ax.get_xscale() == "log"
    figure.canvas.draw()
    lines = [line for line in ax.get_lines() if (line.get_gid() or "").startswith("sweep:")]
    assert len(lines) == frame.groupby(["accountant", "epsilon"]).ngroups  # one curve each, none merged
    low, high = ax.get_ylim()
    finite = frame["log10_delta"][np.isfinite(frame["log10_delta"])]
    assert low <= finite.min() and high <= 1.0  # nothing cut off below, nothing shown above delta = 1
    assert frame["log10_delta"].min() < -10 * SWEEP_LINEAR_DECADES  # the data does span the log part
    colours = {line.get_gid().split(":")[1]: line.get_color() for line in lines}
    assert len(set(colours.values())) == 3 and colours["biswas-exact"] == style.PALETTE["biswas-exact"]


def test_sweep_title_states_fixed_parameters_and_legend_names_accountants():
    frame = _sweep("n_users", n_users=[100, 1000])
    figure = figure_sweep(frame, x="n_users", name="delta_vs_n")
    title = figure.axes[0].get_title()
    assert "δ against n: k = 10, ε0 = 2, n_x0 = round(0.8 n)" in title and "delta_vs_n" in title
    texts = legend_texts(figure)
    for accountant in ("biswas-printed", "biswas-exact", "strong-adversary"):
        assert any(text.startswith(f"{accountant}: ") for text in texts)
    assert "ε = 0.5" in texts and "ε = 1" in texts


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


# ------------------------------------------------- epsilon at a fixed delta (issue 8)
from shuffledp.experiments.guarantees import epsilon_comparison_frame  # noqa: E402
from shuffledp.plotting.accounting import ROLE_LINESTYLES, figure_epsilon_comparison  # noqa: E402

COMPARISON = {
    "delta": 1e-3, "k": 5, "against_n": {"epsilon_local": 1.0, "n_users": [20, 60, 200]},
    "against_epsilon_local": {"n_users": 40, "epsilon_local": [0.5, 1.0, 2.0]},
    "n_x0": {"rule": "fraction", "value": 0.8},
    "accountants": ["strong-adversary", "weak-adversary", "worst-case-lower", "balle-bennett-krr", "biswas-printed",
                    "biswas-exact"],
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
    assert "(a) against n: k = 5, ε0 = 1" == panels[0].get_title()
    assert "(b) against ε0: k = 5, n = 40" == panels[1].get_title()
    assert "δ = 0.001" in figure.get_suptitle()


def test_epsilon_comparison_draws_every_point_or_marks_it(comparison_frame):
    """Every (accountant, point) is either on its curve or an edge marker; none disappears."""
    figure = figure_epsilon_comparison(comparison_frame)
    for ax, (panel, x) in zip(_panels(figure), [("against n", "n_users"), ("against eps0", "epsilon_local")]):
        rows = comparison_frame[comparison_frame["panel"] == panel]
        lines = {line.get_gid(): line for line in ax.get_lines() if line.get_gid()}
        for accountant, group in rows.groupby("accountant"):
            curve = lines[f"epsilon:{accountant}"]
            assert curve.get_color() == style.PALETTE[accountant]
            assert curve.get_linestyle() == ROLE_LINESTYLES[group["role"].iloc[0]]
            y = np.asarray(curve.get_ydata(), dtype=float)
            drawn = int(np.isfinite(y).sum())
            marked = sum(len(line.get_xdata()) for gid, line in lines.items()
                         if gid.startswith("epsilon-edge:") and gid.endswith(":" + accountant))
            assert drawn + marked == len(group), accountant
            hollow = lines.get(f"epsilon-hollow:{accountant}")
            assert (len(hollow.get_xdata()) if hollow is not None else 0) == int((group["status"] == "at or above eps0").sum())
        for status in ("unreachable", "epsilon = 0"):
            expected = int((rows["status"] == status).sum())
            got = sum(len(line.get_xdata()) for gid, line in lines.items() if gid.startswith(f"epsilon-edge:{status}:"))
            assert got == expected, status
    # the tiny setting has both kinds of edge markers, and the legend explains each
    texts = legend_texts(figure)
    assert (comparison_frame["status"] == "unreachable").any() and "▲ at the top edge: no ε reaches δ" in texts
    assert (comparison_frame["status"] == "epsilon = 0").any() and "▼ at the bottom edge: ε = 0 already meets δ" in texts


def test_epsilon_comparison_legend_says_what_each_curve_is(comparison_frame):
    texts = legend_texts(figure_epsilon_comparison(comparison_frame))
    for accountant in COMPARISON["accountants"]:
        (entry,) = [t for t in texts if t.startswith(accountant + ":")]
        role = comparison_frame.loc[comparison_frame["accountant"] == accountant, "role"].iloc[0]
        if role == "one dataset, not a guarantee":
            assert "one dataset (n_x0 = round(0.8 n), at most n − 1), not a guarantee" in entry
        elif role == "guarantee, all datasets":
            assert "valid for every dataset" in entry
        unreachable = int(((comparison_frame["accountant"] == accountant) & (comparison_frame["status"] == "unreachable")).sum())
        assert (f"no ε at {unreachable}" in entry) == (unreachable > 0)
    assert "grey dashed: ε = ε0 (k-RR's own local guarantee)" in texts
