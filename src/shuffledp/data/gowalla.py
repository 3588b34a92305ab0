"""Gowalla check-ins: parse SNAP text and CSV files and count malformed rows (row validation).

Everything here is a pure function of arrays / DataFrames (plus the readers, which only read).
Parsing is vectorised with Arrow (the full SNAP file has 6.4 million rows).

Malformed rows
    Every input row is either kept or counted under exactly one reason of :data:`MALFORMED_REASONS`,
    checked in that order (a row with a bad user id *and* a bad latitude counts as ``bad_user``).
    Nothing is dropped silently: ``rows_read == len(checkins) + sum(malformed.values())``.

Unreadable files
    A file that cannot be a check-in file -- empty, no rows, a truncated or damaged gzip stream, gzip
    data named without ``.gz`` or text named ``.gz``, binary or non-UTF-8 content -- raises
    :class:`DataFileError` with one line naming the file, what is wrong and the fix.

Room: parsing and row validation only. Exact duplicates are found in :mod:`shuffledp.data.duplicates`,
regions and grids live in :mod:`shuffledp.data.geometry`, the summary table in
:mod:`shuffledp.data.summary`. Imports Arrow, numpy, pandas and the private helpers.
"""

from __future__ import annotations

import gzip
import zlib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pa_csv

from shuffledp._progress import progress
from shuffledp._validation import check_real

__all__ = [
    "DataFileError",
    "MALFORMED_REASONS",
    "SNAP_COLUMNS",
    "ParsedCheckins",
    "read_snap",
    "read_csv",
    "read_checkins",
    "check_bad_fraction",
]

#: reasons a row is malformed, in the order they are checked (each row counts under the first)
MALFORMED_REASONS = (
    "blank_line",  # an empty line
    "wrong_column_count",  # not exactly the expected number of fields
    "bad_user",  # user id is not a non-negative integer (at most 18 digits)
    "bad_time",  # time is not an ISO-8601 UTC timestamp YYYY-MM-DDTHH:MM:SSZ of a real instant
    "non_numeric_coordinate",  # latitude or longitude is not a decimal number
    "out_of_range_coordinate",  # latitude outside [-90, 90] or longitude outside [-180, 180]
    "bad_location_id",  # location id is not a non-negative integer (at most 18 digits)
)

#: the five tab-separated fields of a SNAP ``loc-gowalla_totalCheckins`` line
SNAP_COLUMNS = ("user", "time", "latitude", "longitude", "location_id")

#: examples kept per reason, in the malformed-line report and in the duplicate report (data.duplicates)
EXAMPLES_PER_REASON = 3
_GZIP_MAGIC = b"\x1f\x8b"
_SNIFF_BYTES = 1 << 16


class DataFileError(ValueError):
    """A check-in file cannot be read; the one-line message names the file and what is wrong."""


_INTEGER = r"^[0-9]{1,18}$"  # non-negative and fits in int64
_DECIMAL = r"^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?$"
_ISO_UTC = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$"


@dataclass(frozen=True)
class ParsedCheckins:
    """Result of reading one check-in file.

    ``checkins`` has columns ``user`` (nullable Int64; null when the file has no user column),
    ``latitude``, ``longitude`` (float64) and, for SNAP files, ``time`` (string) and ``location_id``
    (int64). ``malformed`` maps every reason of :data:`MALFORMED_REASONS` to its count and
    ``examples`` holds a few offending lines per reason (for logs). ``row_keys`` (uint64, one per
    row of ``checkins``) is a hash of the row's raw text fields, all columns of the file included;
    :func:`find_duplicates` uses it.
    """

    checkins: pd.DataFrame
    rows_read: int
    malformed: dict[str, int]
    examples: dict[str, list[str]] = field(default_factory=dict)
    row_keys: np.ndarray | None = None

    @property
    def malformed_total(self) -> int:
        return int(sum(self.malformed.values()))

    @property
    def kept(self) -> int:
        return len(self.checkins)

    @property
    def bad_fraction(self) -> float:
        return self.malformed_total / self.rows_read if self.rows_read else 0.0

    def describe(self) -> str:
        """Multi-line text for a log: rows read, kept, malformed by reason with examples."""
        lines = [
            f"rows read: {self.rows_read}",
            f"kept: {self.kept}",
            f"malformed: {self.malformed_total} ({100 * self.bad_fraction:.4f}%)",
        ]
        for reason in MALFORMED_REASONS:
            count = self.malformed.get(reason, 0)
            lines.append(f"  {reason}: {count}")
            for example in self.examples.get(reason, []):
                lines.append(f"    e.g. {example!r}")
        return "\n".join(lines)


