"""The which-randomizer grid (experiments/randomizer_grid.py) and its figure: one row per (target, randomizer
or curator) with the comparison's own values, the tidy combine, the per-setting verdicts, and the
configuration's cross-key checks with probes."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from calibration_memo import calibrations_once

from shuffledp.config import ConfigError
from shuffledp.experiments.randomizer_grid import (
    KEYS,
    check_randomizer_grid_config,
    combine,
    grid_job,
    verdicts,
)
from shuffledp.experiments.which_randomizer import compare_randomizers
from shuffledp.plotting.randomizers import figure_randomizers
from shuffledp.plotting.style import add_data_label

GRID = {"epsilon": [1.0], "delta_fixed": [1e-6], "delta_power": [1.1]}


@pytest.fixture(scope="module")
def calibrated_once():
    """Each randomizer's calibration computed once per argument set for the module (tests/calibration_memo.py):
    the comparison below then finds the grid's own calibrations only where it asks for them with the same
    arguments (the same n, k, target and tolerance); any other argument is calibrated afresh."""
    with calibrations_once():
        yield


@pytest.fixture(scope="module")
def rows(calibrated_once):
    counts = np.array([40, 30, 20, 10, 0, 0])
    return grid_job(counts, dataset="toy", grid=GRID, neighbouring="replace-one")


def test_rows_are_the_comparison_at_each_target(rows, calibrated_once):
    assert len(rows) == 2 * 8 and not rows.duplicated(KEYS).any()
    fixed = rows[rows["delta_rule"] == "fixed 1e-06"]
    same = compare_randomizers(n_users=100, k=6, epsilon=1.0, delta=1e-6, data="uniform")
    # the same eps0 per randomizer as compare's (the calibration does not depend on the data): the grid
    # calibrates each randomizer at compare's arguments (a different argument would be calibrated afresh)
    for row in same.rows:
        mine = fixed[fixed["randomizer"] == row["randomizer"]].iloc[0]
        assert mine["epsilon_local"] == row["epsilon_local"] or (
            mine["epsilon_local"] != mine["epsilon_local"]
        )


def test_combine_sorts_and_refuses_repeats(rows):
    shuffled = rows.sample(frac=1.0, random_state=1)
    combined = combine([shuffled])
    assert list(combined["randomizer"][:8]) == list(dict.fromkeys(shuffled["randomizer"]))
    with pytest.raises(ValueError, match=r"^`frames` must not repeat a row"):
        combine([rows, rows])


def test_verdicts_one_row_per_setting(rows):
    table = verdicts(rows)
    assert len(table) == 2 and set(table["best_shuffled"]) <= set(rows["randomizer"])


def test_figure_draws_every_curve(rows):
    figure = figure_randomizers(pd.concat([rows, rows.assign(n_users=2000)]))
    assert len(figure.axes[0].lines) == 8
    with pytest.raises(ValueError, match=r"^`delta_rule` must be one of"):
        figure_randomizers(rows, delta_rule="nope")


@pytest.mark.parametrize(
    "grid,message",
    [
        ({"datasets": ["nowhere"]}, r"^`utility.randomizers.datasets` must name .*got 'nowhere'\.$"),
        ({"delta_fixed": [], "delta_power": []}, r"^`utility.randomizers` must name at least one delta"),
    ],
)
def test_config_checks_refuse_a_planted_violation(grid, message):
    base = {
        "datasets": ["synthetic"],
        "n_users": [100],
        "epsilon": [1.0],
        "delta_fixed": [1e-6],
        "delta_power": [],
    }
    config = {"regions": {"paris": {}}, "utility": {"randomizers": {**base, **grid}}}
    with pytest.raises(ConfigError, match=message):
        check_randomizer_grid_config(config)
    check_randomizer_grid_config(
        {"regions": {"paris": {}}, "utility": {"randomizers": {**base, "datasets": ["paris"]}}}
    )


@pytest.mark.parametrize("epsilons", [[1.0], [0.5, 1.0, 2.0, 4.0]])
def test_title_and_legend_stay_inside_the_figure(rows, epsilons):
    """One target epsilon gives a one-panel-wide figure (the quick profile, the tiny run): the suptitle with the
    data label the workflow adds to it, and the legend, must still fit in it, not be cut at the edges of the
    PNG, and the title must stay above the panels."""
    frame = pd.concat([rows.assign(epsilon=e, n_users=n) for e in epsilons for n in (1000, 2000)])
    figure = figure_randomizers(frame)
    add_data_label(
        figure,
        "Data: bundled Gowalla subsets (not the full SNAP file): San Francisco 116,413 "
        "check-ins (paper: 123,108); Paris 11,190 (paper: 10,260)",
    )  # as the workflow adds it
    figure.draw_without_rendering()
    renderer = figure.canvas.get_renderer()
    page = figure.bbox
    for artist in [figure._suptitle, *figure.legends]:
        box = artist.get_window_extent(renderer)
        assert page.x0 - 0.5 <= box.x0 and box.x1 <= page.x1 + 0.5, (artist, box, page)
    title = figure._suptitle.get_window_extent(renderer)
    assert all(title.y0 >= ax.get_tightbbox(renderer).y1 for ax in figure.axes)
