"""Reading: stage outputs into tidy frames and facts (comparison rows with their verdicts, method
summaries, provenance traces, stale stages).

Room: the only part of the report that opens result files (CSV, manifests). Imports pandas and
:mod:`shuffledp.tables` (column names, verdict labels); never judges or renders. A comparison row
whose verdict is not one of :data:`VERDICTS` is counted as :data:`INVALID_VERDICT`, never dropped.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from shuffledp.experiments.utility_tables import STRENGTH_COLUMNS
from shuffledp.tables import COMPARISON_COLUMNS, NOT_REPRODUCED, NOT_REPRODUCIBLE, REPRODUCED, format_number

VERDICTS = (REPRODUCED, NOT_REPRODUCED, NOT_REPRODUCIBLE)


#: verdict given to a comparison row whose verdict is not one of VERDICTS (counted, never dropped)
INVALID_VERDICT = "invalid row"


@dataclass
class ReportInputs:
    """Everything the report reads; each entry may be absent (then the report says so)."""

    config: Mapping
    report_dir: Path
    comparisons: Sequence[Path] = ()
    figures: Mapping[int, Sequence[Path]] = field(default_factory=dict)
    figure_data: Mapping[int, Sequence[Path]] = field(default_factory=dict)
    data_summary: Path | None = None
    data_source: Path | None = None  # results/data/source_label.json: which Gowalla data the run used
    cell_counts: Sequence[Path] = ()
    gaussian_checks: Sequence[Path] = ()
    extras: Mapping[str, Mapping[str, Sequence[Path]]] = field(default_factory=dict)  # name -> images, data
    manifests: Mapping[str, Path] = field(default_factory=dict)
    hypotheses: Path | None = None  # results/report/table2_hypotheses.csv (shuffledp.report.hypotheses)
    producers: Mapping[str, str] = field(default_factory=dict)  # output path -> rule name
    checksums: Mapping[str, str] = field(default_factory=dict)  # path -> sha256
    expected_stages: Sequence[str] = ("data", "accounting", "utility")
    title: str = "Reproduction report"
    config_sha256: str = ""
    git: Mapping = field(default_factory=dict)


def existing_files(paths: Iterable) -> list[Path]:
    return [Path(p) for p in paths if p is not None and Path(p).is_file()]


def read_comparisons(paths: Iterable) -> tuple[pd.DataFrame, list[str]]:
    """Concatenate ``*_comparison.csv`` files; return (rows, problems).

    A file without the agreed columns is reported in ``problems`` and skipped; a row whose verdict
    is not one of :data:`VERDICTS` is kept with verdict :data:`INVALID_VERDICT` and counted in
    ``problems`` (bad rows are never dropped silently). A ``source`` column names the file. The
    Monte-Carlo comparisons' :data:`shuffledp.experiments.utility_tables.STRENGTH_COLUMNS` are kept (NaN where a
    file has none).
    """
    frames, problems = [], []
    for path in paths:
        path = Path(path)
        if not path.is_file():
            problems.append(f"`{path}` is missing.")
            continue
        frame = pd.read_csv(path, dtype={"paper": str, "table": str, "block": str, "row": str, "column": str})
        missing = [c for c in COMPARISON_COLUMNS if c not in frame.columns]
        if missing:
            problems.append(f"`{path}` lacks the comparison column(s) {', '.join(missing)}; file skipped.")
            continue
        frame = frame[COMPARISON_COLUMNS + [c for c in STRENGTH_COLUMNS if c in frame.columns]].copy()
        for column in STRENGTH_COLUMNS:
            if column not in frame.columns:
                frame[column] = np.nan
        bad = ~frame["verdict"].isin(VERDICTS)
        if bad.any():
            problems.append(
                f"`{path}`: {int(bad.sum())} row(s) with a verdict outside {', '.join(VERDICTS)} "
                f"(shown as {INVALID_VERDICT!r})."
            )
            frame.loc[bad, "verdict"] = INVALID_VERDICT
        frame["source"] = str(path)
        frames.append(frame)
    if not frames:
        return pd.DataFrame(columns=[*COMPARISON_COLUMNS, *STRENGTH_COLUMNS, "source"]), problems
    rows = pd.concat(frames, ignore_index=True)
    for column in ("table", "block", "row", "column", "note"):
        rows[column] = rows[column].fillna("").astype(str)
    return rows, problems


def verdict_counts(rows: pd.DataFrame) -> pd.DataFrame:
    """Cells per table and verdict (columns: table, cells, one column per verdict)."""
    verdicts = [*VERDICTS, INVALID_VERDICT]
    records = []
    for table, group in rows.groupby("table", sort=False):
        counts = group["verdict"].value_counts()
        records.append({"table": table, "cells": len(group), **{v: int(counts.get(v, 0)) for v in verdicts}})
    return pd.DataFrame(records, columns=["table", "cells", *verdicts])


def format_cell(value) -> str:
    return "" if value is None else format_number(value, missing="–")


# Figure data: tolerant column names (the stages own their data files).
_VALUE_COLUMNS = ("l1_half", "tv", "tv_distance", "total_variation", "value")


_METHOD_COLUMNS = ("method", "mechanism")


GROUP_COLUMNS = ("region", "calibration", "accountant", "setting", "epsilon", "epsilon_local", "n", "n_users")


N_COLUMNS = ("n", "n_users")


def method_roles(methods: Sequence[str]) -> dict:
    """Which column is the plain Gaussian, the raw shuffle histogram and shuffle+INV (others: none)."""
    roles: dict[str, str] = {}
    for method in methods:
        name = str(method).lower()
        if name in ("gaussian", "gauss", "central"):
            roles.setdefault("gaussian", method)
        elif name == "shuffle":
            roles.setdefault("shuffle", method)
        elif name.startswith("shuffle") and "inv" in name:
            roles.setdefault("shuffle+inv", method)
    return roles


def first_column(frame: pd.DataFrame, candidates: Sequence[str]) -> str | None:
    return next((c for c in candidates if c in frame.columns), None)


def method_summary(frame: pd.DataFrame) -> pd.DataFrame:
    """Median of the value per (group, method) and the best (lowest) method per group.

    ``frame`` has a ``method`` column, a value column (``l1_half``, ``tv``, ``tv_distance``, ``total_variation`` or
    ``value``) and optional grouping columns (region, setting, epsilon, epsilon_local, n, n_users).
    """
    value = first_column(frame, _VALUE_COLUMNS)
    method = first_column(frame, _METHOD_COLUMNS)
    if method is None or value is None:
        raise ValueError(
            "`figure data` must have a `method` (or `mechanism`) column and one of "
            f"{', '.join(_VALUE_COLUMNS)}; got columns {', '.join(map(str, frame.columns))}."
        )
    groups = [c for c in GROUP_COLUMNS if c in frame.columns and frame[c].nunique(dropna=False) > 1]
    frame = frame.rename(columns={method: "method"})
    table = frame.groupby([*groups, "method"], dropna=False)[value].median().unstack("method")
    table.columns = [str(c) for c in table.columns]
    table["best"] = table.idxmin(axis=1)
    return table.reset_index()


def relative_link(path: Path, start: Path) -> str:
    return Path(os.path.relpath(Path(path).resolve(), Path(start).resolve())).as_posix()


def trace(path, inputs: ReportInputs) -> str:
    """`path` (rule `x`, sha256 abcd...) -- how a number traces back to the workflow."""
    key = str(path)
    parts = [f"`{key}`"]
    rule = inputs.producers.get(key)
    if rule:
        parts.append(f"rule `{rule}`")
    digest = inputs.checksums.get(key)
    if digest:
        parts.append(f"sha256 `{digest[:16]}…`")
    return ", ".join(parts)


def stale_stages(inputs: ReportInputs, present) -> dict:
    """Stage -> config keys that matter to it and differ between its manifest and this run's config."""
    from shuffledp.provenance import read_manifest, stage_config_differences

    stale = {}
    for stage in present:
        differences = stage_config_differences(read_manifest(inputs.manifests[stage]), inputs.config, stage)
        if differences:
            stale[stage] = differences
    return stale
