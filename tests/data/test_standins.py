"""The data stage on the Gowalla stand-ins in ../shared/data/gowalla (skipped when absent).

Expected counts are the ones the stand-ins' SOURCE.md documents (measured there independently):
Paris crop 11,190 rows (the paper reports 10,260), San Francisco crop 116,413 (paper: 123,108).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml

from shuffledp.data.geometry import Region, crop_and_grid
from shuffledp.data.gowalla import read_csv, read_snap

REPO = Path(__file__).resolve().parents[2]
STANDINS = Path(os.environ.get("SHUFFLEDP_GOWALLA_DIR", REPO.parent / "shared" / "data" / "gowalla"))
PARIS_FILE = "loc-gowalla_totalCheckins_Paris-area.txt"
SF_FILE = "gowalla_sf_checkins_oya2017.csv.gz"

pytestmark = [
    pytest.mark.standins,
    pytest.mark.skipif(
        not (STANDINS / PARIS_FILE).is_file() or not (STANDINS / SF_FILE).is_file(),
        reason=f"Gowalla stand-ins not found in {STANDINS} (set SHUFFLEDP_GOWALLA_DIR to their directory)",
    ),
]

# SOURCE.md: file facts and crop counts
SOURCE_FACTS = {
    PARIS_FILE: {"sha256": "9159696c547c2cab775cd79e7f770bb06f21576399c3ac1ddefae08e24111c3e", "rows": 17496},
    SF_FILE: {"sha256": "7a6ae49839fefa1b64e75548038aca8e13147cae5652ff749e7c5c7a3545bc9d", "rows": 134234},
}
CROP_COUNTS = {"paris": 11190, "san_francisco": 116413}


def regions():
    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    return {name: Region.from_config(name, entry) for name, entry in config["regions"].items()}


def test_checksums_match_source_md_and_data_readme():
    listed = {}
    for line in (REPO / "data" / "checksums.sha256").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            digest, name = line.split(maxsplit=1)
            listed[name.strip()] = digest
    for name, facts in SOURCE_FACTS.items():
        digest = hashlib.sha256((STANDINS / name).read_bytes()).hexdigest()
        assert digest == facts["sha256"] == listed[name]


def test_library_reproduces_documented_crop_counts():
    paris = read_snap(STANDINS / PARIS_FILE)
    sf = read_csv(STANDINS / SF_FILE, lat_column="latitude", lon_column="longitude")
    assert (paris.rows_read, paris.malformed_total) == (SOURCE_FACTS[PARIS_FILE]["rows"], 0)
    assert (sf.rows_read, sf.malformed_total) == (SOURCE_FACTS[SF_FILE]["rows"], 0)
    region = regions()
    cropped, cells = crop_and_grid(paris.checkins, region["paris"])
    assert len(cropped) == cells["count"].sum() == CROP_COUNTS["paris"]
    cropped, cells = crop_and_grid(sf.checkins, region["san_francisco"])
    assert len(cropped) == cells["count"].sum() == CROP_COUNTS["san_francisco"]


@pytest.mark.slow
def test_workflow_data_stage_on_standins(tmp_path):
    work = tmp_path / "run"
    shutil.copytree(REPO / "config", work / "config")
    command = [
        sys.executable,
        "-m",
        "snakemake",
        "-s",
        str(REPO / "Snakefile"),
        "--directory",
        str(work),
        "results/data/summary.csv",
        "results/data/fig3.png",
        "--cores",
        "2",
        "--configfile",
        "config/config.yaml",
        "config/standins.yaml",
        "--config",
        f"local_data_dir={STANDINS}",
    ]
    result = subprocess.run(command, capture_output=True, text=True, timeout=600, cwd=work)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    summary = pd.read_csv(work / "results" / "data" / "summary.csv").set_index("name")
    for name, count in CROP_COUNTS.items():
        assert summary.loc[name, "kept"] == count
        cells = pd.read_csv(work / "results" / "data" / name / "cell_counts.csv")
        assert cells["count"].sum() == count and len(cells) == regions()[name].n_cells
    assert (
        summary.loc["paris", "paper_count"] == 10260 and summary.loc["san_francisco", "paper_count"] == 123108
    )
    assert (work / "results" / "data" / "fig3.png").stat().st_size > 50_000
