"""Generate the tiny SNAP-format check-in fixture used by the end-to-end CI run (.test/config).

Run from anywhere: ``python .test/make_fixture.py [OUT_DIR]``. Deterministic (fixed seed); writes
``checkins_fixture.txt`` and ``checkins_fixture.expected.json`` to OUT_DIR (default ``.test/data``). The JSON holds
the counts *by construction* (how many rows of each kind were written), so tests compare the
pipeline against how the file was built, not against the pipeline's own earlier output.

Contents: random check-ins inside each region of ``.test/config/config.yaml``, points exactly on the
regions' outer bounds and interior cell borders, points outside every region, exact copies of a few
rows inside the regions (duplicates, dropped by the data stage), and one malformed row for each
reason the parser knows (blank line, wrong column count, bad user, bad time, non-numeric and
out-of-range coordinates, bad location id).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import yaml

HERE = Path(__file__).resolve().parent
SEED = 20221014
RANDOM_PER_REGION = {"san_francisco": 400, "paris": 200}
OUTSIDE = 60
DUPLICATED = (0, 1, 2, 450)  # indices of valid rows inside a region repeated verbatim at the end


def _line(user, time, lat, lon, location):
    return f"{user}\t{time}\t{lat!r}\t{lon!r}\t{location}"


def _time(rng) -> str:
    day = int(rng.integers(1, 29))
    hour, minute, second = (int(v) for v in rng.integers(0, [24, 60, 60]))
    return f"2010-{int(rng.integers(1, 13)):02d}-{day:02d}T{hour:02d}:{minute:02d}:{second:02d}Z"


def main(out_dir=HERE / "data") -> None:
    config = yaml.safe_load((HERE / "config" / "config.yaml").read_text())
    regions = config["regions"]
    rng = np.random.default_rng(SEED)
    lines: list[str] = []
    expected = {"rows": 0, "valid": 0, "malformed": {}, "regions": {}}
    user = 0

    def add(lat, lon):
        nonlocal user
        user += 1
        lines.append(_line(user % 97, _time(rng), float(lat), float(lon), int(rng.integers(1, 10**6))))

    for name, region in regions.items():
        n = RANDOM_PER_REGION.get(name, 100)
        lat = rng.uniform(region["lat_min"], region["lat_max"], n)
        lon = rng.uniform(region["lon_min"], region["lon_max"], n)
        for a, b in zip(lat, lon):
            add(a, b)
        # Exactly on borders: the four corners, and every interior edge crossed with the mid-line.
        lat_edges = np.linspace(region["lat_min"], region["lat_max"], region["grid"]["n_lat"] + 1)
        lon_edges = np.linspace(region["lon_min"], region["lon_max"], region["grid"]["n_lon"] + 1)
        mid_lat, mid_lon = 0.5 * (lat_edges[0] + lat_edges[1]), 0.5 * (lon_edges[0] + lon_edges[1])
        border = [(a, b) for a in (lat_edges[0], lat_edges[-1]) for b in (lon_edges[0], lon_edges[-1])]
        border += [(mid_lat, b) for b in lon_edges[1:-1]] + [(a, mid_lon) for a in lat_edges[1:-1]]
        for a, b in border:
            add(a, b)
        expected["regions"][name] = {"inside": n + len(border), "on_borders": len(border)}
    # Outside every region: a band south of each box (and east of it), beyond the bounds.
    for index in range(OUTSIDE):
        region = list(regions.values())[index % len(regions)]
        add(region["lat_min"] - 0.01 - 0.001 * index, region["lon_max"] + 0.005)
    expected["valid"] = len(lines)  # distinct valid rows: what the data stage keeps (duplicates dropped)
    lines.extend(lines[index] for index in DUPLICATED)
    expected["duplicates"] = len(DUPLICATED)

    malformed = {
        "blank_line": [""],
        "wrong_column_count": ["7\t2010-05-01T10:00:00Z\t37.75", "8\t2010-05-01T10:00:00Z\t37.75\t-122.4\t5\textra"],
        "bad_user": ["user9\t2010-05-01T10:00:00Z\t37.75\t-122.4\t5"],
        "bad_time": ["9\t2010-13-01T10:00:00Z\t37.75\t-122.4\t5", "9\tyesterday\t37.75\t-122.4\t5"],
        "non_numeric_coordinate": ["10\t2010-05-01T10:00:00Z\tabc\t-122.4\t5"],
        "out_of_range_coordinate": ["11\t2010-05-01T10:00:00Z\t95.0\t-122.4\t5", "12\t2010-05-01T10:00:00Z\t37.75\t-190.0\t5"],
        "bad_location_id": ["13\t2010-05-01T10:00:00Z\t37.75\t-122.4\tloc5"],
    }
    # Spread the malformed rows through the file at fixed positions.
    for offset, (reason, rows) in enumerate(malformed.items()):
        for row in rows:
            lines.insert(37 * (offset + 1) + len(rows), row)
        expected["malformed"][reason] = len(rows)
    expected["rows"] = len(lines)

    data = Path(out_dir)
    data.mkdir(parents=True, exist_ok=True)
    (data / "checkins_fixture.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (data / "checkins_fixture.expected.json").write_text(json.dumps(expected, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main(*sys.argv[1:2])
