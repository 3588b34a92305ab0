"""Girgis et al.'s Section 4 comparison (shuffledp.experiments.girgis, plotting.girgis, report.girgis)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from shuffledp.accounting import get_accountant
from shuffledp.experiments import girgis as G
from shuffledp.report.girgis import read_girgis_verdicts
from shuffledp.tables import NOT_REPRODUCED, NOT_REPRODUCIBLE, REPRODUCED

SECTION = {"n_users": 10000, "epsilon_local": [0.5, 2.0], "orders": {"start": 2, "stop": 20},
           "accountants": {"Thm 3.1 (upper)": "girgis-rdp", "Thm 3.3 (upper)": "girgis-rdp-simple",
                           "Thm 3.4 (lower)": "girgis-rdp-lower"},
           "unavailable_curves": ["eq. (9)"]}


@pytest.fixture(scope="module")
def frame():
    return G.figure_frame(SECTION)


def test_frame_rows_and_values_from_the_accountants(frame):
    assert list(frame.columns) == G.CURVE_COLUMNS and len(frame) == 3 * 2 * 19
    rows = frame[(frame["accountant"] == "girgis-rdp") & (frame["epsilon_local"] == 2.0)].sort_values("order")
    _, values = get_accountant("girgis-rdp", epsilon_local=2.0, n_users=10000, k=2).rdp()
    assert np.allclose(rows["rdp"].to_numpy(), values[:19], rtol=1e-12)
    simple = frame[(frame["accountant"] == "girgis-rdp-simple") & (frame["epsilon_local"] == 0.5)].sort_values("order")
    n_bar = np.floor(9999 / (2 * np.exp(0.5))) + 1  # Thm 3.3 (8), evaluated by hand at integer orders
    lam = simple["order"].to_numpy()
    hand = np.logaddexp(lam**2 * np.expm1(0.5) ** 2 / n_bar, 0.5 * lam - 9999 / (8 * np.exp(0.5))) / (lam - 1)
    assert np.allclose(simple["rdp"].to_numpy(), hand, rtol=1e-12)


def test_verdicts_curves_unreproducible_and_claims_checked(frame):
    table = G.verdicts(frame, SECTION)
    assert list(table.columns) == G.VERDICT_COLUMNS
    curves = table[table["claim"] == ""]
    assert set(curves["verdict"]) == {NOT_REPRODUCIBLE} and len(curves) == 4  # three curves and eq. (9)
    claims = table[table["claim"] != ""]
    assert len(claims) == 3 and set(claims["verdict"]) == {REPRODUCED}
    text = read_girgis_verdicts(table)
    assert "Remark 4" in text and "not reproducible as specified" in text


def test_a_broken_claim_is_not_reproduced(frame):
    swapped = frame.copy()
    lower = swapped["accountant"] == "girgis-rdp-lower"
    swapped.loc[lower, "rdp"] *= 1e4  # a lower bound above the upper bounds
    table = G.verdicts(swapped, SECTION)
    broken = table[table["claim"].str.startswith("Thm 3.4")]
    assert set(broken["verdict"]) == {NOT_REPRODUCED} and all(broken["known_cause"] != "")


def test_rdp_at_refuses_orders_off_the_grid():
    with pytest.raises(ValueError, match=r"`orders` must be integers in \[2, 256\] .*got 2\.5"):
        get_accountant("girgis-rdp", epsilon_local=1.0, n_users=100, k=2).rdp_at([2.5])


def test_figure_draws_one_panel_per_eps0(frame):
    from shuffledp.plotting.girgis import figure_girgis

    figure = figure_girgis(frame, n_users=10000)
    assert len(figure.axes) == 2
    import matplotlib.pyplot as plt

    plt.close(figure)


def test_reader_refuses_a_frame_without_its_columns():
    with pytest.raises(ValueError, match="must have columns"):
        read_girgis_verdicts(pd.DataFrame({"curve": []}))
