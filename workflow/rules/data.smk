# Data stage: fetch Gowalla -> prepare each source (count malformed rows) -> crop and grid per
# region -> data summary and Figure 3. Library: shuffledp.data (download, gowalla, duplicates, geometry, summary).
import re
import sys

SNAP_RAW = "data/raw/loc-gowalla_totalCheckins.txt.gz"


def _source_id(entry):
    """Wildcard-safe id of a local source: its label, else its file name without extensions."""
    text = entry.get("label") or Path(entry["path"]).name.split(".")[0]
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_") or "source"


def _data_sources():
    """Map source id -> settings (path, format, column names) for the configured data source."""
    data = config["data"]
    if data["source"] == "snap":
        return {
            "snap": {
                "path": SNAP_RAW,
                "format": "snap",
                "file_name": Path(SNAP_RAW).name,
                "duplicates": data["duplicates"],
            }
        }
    if not data["local_files"]:
        raise WorkflowError(
            "config: `data.source` is 'local' but `data.local_files` is empty; list the files "
            "(see config/standins.yaml) or set data.source: snap."
        )
    base = config.get("local_data_dir")
    sources = {}
    for entry in data["local_files"]:
        path = Path(entry["path"])
        if not path.is_absolute() and base:
            path = Path(base) / path
        if not path.is_file():
            where = f"local_data_dir = {base}" if base else "the working directory (local_data_dir is null)"
            raise WorkflowError(
                f"config: `data.local_files` names {entry['path']!r}, not found as {path} "
                f"(relative paths are resolved against {where}). "
                "Set --config local_data_dir=/path/to/gowalla or fix the path."
            )
        source_id = _source_id(entry)
        if source_id in sources:
            raise WorkflowError(
                f"config: `data.local_files` has two files with source id {source_id!r}; give them distinct labels."
            )
        sources[source_id] = {
            "path": str(path),
            "format": entry["format"],
            "duplicates": entry.get("duplicates", data["duplicates"]),
            "lat_column": entry.get("lat_column"),
            "lon_column": entry.get("lon_column"),
            "user_column": entry.get("user_column"),
            "label": entry.get("label", ""),
            "file_name": path.name,
        }
    return sources


DATA_SOURCES = _data_sources()
# Figure 3 shows the regions in config order (the paper's: San Francisco, then Paris).
FIG3_REGIONS = list(config["regions"])


wildcard_constraints:
    source="|".join(re.escape(name) for name in DATA_SOURCES),


rule fetch_gowalla:
    output:
        SNAP_RAW,
    log:
        "logs/data/fetch_gowalla.log",
    benchmark:
        "results/benchmarks/data/fetch_gowalla.tsv"
    params:
        url=config["data"]["snap"]["url"],
        expected_rows=config["data"]["snap"]["expected_rows"],
        retries=config["data"]["snap"]["retries"],
        timeout=config["data"]["snap"]["timeout_seconds"],
        backoff=config["data"]["snap"]["backoff_seconds"],
    script:
        "../scripts/fetch_gowalla.py"


def _earlier_sources(wildcards):
    """Prepared check-ins of the sources listed before this one (exact duplicates across sources)."""
    names = list(DATA_SOURCES)
    return [f"results/data/sources/{name}.parquet" for name in names[: names.index(wildcards.source)]]


rule prepare_checkins:
    input:
        data=lambda wildcards: DATA_SOURCES[wildcards.source]["path"],
        earlier=_earlier_sources,
    output:
        checkins="results/data/sources/{source}.parquet",
        summary="results/data/sources/{source}_summary.csv",
    log:
        "logs/data/prepare_checkins/{source}.log",
    benchmark:
        "results/benchmarks/data/prepare_checkins/{source}.tsv"
    priority: 100  # scheduling only: see the note in common.smk
    params:
        source=lambda wildcards: {"name": wildcards.source, **DATA_SOURCES[wildcards.source]},
        max_bad_fraction=config["data"]["max_bad_fraction"],
        duplicates=lambda wildcards: DATA_SOURCES[wildcards.source]["duplicates"],
    script:
        "../scripts/prepare_checkins.py"


rule crop_and_grid:
    input:
        expand("results/data/sources/{source}.parquet", source=DATA_SOURCES),
    output:
        cells="results/data/{region}/cell_counts.csv",
        checkins="results/data/{region}/checkins.parquet",
        summary="results/data/{region}/crop_summary.csv",
    log:
        "logs/data/crop_and_grid/{region}.log",
    benchmark:
        "results/benchmarks/data/crop_and_grid/{region}.tsv"
    priority: 100  # scheduling only: see the note in common.smk
    params:
        name=lambda wildcards: wildcards.region,
        region=lambda wildcards: config["regions"][wildcards.region],
        sources=list(DATA_SOURCES),
    script:
        "../scripts/crop_and_grid.py"


rule data_summary:
    input:
        sources=expand("results/data/sources/{source}_summary.csv", source=DATA_SOURCES),
        regions=expand("results/data/{region}/crop_summary.csv", region=FIG3_REGIONS),
    output:
        csv=report("results/data/summary.csv", caption="../report/data_summary.rst", category="Data"),
        markdown="results/data/summary.md",
    log:
        "logs/data/data_summary.log",
    benchmark:
        "results/benchmarks/data/data_summary.tsv"
    script:
        "../scripts/data_summary.py"


rule fig3:
    input:
        cells=expand("results/data/{region}/cell_counts.csv", region=FIG3_REGIONS),
        checkins=expand("results/data/{region}/checkins.parquet", region=FIG3_REGIONS),
    output:
        report("results/data/fig3.png", caption="../report/fig3.rst", category="Data"),
    log:
        "logs/data/fig3.log",
    benchmark:
        "results/benchmarks/data/fig3.tsv"
    params:
        regions=[{"name": name, **config["regions"][name]} for name in FIG3_REGIONS],
    script:
        "../scripts/fig3.py"


# Light jobs run where Snakemake runs (the login node on a cluster): the download needs the network,
# which compute nodes often lack; the summary only concatenates small tables.
localrules:
    fetch_gowalla,
    data_summary,


ALL_TARGETS.extend(
    [
        *expand("results/data/{region}/cell_counts.csv", region=FIG3_REGIONS),
        *expand("results/data/{region}/checkins.parquet", region=FIG3_REGIONS),
        "results/data/summary.csv",
        "results/data/summary.md",
        "results/data/fig3.png",
    ]
)


onerror:
    # Repeat the fetch job's one-line diagnosis (offline, corrupt download, ...) as the last thing
    # printed, so it is not buried among the other jobs' output of a --keep-going run.
    _fetch_log = Path("logs/data/fetch_gowalla.log")
    if config["data"]["source"] == "snap" and not Path(SNAP_RAW).exists() and _fetch_log.exists():
        _lines = _fetch_log.read_text(encoding="utf-8").strip().splitlines()
        if _lines:
            print("\nGowalla data: " + _lines[-1].split(" ", 2)[-1], file=sys.stderr)