# --------------------------------------------------------------------------------------- reading


class _InvalidRows:
    """Arrow ``invalid_row_handler``: counts rows with the wrong number of fields (and skips them)."""

    def __init__(self) -> None:
        self.count = 0
        self.examples: list[str] = []

    def __call__(self, row) -> str:
        self.count += 1
        if len(self.examples) < EXAMPLES_PER_REASON:
            self.examples.append(row.text[:200])
        return "skip"


def _matches(column: pa.ChunkedArray, pattern: str) -> np.ndarray:
    return pc.match_substring_regex(column, pattern).to_numpy(zero_copy_only=False).astype(bool)


def _to_float(column: pa.ChunkedArray, valid: np.ndarray) -> np.ndarray:
    """Parse decimal strings; entries where ``valid`` is False become NaN."""
    mask = pa.array(valid)
    cleaned = pc.if_else(mask, column.combine_chunks(), pa.scalar("nan"))
    return pc.cast(cleaned, pa.float64()).to_numpy(zero_copy_only=False)


def _to_int(column: pa.ChunkedArray, valid: np.ndarray) -> np.ndarray:
    mask = pa.array(valid)
    cleaned = pc.if_else(mask, column.combine_chunks(), pa.scalar("-1"))
    return pc.cast(cleaned, pa.int64()).to_numpy(zero_copy_only=False)


def _valid_times(column: pa.ChunkedArray) -> np.ndarray:
    """ISO-8601 UTC ``YYYY-MM-DDTHH:MM:SSZ`` naming a real instant (month 1-12, day within the month
    with leap years, hour < 24, minute < 60, second < 60). Vectorised: shape by regex, then fields."""
    shaped = _matches(column, _ISO_UTC)
    text = pc.if_else(pa.array(shaped), column.combine_chunks(), pa.scalar("2000-01-01T00:00:00Z"))

    def field(start: int, stop: int) -> np.ndarray:
        part = pc.utf8_slice_codeunits(text, start, stop)
        return pc.cast(part, pa.int64()).to_numpy(zero_copy_only=False)

    year, month, day = field(0, 4), field(5, 7), field(8, 10)
    hour, minute, second = field(11, 13), field(14, 16), field(17, 19)
    leap = ((year % 4 == 0) & (year % 100 != 0)) | (year % 400 == 0)
    month_ok = (month >= 1) & (month <= 12)
    days = np.array([0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31])[np.where(month_ok, month, 0)]
    days = days + ((month == 2) & leap)
    return shaped & month_ok & (day >= 1) & (day <= days) & (hour < 24) & (minute < 60) & (second < 60)


def _classify(table: pa.Table, checks: list[tuple[str, np.ndarray]], n_rows: int):
    """Assign each row the first failing reason; return (ok mask, counts, example row indices)."""
    assigned = np.zeros(n_rows, dtype=bool)
    counts: dict[str, int] = {}
    firsts: dict[str, np.ndarray] = {}
    for reason, bad in checks:
        new = bad & ~assigned
        counts[reason] = int(new.sum())
        firsts[reason] = np.flatnonzero(new)[:EXAMPLES_PER_REASON]
        assigned |= new
    return ~assigned, counts, firsts


def _row_text(table: pa.Table, index: int, separator: str) -> str:
    return separator.join(str(table.column(i)[index].as_py()) for i in range(table.num_columns))[:200]


