"""Provenance manifests: what produced a results folder, from what, with which code.

A manifest (``results/<stage>/MANIFEST.json``) records, for one workflow stage:

* the configuration used, as YAML text, and the SHA-256 of that text (keys sorted, so the hash
  depends on the values only, not on the order they were written in);
* every seed found in the configuration (any key whose name contains ``seed``);
* the versions of the pinned packages (read with :mod:`importlib.metadata` from this package's own
  requirements), the Python version and the platform;
* the git commit of the workflow's source tree and whether it had uncommitted changes (a source
  tree that is not a git repository, or a machine without git, is recorded as such, not an error);
* the SHA-256 and size of every input, with the source it came from (a URL, a local path and label);
* which Gowalla data the run used (``data``: the SNAP file, the bundled subsets or local files, with
  their checksums and crop counts), as the workflow's fetch step recorded it;
* the SHA-256, size and modification time of every output;
* run time: when the stage's outputs were first and last written, the span between them, and the
  total job time recorded by Snakemake ``benchmark:`` files where the stage has them.

Every number in the reproduction report can thus be traced to a rule (the output's path), a config
value (the YAML and its hash) and an input checksum.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import importlib.metadata
import json
import platform
import re
import shutil
import subprocess
from collections.abc import Iterable, Mapping
from pathlib import Path

import yaml

from shuffledp import __version__
from shuffledp.io import atomic_write_text

__all__ = [
    "MANIFEST_SCHEMA_VERSION",
    "file_sha256",
    "config_yaml",
    "config_sha256",
    "find_seeds",
    "package_versions",
    "git_state",
    "platform_summary",
    "file_record",
    "benchmark_seconds",
    "output_time_span",
    "data_sources",
    "reference_files",
    "build_manifest",
    "write_manifest",
    "read_manifest",
    "STAGE_CONFIG_KEYS",
    "stage_config_differences",
]

#: bumped when the manifest's layout changes incompatibly
MANIFEST_SCHEMA_VERSION = 1

_CHUNK_BYTES = 1 << 20
_GIT_TIMEOUT_SECONDS = 20
_REQUIREMENT_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")


def _utc_iso(timestamp: float) -> str:
    return _dt.datetime.fromtimestamp(timestamp, tz=_dt.UTC).isoformat(timespec="seconds")


def _now() -> float:
    return _dt.datetime.now(tz=_dt.UTC).timestamp()


def file_sha256(path) -> str:
    """Hex SHA-256 of the file at ``path`` (read in chunks, so large inputs are fine)."""
    digest = hashlib.sha256()
    with open(Path(path), "rb") as stream:
        for chunk in iter(lambda: stream.read(_CHUNK_BYTES), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _plain(value):
    """Convert Snakemake's config containers (and tuples) into plain dicts/lists for YAML/JSON."""
    if isinstance(value, Mapping):
        return {str(key): _plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    return value


def config_yaml(config: Mapping) -> str:
    """The configuration as canonical YAML text (keys sorted; the text that is hashed)."""
    if not isinstance(config, Mapping):
        raise TypeError(f"`config` must be a mapping; got {type(config).__name__}.")
    return yaml.safe_dump(_plain(config), sort_keys=True, default_flow_style=False, allow_unicode=True)


def config_sha256(config: Mapping) -> str:
    """Hex SHA-256 of :func:`config_yaml` -- equal for equal configurations, whatever the key order."""
    return hashlib.sha256(config_yaml(config).encode("utf-8")).hexdigest()


def find_seeds(config: Mapping) -> dict:
    """Every config value whose key contains ``seed``, by dotted key (e.g. ``{"seed": 1}``)."""
    found: dict = {}

    def walk(node, prefix: str) -> None:
        if isinstance(node, Mapping):
            for key, value in node.items():
                dotted = f"{prefix}.{key}" if prefix else str(key)
                if "seed" in str(key).lower() and not isinstance(value, Mapping):
                    found[dotted] = _plain(value)
                else:
                    walk(value, dotted)
        elif isinstance(node, (list, tuple)):
            for index, value in enumerate(node):
                walk(value, f"{prefix}[{index}]")

    walk(config, "")
    return found


def _pinned_requirement_names(distribution: str = "shuffledp") -> list[str]:
    try:
        requirements = importlib.metadata.requires(distribution) or []
    except importlib.metadata.PackageNotFoundError:
        return []
    names = []
    for requirement in requirements:
        match = _REQUIREMENT_NAME.match(requirement)
        if match and match.group(1) not in names:
            names.append(match.group(1))
    return names


def package_versions(names: Iterable[str] | None = None) -> dict:
    """Installed version of each package (``None`` when not installed).

    By default: ``shuffledp`` itself and every requirement it declares (the pins of
    ``pyproject.toml``, including the test extra), read from the installed metadata.
    """
    if names is None:
        names = ["shuffledp", *_pinned_requirement_names()]
    versions: dict[str, str | None] = {}
    for name in names:
        try:
            versions[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            versions[name] = __version__ if name == "shuffledp" else None
    return versions


def git_state(directory) -> dict:
    """Commit of the git work tree containing ``directory`` and whether it has uncommitted changes.

    Never raises for a missing git or a directory outside any repository: the returned mapping then
    has ``commit: None`` and an ``error`` string saying why.
    """
    directory = Path(directory)
    state: dict[str, str | bool | None] = {"commit": None, "dirty": None, "error": None}
    git = shutil.which("git")
    if git is None:
        state["error"] = "git is not installed"
        return state
    if not directory.is_dir():
        state["error"] = f"not a directory: {directory}"
        return state

    def run(*arguments: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [git, "-C", str(directory), *arguments],
            capture_output=True,
            text=True,
            timeout=_GIT_TIMEOUT_SECONDS,
            check=False,
        )

    try:
        head = run("rev-parse", "HEAD")
        if head.returncode != 0:
            message = (head.stderr or head.stdout).strip().splitlines()
            state["error"] = message[0] if message else "not a git repository"
            return state
        state["commit"] = head.stdout.strip()
        status = run("status", "--porcelain", "--untracked-files=no")
        state["dirty"] = bool(status.stdout.strip()) if status.returncode == 0 else None
    except (OSError, subprocess.SubprocessError) as error:
        state["error"] = f"git failed: {error}"
    return state


def platform_summary() -> dict:
    """Python version and operating system (no host name, no user name)."""
    return {
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "system": platform.system(),
        "release": platform.release(),
        "machine": platform.machine(),
    }


def file_record(path, *, source=None) -> dict:
    """Path, size, SHA-256 and modification time of one file; ``exists: False`` if it is missing.

    ``source`` (any JSON-able value: a URL, a label, a mapping) says where the file came from.
    """
    path = Path(path)
    record: dict[str, object] = {"path": str(path)}
    if source is not None:
        record["source"] = _plain(source)
    if not path.is_file():
        record["exists"] = False
        return record
    stat = path.stat()
    record.update(
        exists=True,
        bytes=stat.st_size,
        sha256=file_sha256(path),
        modified=_utc_iso(stat.st_mtime),
    )
    return record


def benchmark_seconds(paths: Iterable) -> dict:
    """Total wall-clock seconds over Snakemake ``benchmark:`` TSV files (column ``s``).

    Unreadable files are counted under ``unreadable`` rather than skipped silently.
    """
    total, jobs, unreadable = 0.0, 0, []
    for path in paths:
        try:
            with open(Path(path), encoding="utf-8") as stream:
                header = stream.readline().rstrip("\n").split("\t")
                column = header.index("s")
                for line in stream:
                    fields = line.rstrip("\n").split("\t")
                    if len(fields) > column and fields[column]:
                        total += float(fields[column])
                        jobs += 1
        except (OSError, ValueError, IndexError):
            unreadable.append(str(path))
    return {"benchmarked_job_seconds": round(total, 4), "benchmarked_jobs": jobs, "unreadable": unreadable}


def output_time_span(paths: Iterable) -> dict:
    """First and last modification time among existing ``paths`` and the seconds between them."""
    times = [Path(p).stat().st_mtime for p in paths if Path(p).is_file()]
    if not times:
        return {"outputs_first_written": None, "outputs_last_written": None, "span_seconds": None}
    first, last = min(times), max(times)
    return {
        "outputs_first_written": _utc_iso(first),
        "outputs_last_written": _utc_iso(last),
        "span_seconds": round(last - first, 3),
    }


def _recorded_sources(record: Mapping) -> list[dict]:
    kinds = {"snap": "download", "bundled": "bundled with the repository", "local": "local file"}
    items = []
    for entry in record.get("files") or []:
        kind = str(record.get("source"))
        source = {"kind": kinds.get(kind, kind)}
        source.update({key: entry[key] for key in ("url", "format", "label") if entry.get(key) is not None})
        items.append({"path": entry["path"], "source": source})
    return items


def data_sources(config: Mapping, *, raw_path, record: Mapping | None = None) -> list[dict]:
    """The Gowalla input files of a run with where each came from.

    Args:
        config: the workflow configuration (its ``data`` section is used when there is no record).
        raw_path: where the SNAP file is downloaded to.
        record: the fetch step's record (``results/data/source.json``); when given, its files are
            listed -- what the run read, whatever ``data.source`` asked for.

    Returns:
        ``{"path": ..., "source": {...}}`` per file, ready for :func:`file_record`. Without a record:
        ``source: snap`` (and ``auto``) -> the file at ``raw_path`` with the SNAP URL; ``source: local``
        -> each entry of ``data.local_files`` (relative paths resolved against ``local_data_dir``).
    """
    if record is not None:
        return _recorded_sources(record)
    data = config.get("data") or {}
    if data.get("source") in ("snap", "auto"):
        snap = data.get("snap") or {}
        return [{"path": str(raw_path), "source": {"kind": "download", "url": snap.get("url")}}]
    base = config.get("local_data_dir")
    items = []
    for entry in data.get("local_files") or []:
        path = Path(entry["path"])
        if not path.is_absolute() and base:
            path = Path(base) / path
        items.append(
            {
                "path": str(path),
                "source": {
                    "kind": "local file",
                    "format": entry.get("format"),
                    "label": entry.get("label"),
                    "configured_path": entry["path"],
                },
            }
        )
    return items


def reference_files() -> list[dict]:
    """The paper values transcribed in ``shuffledp/reference/`` (CSV and notes), as manifest inputs."""
    import importlib.resources

    folder = importlib.resources.files("shuffledp") / "reference"
    if not folder.is_dir():
        return []
    return [
        {
            "path": str(item),
            "source": {"kind": "transcription of the paper", "package": "shuffledp.reference"},
        }
        for item in sorted(folder.iterdir(), key=lambda entry: entry.name)
        if item.name.endswith((".csv", ".md"))
    ]


def build_manifest(
    *,
    stage: str,
    config: Mapping,
    inputs: Iterable = (),
    outputs: Iterable = (),
    benchmarks: Iterable = (),
    repo_dir=None,
    started: float | None = None,
    packages: Iterable[str] | None = None,
    data: Mapping | None = None,
) -> dict:
    """Assemble the manifest of one stage (see the module docstring for the fields).

    ``inputs`` are paths or ``{"path": ..., "source": ...}`` mappings; ``outputs`` and ``benchmarks``
    are paths; ``repo_dir`` is the workflow's source tree (for the git commit); ``started`` is the
    POSIX time the manifest job started (defaults to now); ``data`` is which Gowalla data the run used
    (``results/data/source_label.json``), recorded as ``data`` (``None``: not recorded).
    """
    if not isinstance(stage, str) or not stage:
        raise ValueError(f"`stage` must be a non-empty string; got {stage!r}.")
    started = _now() if started is None else float(started)
    input_records = []
    for item in inputs:
        if isinstance(item, Mapping):
            input_records.append(file_record(item["path"], source=item.get("source")))
        else:
            input_records.append(file_record(item))
    outputs = [str(path) for path in outputs]
    output_records = [file_record(path) for path in outputs]
    run_time = {**output_time_span(outputs), **benchmark_seconds(benchmarks)}
    finished = _now()
    run_time.update(
        manifest_started=_utc_iso(started),
        manifest_finished=_utc_iso(finished),
        manifest_seconds=round(finished - started, 3),
    )
    missing = [record["path"] for record in input_records + output_records if not record["exists"]]
    return {
        "manifest_schema_version": MANIFEST_SCHEMA_VERSION,
        "stage": stage,
        "created": _utc_iso(finished),
        "shuffledp_version": __version__,
        "config": {"sha256": config_sha256(config), "yaml": config_yaml(config)},
        "seeds": find_seeds(config),
        "git": git_state(repo_dir)
        if repo_dir is not None
        else {"commit": None, "dirty": None, "error": "no source directory given"},
        "packages": package_versions(packages),
        "platform": platform_summary(),
        "inputs": input_records,
        "outputs": output_records,
        "missing_files": missing,
        "run_time": run_time,
        **({"data": _data_summary(data)} if data is not None else {}),
    }


def _data_summary(label: Mapping) -> dict:
    """The manifest's ``data``: the source used, why, its one-line label, files with checksums, crop counts."""
    return {
        "source": label.get("source"),
        "requested": label.get("requested"),
        "reason": label.get("reason"),
        "label": label.get("label"),
        "files": [
            {key: entry.get(key) for key in ("file_name", "format", "label", "bytes", "sha256")}
            for entry in label.get("files") or []
        ],
        "regions": _plain(label.get("regions") or {}),
    }


def write_manifest(path, manifest: Mapping) -> None:
    """Write ``manifest`` as indented JSON, atomically."""
    atomic_write_text(path, json.dumps(_plain(manifest), indent=2, sort_keys=False) + "\n")


def read_manifest(path) -> dict:
    """Read a manifest written by :func:`write_manifest`; a clear error if it is not one."""
    path = Path(path)
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as error:
        raise ValueError(
            f"`{path}` is not a valid manifest: invalid JSON ({error.msg} at line {error.lineno})."
        ) from error
    if not isinstance(manifest, dict) or "manifest_schema_version" not in manifest:
        raise ValueError(f"`{path}` is not a valid manifest: key `manifest_schema_version` is missing.")
    return manifest


#: the top-level configuration sections each stage's results depend on (utility reads the data
#: stage's outputs, so the data sections matter to it too)
STAGE_CONFIG_KEYS = {
    "data": ("data", "local_data_dir", "regions"),
    "accounting": ("accounting",),
    "utility": ("seed", "utility", "data", "local_data_dir", "regions"),
}


def _differing_paths(old, new, prefix: str) -> list[str]:
    if isinstance(old, Mapping) and isinstance(new, Mapping):
        paths = []
        for key in sorted(set(old) | set(new), key=str):
            paths += _differing_paths(old.get(key), new.get(key), f"{prefix}.{key}")
        return paths
    return [] if _plain(old) == _plain(new) else [prefix]


def stage_config_differences(manifest: Mapping, config: Mapping, stage: str) -> list[str]:
    """Dotted config keys that matter to ``stage`` (:data:`STAGE_CONFIG_KEYS`) and whose value in the
    configuration recorded by ``manifest`` differs from ``config``; empty when they agree.

    A manifest whose configuration is not readable counts as differing in every such key.
    """
    keys = STAGE_CONFIG_KEYS.get(stage, ())
    try:
        recorded = yaml.safe_load((manifest.get("config") or {}).get("yaml") or "")
    except yaml.YAMLError:
        recorded = None
    if not isinstance(recorded, Mapping):
        return list(keys)
    differences = []
    for key in keys:
        differences += _differing_paths(recorded.get(key), config.get(key), key)
    return differences
