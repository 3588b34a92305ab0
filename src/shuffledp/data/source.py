"""Which Gowalla data a run uses, decided once and recorded: the SNAP file, bundled subsets or local files.

``data.source`` names a policy; :func:`choose_source` turns it into a *record* (``results/data/source.json``):
the source actually used, why, and every file with its format, label, duplicates policy and SHA-256.
Every later data job reads the record, never the policy, so one run cannot mix sources.

* ``snap``: the downloaded SNAP file (the download is the caller's; offline, the run stops).
* ``auto``: the SNAP file when it is present or can be downloaded; otherwise the subsets bundled with
  the repository (``data.bundled``), checked against their SHA-256 list, with one line saying so.
* ``local``: the user's files (``data.local_files``, relative to ``local_data_dir``).

:func:`data_label` renders the record (with the crop counts, once known) as the one line every figure,
table and the report carry.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Mapping
from pathlib import Path

from shuffledp.data.download import DownloadError, NetworkUnreachableError

__all__ = [
    "SOURCE_KINDS",
    "SNAP_FILE_NAME",
    "BundledDataError",
    "source_id",
    "read_checksums",
    "bundled_entries",
    "local_entries",
    "choose_source",
    "read_source_record",
    "data_label",
    "region_label",
]

#: the sources a run can end up with (``data.source`` also accepts ``auto``, which becomes one of them)
SOURCE_KINDS = ("snap", "bundled", "local")
#: the SNAP file of all check-ins
SNAP_FILE_NAME = "loc-gowalla_totalCheckins.txt.gz"
_FILE_KEYS = ("format", "lat_column", "lon_column", "user_column", "label")


def file_sha256(path) -> str:
    """Hex SHA-256 of the file at ``path``, read in 1 MiB chunks.

    Args:
        path: the file.

    Returns:
        64 lower-case hex digits.
    """
    digest = hashlib.sha256()
    with open(Path(path), "rb") as stream:
        for chunk in iter(lambda: stream.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


class BundledDataError(RuntimeError):
    """A bundled file is missing or its SHA-256 differs from the checksum list."""


def source_id(entry: Mapping) -> str:
    """Wildcard-safe id of a file entry: its label, else its file name without extensions.

    Args:
        entry: a ``data.local_files`` / ``data.bundled.files`` entry (``path``, optional ``label``).

    Returns:
        Lower-case letters, digits and underscores (``"source"`` if nothing is left).
    """
    text = entry.get("label") or Path(entry["path"]).name.split(".")[0]
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_") or "source"


def read_checksums(path) -> dict[str, str]:
    """Read a ``sha256sum`` list (``<hex digest>  <file name>``; ``#`` comments and blank lines skipped).

    Args:
        path: the checksum file.

    Returns:
        File name -> lower-case hex digest.

    Raises:
        BundledDataError: a line is not ``<64 hex digits> <name>``.
    """
    listed = {}
    for number, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        match = re.fullmatch(r"([0-9a-fA-F]{64}) [ *](.+)", line.strip())
        if match is None:
            raise BundledDataError(
                f"{Path(path).name} line {number}: expected '<sha256>  <file>'; got {line!r}."
            )
        listed[match.group(2)] = match.group(1).lower()
    return listed


def _entry(entry: Mapping, path: Path, duplicates: str) -> dict:
    item: dict[str, object] = {"id": source_id(entry), "path": str(path), "file_name": path.name}
    item.update({key: entry.get(key) for key in _FILE_KEYS})
    item["duplicates"] = entry.get("duplicates", duplicates)
    return item


def _unique(entries: list[dict], key: str) -> list[dict]:
    seen = set()
    for item in entries:
        if item["id"] in seen:
            raise ValueError(
                f"`{key}` has two files with source id {item['id']!r}; give them distinct labels."
            )
        seen.add(item["id"])
    return entries


def bundled_entries(data: Mapping, *, repo) -> list[dict]:
    """The bundled files of ``data.bundled`` (paths resolved against the repository ``repo``).

    Args:
        data: the ``data`` section of the configuration.
        repo: the repository (the workflow's source tree).

    Returns:
        One mapping per file: ``id``, ``path``, ``file_name``, ``format``, the column names, ``label``
        and ``duplicates`` (the file's own, else ``data.duplicates``).

    Raises:
        ValueError: two files have the same source id.
    """
    directory = Path(repo) / data["bundled"]["directory"]
    entries = [
        _entry(entry, directory / entry["path"], data["duplicates"]) for entry in data["bundled"]["files"]
    ]
    return _unique(entries, "data.bundled.files")


def local_entries(data: Mapping, *, local_data_dir=None) -> list[dict]:
    """The files of ``data.local_files`` (relative paths resolved against ``local_data_dir``).

    Args:
        data: the ``data`` section of the configuration.
        local_data_dir: base directory of relative paths (``None``: the working directory).

    Returns:
        One mapping per file, as :func:`bundled_entries`.

    Raises:
        ValueError: two files have the same source id.
    """
    entries = []
    for entry in data["local_files"]:
        path = Path(entry["path"])
        if not path.is_absolute() and local_data_dir:
            path = Path(local_data_dir) / path
        entries.append(_entry(entry, path, data["duplicates"]))
    return _unique(entries, "data.local_files")


def _snap_entry(data: Mapping, raw_path) -> dict:
    path = Path(raw_path)
    return {
        "id": "snap",
        "path": str(path),
        "file_name": path.name,
        "format": "snap",
        "lat_column": None,
        "lon_column": None,
        "user_column": None,
        "label": None,  # the data summary then shows the file name, as for any unlabelled file
        "duplicates": data["duplicates"],
        "url": data["snap"]["url"],
    }


def _checked_bundle(data: Mapping, repo) -> list[dict]:
    entries = bundled_entries(data, repo=repo)
    checksum_file = Path(repo) / data["bundled"]["directory"] / data["bundled"]["checksums"]
    if not checksum_file.is_file():
        raise BundledDataError(f"the checksum list of the bundled data is missing: {checksum_file}.")
    listed = read_checksums(checksum_file)
    for item in entries:
        if not Path(item["path"]).is_file():
            raise BundledDataError(f"bundled data file missing: {item['path']} (data.bundled.files).")
        digest = file_sha256(item["path"])
        if item["file_name"] not in listed:
            raise BundledDataError(f"{checksum_file.name} lists no sha256 for {item['file_name']}.")
        if digest != listed[item["file_name"]]:
            raise BundledDataError(
                f"bundled data file {item['file_name']} has sha256 {digest}; {checksum_file.name} says "
                f"{listed[item['file_name']]}. The file was changed: restore it (git checkout)."
            )
    return entries


def choose_source(
    data: Mapping,
    *,
    repo,
    raw_path,
    local_data_dir=None,
    fetch: Callable[[], object] | None = None,
    log: Callable[[str], None] = print,
) -> dict:
    """Decide which files the run reads and return the record written to ``results/data/source.json``.

    Args:
        data: the ``data`` section of the configuration (``source``: auto, snap or local).
        repo: the repository, against which ``data.bundled.directory`` is resolved.
        raw_path: where the SNAP file is (or is downloaded to).
        local_data_dir: base directory of relative ``data.local_files`` paths.
        fetch: downloads the SNAP file to ``raw_path``, raising
            :class:`~shuffledp.data.download.DownloadError` on failure; called for ``snap`` and
            ``auto`` when ``raw_path`` does not exist yet.
        log: receives one line when ``auto`` falls back to the bundled subsets.

    Returns:
        ``{"requested", "source", "reason", "files"}`` (and ``detail``, the download's error, when
        ``auto`` fell back); each file as :func:`bundled_entries`, plus its ``bytes`` and ``sha256``.

    Raises:
        DownloadError: ``snap`` and the download failed.
        BundledDataError: ``auto`` fell back and a bundled file is missing or changed.
        ValueError: ``data.source`` is not auto, snap or local.
    """
    requested = data["source"]
    detail = None
    if requested not in ("auto", "snap", "local"):
        raise ValueError(f"`data.source` must be one of 'auto', 'snap', 'local'; got {requested!r}.")
    if requested == "local":
        files, source, reason = (
            local_entries(data, local_data_dir=local_data_dir),
            "local",
            "data.source: local",
        )
    elif Path(raw_path).is_file():
        files, source, reason = [_snap_entry(data, raw_path)], "snap", "the SNAP file was already downloaded"
    else:
        try:
            if fetch is not None:
                fetch()
            files, source, reason = [_snap_entry(data, raw_path)], "snap", "downloaded from SNAP"
        except DownloadError as error:
            if requested == "snap":
                raise
            files, source = _checked_bundle(data, repo), "bundled"
            reason = (
                "SNAP could not be reached"
                if isinstance(error, NetworkUnreachableError)
                else ("the SNAP download failed")
            )
            detail = _first_sentence(error)
            log(
                f"Gowalla data: {reason} ({detail}); using the bundled subsets instead (Paris-area SNAP rows "
                "and San Francisco as processed by Oya et al. 2017; data/bundled/SOURCE.md), not the full "
                "SNAP file."
            )
    for item in files:
        path = Path(item["path"])
        item["bytes"] = path.stat().st_size if path.is_file() else None
        item["sha256"] = file_sha256(path) if path.is_file() else None
    record = {"requested": requested, "source": source, "reason": reason, "files": files}
    return record if detail is None else {**record, "detail": detail}


def _first_sentence(error: BaseException) -> str:
    text = str(error).split(". ", 1)[0].rstrip(".")
    return text[:200]


def read_source_record(path) -> dict:
    """Read ``results/data/source.json`` (written by the workflow's fetch step).

    Args:
        path: the record.

    Returns:
        The record (see :func:`choose_source`).

    Raises:
        ValueError: the file is not a source record.
    """
    record = json.loads(Path(path).read_text(encoding="utf-8"))
    if not isinstance(record, dict) or record.get("source") not in SOURCE_KINDS or "files" not in record:
        raise ValueError(f"`{path}` is not a data source record (keys source, files).")
    return record


def _count(value) -> str:
    return f"{int(value):,}" if value is not None else "?"


def region_label(record: Mapping, region: Mapping) -> str:
    """One line naming the data of one region's figure or table, with its crop count against the paper's.

    Args:
        record: a source record (:func:`choose_source`).
        region: ``{"label", "kept", "paper_count"}`` of the region (its crop summary).

    Returns:
        E.g. ``"Data: bundled subset (not the full SNAP file): San Francisco, 116,413 check-ins in the
        crop (paper: 123,108)"``.
    """
    counts = f"{region['label']}, {_count(region.get('kept'))} check-ins in the crop"
    if region.get("paper_count") is not None:
        counts += f" (paper: {_count(region['paper_count'])})"
    return f"Data: {_source_words(record)}: {counts}"


def _source_words(record: Mapping) -> str:
    if record["source"] == "snap":
        return f"SNAP {SNAP_FILE_NAME}"
    if record["source"] == "bundled":
        return "bundled Gowalla subsets (not the full SNAP file)"
    names = ", ".join(item.get("label") or item["file_name"] for item in record["files"])
    return f"local files ({names})"


def data_label(record: Mapping, regions: Mapping | None = None) -> str:
    """One line naming the data of a run, with every region's crop count against the paper's.

    Args:
        record: a source record (:func:`choose_source`).
        regions: region name -> ``{"label", "kept", "paper_count"}``; ``None`` names the source only.

    Returns:
        E.g. ``"Data: bundled Gowalla subsets (not the full SNAP file): San Francisco 116,413 check-ins
        (paper: 123,108); Paris 11,190 (paper: 10,260)"``.
    """
    text = f"Data: {_source_words(record)}"
    parts = []
    for index, region in enumerate((regions or {}).values()):
        part = f"{region['label']} {_count(region.get('kept'))}" + (" check-ins" if index == 0 else "")
        if region.get("paper_count") is not None:
            part += f" (paper: {_count(region['paper_count'])})"
        parts.append(part)
    return text + (": " + "; ".join(parts) if parts else "")