def _finish(table, checks, separator, invalid: _InvalidRows, columns: dict) -> ParsedCheckins:
    n_rows = table.num_rows
    ok, counts, firsts = _classify(table, checks, n_rows)
    counts["wrong_column_count"] = invalid.count
    malformed = {reason: counts.get(reason, 0) for reason in MALFORMED_REASONS}
    examples = {
        reason: [_row_text(table, int(i), separator) for i in firsts.get(reason, [])]
        for reason in MALFORMED_REASONS
    }
    examples["wrong_column_count"] = list(invalid.examples)
    keep = pa.array(ok)
    frame = pd.DataFrame(
        {
            name: values.filter(keep).to_pandas() if isinstance(values, pa.ChunkedArray) else values[ok]
            for name, values in columns.items()
        }
    )
    if "user" in frame:
        frame["user"] = frame["user"].astype("Int64")
    else:
        # pandas-stubs leaves extension arrays out of insert()'s value type; pandas takes them
        frame.insert(0, "user", pd.array([pd.NA] * len(frame), dtype="Int64"))  # type: ignore[arg-type]
    return ParsedCheckins(
        checkins=frame.reset_index(drop=True),
        rows_read=n_rows + invalid.count,
        malformed=malformed,
        examples={reason: found for reason, found in examples.items() if found},
        row_keys=_row_keys(table.filter(keep)),
    )


def _row_keys(table: pa.Table) -> np.ndarray:
    """uint64 hash of each row's raw text fields (every column of the file, in order).

    The fields are joined with the unit separator U+001F (which cannot occur inside a field of a
    text file read here without changing the row) and hashed as Arrow-backed strings (about 1 s per
    million rows; hashing Python string objects is 3x slower).
    """
    if table.num_rows == 0:
        return np.zeros(0, dtype=np.uint64)
    joined = pc.binary_join_element_wise(*table.columns, "\x1f").combine_chunks()
    series = pd.Series(pd.arrays.ArrowStringArray(joined))
    return pd.util.hash_pandas_object(series, index=False).to_numpy(dtype=np.uint64)


def _coordinate_checks(latitude: pa.ChunkedArray, longitude: pa.ChunkedArray):
    numeric = _matches(latitude, _DECIMAL) & _matches(longitude, _DECIMAL)
    lat = _to_float(latitude, numeric)
    lon = _to_float(longitude, numeric)
    with np.errstate(invalid="ignore"):
        in_range = numeric & (np.abs(lat) <= 90.0) & (np.abs(lon) <= 180.0)
    return numeric, in_range, lat, lon


def read_snap(path) -> ParsedCheckins:
    """Read a SNAP ``loc-gowalla_totalCheckins`` file (plain text or ``.gz``).

    Each line is ``user<TAB>time<TAB>latitude<TAB>longitude<TAB>location id``, no header; time is
    ISO-8601 UTC (``2010-10-19T23:55:27Z``). Malformed lines are counted by reason (see module doc).
    """
    path = _check_file(path, "snap")
    invalid = _InvalidRows()
    table = _read_table(
        path,
        "snap",
        SNAP_COLUMNS,
        read_options=pa_csv.ReadOptions(column_names=list(SNAP_COLUMNS)),
        parse_options=pa_csv.ParseOptions(
            delimiter="\t", quote_char=False, ignore_empty_lines=False, invalid_row_handler=invalid
        ),
    )
    blank = _blank_rows(table, SNAP_COLUMNS)
    good_user = _matches(table["user"], _INTEGER)
    good_time = _valid_times(table["time"])
    numeric, in_range, lat, lon = _coordinate_checks(table["latitude"], table["longitude"])
    good_location = _matches(table["location_id"], _INTEGER)
    checks = [
        ("blank_line", blank),
        ("bad_user", ~good_user),
        ("bad_time", ~good_time),
        ("non_numeric_coordinate", ~numeric),
        ("out_of_range_coordinate", ~in_range),
        ("bad_location_id", ~good_location),
    ]
    columns = {
        "user": _to_int(table["user"], good_user),
        "latitude": lat,
        "longitude": lon,
        "time": table["time"],
        "location_id": _to_int(table["location_id"], good_location),
    }
    return _require_rows(path, _finish(table, checks, "\t", invalid, columns))


_FORMAT_TEXT = {
    "snap": "SNAP check-ins (user, time, latitude, longitude, location id separated by tabs)",
    "csv": "CSV with a header row",
}


def _fail(path: Path, what: str) -> DataFileError:
    return DataFileError(f"check-in file {path}: {what}")


