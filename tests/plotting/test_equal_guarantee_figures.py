"""Equal-guarantee figures, built from frames made by the real jobs at tiny sizes: panels and titles
name the parameters, lines carry the intervals of the data, the ratio map outlines exactly the
certain cells and hatches the others, and the colour scale is centred on 1."""

from __future__ import annotations

import math

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
from figure_checks import figure_text, legend_texts
from matplotlib.patches import Rectangle

from shuffledp.experiments import equal_guarantee as E
from shuffledp.plotting.equal_guarantee import (
    COINCIDE_RELATIVE,
    figure_ratio,
    figure_tv,
    plot_ratio_map,
    plot_tv_against_n,
)
from shuffledp.plotting.style import FLAG_HATCH

EQUAL = {
    "datasets": ["synthetic"],
    "n_users": [500, 2000],
    "epsilon": [1.0, 4.0],
    "delta_fixed": [1e-6],
    "delta_power": [1.1],
    "replicates": 20,
    "epsilon_local_upper": 30.0,
}


@pytest.fixture(scope="module")
def frame(utility_config):
    jobs = []
    for n in EQUAL["n_users"]:
        calibration = E.calibration_job(EQUAL, k=15, n_users=n)
        counts = E.dataset_counts("synthetic", n, utility=utility_config, seed=5)
        jobs.append(
            E.utility_job(
                counts, calibration, dataset="synthetic", equal=EQUAL, neighbouring="replace-one", seed=5
            )
        )
    return E.combine(jobs)


def test_tv_panel_draws_each_mechanism_and_delta_rule_with_its_interval(frame):
    subset = frame[frame["epsilon"] == 1.0]
    ax = plot_tv_against_n(subset, mechanisms=("shuffle+INV", "geometric+proj"))
    assert ax.get_xscale() == ax.get_yscale() == "log"
    lines = [container.lines[0] for container in ax.containers]  # one errorbar container per line
    assert len(lines) == 3  # shuffle+INV under two delta rules, the pure-epsilon geometric once
    expected = (
        subset[
            (subset["mechanism"] == "shuffle+INV")
            & (subset["calibration"] == "weak-adversary")
            & (subset["delta_rule"] == "fixed 1e-06")
        ]
        .sort_values("n_users")["l1_half_mean"]
        .to_numpy()
    )
    assert any(np.allclose(line.get_ydata(), expected) for line in lines)


def test_tv_figure_has_one_panel_per_dataset_and_epsilon(frame):
    figure = figure_tv(frame)
    assert len(figure.axes) == 2
    text = figure_text(figure)
    assert "synthetic (k = 15), ε = 1" in text and "synthetic (k = 15), ε = 4" in text and "20 draws" in text
    labels = legend_texts(figure)
    assert "δ: fixed 1e-06" in labels and "δ: 1/n^1.1" in labels


def test_tv_figure_draws_no_coincident_curves_without_a_note(frame):
    """The old figure drew four shuffle curves on top of each other (shuffle+INV and shuffle+IBU, two delta
    rules). A curve within 5% of one drawn is drawn once and the legend's note says which coincide; the
    legend lists only drawn mechanisms, at 8 pt or more."""
    figure = figure_tv(frame)
    for ax in figure.axes:
        curves = [container.lines[0] for container in ax.containers]
        for i, a in enumerate(curves):
            for b in curves[i + 1 :]:
                if list(a.get_xdata()) == list(b.get_xdata()):
                    y_a, y_b = np.asarray(a.get_ydata(), float), np.asarray(b.get_ydata(), float)
                    assert not np.all(np.abs(y_a - y_b) <= COINCIDE_RELATIVE * np.maximum(y_a, y_b))
    labels = legend_texts(figure)
    drawn = {str(c.get_label()).split("|")[0] for ax in figure.axes for c in ax.containers}
    ibu = frame[(frame["mechanism"] == "shuffle+IBU") & (frame["calibration"] == "weak-adversary")]
    inv = frame[(frame["mechanism"] == "shuffle+INV") & (frame["calibration"] == "weak-adversary")]
    merged = ibu.merge(inv, on=["epsilon", "delta_rule", "n_users"])
    if np.allclose(merged["l1_half_mean_x"], merged["l1_half_mean_y"], rtol=COINCIDE_RELATIVE / 2):
        assert "shuffle+IBU" not in drawn
        assert any(
            "Coincident curves drawn once" in label and "shuffle+IBU (MLE)" in label for label in labels
        )
    assert ("shuffle+IBU (MLE)" in labels) == ("shuffle+IBU" in drawn)
    assert min(t.get_fontsize() for legend in figure.legends for t in legend.get_texts()) >= 8


