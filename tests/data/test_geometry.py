"""Regions, cropping, gridding and the local projection (shuffledp.data.geometry)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from shuffledp.data.geometry import (
    CELL_COLUMNS,
    EARTH_RADIUS_KM,
    Region,
    assign_cells,
    cell_table,
    count_cells,
    counts_grid,
    crop_and_grid,
    crop_mask,
    equirectangular_km,
    region_extent_km,
)

REPO = Path(__file__).resolve().parents[2]

BOX = dict(name="box", lat_min=10.0, lat_max=11.0, lon_min=20.0, lon_max=22.0, n_lat=4, n_lon=8)


@pytest.mark.parametrize(
    "change, message",
    [
        (dict(lat_max=9.0), r"`lat_max` must be greater than `lat_min` \(10.0\); got 9.0"),
        (dict(lon_min=22.0), r"`lon_max` must be greater than `lon_min` \(22.0\); got 22.0"),
        (dict(n_lat=0), r"`n_lat` must be an integer in \[1, inf\); got 0"),
        (dict(n_lon=-2), r"`n_lon` must be an integer in \[1, inf\); got -2"),
        (dict(lat_min=-91.0), r"`lat_min` must be in \[-90, 90\]; got -91.0"),
        (dict(lon_max=200.0), r"`lon_max` must be in \[-180, 180\]; got 200.0"),
    ],
)
def test_region_rejects_bad_parameters(change, message):
    with pytest.raises(ValueError, match=message):
        Region(**{**BOX, **change})


def test_region_from_config_file_matches_paper():
    import yaml

    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    sf = Region.from_config("san_francisco", config["regions"]["san_francisco"])
    paris = Region.from_config("paris", config["regions"]["paris"])
    # paper, Section V-D: SF 24 x 17 grid = 408 cells over 12 km x 8 km; Paris 16 x 12 over 8 km x 6 km
    assert (sf.n_lon, sf.n_lat, sf.n_cells) == (24, 17, 408)
    assert (paris.n_lon, paris.n_lat, paris.n_cells) == (16, 12, 192)
    x0, x1, y0, y1 = region_extent_km(sf)
    assert x1 - x0 == pytest.approx(12.0, rel=0.01) and y1 - y0 == pytest.approx(8.0, rel=0.01)


def test_crop_is_inclusive_on_all_four_sides():
    region = Region(**BOX)
    lat = np.array(
        [10.0, 11.0, 10.5, 10.5, np.nextafter(10.0, 0), np.nextafter(11.0, 99), 10.5, 10.5, np.nan]
    )
    lon = np.array([21.0, 21.0, 20.0, 22.0, 21.0, 21.0, np.nextafter(20.0, 0), np.nextafter(22.0, 99), 21.0])
    assert crop_mask(lat, lon, region).tolist() == [True] * 4 + [False] * 5


def test_cells_on_borders():
    region = Region(**BOX)  # lon edges every 0.25 deg, lat edges every 0.25 deg
    lat_edges, lon_edges = region.lat_edges, region.lon_edges
    assert lat_edges[0] == 10.0 and lat_edges[-1] == 11.0 and lon_edges[-1] == 22.0
    lat = np.array([10.0, 11.0, 10.1, 10.1, 10.1, lat_edges[2], np.nextafter(lat_edges[2], 0), 11.0])
    lon = np.array([20.0, 22.0, lon_edges[3], np.nextafter(lon_edges[3], 0), 22.0, 20.1, 20.1, 20.0])
    lat_index, lon_index, cell = assign_cells(lat, lon, region)
    # south-west corner -> (0, 0); north-east corner (max edges) -> last row and column;
    # on an interior column border -> the cell to the east; just west of it -> the cell to the west;
    # on an interior row border -> the cell to the north; just south of it -> the cell to the south.
    assert lat_index.tolist() == [0, 3, 0, 0, 0, 2, 1, 3]
    assert lon_index.tolist() == [0, 7, 3, 2, 7, 0, 0, 0]
    assert cell.tolist() == (lat_index * 8 + lon_index).tolist()
    assert cell[1] == region.n_cells - 1


def _naive_cell(lat, lon, region):
    """Independent reference: loop over cells with half-open [low, high) intervals, closed at the max."""
    lat_edges, lon_edges = region.lat_edges, region.lon_edges
    for i in range(region.n_lat):
        top_ok = lat < lat_edges[i + 1] or (i == region.n_lat - 1 and lat == lat_edges[-1])
        if lat_edges[i] <= lat and top_ok:
            for j in range(region.n_lon):
                right_ok = lon < lon_edges[j + 1] or (j == region.n_lon - 1 and lon == lon_edges[-1])
                if lon_edges[j] <= lon and right_ok:
                    return i * region.n_lon + j
    raise AssertionError("point in no cell")


def test_cells_agree_with_naive_loop_including_every_edge():
    region = Region(
        name="sf", lat_min=37.7228, lat_max=37.7946, lon_min=-122.5153, lon_max=-122.3789, n_lat=17, n_lon=24
    )
    rng = np.random.default_rng(3)
    lat = rng.uniform(region.lat_min, region.lat_max, 500)
    lon = rng.uniform(region.lon_min, region.lon_max, 500)
    # every edge value on each axis, paired with random values on the other axis
    lat = np.concatenate(
        [lat, region.lat_edges, rng.uniform(region.lat_min, region.lat_max, region.n_lon + 1)]
    )
    lon = np.concatenate(
        [lon, rng.uniform(region.lon_min, region.lon_max, region.n_lat + 1), region.lon_edges]
    )
    _, _, cell = assign_cells(lat, lon, region)
    assert cell.tolist() == [_naive_cell(a, b, region) for a, b in zip(lat, lon)]


def test_assign_cells_rejects_points_outside():
    with pytest.raises(ValueError, match=r"must lie inside region 'box' .*got \(12.0, 21.0\) at position 1"):
        assign_cells([10.5, 12.0], [21.0, 21.0], Region(**BOX))


def test_cell_table_layout_and_counts():
    region = Region(**BOX)
    cell = np.array([0, 0, 7, 8, 31])
    counts = count_cells(cell, region)
    table = cell_table(region, counts)
    assert list(table.columns) == list(CELL_COLUMNS) and len(table) == 32
    assert table["count"].sum() == 5 and table.loc[0, "count"] == 2
    # row-major: cell 7 is the south-east corner, cell 8 starts the second row from the south
    assert table.loc[7, ["lat_index", "lon_index"]].tolist() == [0, 7]
    assert table.loc[8, ["lat_index", "lon_index"]].tolist() == [1, 0]
    assert table.loc[31, ["lat_max", "lon_max"]].tolist() == [11.0, 22.0]
    # cells tile the box: each cell's max is the next cell's min
    assert np.array_equal(
        table["lon_max"].to_numpy()[:-1][table["lon_index"].to_numpy()[:-1] < 7],
        table["lon_min"].to_numpy()[1:][table["lon_index"].to_numpy()[:-1] < 7],
    )
    grid = counts_grid(table, region)
    assert grid.shape == (4, 8) and grid[0, 0] == 2 and grid[0, 7] == 1 and grid[3, 7] == 1
    with pytest.raises(ValueError, match=r"`cell` must be in \[0, 31\]; got 0..32"):
        count_cells([0, 32], region)
    with pytest.raises(ValueError, match=r"`counts` must have shape \(32,\); got \(3,\)"):
        cell_table(region, [1, 2, 3])


def test_crop_and_grid_keeps_order_and_counts():
    region = Region(**BOX)
    frame = pd.DataFrame(
        {"user": [1, 2, 3, 4], "latitude": [10.1, 50.0, 11.0, 10.9], "longitude": [20.1, 21.0, 22.0, 19.0]}
    )
    cropped, cells = crop_and_grid(frame, region)
    assert cropped["user"].tolist() == [1, 3]
    assert cropped["cell"].tolist() == [0, 31]
    assert cells["count"].sum() == 2


def test_equirectangular_against_spherical_distances():
    lat0, lon0 = 37.7587, -122.4471
    x, y = equirectangular_km([lat0 + 0.05, lat0], [lon0, lon0 + 0.05], lat0=lat0, lon0=lon0)
    # along the meridian the projection is exact: R * dlat
    assert y[0] == pytest.approx(EARTH_RADIUS_KM * math.radians(0.05), rel=1e-12) and x[0] == 0.0
    # along the parallel: compare with the great-circle (haversine) distance, equal to within 1e-6
    phi, dlon = math.radians(lat0), math.radians(0.05)
    haversine = 2 * EARTH_RADIUS_KM * math.asin(math.cos(phi) * math.sin(dlon / 2))
    assert x[1] == pytest.approx(haversine, rel=1e-6) and y[1] == 0.0