def _check_file(path, format: str) -> Path:
    """Refuse, with one line naming the file, what cannot be a check-in file of ``format``.

    Checks the size, that gzip data is named ``.gz`` and ``.gz`` files hold gzip data, and that
    the first 64 KiB (decompressed) are UTF-8 text without NUL bytes. The rest of the file is checked
    while it is parsed (:func:`_read_table`).
    """
    path = _existing(path)
    expected = _FORMAT_TEXT[format]
    if path.stat().st_size == 0:
        raise _fail(path, f"the file is empty (0 bytes); expected {expected}.")
    with open(path, "rb") as handle:
        magic = handle.read(2)
    named_gz = path.suffix == ".gz"
    if magic == _GZIP_MAGIC and not named_gz:
        raise _fail(
            path,
            f"the file is gzip-compressed but its name does not end in .gz; rename it to {path.name}.gz.",
        )
    if named_gz and magic != _GZIP_MAGIC:
        raise _fail(
            path,
            f"the name ends in .gz but the file is not gzip-compressed (it starts with {magic!r}); "
            f"rename it without .gz, or compress it.",
        )
    try:
        with gzip.open(path, "rb") if named_gz else open(path, "rb") as handle:
            sample = handle.read(_SNIFF_BYTES)
    except (OSError, EOFError, zlib.error) as error:
        raise _fail(path, f"not a readable gzip file ({error}); download or copy it again.") from None
    nul = sample.find(b"\x00")
    if nul >= 0:
        raise _fail(path, f"binary data (a NUL byte at byte {nul}), not text; expected {expected}.")
    try:
        sample.decode("utf-8")
    except UnicodeDecodeError as error:
        cut = error.reason == "unexpected end of data" and len(sample) == _SNIFF_BYTES
        if not cut:  # not merely a character cut by the end of the sample
            raise _fail(
                path,
                f"not UTF-8 text (byte {sample[error.start]:#04x} at offset {error.start}); "
                f"expected {expected}.",
            ) from None
    return path


class _CountingFile:
    """A read-only binary file that reports the bytes read to a progress bar."""

    def __init__(self, path: Path, bar) -> None:
        self._handle = open(path, "rb")  # noqa: SIM115 -- this object owns the handle; close() closes it
        self._bar = bar
        self.closed = False

    def read(self, size=-1):
        data = self._handle.read(size)
        self._bar.update(len(data))
        return data

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return False

    def close(self) -> None:
        self._handle.close()
        self.closed = True


def _read_table(path: Path, format: str, names, **options) -> pa.Table:
    """``pyarrow.csv.read_csv`` with every column read as non-null text (validated afterwards).

    An empty stream gives a table of zero rows. Errors of the decompressor or the parser become
    :class:`DataFileError` naming the file. Shows a progress bar over the file's bytes (stderr, TTY only).
    """
    convert = pa_csv.ConvertOptions(
        column_types={name: pa.string() for name in names},
        strings_can_be_null=False,
        quoted_strings_can_be_null=False,
    )
    options.setdefault("read_options", pa_csv.ReadOptions())
    with progress(total=path.stat().st_size, desc=f"parsing {path.name}", unit="B") as bar:
        # With the bar off (stderr not a terminal) Arrow reads the file itself, with its own threads;
        # with the bar on, through a Python file object that counts the bytes read (slower).
        source = None if bar.disable else _CountingFile(path, bar)
        try:
            if source is None:
                stream = str(path)  # Arrow decompresses by the .gz extension
            else:
                stream = pa.PythonFile(source, mode="r")
                if path.suffix == ".gz":
                    stream = pa.CompressedInputStream(stream, "gzip")
            return pa_csv.read_csv(stream, convert_options=convert, **options)
        except pa.ArrowInvalid as error:
            message = str(error)
            if "Empty CSV file" in message:
                return pa.table({name: pa.array([], pa.string()) for name in names})
            if "UTF8" in message or "UTF-8" in message:
                raise _fail(
                    path, f"not UTF-8 text past its beginning; expected {_FORMAT_TEXT[format]}."
                ) from None
            first = message.splitlines()[0][:160]
            raise _fail(path, f"cannot be parsed as {_FORMAT_TEXT[format]} ({first}).") from None
        except (OSError, EOFError, zlib.error) as error:
            raise _fail(
                path, f"a truncated or damaged gzip stream ({error}); download or copy it again."
            ) from None
        finally:
            if source is not None:
                source.close()