def test_mechanism_colours_have_one_meaning_in_every_figure():
    """Orange meant shuffle+IBU in this figure and the raw shuffle in Figures 2, 6 and 7: every mechanism
    now takes its colour from style.MECHANISM_COLOURS, and no two mechanisms share one."""
    from shuffledp.plotting import style
    from shuffledp.plotting.equal_guarantee import _colours

    names = [
        "shuffle",
        "shuffle+INV",
        "shuffle+IBU",
        "shuffle+INV-unprojected",
        "gaussian",
        "gaussian+proj",
        "geometric",
        "geometric+proj",
    ]
    colours = _colours(names)
    assert colours == {name: style.MECHANISM_COLOURS[name] for name in names}
    assert len(set(colours.values())) == len(names)
    assert colours["shuffle+IBU"] != style.MECHANISM_COLOURS["shuffle"]


def test_ratio_map_outlines_certain_cells_and_hatches_the_others(frame):
    ratio = E.ratio_table(frame)
    ratio.loc[ratio.index[0], "certain"] = False  # make sure both kinds are present
    ratio.loc[ratio.index[1], "certain"] = True
    subset = ratio[ratio["delta_rule"] == ratio["delta_rule"].iloc[0]]
    ax = plot_ratio_map(subset, colorbar=False)
    patches = [p for p in ax.patches if isinstance(p, Rectangle)]
    hatched = [p for p in patches if p.get_hatch() == FLAG_HATCH]
    outlined = [p for p in patches if not p.get_hatch() and p.get_linewidth() >= 2.0]
    assert len(hatched) == int((~subset["certain"]).sum()) and len(outlined) == int(subset["certain"].sum())
    shown = sorted(float(t.get_text()) for t in ax.texts)
    np.testing.assert_allclose(shown, sorted(np.round(subset["ratio"], 2)), atol=0.006)


def test_ratio_figure_shares_one_scale_centred_on_one(frame):
    ratio = E.ratio_table(frame)
    figure = figure_ratio(ratio)
    images = [ax.images[0] for ax in figure.axes if ax.images]
    assert len(images) == 2  # one dataset x two delta rules
    norm = images[0].norm
    assert all(image.norm is norm for image in images)
    assert math.isclose(norm.vmin * norm.vmax, 1.0, rel_tol=1e-9)
    assert norm.vmin <= ratio["ratio"].min() and ratio["ratio"].max() <= norm.vmax * (1 + 1e-9)
    assert "winner certain" in figure_text(figure)


def test_plot_functions_return_their_axes(frame):
    _, ax = plt.subplots()
    assert plot_tv_against_n(frame[frame["epsilon"] == 4.0], ax=ax) is ax
    _, ax = plt.subplots()
    ratio = E.ratio_table(frame)
    assert plot_ratio_map(ratio[ratio["delta_rule"] == "fixed 1e-06"], ax=ax) is ax
    assert isinstance(pd.DataFrame(ratio), pd.DataFrame)


def test_tv_figure_draws_only_distributions_so_every_tv_is_at_most_one(frame):
    """The raw Gaussian (½·L1 of a vector that is not a distribution, mean up to ~8 at small n)
    is not drawn as a TV: every drawn line is a distribution's TV."""
    from shuffledp.plotting.equal_guarantee import TV_MECHANISMS

    assert "gaussian" not in TV_MECHANISMS and "gaussian+proj" in TV_MECHANISMS
    figure = figure_tv(frame)
    for ax in figure.axes:
        for container in ax.containers:
            assert np.nanmax(container.lines[0].get_ydata()) <= 1.0
    assert not any(label.startswith("Gaussian (") for label in legend_texts(figure))
