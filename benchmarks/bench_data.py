"""Benchmark: the data stage at the size of the full SNAP Gowalla file (6,442,890 check-ins).

The full file is not available offline, so a synthetic SNAP-format file of the same row count is
generated (random check-ins spread over the world, 10 % of them inside the San Francisco box, plus
0.01 % malformed rows). Times: parsing (plain text and .gz), the download verification of the .gz
(decompress, count rows and tabs), and crop + grid for San Francisco (24 x 17). Writes
results/benchmarks/data.csv and prints the numbers. No target is set by the issue; these are reported.

Run: python benchmarks/bench_data.py [N_ROWS]   (needs ~1 GB of free space in the temp directory)
"""

from __future__ import annotations

import gzip
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

from shuffledp.data.download import verify_snap_gzip
from shuffledp.data.geometry import Region, crop_and_grid
from shuffledp.data.gowalla import read_snap
from shuffledp.io import atomic_write_text

ROOT = Path(__file__).resolve().parents[1]
SNAP_ROWS = 6_442_890
SEED = 1


def make_file(path: Path, n_rows: int) -> int:
    """Write a SNAP-format file of ``n_rows`` lines; return the number of malformed lines in it."""
    rng = np.random.default_rng(SEED)
    config = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())["regions"]["san_francisco"]
    inside = rng.random(n_rows) < 0.1
    lat = np.where(
        inside, rng.uniform(config["lat_min"], config["lat_max"], n_rows), rng.uniform(-60, 70, n_rows)
    )
    lon = np.where(
        inside, rng.uniform(config["lon_min"], config["lon_max"], n_rows), rng.uniform(-180, 180, n_rows)
    )
    seconds = rng.integers(0, 600 * 86400, n_rows)
    time_text = (np.datetime64("2009-02-01T00:00:00") + seconds.astype("timedelta64[s]")).astype(str)
    frame = pd.DataFrame(
        {
            "user": np.sort(rng.integers(0, 196_591, n_rows)),
            "time": np.char.add(time_text, "Z"),
            "lat": lat,
            "lon": lon,
            "location": rng.integers(0, 6_000_000, n_rows),
        }
    )
    bad = rng.choice(n_rows, size=max(1, n_rows // 10_000), replace=False)
    frame["lat"] = frame["lat"].astype(object)
    frame.loc[bad, "lat"] = "not-a-number"
    frame.to_csv(path, sep="\t", header=False, index=False)
    return len(bad)


def timed(function, *args, **kwargs):
    start = time.perf_counter()
    result = function(*args, **kwargs)
    return result, time.perf_counter() - start


def main(n_rows: int = SNAP_ROWS) -> None:
    region = Region.from_config(
        "san_francisco",
        yaml.safe_load((ROOT / "config" / "config.yaml").read_text())["regions"]["san_francisco"],
    )
    rows = []
    with tempfile.TemporaryDirectory() as directory:
        text = Path(directory) / "checkins.txt"
        n_bad, seconds = timed(make_file, text, n_rows)
        print(f"generated {n_rows:,} rows ({text.stat().st_size / 1e6:.0f} MB) in {seconds:.1f} s")
        compressed = Path(directory) / "checkins.txt.gz"
        with open(text, "rb") as source, gzip.open(compressed, "wb", compresslevel=1) as sink:
            shutil.copyfileobj(source, sink, 1 << 22)
        parsed, seconds = timed(read_snap, text)
        assert parsed.rows_read == n_rows and parsed.malformed["non_numeric_coordinate"] == n_bad
        rows.append({"step": "read_snap (.txt)", "rows": n_rows, "seconds": seconds})
        parsed, seconds = timed(read_snap, compressed)
        rows.append({"step": "read_snap (.gz)", "rows": n_rows, "seconds": seconds})
        counted, seconds = timed(verify_snap_gzip, compressed, expected_rows=n_rows)
        rows.append({"step": "verify_snap_gzip", "rows": counted, "seconds": seconds})
        (cropped, _cells), seconds = timed(crop_and_grid, parsed.checkins, region)
        rows.append({"step": "crop_and_grid (San Francisco, 408 cells)", "rows": n_rows, "seconds": seconds})
        print(
            f"kept {parsed.kept:,}, malformed {parsed.malformed_total:,}; {len(cropped):,} inside San Francisco"
        )
    table = pd.DataFrame(rows)
    atomic_write_text(ROOT / "results" / "benchmarks" / "data.csv", table.to_csv(index=False))
    print(table.to_string(index=False))


if __name__ == "__main__":
    main(*(int(arg) for arg in sys.argv[1:2]))
