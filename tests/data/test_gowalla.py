"""Parsing, malformed-row counting, duplicates and the summary table of Gowalla check-ins (geometry: test_geometry.py)."""

from __future__ import annotations

import gzip
import importlib.util
import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from shuffledp.data.duplicates import find_duplicates
from shuffledp.data.geometry import (
    Region,
)
from shuffledp.data.gowalla import (
    MALFORMED_REASONS,
    DataFileError,
    check_bad_fraction,
    read_checkins,
    read_csv,
    read_snap,
)
from shuffledp.data.summary import SUMMARY_COLUMNS, combine_summaries, region_summary, source_summary

REPO = Path(__file__).resolve().parents[2]
GOOD = "1\t2010-07-25T11:40:18Z\t48.86337875\t2.333328717\t1500177"
GOOD2 = "24\t2010-05-20T06:26:35Z\t48.853160\t2.349057\t48661"


def write(path: Path, lines, *, newline_at_end=True) -> Path:
    text = "\n".join(lines) + ("\n" if newline_at_end else "")
    if path.suffix == ".gz":
        with gzip.open(path, "wt", encoding="utf-8") as handle:
            handle.write(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def assert_accounted(parsed):
    assert parsed.rows_read == parsed.kept + parsed.malformed_total
    assert set(parsed.malformed) == set(MALFORMED_REASONS)


# ------------------------------------------------------------------------------------ SNAP format


@pytest.mark.parametrize("suffix", [".txt", ".txt.gz"])
def test_snap_values_parsed_exactly(tmp_path, suffix):
    parsed = read_snap(write(tmp_path / f"c{suffix}", [GOOD, GOOD2]))
    frame = parsed.checkins
    assert list(frame.columns) == ["user", "latitude", "longitude", "time", "location_id"]
    assert frame["user"].tolist() == [1, 24]
    assert frame["latitude"].tolist() == [48.86337875, 48.853160]  # decimal strings round exactly
    assert frame["longitude"].tolist() == [2.333328717, 2.349057]
    assert frame["time"].tolist() == ["2010-07-25T11:40:18Z", "2010-05-20T06:26:35Z"]
    assert frame["location_id"].tolist() == [1500177, 48661]
    assert parsed.rows_read == 2 and parsed.malformed_total == 0
    assert_accounted(parsed)


def test_snap_last_line_without_newline_is_read(tmp_path):
    parsed = read_snap(write(tmp_path / "c.txt", [GOOD, GOOD2], newline_at_end=False))
    assert parsed.kept == 2 and parsed.rows_read == 2


# Each case: one malformed line of a known kind between two good lines.
MALFORMED_CASES = {
    "blank_line": "",
    "too_few_columns": "1\t2010-07-25T11:40:18Z\t48.8",
    "too_many_columns": GOOD + "\textra",
    "bad_user_text": "abc\t2010-07-25T11:40:18Z\t48.8\t2.3\t7",
    "bad_user_negative": "-3\t2010-07-25T11:40:18Z\t48.8\t2.3\t7",
    "bad_time_month_13": "1\t2010-13-25T11:40:18Z\t48.8\t2.3\t7",
    "bad_time_feb_30": "1\t2010-02-30T11:40:18Z\t48.8\t2.3\t7",
    "bad_time_no_zone": "1\t2010-07-25 11:40:18\t48.8\t2.3\t7",
    "non_numeric_lat": "1\t2010-07-25T11:40:18Z\tabc\t2.3\t7",
    "non_numeric_lon_empty": "1\t2010-07-25T11:40:18Z\t48.8\t\t7",
    "non_numeric_nan": "1\t2010-07-25T11:40:18Z\tnan\t2.3\t7",
    "out_of_range_lat": "1\t2010-07-25T11:40:18Z\t90.0001\t2.3\t7",
    "out_of_range_lon": "1\t2010-07-25T11:40:18Z\t48.8\t-180.5\t7",
    "bad_location_id": "1\t2010-07-25T11:40:18Z\t48.8\t2.3\tL7",
    "user_overflows_int64": "99999999999999999999999\t2010-07-25T11:40:18Z\t48.8\t2.3\t7",
    "location_overflows_int64": "1\t2010-07-25T11:40:18Z\t48.8\t2.3\t99999999999999999999999",
    "lat_overflows_float": "1\t2010-07-25T11:40:18Z\t1e400\t2.3\t7",
}
EXPECTED_REASON = {
    "blank_line": "blank_line",
    "too_few_columns": "wrong_column_count",
    "too_many_columns": "wrong_column_count",
    "bad_user_text": "bad_user",
    "bad_user_negative": "bad_user",
    "bad_time_month_13": "bad_time",
    "bad_time_feb_30": "bad_time",
    "bad_time_no_zone": "bad_time",
    "non_numeric_lat": "non_numeric_coordinate",
    "non_numeric_lon_empty": "non_numeric_coordinate",
    "non_numeric_nan": "non_numeric_coordinate",
    "out_of_range_lat": "out_of_range_coordinate",
    "out_of_range_lon": "out_of_range_coordinate",
    "bad_location_id": "bad_location_id",
    "user_overflows_int64": "bad_user",
    "location_overflows_int64": "bad_location_id",
    "lat_overflows_float": "out_of_range_coordinate",
}


@pytest.mark.parametrize("case", sorted(MALFORMED_CASES))
def test_snap_malformed_row_counted_under_its_reason(tmp_path, case):
    parsed = read_snap(write(tmp_path / "c.txt", [GOOD, MALFORMED_CASES[case], GOOD2]))
    reason = EXPECTED_REASON[case]
    assert parsed.malformed == {r: int(r == reason) for r in MALFORMED_REASONS}
    assert parsed.kept == 2 and parsed.rows_read == 3
    assert parsed.checkins["user"].tolist() == [1, 24]  # the good rows survive, in order
    assert parsed.examples[reason]  # an example line is kept for the log
    assert_accounted(parsed)


def test_snap_boundary_coordinates_are_valid(tmp_path):
    lines = ["1\t2010-07-25T11:40:18Z\t90\t180\t7", "2\t2010-07-25T11:40:18Z\t-90.0\t-180.0\t7"]
    parsed = read_snap(write(tmp_path / "c.txt", lines))
    assert parsed.kept == 2 and parsed.malformed_total == 0


@pytest.mark.parametrize(
    "time, valid",
    [
        ("2012-02-29T23:59:59Z", True),  # leap year
        ("2000-02-29T00:00:00Z", True),  # divisible by 400: leap
        ("1900-02-29T00:00:00Z", False),  # divisible by 100, not 400: not leap
        ("2010-02-29T00:00:00Z", False),
        ("2010-04-31T00:00:00Z", False),
        ("2010-12-31T00:00:00Z", True),
        ("2010-07-00T00:00:00Z", False),
        ("2010-00-10T00:00:00Z", False),
        ("2010-07-25T24:00:00Z", False),
        ("2010-07-25T23:60:00Z", False),
        ("2010-07-25T23:59:60Z", False),
        ("2010-07-25T11:40:18", False),
        (" 2010-07-25T11:40:18Z", False),
    ],
)
def test_snap_time_validation(tmp_path, time, valid):
    parsed = read_snap(write(tmp_path / "c.txt", [f"1\t{time}\t48.8\t2.3\t7"]))
    assert parsed.kept == int(valid) and parsed.malformed["bad_time"] == int(not valid)


def test_snap_row_with_several_faults_counts_once_under_first_reason(tmp_path):
    parsed = read_snap(write(tmp_path / "c.txt", ["x\tnever\tabc\t999\tL", GOOD]))
    assert parsed.malformed["bad_user"] == 1 and parsed.malformed_total == 1


def test_snap_many_rows_counts_add_up(tmp_path):
    rng = np.random.default_rng(7)
    lines, expected_bad = [], 0
    for i in range(2000):
        if rng.random() < 0.1:
            lines.append(MALFORMED_CASES[sorted(MALFORMED_CASES)[i % len(MALFORMED_CASES)]])
            expected_bad += 1
        else:
            lines.append(
                f"{i}\t2010-07-25T11:40:18Z\t{rng.uniform(-90, 90)!r}\t{rng.uniform(-180, 180)!r}\t{i}"
            )
    parsed = read_snap(write(tmp_path / "c.txt.gz", lines))
    assert parsed.rows_read == 2000 and parsed.malformed_total == expected_bad
    assert_accounted(parsed)


def _gzip_half(data: bytes) -> bytes:
    compressed = gzip.compress(data)
    return compressed[: len(compressed) // 2]


ROWS = ("\n".join([GOOD, GOOD2] * 3000) + "\n").encode()  # > 64 KiB, so truncation is past the sniffed start

# (file name, content, reader, message after "check-in file <path>: ")
UNREADABLE = {
    "empty-snap": ("e.txt", b"", read_snap, r"the file is empty \(0 bytes\); expected SNAP check-ins"),
    "empty-csv": ("e.csv", b"", read_csv, r"the file is empty \(0 bytes\); expected CSV with a header row\."),
    "empty-gz": ("e.txt.gz", gzip.compress(b""), read_snap, r"the file has no check-in rows"),
    "header-only-csv": ("h.csv", b"latitude,longitude\n", read_csv, r"the file has no check-in rows"),
    "blank-first-line-csv": (
        "b.csv",
        b"\nlatitude,longitude\n1,2\n",
        read_csv,
        r"the first line is empty; expected a header row",
    ),
    "truncated-gz": (
        "t.txt.gz",
        _gzip_half(ROWS),
        read_snap,
        r"a truncated or damaged gzip stream \(.*\); download or copy it again\.",
    ),
    "truncated-gz-csv": (
        "t.csv.gz",
        _gzip_half(b"latitude,longitude\n" + b"48.1,2.1\n" * 20000),
        read_csv,
        r"a truncated or damaged gzip stream",
    ),
    "gzip-named-txt": (
        "g.txt",
        gzip.compress(ROWS),
        read_snap,
        r"the file is gzip-compressed but its name does not end in \.gz; rename it to g\.txt\.gz\.",
    ),
    "text-named-gz": (
        "p.txt.gz",
        ROWS,
        read_snap,
        r"the name ends in \.gz but the file is not gzip-compressed \(it starts with b'1\\t'\)",
    ),
    "binary": ("x.txt", bytes(range(256)) * 10, read_snap, r"binary data \(a NUL byte at byte 0\), not text"),
    "latin-1": (
        "l.txt",
        "1\t2010-07-25T11:40:18Z\t48.8\t2.3\tcafé\n".encode("latin-1"),
        read_snap,
        r"not UTF-8 text \(byte 0xe9 at offset 35\)",
    ),
    "non-utf8-past-start": (
        "n.txt",
        ROWS + b"\xff\xfe\t1\t2\t3\t4\n",
        read_snap,
        r"not UTF-8 text past its beginning",
    ),
    "corrupt-gzip-body": (
        "c.txt.gz",
        gzip.compress(ROWS)[:10] + bytes(200),
        read_snap,
        r"(not a readable gzip file|a truncated or damaged gzip stream)",
    ),
}


@pytest.mark.parametrize("case", sorted(UNREADABLE))
def test_unreadable_files_raise_one_line_naming_the_file(tmp_path, case):
    name, content, reader, message = UNREADABLE[case]
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(DataFileError, match=rf"^check-in file {re.escape(str(path))}: {message}") as raised:
        reader(path)
    assert "\n" not in str(raised.value)
    assert isinstance(raised.value, ValueError)


def test_gzip_is_read_by_content_check_not_only_name(tmp_path):
    parsed = read_snap(write(tmp_path / "ok.txt.gz", [GOOD, GOOD2]))
    assert parsed.rows_read == 2 and parsed.kept == 2


def test_missing_file_is_a_clear_error(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"check-in file not found: .*nothere\.txt"):
        read_snap(tmp_path / "nothere.txt")


# ------------------------------------------------------------------------------------ CSV format


def test_csv_named_columns_and_user(tmp_path):
    path = write(tmp_path / "c.csv.gz", ["uid,place,lat,lng", "5,330,37.61,-122.38", "6,331,37.70,-122.40"])
    parsed = read_csv(path, lat_column="lat", lon_column="lng", user_column="uid")
    assert parsed.checkins["latitude"].tolist() == [37.61, 37.70]
    assert parsed.checkins["longitude"].tolist() == [-122.38, -122.40]
    assert parsed.checkins["user"].tolist() == [5, 6]
    assert_accounted(parsed)


def test_csv_without_user_column_has_null_users(tmp_path):
    path = write(tmp_path / "c.csv", ["latitude,longitude", "37.61,-122.38"])
    parsed = read_csv(path)
    assert parsed.checkins["user"].isna().all() and parsed.kept == 1


def test_csv_malformed_rows_counted(tmp_path):
    lines = [
        "user,latitude,longitude",
        "1,37.6,-122.4",
        "2,37.6",
        "",
        "x,37.6,-122.4",
        "4,abc,-122.4",
        "5,37.6,-200",
        "6,37.7,-122.3",
    ]
    parsed = read_csv(write(tmp_path / "c.csv", lines))
    assert parsed.malformed == {
        "blank_line": 1,
        "wrong_column_count": 1,
        "bad_user": 1,
        "bad_time": 0,
        "non_numeric_coordinate": 1,
        "out_of_range_coordinate": 1,
        "bad_location_id": 0,
    }
    assert parsed.checkins["user"].tolist() == [1, 6]
    assert_accounted(parsed)


def test_csv_unknown_coordinate_column_names_the_parameter(tmp_path):
    path = write(tmp_path / "c.csv", ["lat,lon", "1,2"])
    with pytest.raises(
        ValueError, match=r"`lat_column` must name a column of c.csv \(one of lat, lon\); got 'latitude'"
    ):
        read_csv(path)


def test_read_checkins_dispatches_and_rejects_unknown_format(tmp_path):
    snap = write(tmp_path / "c.txt", [GOOD])
    assert read_checkins(snap, format="snap").kept == 1
    with pytest.raises(ValueError, match="`format` must be one of 'snap', 'csv'; got 'tsv'"):
        read_checkins(snap, format="tsv")


def test_check_bad_fraction(tmp_path):
    parsed = read_snap(write(tmp_path / "c.txt", [GOOD, "", GOOD2, "x"]))  # 2 of 4 malformed
    check_bad_fraction(parsed, 0.5)  # exactly at the limit is allowed
    with pytest.raises(
        ValueError,
        match=r"source s: 2 of 4 rows are malformed \(0.5, .*`data.max_bad_fraction` allows at most 0.4",
    ):
        check_bad_fraction(parsed, 0.4, name="source s")
    with pytest.raises(ValueError, match=r"`max_bad_fraction` must be in \[0, 1\]; got 1.5"):
        check_bad_fraction(parsed, 1.5)


# --------------------------------------------------------------------------------------- summary

BOX = dict(name="box", lat_min=10.0, lat_max=11.0, lon_min=20.0, lon_max=22.0, n_lat=4, n_lon=8)


def test_summary_rows(tmp_path):
    parsed = read_snap(write(tmp_path / "c.txt", [GOOD, "", GOOD2]))
    region = Region(**BOX, paper_count=200)
    frame = combine_summaries(
        [source_summary(parsed, name="s"), region_summary(region, rows_considered=2, kept=250)]
    )
    assert list(frame.columns) == list(SUMMARY_COLUMNS)
    assert frame.loc[0, ["rows_read", "malformed", "malformed_blank_line", "kept"]].tolist() == [3, 1, 1, 2]
    assert frame.loc[1, "relative_difference"] == pytest.approx(0.25)
    assert pd.isna(frame.loc[0, "paper_count"]) and pd.isna(frame.loc[1, "malformed"])


# ------------------------------------------------------------------------------ the CI fixture


def test_ci_fixture_matches_its_construction():
    expected = json.loads((REPO / ".test" / "data" / "checkins_fixture.expected.json").read_text())
    parsed = read_snap(REPO / ".test" / "data" / "checkins_fixture.txt")
    duplicates = find_duplicates(parsed)
    assert parsed.rows_read == expected["rows"] and len(duplicates.checkins) == expected["valid"]
    assert (
        duplicates.in_file == expected["duplicates"]
        and parsed.kept == expected["valid"] + expected["duplicates"]
    )
    assert parsed.malformed == {reason: expected["malformed"].get(reason, 0) for reason in MALFORMED_REASONS}


def test_ci_fixture_is_regenerated_identically(tmp_path):
    spec = importlib.util.spec_from_file_location("make_fixture", REPO / ".test" / "make_fixture.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.main(tmp_path)
    for name in ("checkins_fixture.txt", "checkins_fixture.expected.json"):
        assert (tmp_path / name).read_bytes() == (REPO / ".test" / "data" / name).read_bytes()


# ------------------------------------------------------------------------------ exact duplicates


def test_duplicates_in_file_are_counted_and_dropped_keeping_the_first(tmp_path):
    other_time = GOOD.replace("11:40:18", "11:40:19")  # same place and user, another instant: not a duplicate
    parsed = read_snap(write(tmp_path / "d.txt", [GOOD, GOOD2, GOOD, other_time, GOOD, "", GOOD2]))
    assert parsed.kept == 6  # the reader keeps every valid row
    dropped = find_duplicates(parsed)
    assert (dropped.in_file, dropped.of_earlier_source, dropped.total, dropped.dropped) == (3, 0, 3, 3)
    assert dropped.checkins["time"].tolist() == [
        "2010-07-25T11:40:18Z",
        "2010-05-20T06:26:35Z",
        "2010-07-25T11:40:19Z",
    ]
    assert "row_key" in dropped.checkins.columns
    kept = find_duplicates(parsed, policy="keep")
    assert (kept.total, kept.dropped, len(kept.checkins)) == (3, 0, 6)
    assert "exact duplicate rows: 3 (dropped)" in dropped.describe()
    assert "kept (data.duplicates: keep)" in kept.describe()


def test_duplicates_of_an_earlier_source(tmp_path):
    first = find_duplicates(read_snap(write(tmp_path / "a.txt", [GOOD, GOOD2])))
    second = read_snap(write(tmp_path / "b.txt.gz", [GOOD2, "7\t2010-07-25T11:40:18Z\t48.0\t2.0\t1", GOOD2]))
    found = find_duplicates(second, earlier=first.checkins)
    # GOOD2 twice: both repeat the first source (the second also repeats its own file; counted once)
    assert (found.in_file, found.of_earlier_source) == (0, 2)
    assert found.checkins["user"].tolist() == [7]


def test_csv_duplicates_compare_every_column_not_only_coordinates(tmp_path):
    # Columns the reader ignores (here `time`) still distinguish rows.
    path = write(
        tmp_path / "c.csv", ["user,time,latitude,longitude", "1,a,48.1,2.1", "1,b,48.1,2.1", "1,a,48.1,2.1"]
    )
    found = find_duplicates(read_csv(path))
    assert (found.in_file, len(found.checkins)) == (1, 2)


def test_duplicate_policy_is_checked():
    parsed = read_snap(REPO / ".test" / "data" / "checkins_fixture.txt")
    with pytest.raises(ValueError, match=r"`policy` must be one of 'drop', 'keep'; got 'remove'\."):
        find_duplicates(parsed, policy="remove")


def test_summary_reports_duplicates(tmp_path):
    parsed = read_snap(write(tmp_path / "d.txt", [GOOD, GOOD, GOOD2]))
    row = combine_summaries([source_summary(parsed, name="s", duplicates=find_duplicates(parsed))]).iloc[0]
    assert (
        row["duplicates_in_file"],
        row["duplicates_of_earlier_source"],
        row["duplicates_dropped"],
        row["kept"],
    ) == (1, 0, 1, 2)