def _require_rows(path: Path, parsed: ParsedCheckins) -> ParsedCheckins:
    if parsed.rows_read == 0:
        raise _fail(path, "the file has no check-in rows (only a header, or compressed empty text).")
    return parsed


def _blank_rows(table: pa.Table, names) -> np.ndarray:
    """Rows whose every field is empty (blank lines)."""
    blank = np.ones(table.num_rows, dtype=bool)
    for name in names:
        blank &= pc.equal(table[name], "").to_numpy(zero_copy_only=False).astype(bool)
    return blank


def _header(path: Path, delimiter: str) -> list[str]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8", newline="") as handle:
        first = handle.readline().rstrip("\r\n")
    return [name.strip().strip('"') for name in first.split(delimiter)]


def read_csv(
    path,
    *,
    lat_column: str = "latitude",
    lon_column: str = "longitude",
    user_column: str | None = "user",
    delimiter: str = ",",
) -> ParsedCheckins:
    """Read a CSV (plain or ``.gz``) with a header row naming the latitude and longitude columns.

    ``user_column`` is optional: when the file has no such column, ``user`` is null. Other columns
    are ignored. Malformed rows are counted by reason (time and location id are not checked).
    """
    path = _check_file(path, "csv")
    names = _header(path, delimiter)
    if names == [""]:
        raise _fail(path, "the first line is empty; expected a header row naming the columns.")
    for parameter, name in (("lat_column", lat_column), ("lon_column", lon_column)):
        if name not in names:
            raise ValueError(
                f"`{parameter}` must name a column of {path.name} (one of {', '.join(names)}); got {name!r}."
            )
    has_user = user_column is not None and user_column in names
    invalid = _InvalidRows()
    table = _read_table(
        path,
        "csv",
        names,
        read_options=pa_csv.ReadOptions(column_names=names, skip_rows=1),
        parse_options=pa_csv.ParseOptions(
            delimiter=delimiter, ignore_empty_lines=False, invalid_row_handler=invalid
        ),
    )
    blank = _blank_rows(table, names)
    numeric, in_range, lat, lon = _coordinate_checks(table[lat_column], table[lon_column])
    checks = [("blank_line", blank)]
    columns = {}
    if has_user:
        good_user = _matches(table[user_column], _INTEGER)
        checks.append(("bad_user", ~good_user))
        columns["user"] = _to_int(table[user_column], good_user)
    checks += [("non_numeric_coordinate", ~numeric), ("out_of_range_coordinate", ~in_range)]
    columns.update(latitude=lat, longitude=lon)
    return _require_rows(path, _finish(table, checks, delimiter, invalid, columns))


def read_checkins(path, *, format: str, lat_column=None, lon_column=None, user_column=None) -> ParsedCheckins:
    """Read ``path`` as ``format`` "snap" (:func:`read_snap`) or "csv" (:func:`read_csv`)."""
    if format == "snap":
        return read_snap(path)
    if format == "csv":
        return read_csv(
            path,
            lat_column=lat_column or "latitude",
            lon_column=lon_column or "longitude",
            user_column=user_column or "user",
        )
    raise ValueError(f"`format` must be one of 'snap', 'csv'; got {format!r}.")


def _existing(path) -> Path:
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"check-in file not found: {path}")
    return path


def check_bad_fraction(parsed: ParsedCheckins, max_bad_fraction: float, *, name: str = "source") -> None:
    """Raise ``ValueError`` when more than ``max_bad_fraction`` of the rows read are malformed."""
    max_bad_fraction = check_real(max_bad_fraction, "max_bad_fraction", low=0.0, high=1.0)
    if parsed.bad_fraction > max_bad_fraction:
        worst = max(parsed.malformed, key=lambda reason: parsed.malformed[reason])
        raise ValueError(
            f"{name}: {parsed.malformed_total} of {parsed.rows_read} rows are malformed "
            f"({parsed.bad_fraction:.4g}, mostly {worst}); `data.max_bad_fraction` allows at most "
            f"{max_bad_fraction:g}. Check the file's format or raise the limit."
        )
