"""Geometry: regions (bounding boxes), cropping, gridding and a local projection to kilometres.

Regions and grid cells (see :class:`Region`)
    A check-in is inside a region when ``lat_min <= latitude <= lat_max`` and
    ``lon_min <= longitude <= lon_max`` (inclusive on all four sides). The grid has ``n_lon`` columns
    (east-west, along longitude) and ``n_lat`` rows (north-south, along latitude), with equally spaced
    edges ``numpy.linspace(min, max, n + 1)`` in degrees. Column ``j`` holds longitudes in
    ``[edge_j, edge_{j+1})``: a point exactly on an interior border belongs to the cell to its east
    (north for rows); a point exactly on ``lon_max`` (``lat_max``) belongs to the last column (row).
    Row 0 is the southernmost row, column 0 the westernmost; ``cell = lat_index * n_lon + lon_index``.

Room: pure functions of coordinate arrays; knows nothing about file formats or malformed rows.
Imports numpy, pandas and the private validation helpers.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from shuffledp._validation import check_integer, check_real

__all__ = [
    "CELL_COLUMNS",
    "EARTH_RADIUS_KM",
    "Region",
    "crop_mask",
    "assign_cells",
    "count_cells",
    "cell_table",
    "crop_and_grid",
    "counts_grid",
    "equirectangular_km",
    "region_extent_km",
]


#: columns of ``results/data/{region}/cell_counts.csv`` (agreed layout)
CELL_COLUMNS = ("cell", "lat_index", "lon_index", "lat_min", "lat_max", "lon_min", "lon_max", "count")


#: mean Earth radius (IUGG) used for the local equirectangular projection
EARTH_RADIUS_KM = 6371.0088


@dataclass(frozen=True)
class Region:
    """A bounding box in degrees with an ``n_lat`` x ``n_lon`` grid (rows x columns); see module doc."""

    name: str
    lat_min: float
    lat_max: float
    lon_min: float
    lon_max: float
    n_lat: int
    n_lon: int
    label: str = ""
    paper_count: int | None = None

    def __post_init__(self) -> None:
        set_ = lambda key, value: object.__setattr__(self, key, value)
        set_("lat_min", check_real(self.lat_min, "lat_min", low=-90.0, high=90.0))
        set_("lat_max", check_real(self.lat_max, "lat_max", low=-90.0, high=90.0))
        set_("lon_min", check_real(self.lon_min, "lon_min", low=-180.0, high=180.0))
        set_("lon_max", check_real(self.lon_max, "lon_max", low=-180.0, high=180.0))
        for axis in ("lat", "lon"):
            low, high = getattr(self, f"{axis}_min"), getattr(self, f"{axis}_max")
            if not low < high:
                raise ValueError(f"`{axis}_max` must be greater than `{axis}_min` ({low}); got {high}.")
        set_("n_lat", check_integer(self.n_lat, "n_lat", low=1))
        set_("n_lon", check_integer(self.n_lon, "n_lon", low=1))
        if not self.label:
            set_("label", self.name)

    @classmethod
    def from_config(cls, name: str, entry) -> Region:
        """Build from one entry of the config's ``regions`` mapping."""
        return cls(
            name=name,
            label=entry.get("label", name),
            lat_min=entry["lat_min"],
            lat_max=entry["lat_max"],
            lon_min=entry["lon_min"],
            lon_max=entry["lon_max"],
            n_lat=entry["grid"]["n_lat"],
            n_lon=entry["grid"]["n_lon"],
            paper_count=entry.get("paper_count"),
        )

    @property
    def n_cells(self) -> int:
        return self.n_lat * self.n_lon

    @property
    def lat_edges(self) -> np.ndarray:
        """Row borders, south to north (``n_lat + 1`` values; first and last are the bounds exactly)."""
        return np.linspace(self.lat_min, self.lat_max, self.n_lat + 1)

    @property
    def lon_edges(self) -> np.ndarray:
        """Column borders, west to east (``n_lon + 1`` values)."""
        return np.linspace(self.lon_min, self.lon_max, self.n_lon + 1)

    @property
    def centre(self) -> tuple[float, float]:
        """(latitude, longitude) of the box centre: the origin of :func:`equirectangular_km`."""
        return (0.5 * (self.lat_min + self.lat_max), 0.5 * (self.lon_min + self.lon_max))


def crop_mask(latitude, longitude, region: Region) -> np.ndarray:
    """Boolean mask of points inside ``region`` (bounds inclusive on all four sides; NaN is outside)."""
    lat = np.asarray(latitude, dtype=float)
    lon = np.asarray(longitude, dtype=float)
    return (
        (lat >= region.lat_min) & (lat <= region.lat_max) & (lon >= region.lon_min) & (lon <= region.lon_max)
    )


def _axis_index(values: np.ndarray, edges: np.ndarray) -> np.ndarray:
    index = np.searchsorted(edges, values, side="right") - 1
    return np.minimum(index, len(edges) - 2)  # the max edge belongs to the last cell


