# Data stage: fetch Gowalla (decide and record the source) -> prepare each source (count malformed rows)
# -> crop and grid per region -> data summary, data label and Figure 3. Library: shuffledp.data (source,
# download, gowalla, duplicates, geometry, summary).
import re
import sys

from shuffledp.data.source import bundled_entries, local_entries, read_source_record

SNAP_RAW = "data/raw/loc-gowalla_totalCheckins.txt.gz"
# Which data the run reads: decided once, by fetch_gowalla, and recorded here; every later data job
# reads this record (shuffledp.data.source), so one run cannot mix sources.
SOURCE_RECORD = "results/data/source.json"
SOURCE_LABEL = "results/data/source_label.json"
DATA = config["data"]


def _local_sources():
    """Local files (data.source: local; shuffledp.config refuses none), found before the DAG is built."""
    base = config.get("local_data_dir")
    try:
        entries = local_entries(DATA, local_data_dir=base)
    except ValueError as error:
        raise WorkflowError(f"config: {error}") from None
    for entry, item in zip(DATA["local_files"], entries):
        if not Path(item["path"]).is_file():
            where = f"local_data_dir = {base}" if base else "the working directory (local_data_dir is null)"
            raise WorkflowError(
                f"config: `data.local_files` names {entry['path']!r}, not found as {item['path']} "
                f"(relative paths are resolved against {where}). "
                "Set --config local_data_dir=/path/to/gowalla or fix the path."
            )
    return entries


if DATA["source"] == "local":
    _POSSIBLE_SOURCES = [item["id"] for item in _local_sources()]
else:
    _POSSIBLE_SOURCES = ["snap", *(item["id"] for item in bundled_entries(DATA, repo=REPO))]
# Figure 3 shows the regions in config order (the paper's: San Francisco, then Paris).
FIG3_REGIONS = list(config["regions"])


wildcard_constraints:
    source="|".join(re.escape(name) for name in _POSSIBLE_SOURCES),


# The fetch step is a checkpoint: the files the later jobs read (the SNAP file or the bundled subsets)
# are known only once it has run. data.source snap: download or stop; auto: download, else the bundled
# subsets with one log line; local: the configured files.
checkpoint fetch_gowalla:
    input:
        [item["path"] for item in _local_sources()] if DATA["source"] == "local" else [],
    output:
        **({"snap": SNAP_RAW} if DATA["source"] == "snap" else {}),
        record=SOURCE_RECORD,
    log:
        "logs/data/fetch_gowalla.log",
    benchmark:
        "results/benchmarks/data/fetch_gowalla.tsv"
    priority: 100  # scheduling only: the data stage first (see the note in common.smk)
    params:
        data=DATA,
        raw_path=SNAP_RAW,
        repo=str(REPO),
        local_data_dir=config.get("local_data_dir"),
    script:
        "../scripts/fetch_gowalla.py"


def _used_sources():
    """Source id -> file record of the data the fetch step chose (waits for the checkpoint)."""
    record = read_source_record(checkpoints.fetch_gowalla.get().output.record)
    return {item["id"]: item for item in record["files"]}


def _earlier_sources(wildcards):
    """Prepared check-ins of the sources listed before this one (exact duplicates across sources)."""
    names = list(_used_sources())
    return [f"results/data/sources/{name}.parquet" for name in names[: names.index(wildcards.source)]]


def _source_outputs(pattern):
    return lambda wildcards: expand(pattern, source=_used_sources())


rule prepare_checkins:
    input:
        data=lambda wildcards: _used_sources()[wildcards.source]["path"],
        record=SOURCE_RECORD,
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
        max_bad_fraction=DATA["max_bad_fraction"],
    script:
        "../scripts/prepare_checkins.py"


rule crop_and_grid:
    input:
        _source_outputs("results/data/sources/{source}.parquet"),
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
    script:
        "../scripts/crop_and_grid.py"


rule data_summary:
    input:
        sources=_source_outputs("results/data/sources/{source}_summary.csv"),
        regions=expand("results/data/{region}/crop_summary.csv", region=FIG3_REGIONS),
        record=SOURCE_RECORD,
    output:
        csv=report("results/data/summary.csv", caption="../report/data_summary.rst", category="Data"),
        markdown="results/data/summary.md",
        label=SOURCE_LABEL,
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
        label=SOURCE_LABEL,
    output:
        report("results/data/fig3.png", caption="../report/fig3.rst", category="Data"),
    log:
        "logs/data/fig3.log",
    benchmark:
        "results/benchmarks/data/fig3.tsv"
    priority: 40  # scheduling only: see the note in common.smk
    params:
        regions=[{"name": name, **config["regions"][name]} for name in FIG3_REGIONS],
    script:
        "../scripts/fig3.py"


# Light jobs run where Snakemake runs (the login node on a cluster): the download needs the network,
# which compute nodes often lack (and the bundled subsets are in the repository); the summary only
# concatenates small tables.
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
        SOURCE_RECORD,
        SOURCE_LABEL,
    ]
)


onerror:
    # Repeat the fetch job's one-line diagnosis (offline, corrupt download, ...) as the last thing
    # printed, so it is not buried among the other jobs' output of a --keep-going run.
    _fetch_log = Path("logs/data/fetch_gowalla.log")
    if DATA["source"] == "snap" and not Path(SNAP_RAW).exists() and _fetch_log.exists():
        _lines = _fetch_log.read_text(encoding="utf-8").strip().splitlines()
        if _lines:
            print("\nGowalla data: " + _lines[-1].split(" ", 2)[-1], file=sys.stderr)
