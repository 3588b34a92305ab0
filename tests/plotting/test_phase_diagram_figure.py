"""The phase-diagram figure: one panel per k, one flat cell per grid point, the edges where the winner
changes, the Monte-Carlo markers in the shared outcome colours, and labels saying what each layer is."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from figure_checks import figure_text
from matplotlib.collections import QuadMesh
from matplotlib.colors import to_hex, to_rgba

from shuffledp.experiments.phase_diagram import boundary
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
            "epsilon": [1.0, 8.0],
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
        meshes = [c for c in ax.collections if isinstance(c, QuadMesh) and c.get_gid() != "neither-useful"]
        assert len(meshes) == 1
        mesh = meshes[0]
        assert mesh.get_array().shape == (len(EPSILONS), len(N_VALUES))
        corners = np.asarray(mesh.get_coordinates())  # flat cells: (rows + 1, columns + 1, 2) corners
        assert corners.shape == (len(EPSILONS) + 1, len(N_VALUES) + 1, 2)
        assert corners[0, :, 0].tolist() == pytest.approx(log_edges(N_VALUES).tolist())
        assert corners[:, 0, 1].tolist() == pytest.approx(log_edges(EPSILONS).tolist())
        # every grid point lies inside its own cell
        edges = log_edges(N_VALUES)
        assert all(edges[i] <= n <= edges[i + 1] for i, n in enumerate(N_VALUES))


def test_drawn_cells_cover_exactly_the_computed_range(figure):
    """The painted area and the axes end at the outermost computed n and epsilon (the old cells reached
    half a step beyond: n from 3 to 3e9 and epsilon from 0.02 to 19 for a grid of n = 100..1e8, epsilon = 0.05..8)."""
    for ax in _panels(figure):
        mesh = next(c for c in ax.collections if isinstance(c, QuadMesh))
        corners = np.asarray(mesh.get_coordinates())
        assert (corners[..., 0].min(), corners[..., 0].max()) == pytest.approx((min(N_VALUES), max(N_VALUES)))
        assert (corners[..., 1].min(), corners[..., 1].max()) == pytest.approx((min(EPSILONS), max(EPSILONS)))
        assert ax.get_xlim() == pytest.approx((min(N_VALUES), max(N_VALUES)))
        assert ax.get_ylim() == pytest.approx((min(EPSILONS), max(EPSILONS)))


def test_log_edges_are_geometric_midpoints_ending_at_the_outer_points():
    assert log_edges([10.0, 1000.0]) == pytest.approx([10.0, 100.0, 1000.0])
    assert log_edges([10.0, 100.0, 10000.0]) == pytest.approx([10.0, np.sqrt(1000.0), 1000.0, 10000.0])


def test_boundary_line_is_the_computed_boundary():
    """The line where the winner changes goes through the interpolated crossings of boundary() (the old
    figure drew it on a cell edge: at k = 2, epsilon ~ 0.63 where the crossings were 0.87-1.02)."""
    grid = _grid()
    crossings = boundary(grid)
    drawn = figure_phase_diagram(grid, delta_rule="fixed 1e-06", crossings=crossings)
    for ax, k in zip(_panels(drawn), (2, 15)):
        mine = crossings[crossings["k"] == k].sort_values("n_users")
        points = [line for line in ax.get_lines() if line.get_gid() == "boundary-point"]
        assert [float(p.get_ydata()[0]) for p in points] == pytest.approx(mine["epsilon"].tolist())
        segments = [line for line in ax.get_lines() if line.get_gid() == "boundary"]
        assert len(segments) == len(N_VALUES) - 1
        for segment in segments:
            assert set(np.round(segment.get_ydata(), 12)) <= set(np.round(mine["epsilon"], 12))


def test_markers_sit_on_the_point_computed_at_their_own_n():
    """A Monte-Carlo verdict at an (n, epsilon) the grid did not compute is not drawn (the old figure put
    a marker at n = 1,000 in the cell computed at n = 100, sometimes with the opposite verdict); the legend
    counts it."""
    verdicts = pd.DataFrame(
        {
            "dataset": ["synthetic"] * 3,
            "k": [15] * 3,
            "delta_rule": ["fixed 1e-06"] * 3,
            "n_users": [1000, 3000, 10000],
            "epsilon": [1.0, 1.0, 2.0],
            "verdict": ["shuffle", "gaussian", "gaussian"],
        }
    )
    drawn = figure_phase_diagram(_grid(), verdicts, delta_rule="fixed 1e-06")
    panel = _panels(drawn)[1]
    offsets = {
        c.get_gid(): np.asarray(c.get_offsets()).tolist()
        for c in panel.collections
        if c.get_gid() and "verdict" in c.get_gid()
    }
    assert offsets["verdict:shuffle"] == [[1000.0, 1.0]] and offsets["verdict:gaussian"] == []
    assert "2 Monte-Carlo verdict(s) outside the computed grid: not drawn" in figure_text(drawn)


def test_cells_where_neither_is_useful_are_grey_not_a_win():
    grid = _grid().assign(verdict="shuffle")
    grid.loc[(grid["k"] == 15) & (grid["epsilon"] == 0.1), "verdict"] = "neither"
    drawn = figure_phase_diagram(grid, delta_rule="fixed 1e-06")
    k2, k15 = _panels(drawn)
    assert not [c for c in k2.collections if c.get_gid() == "neither-useful"]
    grey = next(c for c in k15.collections if c.get_gid() == "neither-useful")
    assert int(np.ma.count(grey.get_array())) == len(N_VALUES)  # the epsilon = 0.1 row
    ratio = next(c for c in k15.collections if isinstance(c, QuadMesh) and c.get_gid() != "neither-useful")
    assert int(np.ma.count(ratio.get_array())) == len(N_VALUES) * (len(EPSILONS) - 1)
    assert "neither is useful" in figure_text(drawn)


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
