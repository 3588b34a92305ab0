"""Which Gowalla data a run uses (shuffledp.data.source): auto, snap and local, the record, the label."""

from __future__ import annotations

import socket
import time
from pathlib import Path

import pytest
import yaml

from shuffledp.data.download import DownloadError, NetworkUnreachableError, download, probe_connection
from shuffledp.data.source import (
    choose_source,
    data_label,
    read_checksums,
    read_source_record,
    region_label,
    source_id,
)

REPO = Path(__file__).resolve().parents[2]
REGIONS = {
    "san_francisco": {"label": "San Francisco", "kept": 116413, "paper_count": 123108},
    "paris": {"label": "Paris", "kept": 11190, "paper_count": 10260},
}


def data_config(source: str = "auto") -> dict:
    data = yaml.safe_load((REPO / "config" / "config.yaml").read_text())["data"]
    data["source"] = source
    return data


def offline():
    raise NetworkUnreachableError("Network unreachable: could not connect to snap.example:443. Hint text.")


def test_auto_offline_uses_the_bundled_subsets_and_says_so_in_one_line(tmp_path):
    lines = []
    record = choose_source(
        data_config(), repo=REPO, raw_path=tmp_path / "raw.gz", fetch=offline, log=lines.append
    )
    assert record["requested"] == "auto" and record["source"] == "bundled"
    assert [item["id"] for item in record["files"]] == ["snap_paris_area", "oya2017_san_francisco"]
    assert [item["duplicates"] for item in record["files"]] == ["drop", "keep"]
    listed = read_checksums(REPO / "data" / "bundled" / "SHA256SUMS")
    assert {item["file_name"]: item["sha256"] for item in record["files"]} == listed
    assert record["reason"] == "SNAP could not be reached"
    assert record["detail"].startswith("Network unreachable: could not connect to snap.example:443")
    assert len(lines) == 1 and "\n" not in lines[0]
    assert "SNAP could not be reached (Network unreachable" in lines[0]
    assert "bundled subsets" in lines[0] and "not the full SNAP file" in lines[0]


def test_auto_with_the_snap_file_uses_it_without_downloading(tmp_path):
    raw = tmp_path / "loc-gowalla_totalCheckins.txt.gz"
    raw.write_bytes(b"already downloaded and verified")
    lines = []

    def never():
        raise AssertionError("no download when the file is there")

    record = choose_source(data_config(), repo=REPO, raw_path=raw, fetch=never, log=lines.append)
    assert record["source"] == "snap" and lines == []
    assert [item["path"] for item in record["files"]] == [str(raw)]
    assert record["files"][0]["url"].startswith("https://snap.stanford.edu/")


def test_auto_online_downloads_snap(tmp_path):
    raw = tmp_path / "raw.gz"
    record = choose_source(
        data_config(), repo=REPO, raw_path=raw, fetch=lambda: raw.write_bytes(b"x"), log=pytest.fail
    )
    assert (record["source"], record["reason"]) == ("snap", "downloaded from SNAP")
    assert record["files"][0]["bytes"] == 1


def test_auto_falls_back_on_a_failed_download_and_says_why(tmp_path):
    def wrong_file():
        raise DownloadError(
            "Download of https://snap.example/x.gz failed verification 3 time(s); deleted. Last: x"
        )

    lines = []
    record = choose_source(
        data_config(), repo=REPO, raw_path=tmp_path / "r.gz", fetch=wrong_file, log=lines.append
    )
    assert (record["source"], record["reason"]) == ("bundled", "the SNAP download failed")
    assert len(lines) == 1 and "the SNAP download failed (Download of https://snap.example/x.gz" in lines[0]


def test_snap_offline_fails_and_never_falls_back(tmp_path):
    with pytest.raises(NetworkUnreachableError, match="Network unreachable"):
        choose_source(
            data_config("snap"), repo=REPO, raw_path=tmp_path / "raw.gz", fetch=offline, log=pytest.fail
        )


