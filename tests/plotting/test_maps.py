"""Figure 3 drawing functions: return the Axes, equal aspect, km labels, south at the bottom."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pytest

from shuffledp.plotting.maps import X_LABEL, Y_LABEL, add_data_label, plot_cell_counts, plot_checkins

EXTENT = (-6.0, 6.0, -4.0, 4.0)


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


def test_plot_checkins_returns_given_axes_with_km_frame():
    _, ax = plt.subplots()
    returned = plot_checkins(
        [0.0, 1.0], [0.5, -0.5], extent=EXTENT, ax=ax, title="(a) SF", edges=([0.0], [0.0])
    )
    assert returned is ax
    assert ax.get_xlabel() == X_LABEL == "east-west (km)" and ax.get_ylabel() == Y_LABEL == "north-south (km)"
    assert ax.get_aspect() == 1.0  # "equal": one km is as long on both axes
    assert ax.get_xlim() == (-6.0, 6.0) and ax.get_ylim() == (-4.0, 4.0)
    assert ax.get_title() == "(a) SF"
    assert np.array_equal(ax.collections[0].get_offsets(), [[0.0, 0.5], [1.0, -0.5]])


def test_plot_checkins_defaults_to_current_axes():
    _, ax = plt.subplots()
    assert plot_checkins([], [], extent=EXTENT) is ax


def test_heat_map_puts_row_zero_at_the_south_and_masks_empty_cells():
    counts = np.array([[5, 0, 1], [0, 2, 100]])  # row 0 = southernmost
    figure, ax = plt.subplots()
    returned = plot_cell_counts(counts, extent=EXTENT, ax=ax)
    assert returned is ax
    image = ax.images[0]
    assert image.origin == "lower" and tuple(image.get_extent()) == EXTENT
    data = image.get_array()
    assert data.mask.tolist() == [[False, True, False], [True, False, False]]
    assert image.norm.vmin == 1 and image.norm.vmax == 100
    assert ax.get_aspect() == 1.0 and ax.get_xlabel() == X_LABEL
    assert len(figure.axes) == 2  # the colour bar
    assert "log scale" in figure.axes[1].get_ylabel()  # the reader is told the scale is logarithmic


def test_heat_map_linear_and_all_zero():
    figure, ax = plt.subplots()
    plot_cell_counts(np.zeros((2, 2)), extent=EXTENT, ax=ax, log_scale=True, colorbar=False)
    assert ax.images[0].norm.vmin == 0 and len(figure.axes) == 1


def test_data_label_goes_under_the_title_or_becomes_it():
    line = "Data: bundled Gowalla subsets (not the full SNAP file): Paris, 11,190 check-ins in the crop"
    figure, _ = plt.subplots(layout="constrained")
    figure.suptitle("Figure 5: Paris")
    add_data_label(figure, line)
    assert " ".join(figure.get_suptitle().split()) == f"Figure 5: Paris {line}"
    assert figure.get_suptitle().startswith("Figure 5: Paris\n")
    bare, _ = plt.subplots()
    add_data_label(bare, line)
    assert " ".join(bare.get_suptitle().split()) == line
    # wrapped to the figure's width: the Figure 6 label ran past both edges of the figure
    assert max(len(part) for part in bare.get_suptitle().split("\n")) <= 10 * bare.get_figwidth()
    with pytest.raises(ValueError, match="`text` must be a non-empty line naming the data"):
        add_data_label(bare, " ")
