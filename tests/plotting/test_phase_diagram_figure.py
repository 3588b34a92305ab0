"""The phase-diagram figure: one panel per k, the equal-error line where the ratio crosses 1, markers."""

from __future__ import annotations

import numpy as np
import pandas as pd

from shuffledp.plotting.phase_diagram import figure_phase_diagram


def _grid():
    rows = []
    for k in (2, 15):
        for n_users in (100, 1000, 10000):
            for epsilon in (0.1, 1.0, 8.0):
                rows.append({"delta_rule": "fixed 1e-06", "k": k, "n_users": n_users, "epsilon": epsilon,
                             "accountant": "worst-case-upper", "log_ratio": np.log(epsilon) - 0.1 * k})
    return pd.DataFrame(rows)


def test_one_panel_per_k_with_line_and_markers():
    verdicts = pd.DataFrame({"k": [15, 15], "delta_rule": ["fixed 1e-06"] * 2, "n_users": [1000, 10000],
                             "epsilon": [1.0, 2.0], "verdict": ["shuffle", "gaussian"]})
    figure = figure_phase_diagram(_grid(), verdicts, delta_rule="fixed 1e-06")
    panels = [ax for ax in figure.axes if ax.get_title().startswith("k = ")]
    assert [ax.get_title() for ax in panels] == ["k = 2 (ε0: worst-case-upper)", "k = 15 (ε0: worst-case-upper)"]
    assert all(ax.get_xscale() == "log" and ax.get_yscale() == "log" for ax in panels)
    assert panels[0].collections and len(panels[1].collections) >= 3  # map, contour, marker sets
    offsets = np.concatenate([c.get_offsets() for c in panels[1].collections if c.get_offsets().size])
    assert {(1000.0, 1.0), (10000.0, 2.0)} <= {tuple(row) for row in offsets.tolist()}