def assign_cells(latitude, longitude, region: Region) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(lat_index, lon_index, cell) of points inside ``region``; see the module doc for borders.

    Raises ``ValueError`` if a point lies outside the region (crop first with :func:`crop_mask`).
    """
    lat = np.asarray(latitude, dtype=float)
    lon = np.asarray(longitude, dtype=float)
    inside = crop_mask(lat, lon, region)
    if not inside.all():
        first = int(np.argmin(inside))
        raise ValueError(
            f"`latitude`/`longitude` must lie inside region {region.name!r} "
            f"(lat [{region.lat_min}, {region.lat_max}], lon [{region.lon_min}, {region.lon_max}]); "
            f"got ({lat[first]}, {lon[first]}) at position {first}. Crop with crop_mask first."
        )
    lat_index = _axis_index(lat, region.lat_edges)
    lon_index = _axis_index(lon, region.lon_edges)
    return lat_index, lon_index, lat_index * region.n_lon + lon_index


def count_cells(cell, region: Region) -> np.ndarray:
    """Number of check-ins per cell (length ``region.n_cells``, row-major)."""
    cell = np.asarray(cell, dtype=np.int64)
    if cell.size and (cell.min() < 0 or cell.max() >= region.n_cells):
        raise ValueError(f"`cell` must be in [0, {region.n_cells - 1}]; got {cell.min()}..{cell.max()}.")
    return np.bincount(cell, minlength=region.n_cells)


def cell_table(region: Region, counts) -> pd.DataFrame:
    """The agreed ``cell_counts.csv`` table: one row per cell with its bounds and count."""
    counts = np.asarray(counts, dtype=np.int64)
    if counts.shape != (region.n_cells,):
        raise ValueError(f"`counts` must have shape ({region.n_cells},); got {counts.shape}.")
    lat_index, lon_index = np.divmod(np.arange(region.n_cells), region.n_lon)
    lat_edges, lon_edges = region.lat_edges, region.lon_edges
    return pd.DataFrame(
        {
            "cell": np.arange(region.n_cells),
            "lat_index": lat_index,
            "lon_index": lon_index,
            "lat_min": lat_edges[lat_index],
            "lat_max": lat_edges[lat_index + 1],
            "lon_min": lon_edges[lon_index],
            "lon_max": lon_edges[lon_index + 1],
            "count": counts,
        },
        columns=list(CELL_COLUMNS),
    )


def crop_and_grid(checkins: pd.DataFrame, region: Region) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Crop ``checkins`` (columns latitude, longitude, ...) to ``region`` and grid them.

    Returns ``(cropped, cells)``: the rows inside the box with added ``lat_index``, ``lon_index`` and
    ``cell`` columns (input order kept), and :func:`cell_table` of their counts.
    """
    inside = crop_mask(checkins["latitude"], checkins["longitude"], region)
    cropped = checkins.loc[inside].reset_index(drop=True)
    lat_index, lon_index, cell = assign_cells(cropped["latitude"], cropped["longitude"], region)
    cropped = cropped.assign(lat_index=lat_index, lon_index=lon_index, cell=cell)
    return cropped, cell_table(region, count_cells(cell, region))


def counts_grid(cells: pd.DataFrame, region: Region) -> np.ndarray:
    """Counts of a ``cell_counts`` table as an ``(n_lat, n_lon)`` array; row 0 is the southernmost."""
    grid = np.zeros((region.n_lat, region.n_lon), dtype=np.int64)
    grid[cells["lat_index"].to_numpy(), cells["lon_index"].to_numpy()] = cells["count"].to_numpy()
    return grid


def equirectangular_km(latitude, longitude, *, lat0: float, lon0: float) -> tuple[np.ndarray, np.ndarray]:
    """Local equirectangular projection about (lat0, lon0): (east-west km, north-south km).

    x = R * (lon - lon0) * cos(lat0), y = R * (lat - lat0), angles in radians, R = EARTH_RADIUS_KM.
    Over a city-sized box (10 km) the distortion is below 0.1 %.
    """
    lat = np.radians(np.asarray(latitude, dtype=float))
    lon = np.radians(np.asarray(longitude, dtype=float))
    x = EARTH_RADIUS_KM * (lon - math.radians(lon0)) * math.cos(math.radians(lat0))
    y = EARTH_RADIUS_KM * (lat - math.radians(lat0))
    return x, y


def region_extent_km(region: Region) -> tuple[float, float, float, float]:
    """(x_min, x_max, y_min, y_max) of the region in km about its centre (for ``imshow(extent=)``)."""
    lat0, lon0 = region.centre
    x, y = equirectangular_km(
        [region.lat_min, region.lat_max], [region.lon_min, region.lon_max], lat0=lat0, lon0=lon0
    )
    return float(x[0]), float(x[1]), float(y[0]), float(y[1])
