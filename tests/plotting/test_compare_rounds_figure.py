"""The composed phase-diagram figure: a title naming the total guarantee and the accountants, and no
line drawn between two computed values of T (a trend nobody computed)."""

from __future__ import annotations

import numpy as np
import pandas as pd
from figure_checks import figure_text

from shuffledp.plotting.compare_rounds import MIN_JOINED, figure_rounds


def _grid(compositions):
    return pd.DataFrame(
        [
            {
                "k": 15,
                "compositions": T,
                "subsample": 1.0,
                "n_users": 200,
                "epsilon": 1.0,
                "delta": 1e-6,
                "skipped": "",
                "log_ratio": 0.1 * np.log(T),
            }
            for T in compositions
        ]
    )


def test_two_values_of_t_are_points_not_a_line():
    """The quick grid computes T = 1 and 10 only: the old figure joined them by a line."""
    figure = figure_rounds(_grid([1, 10]))
    lines = [line for line in figure.axes[0].get_lines() if line.get_gid() in ("joined", "points")]
    assert len(lines) == 1 and lines[0].get_linestyle() == "None" and lines[0].get_gid() == "points"
    assert MIN_JOINED == 3


def test_three_values_of_t_are_joined():
    figure = figure_rounds(_grid([1, 10, 100]))
    (line,) = [line for line in figure.axes[0].get_lines() if line.get_gid() in ("joined", "points")]
    assert line.get_gid() == "joined" and line.get_linestyle() != "None"


def test_title_names_the_guarantee_the_accountants_and_the_grid():
    figure = figure_rounds(_grid([1, 10]), data="uniform", data_label="grid: quick profile")
    text = " ".join(figure_text(figure).split())  # the title is wrapped to the panels' width
    assert "ε = 1" in text and "δ = " in text and "weak-adversary" in text and "dp_accounting" in text
    assert "uniform data" in text and "grid: quick profile" in text
    legend = figure.axes[0].get_legend()
    assert min(t.get_fontsize() for t in legend.get_texts()) >= 8
