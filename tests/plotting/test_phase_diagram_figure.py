"""The phase-diagram figure: one panel per k, one flat cell per grid point, the edges where the winner
changes, the Monte-Carlo markers in the shared outcome colours, and labels saying what each layer is."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from figure_checks import figure_text
from matplotlib.collections import QuadMesh
from matplotlib.colors import to_hex, to_rgba

from shuffledp.plotting import style
from shuffledp.plotting.phase_diagram import figure_phase_diagram, log_edges

N_VALUES, EPSILONS = (100, 1000, 10000), (0.1, 1.0, 8.0)


def _grid():
    rows = []
    for k in (2, 15):
        for n_users in N_VALUES:
            for epsilon in EPSILONS:
                rows.append(
                    {
                        "delta_rule": "fixed 1e-06",
                        "k": k,
                        "n_users": n_users,
                        "epsilon": epsilon,
                        "accountant": "worst-case-upper",
                        "log_ratio": np.log(epsilon) - 0.1 * k,
                    }
                )
    return pd.DataFrame(rows)


@pytest.fixture(scope="module")
def figure():
    verdicts = pd.DataFrame(
        {
            "dataset": ["synthetic", "synthetic"],
            "k": [15, 15],
            "delta_rule": ["fixed 1e-06"] * 2,
            "n_users": [1000, 10000],
            "epsilon": [1.0, 2.0],
            "verdict": ["shuffle", "gaussian"],
        }
    )
    return figure_phase_diagram(_grid(), verdicts, delta_rule="fixed 1e-06")


def _panels(figure):
    return [ax for ax in figure.axes if ax.get_title().startswith("k = ")]


def test_one_panel_per_k_titled_with_the_accountant_and_its_kind(figure):
    panels = _panels(figure)
    assert [ax.get_title().split("\n")[0] for ax in panels] == [
        "k = 2 (ε0: worst-case-upper (upper bound))",
        "k = 15 (ε0: worst-case-upper (upper bound))",
    ]
    assert "markers: synthetic" in panels[1].get_title()
    assert all(ax.get_xscale() == "log" and ax.get_yscale() == "log" for ax in panels)


def test_cells_are_the_grid_points_with_edges_between_them(figure):
    """One flat cell per computed point (a 3 x 3 grid shaded smoothly, gouraud, would invent values between them)."""
    for ax in _panels(figure):
        meshes = [c for c in ax.collections if isinstance(c, QuadMesh)]
        assert len(meshes) == 1
        mesh = meshes[0]
        assert mesh.get_array().shape == (len(EPSILONS), len(N_VALUES))
        corners = np.asarray(mesh.get_coordinates())  # flat cells: (rows + 1, columns + 1, 2) corners
        assert corners.shape == (len(EPSILONS) + 1, len(N_VALUES) + 1, 2)
        assert corners[0, :, 0].tolist() == pytest.approx(log_edges(N_VALUES).tolist())
        assert corners[:, 0, 1].tolist() == pytest.approx(log_edges(EPSILONS).tolist())
        # every grid point lies strictly inside its own cell
        edges = log_edges(N_VALUES)
        assert all(edges[i] < n < edges[i + 1] for i, n in enumerate(N_VALUES))


def test_log_edges_are_geometric_midpoints():
    assert log_edges([10.0, 1000.0]) == pytest.approx([1.0, 100.0, 10000.0])


def test_winner_edges_follow_the_sign_changes(figure):
    k2, _ = _panels(figure)
    # k = 2: log ratio = log eps - 0.2 changes sign between eps = 1 and 8 (one horizontal edge per n column)
    lines = [line for line in k2.get_lines() if line.get_gid() == "winner-edge"]
    assert len(lines) == len(N_VALUES)
    assert [float(line.get_ydata()[0]) for line in lines] == pytest.approx(
        [float(np.sqrt(8.0))] * len(N_VALUES)
    )


def test_markers_and_map_use_the_shared_outcome_colours(figure):
    panel = _panels(figure)[1]
    faces = {
        c.get_gid(): to_hex(c.get_facecolors()[0])
        for c in panel.collections
        if c.get_gid() and len(c.get_offsets())
    }
    assert faces["verdict:shuffle"] == to_hex(style.SHUFFLE_BETTER).lower()
    assert faces["verdict:gaussian"] == to_hex(style.CURATOR_BETTER).lower()
    cmap = style.outcome_cmap()
    assert to_rgba(cmap(0.0)) == pytest.approx(to_rgba(style.SHUFFLE_BETTER))
    assert to_rgba(cmap(1.0)) == pytest.approx(to_rgba(style.CURATOR_BETTER))


def test_figure_says_what_background_and_markers_are(figure):
    text = figure_text(figure)
    assert "both unprojected" in text and "½·L1" in text
    assert "exact expectation on uniform data" in text and "Monte Carlo" in text and "real dataset" in text
    assert "blue: shuffle better" in text and "red: curator" in text
