"""Columns say what they hold: a column named tv* holds total variation distances (between distributions,
at most 1); the half L1 error of an unprojected estimate, which can exceed 1, is named l1_half*. The old
phase_diagram.csv had tv_shuffle values up to 210."""

from __future__ import annotations

import numpy as np
import pandas as pd

from shuffledp.experiments.phase_diagram import grid_job

EQUAL = {"delta_fixed": [1e-6], "delta_power": [], "epsilon": [], "epsilon_local_upper": 30.0}
PHASE = {
    "k": [50],
    "n_min": 100,
    "n_max": 100,
    "n_points": 1,
    "epsilon_min": 0.05,
    "epsilon_max": 0.05,
    "epsilon_points": 1,
    "accountant": "worst-case-upper",
    "binary_accountant": "worst-case-upper",
    "tolerance": 1e-3,
    "data": "uniform",
}


def tv_columns_above_one(frame: pd.DataFrame) -> list[str]:
    """The columns named tv* holding a value above 1 (a TV distance cannot)."""
    return [
        column
        for column in frame.columns
        if str(column).lower().startswith("tv")
        and pd.api.types.is_numeric_dtype(frame[column])
        and bool((frame[column].dropna() > 1.0 + 1e-12).any())
    ]


def test_probe_a_tv_column_above_one_is_found():
    assert tv_columns_above_one(pd.DataFrame({"tv_shuffle": [0.5, 210.0], "l1_half": [3.0, 0.1]})) == [
        "tv_shuffle"
    ]


def test_phase_diagram_errors_above_one_are_in_l1_half_columns():
    """n = 100 users, k = 50, ε = 0.05: both unprojected errors are far above 1."""
    grid = grid_job(PHASE, EQUAL, k=50, neighbouring="replace-one")
    assert (grid[["l1_half_shuffle", "l1_half_gaussian"]].to_numpy() > 1.0).all()
    assert tv_columns_above_one(grid) == []
    assert not [c for c in grid.columns if str(c).startswith("tv")]
    assert set(grid["verdict"]) == {"neither"}  # both worse than guessing the uniform distribution


def test_expected_error_names_its_half_l1_field():
    from shuffledp.accounting.randomizers import ExpectedError

    error = ExpectedError(2.5, 0.1)
    assert error.l1_half == 2.5 and not hasattr(error, "tv")
    assert np.isclose(error.squared_l2, 0.1)