def test_local_uses_the_user_files_and_never_downloads(tmp_path):
    data = data_config("local")
    (tmp_path / "mine.csv").write_text("user,latitude,longitude\n1,48.85,2.35\n")
    data["local_files"] = [{"path": "mine.csv", "format": "csv", "label": "My Paris"}]
    record = choose_source(
        data,
        repo=REPO,
        raw_path=tmp_path / "raw.gz",
        local_data_dir=tmp_path,
        fetch=pytest.fail,
        log=pytest.fail,
    )
    assert record["source"] == "local"
    assert [(item["id"], item["path"]) for item in record["files"]] == [
        ("my_paris", str(tmp_path / "mine.csv"))
    ]
    assert record["files"][0]["sha256"] is not None


def test_unknown_source_is_refused(tmp_path):
    with pytest.raises(
        ValueError, match=r"`data.source` must be one of 'auto', 'snap', 'local'; got 'ftp'\."
    ):
        choose_source(data_config("ftp"), repo=REPO, raw_path=tmp_path / "raw.gz")


def test_record_round_trip_and_bad_record(tmp_path):
    import json

    record = choose_source(data_config(), repo=REPO, raw_path=tmp_path / "raw.gz", fetch=offline, log=print)
    (tmp_path / "source.json").write_text(json.dumps(record))
    assert read_source_record(tmp_path / "source.json") == record
    (tmp_path / "bad.json").write_text(json.dumps({"source": "ftp"}))
    with pytest.raises(ValueError, match="is not a data source record"):
        read_source_record(tmp_path / "bad.json")


def test_labels_name_the_source_and_the_crop_counts_against_the_paper():
    bundled = {"source": "bundled", "files": []}
    assert data_label(bundled, REGIONS) == (
        "Data: bundled Gowalla subsets (not the full SNAP file): San Francisco 116,413 check-ins "
        "(paper: 123,108); Paris 11,190 (paper: 10,260)"
    )
    assert region_label(bundled, REGIONS["paris"]) == (
        "Data: bundled Gowalla subsets (not the full SNAP file): Paris, 11,190 check-ins in the crop (paper: 10,260)"
    )
    assert data_label({"source": "snap", "files": []}) == "Data: SNAP loc-gowalla_totalCheckins.txt.gz"
    local = {"source": "local", "files": [{"label": "mine", "file_name": "m.csv"}]}
    assert data_label(local).startswith("Data: local files (mine)")


def test_source_id_and_checksum_list(tmp_path):
    assert source_id({"path": "x/Gowalla SF.csv.gz"}) == "gowalla_sf"
    assert source_id({"path": "a.txt", "label": "Paris (SNAP)"}) == "paris_snap"
    (tmp_path / "SUMS").write_text("# comment\n" + "a" * 64 + "  one.gz\n")
    assert read_checksums(tmp_path / "SUMS") == {"one.gz": "a" * 64}
    (tmp_path / "SUMS").write_text("abc  one.gz\n")
    with pytest.raises(Exception, match="expected '<sha256>  <file>'"):
        read_checksums(tmp_path / "SUMS")


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_unreachable_server_fails_at_once_without_retries(tmp_path):
    url = f"http://127.0.0.1:{_closed_port()}/loc-gowalla_totalCheckins.txt.gz"
    slept = []
    started = time.monotonic()
    with pytest.raises(
        NetworkUnreachableError, match=r"^Network unreachable: could not connect to 127\.0\.0\.1"
    ):
        download(
            url,
            tmp_path / "raw.gz",
            expected_rows=1,
            retries=5,
            backoff=30,
            sleep=slept.append,
            log=pytest.fail,
            connect_timeout=5,
        )
    assert slept == [] and time.monotonic() - started < 5
    assert not (tmp_path / "raw.gz").exists()
    # probe: without the connection probe the same server is tried `retries` times with back-off
    with pytest.raises(DownloadError):
        download(
            url, tmp_path / "raw.gz", expected_rows=1, retries=3, backoff=30, sleep=slept.append, log=print
        )
    assert slept == [30, 60]


def test_probe_skips_file_urls(tmp_path):
    probe_connection((tmp_path / "x").as_uri(), 1.0)  # nothing to connect to: no error
