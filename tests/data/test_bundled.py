"""The Gowalla subsets bundled in data/bundled: checksums, deterministic compression, contents, provenance.

The expected counts are those data/bundled/SOURCE.md documents: Paris-area SNAP rows 17,496 (Paris
crop 11,190; the paper reports 10,260), San Francisco as processed by Oya et al. 134,234 rows (crop
116,413; paper 123,108).
"""

from __future__ import annotations

import gzip
import hashlib
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from shuffledp.data.geometry import Region, crop_and_grid
from shuffledp.data.gowalla import read_csv, read_snap
from shuffledp.data.source import BundledDataError, bundled_entries, choose_source, read_checksums

REPO = Path(__file__).resolve().parents[2]
BUNDLED = REPO / "data" / "bundled"
PARIS = "loc-gowalla_totalCheckins_Paris-area.txt.gz"
SF = "gowalla_sf_checkins_oya2017.csv.gz"
# sha256 of the Paris text before compression (as published) and of the SF file (published compressed)
PARIS_TEXT_SHA256 = "9159696c547c2cab775cd79e7f770bb06f21576399c3ac1ddefae08e24111c3e"
SF_SHA256 = "7a6ae49839fefa1b64e75548038aca8e13147cae5652ff749e7c5c7a3545bc9d"
CROP_COUNTS = {"paris": 11190, "san_francisco": 116413}


def config() -> dict:
    return yaml.safe_load((REPO / "config" / "config.yaml").read_text())


def regions() -> dict:
    return {name: Region.from_config(name, entry) for name, entry in config()["regions"].items()}


def test_checksum_list_matches_the_files():
    listed = read_checksums(BUNDLED / "SHA256SUMS")
    assert sorted(listed) == [SF, PARIS]
    for name, digest in listed.items():
        assert hashlib.sha256((BUNDLED / name).read_bytes()).hexdigest() == digest, name
    assert listed[SF] == SF_SHA256


def test_compression_is_deterministic_and_content_is_the_published_text():
    for name in (PARIS, SF):
        header = (BUNDLED / name).read_bytes()[:10]
        assert header[:2] == b"\x1f\x8b" and header[4:8] == b"\0\0\0\0", name  # gzip, mtime 0
        assert not header[3] & 0x08, name  # no stored file name (gzip -n)
    text = gzip.decompress((BUNDLED / PARIS).read_bytes())
    assert hashlib.sha256(text).hexdigest() == PARIS_TEXT_SHA256
    published = read_checksums(REPO / "data" / "checksums.sha256")
    assert published == {PARIS.removesuffix(".gz"): PARIS_TEXT_SHA256, SF: SF_SHA256}


def test_config_names_exactly_the_bundled_files():
    files = {entry["path"] for entry in config()["data"]["bundled"]["files"]}
    on_disk = {path.name for path in BUNDLED.iterdir() if path.name.endswith(".gz")}
    assert files == on_disk == {PARIS, SF}
    assert [item["id"] for item in bundled_entries(config()["data"], repo=REPO)] == [
        "snap_paris_area",
        "oya2017_san_francisco",
    ]


def test_rows_and_crop_counts_match_source_md():
    paris = read_snap(BUNDLED / PARIS)
    sf = read_csv(BUNDLED / SF, lat_column="latitude", lon_column="longitude")
    assert (paris.rows_read, paris.malformed_total) == (17496, 0)
    assert (sf.rows_read, sf.malformed_total) == (134234, 0)
    cropped, cells = crop_and_grid(paris.checkins, regions()["paris"])
    assert len(cropped) == cells["count"].sum() == CROP_COUNTS["paris"]
    cropped, cells = crop_and_grid(sf.checkins, regions()["san_francisco"])
    assert len(cropped) == cells["count"].sum() == CROP_COUNTS["san_francisco"]
    source_md = (BUNDLED / "SOURCE.md").read_text()
    for count in ("11,190", "10,260", "116,413", "123,108", "17,496", "134,234"):
        assert count in source_md


def test_source_md_cites_the_data_and_names_no_machine_path():
    text = (BUNDLED / "SOURCE.md").read_text()
    for needed in ("Cho", "Myers", "Leskovec", "KDD", "2011", "Oya", "Troncoso", "González", "CCS", "2017"):
        assert needed in text, needed
    assert "snap.stanford.edu/data/loc-gowalla.html" in text
    assert not re.search(r"(/work/|/home/|/tmp/|\.\./shared)", text)


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_gitignore_does_not_hide_the_bundle():
    names = [str(path.relative_to(REPO)) for path in sorted(BUNDLED.iterdir())]
    result = subprocess.run(
        ["git", "-C", str(REPO), "check-ignore", "--no-index", *names], capture_output=True, text=True
    )
    if result.returncode == 128:
        pytest.skip("not a git checkout")
    assert result.stdout == "", result.stdout  # exit status 1: nothing ignored


def test_a_changed_bundled_file_stops_the_fallback(tmp_path):
    # probe: the checksum check fails when a bundled file differs from SHA256SUMS
    shutil.copytree(BUNDLED, tmp_path / "data" / "bundled")
    data = config()["data"]
    from shuffledp.data.download import NetworkUnreachableError

    def offline():
        raise NetworkUnreachableError("Network unreachable: no route. Hint.")

    record = choose_source(
        data, repo=tmp_path, raw_path=tmp_path / "raw.gz", fetch=offline, log=lambda _: None
    )
    assert record["source"] == "bundled"
    with open(tmp_path / "data" / "bundled" / SF, "ab") as handle:
        handle.write(b"\0")
    with pytest.raises(
        BundledDataError, match=rf"bundled data file {re.escape(SF)} has sha256 [0-9a-f]{{64}}"
    ):
        choose_source(data, repo=tmp_path, raw_path=tmp_path / "raw.gz", fetch=offline, log=lambda _: None)
    (tmp_path / "data" / "bundled" / SF).unlink()
    with pytest.raises(BundledDataError, match="bundled data file missing"):
        choose_source(data, repo=tmp_path, raw_path=tmp_path / "raw.gz", fetch=offline, log=lambda _: None)
