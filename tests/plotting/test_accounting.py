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
