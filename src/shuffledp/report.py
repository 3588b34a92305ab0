"""The reproduction report: paper tables cell by cell, figures with a reading, errata, provenance.

The report is assembled as a list of small blocks (:class:`Heading`, :class:`Paragraph`,
:class:`Table`, :class:`BulletList`, :class:`Figure`) and rendered twice: as Markdown (figures linked
by relative path) and as one self-contained HTML file (figures embedded as base64, inline CSS, no
external asset). Nothing here computes privacy or utility: every number is read from a stage output
(``*_comparison.csv``, figure data, the data summary, the stage manifests), and every reading of a
figure is derived from that figure's data, never written in advance.

Verdicts come from the comparison CSVs (columns :data:`shuffledp.tables.COMPARISON_COLUMNS`): a cell
is *reproduced* when our value rounds to the printed one at the printed precision, *not reproduced*
otherwise, and *not reproducible as specified* when the paper does not give what is needed to compute
it (see ``docs/reproduction-notes.md``, "Report and artifacts").
"""

from __future__ import annotations

import base64
import datetime as _dt
import html
import math
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from shuffledp.experiments.utility_tables import STRENGTH_COLUMNS, STRENGTH_FACTOR
from shuffledp.tables import COMPARISON_COLUMNS, NOT_REPRODUCED, NOT_REPRODUCIBLE, REPRODUCED, format_number

__all__ = [
    "VERDICTS",
    "PAPER_TABLES",
    "FIGURES",
    "FPS_TO_ARXIV",
    "Heading",
    "Paragraph",
    "Table",
    "BulletList",
    "Figure",
    "read_comparisons",
    "verdict_counts",
    "method_summary",
    "read_method_comparison",
    "read_delta_surface",
    "read_data_counts",
    "read_heatmap_summary",
    "read_crossover",
    "read_sweep",
    "read_epsilon_comparison",
    "read_bracket",
    "read_gaussian_checks",
    "read_verdict_strength",
    "strength_table",
    "read_empty_cells",
    "build_report",
    "render_markdown",
    "render_html",
]

VERDICTS = (REPRODUCED, NOT_REPRODUCED, NOT_REPRODUCIBLE)
#: verdict given to a comparison row whose verdict is not one of VERDICTS (counted, never dropped)
INVALID_VERDICT = "invalid row"

PAPER_TABLES = {
    "II": "Table II: δ of prior bounds and of eq. (6), n = 100 and n = 1,000, ε0 = 0.49",
    "IV": "Table IV: tight δ for various ε (varying ε0, n, k)",
    "V": "Table V: individual-specific utility W̄, synthetic data, ε = ε0 = 4, k = 15",
    "VI": "Table VI: individual-specific utility W̄, Gowalla San Francisco and Paris, ε = ε0 = 4",
}


@dataclass(frozen=True)
class FigureSpec:
    number: int
    stage: str
    title: str
    claim: str  # the paper's words (arXiv version), quoted


FIGURES = {
    1: FigureSpec(
        1,
        "accounting",
        "δ over (ε, ε0)",
        "Fig. 1 caption: \u201cThe figure shows the trend that we would expect: δ increases as ε0 increases "
        "and decreases as ε increases.\u201d",
    ),
    2: FigureSpec(
        2,
        "utility",
        "TV distance vs n, synthetic data (k = 15, ε = 4)",
        "\u201cWe observe that the utility for shuffle+INV shows better utility than shuffle model with k-RR, "
        "and the utility for the shuffle+INV is slightly worse than the central model\u201d (Sec. V-C).",
    ),
    3: FigureSpec(
        3,
        "data",
        "Gowalla check-ins and cell counts, San Francisco and Paris",
        "\u201cWe use 123,108 check-in locations from Gowalla dataset in San Francisco and 10,260 check-ins "
        "in Paris.\u201d (Sec. V-D)",
    ),
    4: FigureSpec(
        4,
        "utility",
        "Heat maps: original, Gaussian and shuffle+INV estimates, San Francisco",
        "\u201cAs we see from the heatmaps in Figure 4 and Figure 5, when the value of ε is 4, both Gaussian "
        "mechanism and shuffle+INV generate results very close to the original distribution.\u201d",
    ),
    5: FigureSpec(
        5,
        "utility",
        "Heat maps: original, Gaussian and shuffle+INV estimates, Paris",
        "Same sentence as Figure 4 (\u201cboth Gaussian mechanism and shuffle+INV generate results very close "
        "to the original distribution\u201d).",
    ),
    6: FigureSpec(
        6,
        "utility",
        "TV distance vs n over 10 runs, San Francisco (n = 10,000 ... 100,000)",
        "\u201cThe results exhibit that shuffle model, M, gives worse utility than the central model N, and "
        "shuffle+INV shows better utility than shuffle. [...] shuffle+INV is slightly closer or comparable "
        "with the Gaussian mechanism especially when the value of n is small (n = 10,000) and privacy level "
        "is low (ε = 6).\u201d",
    ),
    7: FigureSpec(
        7,
        "utility",
        "TV distance vs n over 10 runs, Paris (n = 1,000 ... 10,000)",
        "\u201cwe observe a consistency with the existing work in the trend of the Gaussian mechanism having a "
        "better utility than the shuffle model across all settings. However, when the number of samples is "
        "small and the privacy level is low, the utilities of the shuffle model and the central model are "
        "comparable.\u201d",
    ),
}

#: FPS 2023 numbering -> arXiv 2022 numbering, as far as the FPS preview text (appendices, footnotes,
#: references) shows. Columns: FPS item, arXiv item, what in the FPS text establishes the match.
FPS_TO_ARXIV = [
    ("Theorem 1", "Theorem IV.1", "FPS Appendix A is titled \u201cProof of Theorem 1\u201d and carries the arXiv appendix's proof of Theorem IV.1"),
    ("Definition 11 (μ, τ)", "Definition IV.2", "FPS eq. (8) ends \u201c[μ and τ are as in Definition 11]\u201d where arXiv eq. (12) cites Definition IV.2"),
    ("Result 1", "Result 1 (Lemma 5 of Sommer et al.)", "both versions apply \u201cResult 1\u201d to obtain δ(ε)"),
    ("Remark 1", "Remark 1", "FPS Appendix B: \u201cby Remark 1\u201d, same sentence as arXiv Sec. V-A"),
    ("eq. (8): P[M_x0(x0) = s]", "eqs. (11)-(12)", "FPS shows the derivation as one display ending in κ3/(n−n_x0) Σ μ(s,r) τ_r"),
    ("eq. (9): P[M_x0(x1) = s]", "eq. (13)", "same derivation"),
    ("eq. (10): δ(ε) from Result 1", "eq. (14)", "same statement"),
    ("eq. (11): v_s", "eq. (15)", "same expression, including the (s−r)·C(n−1−n_x0, s−1−r) term of the printed v_s"),
    ("eq. (12): E(π̂) = π", "eq. (7)", "FPS Appendix B \u201cTheoretical outline\u201d"),
    ("eq. (13): W(M) = d(nπ̂, nπ)", "eq. (8)", "FPS Appendix B"),
    ("eq. (14): W(N) = d(H_N, nπ)", "eq. (9)", "FPS Appendix B"),
    ("eq. (15): δ̂ = max over x", "eq. (10)", "FPS Appendix B"),
    ("Appendix A", "Appendix (proof of Theorem IV.1)", "same proof"),
    ("Appendix B \u201cTheoretical outline\u201d", "Sec. V-A \u201cTheoretical outline\u201d (second half)", "same text from \u201cIn M, we extend the idea of ADP\u201d to eq. (10)"),
    ("Fig. 3 (San Francisco and Paris, community level)", "Figures 6 and 7", "FPS: \u201cas seen in the experimental results with location data from San Francisco and Paris in Fig. 3\u201d; arXiv: \u201c... in Figures 6 and 7\u201d"),
    ("footnotes 1, 2, 3", "footnotes 5, 6, 7", "identical footnote texts (inverse of k-RR; δ from Result 1; TV distance)"),
    ("references [1]-[15]", "[27], [20], [10], [7], [5], [9], [16], [4], [3], [11], [12], [32], [8], [24], [6]", "matched by author and title; the FPS list has no counterpart of arXiv [29] (simplex projection), [30] (diffprivlib) or [31] (Cho et al.)"),
]

#: what the FPS preview does not show (stated in the report, not guessed)
FPS_NOT_VISIBLE = (
    "The FPS preview contains only the abstract, footnotes, references and appendices A-B. The numbering "
    "of its Tables (the arXiv Tables II, IV, V, VI), of Figures 1-2 and 4-5 (arXiv numbering), of its "
    "section headings and of Definitions other than Definition 11 cannot be read from it, and the FPS "
    "statement of Theorem 1 itself is not shown (only its proof)."
)


# --------------------------------------------------------------------------------------- blocks


@dataclass(frozen=True)
class Heading:
    level: int
    text: str
    anchor: str | None = None


@dataclass(frozen=True)
class Paragraph:
    text: str  # inline Markdown subset: `code`, **bold**, [text](link)


@dataclass(frozen=True)
class Table:
    columns: Sequence[str]
    rows: Sequence[Sequence[str]]


@dataclass(frozen=True)
class BulletList:
    items: Sequence[str]


@dataclass(frozen=True)
class Figure:
    path: Path  # the image file
    caption: str
    link: str  # path as written in the Markdown (relative to the report)


@dataclass
class ReportInputs:
    """Everything the report reads; each entry may be absent (then the report says so)."""

    config: Mapping
    report_dir: Path
    comparisons: Sequence[Path] = ()
    figures: Mapping[int, Sequence[Path]] = field(default_factory=dict)
    figure_data: Mapping[int, Sequence[Path]] = field(default_factory=dict)
    data_summary: Path | None = None
    cell_counts: Sequence[Path] = ()
    gaussian_checks: Sequence[Path] = ()
    extras: Mapping[str, Mapping[str, Sequence[Path]]] = field(default_factory=dict)  # name -> images, data
    manifests: Mapping[str, Path] = field(default_factory=dict)
    producers: Mapping[str, str] = field(default_factory=dict)  # output path -> rule name
    checksums: Mapping[str, str] = field(default_factory=dict)  # path -> sha256
    expected_stages: Sequence[str] = ("data", "accounting", "utility")
    title: str = "Reproduction report"
    config_sha256: str = ""
    git: Mapping = field(default_factory=dict)


# ------------------------------------------------------------------------------------ reading


def _existing(paths: Iterable) -> list[Path]:
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


def _format_number(value) -> str:
    return "" if value is None else format_number(value, missing="–")


# Figure data: tolerant column names (the stages own their data files).
_VALUE_COLUMNS = ("tv", "tv_distance", "total_variation", "value")
_METHOD_COLUMNS = ("method", "mechanism")
_GROUP_COLUMNS = ("region", "calibration", "accountant", "setting", "epsilon", "epsilon_local", "n", "n_users")
_N_COLUMNS = ("n", "n_users")


def _roles(methods: Sequence[str]) -> dict:
    """Which column is the plain Gaussian, the raw shuffle histogram and shuffle+INV (others: none)."""
    roles = {}
    for method in methods:
        name = str(method).lower()
        if name in ("gaussian", "gauss", "central"):
            roles.setdefault("gaussian", method)
        elif name == "shuffle":
            roles.setdefault("shuffle", method)
        elif name.startswith("shuffle") and "inv" in name:
            roles.setdefault("shuffle+inv", method)
    return roles


def _first_column(frame: pd.DataFrame, candidates: Sequence[str]) -> str | None:
    return next((c for c in candidates if c in frame.columns), None)


def method_summary(frame: pd.DataFrame) -> pd.DataFrame:
    """Median of the value per (group, method) and the best (lowest) method per group.

    ``frame`` has a ``method`` column, a value column (``tv``, ``tv_distance``, ``total_variation`` or
    ``value``) and optional grouping columns (region, setting, epsilon, epsilon_local, n, n_users).
    """
    value = _first_column(frame, _VALUE_COLUMNS)
    method = _first_column(frame, _METHOD_COLUMNS)
    if method is None or value is None:
        raise ValueError(
            "`figure data` must have a `method` (or `mechanism`) column and one of "
            f"{', '.join(_VALUE_COLUMNS)}; got columns {', '.join(map(str, frame.columns))}."
        )
    groups = [c for c in _GROUP_COLUMNS if c in frame.columns and frame[c].nunique(dropna=False) > 1]
    frame = frame.rename(columns={method: "method"})
    table = frame.groupby([*groups, "method"], dropna=False)[value].median().unstack("method")
    table.columns = [str(c) for c in table.columns]
    table["best"] = table.idxmin(axis=1)
    return table.reset_index()


def _group_label(row, groups) -> str:
    parts = []
    for column in groups:
        val = row[column]
        if column in _N_COLUMNS:
            parts.append(f"n = {int(val):,}")
        elif column == "epsilon":
            parts.append(f"ε = {val}")
        elif column == "epsilon_local":
            parts.append(f"ε0 = {val}")
        else:
            parts.append(f"{column} = {val}")
    return ", ".join(parts) or "all runs"


def read_method_comparison(frame: pd.DataFrame) -> str:
    """One paragraph of facts from a TV-per-method table: who is lowest where, and by how much."""
    summary = method_summary(frame)
    methods = [c for c in summary.columns if c not in (*_GROUP_COLUMNS, "best")]
    groups = [c for c in _GROUP_COLUMNS if c in summary.columns]
    roles = _roles(methods)
    total = len(summary)
    sentences = []
    best_counts = summary["best"].value_counts()
    ranking = ", ".join(f"{m} in {int(best_counts.get(m, 0))}" for m in methods)
    constant = [c for c in _GROUP_COLUMNS if c in frame.columns and frame[c].nunique(dropna=False) == 1]
    context = f" (in every row: {_group_label(frame.iloc[0], constant)})" if constant else ""
    sentences.append(
        f"Lowest median TV distance per configuration ({total} configuration(s): "
        f"{', '.join(groups) or 'one'}){context}: {ranking}."
    )
    gaussian, inv, shuffle = roles.get("gaussian"), roles.get("shuffle+inv"), roles.get("shuffle")
    if inv and shuffle:
        wins = int((summary[inv] < summary[shuffle]).sum())
        sentences.append(f"shuffle+INV is below shuffle in {wins} of {total}.")
    if inv and gaussian:
        wins = int((summary[gaussian] < summary[inv]).sum())
        sentences.append(f"The Gaussian mechanism is below shuffle+INV in {wins} of {total}.")
        n_column = _first_column(summary, _N_COLUMNS)
        ratio = summary[inv] / summary[gaussian]
        if n_column is not None and summary[n_column].nunique() > 1:
            smallest = summary[summary[n_column] == summary[n_column].min()]
            largest = summary[summary[n_column] == summary[n_column].max()]
            sentences.append(
                "Median TV ratio shuffle+INV / Gaussian: "
                + "; ".join(
                    f"{_group_label(row, groups)}: {_format_number(ratio[index])}"
                    for index, row in pd.concat([smallest, largest]).iterrows()
                )
                + "."
            )
        else:
            sentences.append(
                "Median TV ratio shuffle+INV / Gaussian: "
                + "; ".join(
                    f"{_group_label(row, groups)}: {_format_number(ratio[index])}" for index, row in summary.iterrows()
                )
                + "."
            )
    return " ".join(sentences)


def read_delta_surface(frame: pd.DataFrame) -> str:
    """Facts from a δ(ε, ε0) grid: monotonicity in ε and ε0, and printed vs exact.

    ``frame`` columns: ``epsilon``, ``epsilon_local`` and either ``delta`` with ``accountant`` (long
    form) or one ``delta_<accountant>`` column per accountant (wide form).
    """
    eps = _first_column(frame, ("epsilon", "eps"))
    eps0 = _first_column(frame, ("epsilon_local", "eps0", "epsilon0"))
    if eps is None or eps0 is None:
        raise ValueError(
            "`figure 1 data` must have columns `epsilon` and `epsilon_local`; "
            f"got {', '.join(map(str, frame.columns))}."
        )
    if "accountant" in frame.columns and "delta" in frame.columns:
        wide = frame.pivot_table(index=[eps, eps0], columns="accountant", values="delta", aggfunc="first")
    else:
        columns = [c for c in frame.columns if str(c).startswith("delta")]
        if not columns:
            raise ValueError("`figure 1 data` has no `delta` column.")
        wide = frame.set_index([eps, eps0])[columns]
        wide.columns = [str(c).removeprefix("delta_") or "delta" for c in columns]
    wide = wide.sort_index()
    sentences = []
    for name in wide.columns:
        grid = wide[name].unstack(eps0)  # rows: epsilon ascending, columns: epsilon_local ascending
        values = grid.to_numpy(dtype=float)
        tolerance = 1e-12
        with np.errstate(invalid="ignore"):
            down_eps = np.diff(values, axis=0) <= tolerance * np.maximum(1e-300, np.abs(values[:-1]))
            up_eps0 = np.diff(values, axis=1) >= -tolerance * np.maximum(1e-300, np.abs(values[:, :-1]))
        pairs_eps = int(np.isfinite(np.diff(values, axis=0)).sum())
        pairs_eps0 = int(np.isfinite(np.diff(values, axis=1)).sum())
        zero = int((values == 0).sum())
        sentences.append(
            f"`{name}`: δ is non-increasing in ε in {int(down_eps.sum())} of {pairs_eps} neighbouring "
            f"pairs and non-decreasing in ε0 in {int(up_eps0.sum())} of {pairs_eps0}; "
            f"{zero} of {values.size} grid points have δ = 0."
        )
    printed = [c for c in wide.columns if "printed" in str(c)]
    exact = [c for c in wide.columns if "exact" in str(c)]
    if printed and exact:
        p, e = wide[printed[0]].to_numpy(float), wide[exact[0]].to_numpy(float)
        both = (p > 0) & (e > 0)
        if both.any():
            log_ratio = np.log10(p[both] / e[both])
            sentences.append(
                f"Where both are positive ({int(both.sum())} points), log10(printed / exact) ranges from "
                f"{log_ratio.min():.2f} to {log_ratio.max():.2f}."
            )
        only = int(((p == 0) & (e > 0)).sum())
        if only:
            sentences.append(f"At {only} point(s) the printed δ is 0 while the exact δ is positive.")
    return " ".join(sentences)


def read_heatmap_summary(frame: pd.DataFrame) -> str:
    """Facts from a heat-map summary (one row per region: ``tv_gaussian``, ``tv_shuffle_inv``, δ used)."""
    needed = ("tv_gaussian", "tv_shuffle_inv")
    if not all(c in frame.columns for c in needed):
        raise ValueError(f"`heat-map data` must have columns {', '.join(needed)}; got {', '.join(map(str, frame.columns))}.")
    sentences = []
    for _, row in frame.iterrows():
        where = ", ".join(
            part
            for part in (
                str(row["region"]) if "region" in frame.columns else "",
                f"n = {int(row['n_users']):,}" if "n_users" in frame.columns else "",
                f"ε = {row['epsilon']}" if "epsilon" in frame.columns else "",
                f"ε0 = {row['epsilon_local']}" if "epsilon_local" in frame.columns else "",
            )
            if part
        )
        gaussian, inv = float(row["tv_gaussian"]), float(row["tv_shuffle_inv"])
        text = (
            f"{where}: TV to the original distribution {_format_number(gaussian)} (Gaussian) and "
            f"{_format_number(inv)} (shuffle+INV); the {'Gaussian' if gaussian < inv else 'shuffle+INV'} "
            f"estimate is closer (ratio shuffle+INV / Gaussian {_format_number(inv / gaussian if gaussian else math.inf)})"
        )
        if "delta_used" in frame.columns:
            text += f", calibrated at δ̂ = {_format_number(row['delta_used'])}"
            if "delta_floored" in frame.columns and bool(row["delta_floored"]):
                text += " (δ̂ = 0 replaced by the configured floor)"
        sentences.append(text + ".")
    return " ".join(sentences)


def read_crossover(frame: pd.DataFrame) -> str:
    """Facts from the crossover sweep: per accountant, in how many (ε0, ε) cells the Gaussian wins."""
    needed = ("epsilon_local", "epsilon", "accountant", "gaussian_better")
    if not all(c in frame.columns for c in needed):
        raise ValueError(f"`crossover data` must have columns {', '.join(needed)}; got {', '.join(map(str, frame.columns))}.")
    better = frame.assign(gaussian_better=frame["gaussian_better"].astype(bool))
    sentences = []
    for accountant, group in better.groupby("accountant", sort=False):
        sentences.append(
            f"With δ̂ from `{accountant}` the Gaussian has the lower mean TV in "
            f"{int(group['gaussian_better'].sum())} of {len(group)} (ε0, ε) cells."
        )
    wide = better.pivot_table(index=["epsilon_local", "epsilon"], columns="accountant", values="gaussian_better", aggfunc="first")
    printed = [c for c in wide.columns if "printed" in str(c)]
    if printed:
        for other in [c for c in wide.columns if c != printed[0]]:
            both = wide[[printed[0], other]].dropna()
            changed = int((both[printed[0]] != both[other]).sum())
            sentences.append(
                f"The winner changes between `{printed[0]}` and `{other}` in {changed} of {len(both)} cells."
            )
    return " ".join(sentences)


#: log10 slack when comparing two accountants' delta (values are computed independently)
_LOG10_DELTA_SLACK = 1e-9


def read_sweep(frame: pd.DataFrame) -> str:
    """Facts from a δ sweep: per accountant the δ range, and where labelled bounds sit vs the exact δ.

    ``frame``: one row per (setting, accountant) with ``accountant``, ``kind`` (as printed / exact /
    upper bound / lower bound ...), ``delta`` and optionally ``log10_delta`` (kept when δ underflows).
    """
    needed = ("accountant", "kind", "delta")
    if not all(c in frame.columns for c in needed):
        raise ValueError(f"`sweep data` must have columns {', '.join(needed)}; got {', '.join(map(str, frame.columns))}.")
    frame = frame.copy()
    if "log10_delta" not in frame.columns:
        with np.errstate(divide="ignore"):
            frame["log10_delta"] = np.log10(frame["delta"].astype(float))
    keys = [c for c in frame.columns if c not in ("sweep", "accountant", "kind", "label", "delta", "log10_delta")]
    sentences = []
    for (name, kind), group in frame.groupby(["accountant", "kind"], sort=False):
        finite = group["log10_delta"][np.isfinite(group["log10_delta"])]
        span = f"log10 δ from {finite.min():.1f} to {finite.max():.1f}" if len(finite) else "δ = 0 throughout"
        sentences.append(f"`{name}` ({kind}): {len(group)} points, {span}, {int((group['log10_delta'] == -np.inf).sum())} with δ = 0.")
    exact = frame[frame["kind"] == "exact"]
    if len(exact) and keys:
        reference = exact.drop_duplicates(keys).set_index(keys)["log10_delta"]
        for (name, kind), group in frame[frame["kind"] != "exact"].groupby(["accountant", "kind"], sort=False):
            joined = group.set_index(keys)["log10_delta"].to_frame("other").join(reference.rename("exact"), how="inner")
            if joined.empty:
                continue
            below = int((joined["other"] < joined["exact"] - _LOG10_DELTA_SLACK).sum())
            above = int((joined["other"] > joined["exact"] + _LOG10_DELTA_SLACK).sum())
            sentences.append(
                f"`{name}` is below `{exact['accountant'].iloc[0]}` at {below} and above it at {above} of {len(joined)} points"
                + (" (an upper bound must never be below)" if kind == "upper bound" else "")
                + (" (a lower bound must never be above)" if kind == "lower bound" else "")
                + "."
            )
    return " ".join(sentences)


#: relative slack when comparing two accountants' epsilon (each search stops at a relative 1e-9)
_EPSILON_SLACK = 1e-6
_COMPARISON_NEEDED = ("panel", "accountant", "role", "n_users", "epsilon_local", "k", "delta", "epsilon", "status")
_DRAWN = ("ok", "at or above eps0")


def _where(x: str, values) -> str:
    values = sorted(float(v) for v in values)
    if x == "n_users":
        return "n = " + ", ".join(f"{int(v):,}" for v in values)
    return "ε0 = " + ", ".join(f"{v:g}" for v in values)


def _ratio_range(ratio: pd.Series, x: str) -> str:
    """"a to b (largest at x = ...)" of a ratio indexed by the panel's x values."""
    ratio = ratio.dropna()
    if ratio.empty:
        return "no common point"
    return f"{ratio.min():.5f} to {ratio.max():.5f} (largest at {_where(x, [ratio.idxmax()])})"


def read_epsilon_comparison(frame: pd.DataFrame) -> str:
    """Facts from the ε-at-fixed-δ comparison (``epsilon_comparison.csv``), per panel: which valid
    guarantee is smallest and how far the others and the lower bound are from it, whether any
    guarantee falls below the lower bound (it must not), and every point without a drawable ε.
    """
    if not all(c in frame.columns for c in _COMPARISON_NEEDED):
        raise ValueError(f"`epsilon comparison data` must have columns {', '.join(_COMPARISON_NEEDED)}; "
                         f"got {', '.join(map(str, frame.columns))}.")
    axes = {"against n": "n_users", "against eps0": "epsilon_local"}
    sentences = []
    for panel, rows in frame.groupby("panel", sort=False):
        x = axes.get(panel)
        if x is None:
            continue
        fixed = (f"k = {int(rows['k'].iloc[0])}, ε0 = {rows['epsilon_local'].iloc[0]:g}" if x == "n_users"
                 else f"k = {int(rows['k'].iloc[0])}, n = {int(rows['n_users'].iloc[0]):,}")
        wide = rows.pivot_table(index=x, columns="accountant", values="epsilon", aggfunc="first")
        status = rows.pivot_table(index=x, columns="accountant", values="status", aggfunc="first")
        drawn = wide.where(status.isin(_DRAWN))
        roles = rows.drop_duplicates("accountant").set_index("accountant")["role"]
        guarantees = [a for a in wide.columns if roles[a] == "guarantee, all datasets"]
        lowers = [a for a in wide.columns if roles[a] == "lower bound on the worst case"]
        text = f"({panel}, {fixed}, δ = {rows['delta'].iloc[0]:g}, {len(wide)} points)"
        if guarantees:
            best = drawn[guarantees].min(axis=1, skipna=True)
            winner = drawn[guarantees].idxmin(axis=1, skipna=True).dropna()
            counts = winner.value_counts()
            text += " Smallest valid guarantee: " + ", ".join(f"`{a}` at {int(c)}" for a, c in counts.items())
            text += f" of {len(wide)} points"
            top = counts.index[0] if len(counts) else None
            if top is not None:
                span = drawn[top].dropna()
                if len(span) > 1:
                    low, high = span.idxmin(), span.idxmax()
                    text += (f"; `{top}` gives ε from {span[high]:.4g} ({_where(x, [high])}) to "
                             f"{span[low]:.4g} ({_where(x, [low])})")
                others = [a for a in guarantees if a != top]
                factors = []
                for other in others:
                    ratio = drawn[other] / drawn[top]
                    if ratio.notna().any():
                        factors.append(f"`{other}` {ratio.min():.3g}× to {ratio.max():.3g}×")
                if factors:
                    text += "; the other guarantees exceed it by " + ", ".join(factors)
            text += "."
            for lower in lowers:
                ratio = best / drawn[lower]
                text += (f" Smallest guarantee / `{lower}`: {_ratio_range(ratio, x)}"
                         " (the true worst-case ε lies between them).")
                below = 0
                for guarantee in guarantees:
                    both = drawn[[guarantee, lower]].dropna()
                    below += int((both[guarantee] < both[lower] * (1 - _EPSILON_SLACK)).sum())
                text += f" A guarantee below the lower bound: {below} points (must be 0)."
        for accountant in wide.columns:
            special = []
            for word, key in (("no ε reaches δ", "unreachable"), ("refused", "error"), ("ε = 0 meets δ", "epsilon = 0"),
                              ("reached only at ε ≥ ε0", "at or above eps0")):
                where = status.index[status[accountant] == key]
                if len(where) == len(status):
                    special.append(f"{word} at every point")
                elif len(where):
                    special.append(f"{word} at {_where(x, where)}")
            if special:
                text += f" `{accountant}` ({roles[accountant]}): " + "; ".join(special) + "."
        per_dataset = [a for a in wide.columns if roles[a] == "one dataset, not a guarantee"]
        for accountant in per_dataset:
            for lower in lowers:
                both = drawn[[accountant, lower]].dropna()
                if len(both):
                    text += (f" `{accountant}` (one dataset) is below `{lower}` at {int((both[accountant] < both[lower]).sum())}"
                             f" of {len(both)} points, as a single dataset's value may be.")
        sentences.append(text)
    return " ".join(sentences)


def read_bracket(frame: pd.DataFrame, *, utility_accountant: str | None = None) -> str:
    """Facts from the worst-case bracket table (``bracket.csv``): the ratio upper / lower measured
    (min / median / max, overall and per k), where it is widest, how many rows are trivially 1 (both
    at ε0), and which accountant comparisons needing a guarantee should use."""
    needed = ("n_users", "k", "epsilon_local", "delta", "eps_lower", "eps_upper", "ratio", "status", "upper")
    if not all(c in frame.columns for c in needed):
        raise ValueError(f"`bracket data` must have columns {', '.join(needed)}; got {', '.join(map(str, frame.columns))}.")
    if frame.empty:
        return "The bracket table has no rows."
    ratio = frame["ratio"].astype(float)
    widest = frame.loc[ratio.idxmax()]
    upper, lower = frame["upper"].iloc[0], frame["lower"].iloc[0] if "lower" in frame.columns else "the lower bound"
    trivial = frame["status"].astype(str).str.startswith("both ")  # both at, or within 1% of, eps0
    text = (
        f"Bracket of the worst-case ε over {len(frame)} settings (n {int(frame['n_users'].min()):,} to "
        f"{int(frame['n_users'].max()):,}; k {', '.join(str(k) for k in sorted(frame['k'].unique()))}; ε0 "
        f"{', '.join(f'{e:g}' for e in sorted(frame['epsilon_local'].unique()))}; δ "
        f"{', '.join(f'{d:g}' for d in sorted(frame['delta'].unique(), reverse=True))}): ε(`{upper}`) / ε(`{lower}`) "
        f"from {ratio.min():.5f} to {ratio.max():.5f}, median {float(ratio.median()):.5f}; widest at n = "
        f"{int(widest['n_users']):,}, k = {int(widest['k'])}, ε0 = {widest['epsilon_local']:g}, δ = {widest['delta']:g} "
        f"(ε {widest['eps_lower']:.4g} to {widest['eps_upper']:.4g})."
    )
    per_k = []
    for k, group in frame.groupby("k"):
        r = group["ratio"].astype(float)
        per_k.append(f"k = {int(k)}: median {float(r.median()):.5f}, max {r.max():.5f}")
    text += " Per k: " + "; ".join(per_k) + "."
    text += f" {int((ratio <= 1.01).sum())} of {len(frame)} settings are within 1%."
    if trivial.any():
        kept = ratio[~trivial]
        text += (f" In {int(trivial.sum())} setting(s) both bounds reach δ only at or within 1% of ε = ε0 (hardly any "
                 "amplification; a ratio near 1 there says little about tightness)")
        if len(kept):
            text += f"; without them the median is {float(kept.median()):.5f}"
        text += "."
    text += (f" `{upper}` is valid for every dataset and within this ratio of the true worst case, so comparisons that "
             f"need a guarantee (δ̂ of the Gaussian baseline, the crossover, ε0 calibration) should use `{upper}`")
    if utility_accountant and utility_accountant != upper:
        text += f"; this run's `utility.accountant` is `{utility_accountant}`"
    return text + "."


def _interval_rows(rows: pd.DataFrame) -> pd.DataFrame:
    """Comparison rows whose verdict is a single-draw interval test (they carry an interval)."""
    if rows.empty or "interval_high" not in rows.columns:
        return rows.iloc[0:0]
    return rows[pd.to_numeric(rows["interval_high"], errors="coerce").notna()]


def _width(low: float, high: float) -> str:
    if not (low > 0):
        return "from 0"
    return f"×{_format_number(high / low)} ({math.log10(high / low):.1f} decades)"


def strength_table(rows: pd.DataFrame) -> Table | None:
    """Per single-draw interval verdict: the interval, its width and the probability that a value
    3× larger or smaller than ours would still be called reproduced (None if no such row)."""
    tests = _interval_rows(rows)
    if tests.empty:
        return None
    factor = f"{STRENGTH_FACTOR:g}×"
    columns = ["row", "column", "verdict", "95% single-draw interval", "width",
               f"P(pass) if {factor} larger", f"P(pass) if {factor} smaller"]
    body = [
        [r.row, r.column, r.verdict, f"[{_format_number(r.interval_low)}, {_format_number(r.interval_high)}]",
         _width(float(r.interval_low), float(r.interval_high)), f"{float(r.p_pass_3x_larger):.2f}",
         f"{float(r.p_pass_3x_smaller):.2f}"]
        for r in tests.itertuples(index=False)
    ]
    return Table(columns, body)


def read_verdict_strength(rows: pd.DataFrame) -> str:
    """How weak the single-draw verdicts are: interval widths and the pass probability of a value 3× off.

    ``rows``: comparison rows (with :data:`shuffledp.experiments.utility_tables.STRENGTH_COLUMNS`); only the rows
    judged by a single-draw interval are read.
    """
    tests = _interval_rows(rows)
    if tests.empty:
        return ""
    low, high = tests["interval_low"].astype(float), tests["interval_high"].astype(float)
    positive = low > 0
    decades = np.log10(high[positive] / low[positive])
    larger, smaller = tests["p_pass_3x_larger"].astype(float), tests["p_pass_3x_smaller"].astype(float)
    reproduced = int((tests["verdict"] == REPRODUCED).sum())
    factor = f"{STRENGTH_FACTOR:g}×"
    text = (
        f"{len(tests)} verdicts (Tables V, VI and the text's TV values; {reproduced} of them “reproduced”) "
        "compare one printed Monte-Carlo draw with our central 95% interval of a single draw. Such a test is weak: "
    )
    if len(decades):
        text += (f"the intervals span {decades.min():.1f} to {decades.max():.1f} decades of the value (median "
                 f"{float(np.median(decades)):.1f})")
        if (~positive).any():
            text += f", and {int((~positive).sum())} start at 0"
        text += "; "
    else:
        text += f"all {len(tests)} intervals start at 0; "
    text += (
        f"a value {factor} ours would still be called reproduced with probability {larger.min():.2f} to "
        f"{larger.max():.2f} (median {float(np.median(larger)):.2f}), one {factor} smaller with "
        f"{smaller.min():.2f} to {smaller.max():.2f} (median {float(np.median(smaller)):.2f}). "
        "A “reproduced” here says the printed value is plausible as one draw, not that it agrees with ours "
        "to any printed precision; the per-cell interval, width and pass probabilities are listed under each table."
    )
    return text


def read_empty_cells(rows: pd.DataFrame) -> str:
    """Which Table VI cells x0 hold no check-in under our numbering (``x0_count`` = 0)."""
    if rows.empty or "x0_count" not in rows.columns:
        return ""
    counts = pd.to_numeric(rows["x0_count"], errors="coerce")
    empty = rows[counts == 0]
    if empty.empty:
        return ""
    parts = []
    for block, group in empty.groupby("block", sort=False):
        cells = list(dict.fromkeys(str(r).removeprefix("x0=") for r in group["row"]))
        parts.append(f"{block}: x0 = {', '.join(cells)}")
    return (
        "Cells without any check-in under our row-major numbering (" + "; ".join(parts) + "): there is no "
        "individual at x0, its true probability is 0 and the as-printed δ is that of a lone holder (n_x0 = 0). The "
        "paper speaks of the individual at x0, so its cells of these numbers presumably held check-ins: its cell "
        "numbering (not stated) probably differs from ours, and these rows compare different cells."
    )


#: relative gap between our sigma and diffprivlib's that the report calls a difference
_SIGMA_REPORT_TOLERANCE = 0.01


def read_gaussian_checks(frames: Sequence[pd.DataFrame]) -> str:
    """Facts from rows carrying ``sigma`` (ours, used) and ``sigma_diffprivlib``.

    Counts the calibrations where diffprivlib's σ is more than 1 % below ours (under-noised) or
    above ours (over-noised), with the δ range of each, and the σ ratio range.
    """
    rows = [f for f in frames if {"sigma", "sigma_diffprivlib"} <= set(f.columns)]
    if not rows:
        return "No calibration with both σ values is present in this run."
    table = pd.concat(rows, ignore_index=True)
    ratio = table["sigma"] / table["sigma_diffprivlib"]  # > 1: diffprivlib adds less noise than needed
    delta = _first_column(table, ("delta_used", "delta"))
    under = ratio > 1 + _SIGMA_REPORT_TOLERANCE
    over = ratio < 1 - _SIGMA_REPORT_TOLERANCE
    parts = [f"Of {len(table)} Gaussian calibrations in this run's utility data"]

    def describe(mask, words) -> str:
        text = f"diffprivlib's σ is {words} in {int(mask.sum())}"
        if mask.any():
            text += f" (σ ours / σ diffprivlib {_format_number(ratio[mask].min())} to {_format_number(ratio[mask].max())}"
            if delta:
                text += f", at δ {_format_number(table.loc[mask, delta].min())} to {_format_number(table.loc[mask, delta].max())}"
            text += ")"
        return text

    parts.append(describe(under, "more than 1% below ours (under-noised)"))
    parts.append(describe(over, "more than 1% above ours"))
    within = ~(under | over)
    if delta and within.any():
        parts.append(f"elsewhere they agree within 1% (δ {_format_number(table.loc[within, delta].min())} to "
                     f"{_format_number(table.loc[within, delta].max())})")
    return parts[0] + ", " + "; ".join(parts[1:]) + "."


def read_data_counts(summary: pd.DataFrame | None, cell_counts: Mapping[str, pd.DataFrame]) -> str:
    """Facts from the data stage: rows read and malformed per source, kept check-ins per region vs the
    paper's count (``results/data/summary.csv``), and occupied cells (``cell_counts.csv``)."""
    sentences = []
    if summary is not None and len(summary) and "kept" in summary.columns:
        level = summary["level"] if "level" in summary.columns else pd.Series("region", index=summary.index)
        name = _first_column(summary, ("label", "name", "region"))
        for _, row in summary[level == "source"].iterrows():
            malformed = row.get("malformed")
            repeats = sum(int(row[c]) for c in ("duplicates_in_file", "duplicates_of_earlier_source") if pd.notna(row.get(c)))
            dropped = row.get("duplicates_dropped")
            duplicates = (
                f"{repeats:,} exact duplicate rows ({'dropped' if pd.notna(dropped) and int(dropped) else 'kept'}), "
                if repeats else ""
            )
            sentences.append(
                f"Source {row[name]}: {int(row['rows_read']):,} rows read, "
                f"{int(malformed) if pd.notna(malformed) else 0:,} malformed, {duplicates}{int(row['kept']):,} kept."
            )
        for _, row in summary[level == "region"].iterrows():
            text = f"{row[name]}: {int(row['kept']):,} check-ins in the bounding box"
            paper = row.get("paper_count")
            if paper is not None and pd.notna(paper) and float(paper) > 0:
                difference = (float(row["kept"]) - float(paper)) / float(paper)
                text += f" vs {int(paper):,} in the paper ({difference:+.1%})"
            sentences.append(text + ".")
    for region, counts in cell_counts.items():
        if "count" in counts.columns and len(counts):
            occupied = int((counts["count"] > 0).sum())
            top = counts["count"].max() / max(1, counts["count"].sum())
            sentences.append(
                f"{region}: {occupied} of {len(counts)} cells hold at least one check-in; "
                f"the fullest cell holds {top:.1%} of the region's check-ins."
            )
    return " ".join(sentences) if sentences else "The data stage's summary is absent from this run."


# ---------------------------------------------------------------------------------- building


def _relative(path: Path, start: Path) -> str:
    return Path(os.path.relpath(Path(path).resolve(), Path(start).resolve())).as_posix()


def _trace(path, inputs: ReportInputs) -> str:
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


def _comparison_table(rows: pd.DataFrame) -> Table:
    columns = ["row", "column", "paper", "ours (as printed)", "ours (exact)", "rel. diff.", "verdict", "reason"]
    body = [
        [
            r.row,
            r.column,
            str(r.paper),
            _format_number(r.ours_as_printed),
            _format_number(r.ours_exact),
            _format_number(r.relative_difference),
            f"**{r.verdict}**" if r.verdict == REPRODUCED else r.verdict,
            r.note,
        ]
        for r in rows.itertuples(index=False)
    ]
    return Table(columns, body)


def _stage_section(inputs: ReportInputs) -> list:
    blocks = [Heading(2, "Provenance", "provenance")]
    blocks.append(
        Paragraph(
            f"Configuration SHA-256 `{inputs.config_sha256}` (the full YAML is in every manifest); "
            f"git commit `{inputs.git.get('commit') or 'unknown'}`"
            + (" with uncommitted changes" if inputs.git.get("dirty") else "")
            + (f" ({inputs.git.get('error')})" if inputs.git.get("error") else "")
            + f"; seed {inputs.config.get('seed')} (each job derives its stream from the seed and its identity)."
        )
    )
    rows = []
    for stage in inputs.expected_stages:
        path = inputs.manifests.get(stage)
        if path is not None and Path(path).is_file():
            from shuffledp.provenance import read_manifest

            manifest = read_manifest(path)
            sources = [
                f"{Path(r['path']).name} ({(r.get('sha256') or 'missing')[:12]})"
                for r in manifest.get("inputs", [])
            ]
            rows.append(
                [
                    stage,
                    f"[{_relative(path, inputs.report_dir)}]({_relative(path, inputs.report_dir)})",
                    str(len(manifest.get("outputs", []))),
                    "; ".join(sources) or "–",
                    str((manifest.get("git") or {}).get("commit") or "–")[:12],
                    manifest["config"]["sha256"][:12],
                ]
            )
        else:
            rows.append([stage, "absent from this run", "–", "–", "–", "–"])
    blocks.append(Table(["stage", "manifest", "outputs", "inputs (sha256 prefix)", "commit", "config sha256"], rows))
    return blocks


def _errata(inputs: ReportInputs, rows: pd.DataFrame, data_summary: pd.DataFrame | None, gaussian: list) -> list:
    items = []

    def counts(mask) -> str:
        subset = rows[mask]
        if subset.empty:
            return "no comparison rows in this run"
        c = subset["verdict"].value_counts()
        return ", ".join(f"{int(c.get(v, 0))} {v}" for v in VERDICTS)

    table = rows["table"] if len(rows) else pd.Series(dtype=str)
    column = rows["column"] if len(rows) else pd.Series(dtype=str)
    block = rows["block"] if len(rows) else pd.Series(dtype=str)
    # 1. v_s
    vs = "**Theorem IV.1's v_s.** The printed closed form multiplies by (s−r)/(n−n_x0) but keeps C(n−1−n_x0, s−1−r) where the identity needs C(n−n_x0, s−r); it is not the log-ratio of Definition IV.1 (the same term is in the FPS version's eq. (11)). "
    # the paper's own delta: every Table IV cell and Table II's "Our delta" column (not the [10]-[12] columns)
    own = (table == "IV") | ((table == "II") & ~column.str.fullmatch(r"\[\d+\]"))
    both = rows[own & rows["ours_as_printed"].notna() & rows["ours_exact"].notna()] if len(rows) else rows
    positive = both[(both["ours_as_printed"] > 0) & (both["ours_exact"] > 0)] if len(both) else both
    if len(positive):
        ratio = np.log10(positive["ours_as_printed"].astype(float) / positive["ours_exact"].astype(float))
        vs += (
            f"Over {len(positive)} cells of the paper's own δ (Table IV, Table II \u201cOur δ\u201d), "
            f"log10(δ as printed / exact δ) ranges from {ratio.min():.2f} to {ratio.max():.2f}."
        )
    else:
        vs += "No cell of this run has both values."
    items.append(vs)
    # 2. Table II rates
    rate = (table == "II") & column.str.contains(r"\[1[012]\]|rate|Erlingsson|Balle|Feldman", case=False, regex=True)
    items.append(
        "**Table II's columns [11], [10], [12]** are asymptotic rates with constant 1 (not the cited bounds), "
        f"and the n = 1,000 block uses ε0 = 0.5 where the caption says 0.49. Verdicts: {counts(rate)}. "
        f"Its \u201cOur δ\u201d column against eq. (6) as printed: {counts((table == 'II') & ~rate)}."
    )
    # 3. Table IV varying n
    varying_n = (table == "IV") & block.str.lower().str.contains(r"(?:^|[^a-z_])n(?:$|[^a-z_])", regex=True)
    items.append(
        "**Table IV's \u201cvarying n\u201d block** uses n_x0 = 0.8·n, although the text says n_x0 = 80. "
        f"Verdicts in that block: {counts(varying_n)}."
    )
    # 4. Gaussian
    items.append(
        "**Gaussian baseline at tiny δ.** diffprivlib's GaussianAnalytic is miscalibrated at very small δ; "
        "the utility stage checks its σ against an independent log-space calibration and "
        "uses the correct σ. "
        + read_gaussian_checks(gaussian or [])
    )
    # 5. counts
    items.append(
        "**Data counts.** " + read_data_counts(data_summary, {})
        if data_summary is not None
        else "**Data counts.** The data stage's summary is absent from this run."
    )
    return [Heading(2, "Errata", "errata"), BulletList(items)]


def _stale_stages(inputs: ReportInputs, present) -> dict:
    """Stage -> config keys that matter to it and differ between its manifest and this run's config."""
    from shuffledp.provenance import read_manifest, stage_config_differences

    stale = {}
    for stage in present:
        differences = stage_config_differences(read_manifest(inputs.manifests[stage]), inputs.config, stage)
        if differences:
            stale[stage] = differences
    return stale


def build_report(inputs: ReportInputs) -> list:
    """The report as a list of blocks (render with :func:`render_markdown` / :func:`render_html`)."""
    rows, problems = read_comparisons(inputs.comparisons)
    summary_frame = pd.read_csv(inputs.data_summary) if inputs.data_summary and Path(inputs.data_summary).is_file() else None
    gaussian = [pd.read_csv(path) for path in _existing(inputs.gaussian_checks)]
    blocks: list = [Heading(1, inputs.title)]
    created = _dt.datetime.now(tz=_dt.timezone.utc).isoformat(timespec="seconds")
    blocks.append(
        Paragraph(
            "Biswas, Jung, Palamidessi, *Tight Differential Privacy Guarantees for the Shuffle Model with "
            "k-Randomized Response* (arXiv 2022; FPS 2023, LNCS 14551), reproduced by the `shuffledp` workflow. "
            f"Written {created}. Numbering follows the arXiv version (see the map to the FPS version below)."
        )
    )
    blocks.append(
        Paragraph(
            "Verdicts: **reproduced** — our value rounds to the printed one at the printed precision (half a unit "
            "in the last printed digit); **not reproduced** — it does not; **not reproducible as specified** — "
            "the paper does not give what is needed to compute the cell. For the paper's single Monte-Carlo draws "
            "(Tables V, VI and the TV values of its text) **reproduced** means only that the printed value lies inside "
            "our central 95% interval of one draw, a far weaker test (see the verdict strength below). "
            "\u201cAs printed\u201d evaluates the paper's "
            "formula exactly as printed; \u201cexact\u201d is the corrected value. Each table lists the file, the rule "
            "and the checksum it comes from; the stage manifests hold the configuration and input checksums."
        )
    )
    present = sorted({s for s in inputs.expected_stages if inputs.manifests.get(s) and Path(inputs.manifests[s]).is_file()})
    absent = [s for s in inputs.expected_stages if s not in present]
    stale = _stale_stages(inputs, present)
    if stale:
        blocks.append(
            Paragraph(
                "**Stale results:** the manifest of stage(s) "
                + "; ".join(f"{stage} (differs in {', '.join(f'`{k}`' for k in keys[:5])}{', ...' if len(keys) > 5 else ''})"
                            for stage, keys in stale.items())
                + " records a configuration that differs from this run's in keys that matter to the stage; "
                "its tables and figures may come from the older configuration. Rerun the stage "
                "(e.g. `snakemake --cores 2 --forcerun manifest`, or delete its results folder)."
            )
        )
    if absent:
        blocks.append(
            Paragraph(
                f"**Incomplete run:** no manifest for stage(s) {', '.join(absent)}; their tables and figures are "
                "reported as absent below."
            )
        )
    # summary
    blocks.append(Heading(2, "Summary", "summary"))
    counts = verdict_counts(rows)
    if len(counts):
        blocks.append(Table(list(counts.columns), [[str(v) for v in r] for r in counts.itertuples(index=False)]))
    else:
        blocks.append(Paragraph("No comparison table is present in this run."))
    if inputs.comparisons:
        per_file = rows["source"].value_counts() if len(rows) else pd.Series(dtype=int)
        blocks.append(Paragraph("Comparison files read (every verdict below comes from one of them):"))
        blocks.append(
            BulletList(
                [f"{_trace(path, inputs)}: {int(per_file.get(str(path), 0))} row(s)" for path in inputs.comparisons]
            )
        )
    strength = read_verdict_strength(rows)
    if strength:
        blocks.append(Paragraph("**Verdict strength.** " + strength))
    if problems:
        blocks.append(BulletList([f"Input problem: {p}" for p in problems]))
    # tables
    for table, title in PAPER_TABLES.items():
        blocks.append(Heading(2, title, f"table-{table.lower()}"))
        subset = rows[rows["table"] == table] if len(rows) else rows
        if subset.empty:
            blocks.append(Paragraph(f"Table {table}: no comparison rows in this run (the stage's output is absent)."))
            continue
        for source in subset["source"].unique():
            blocks.append(Paragraph("Source: " + _trace(source, inputs) + "."))
        empty_cells = read_empty_cells(subset)
        if empty_cells:
            blocks.append(Paragraph("**Empty cells.** " + empty_cells))
        for block_name, group in subset.groupby("block", sort=False):
            if block_name:
                blocks.append(Heading(3, f"Table {table}, {block_name}"))
            blocks.append(_comparison_table(group))
            _append_strength(blocks, group)
    others = rows[~rows["table"].isin(list(PAPER_TABLES))] if len(rows) else rows
    if len(others):
        blocks.append(Heading(2, "Other values quoted in the paper's text", "text-values"))
        for (table, block_name), group in others.groupby(["table", "block"], sort=False):
            blocks.append(Heading(3, f"{table}: {block_name}" if block_name else str(table)))
            blocks.append(Paragraph("Source: " + ", ".join(_trace(s, inputs) for s in group["source"].unique()) + "."))
            blocks.append(_comparison_table(group))
            _append_strength(blocks, group)
    # figures
    blocks.append(Heading(2, "Figures", "figures"))
    cell_counts = {}
    for path in _existing(inputs.cell_counts):
        cell_counts[path.parent.name] = pd.read_csv(path)
    for number, spec in FIGURES.items():
        blocks.append(Heading(3, f"Figure {number}: {spec.title}", f"figure-{number}"))
        images = _existing(inputs.figures.get(number, ()))
        data_paths = _existing(inputs.figure_data.get(number, ()))
        blocks.append(Paragraph(f"Paper: {spec.claim}"))
        reading = _figure_reading(number, data_paths, summary_frame, cell_counts)
        blocks.append(Paragraph(f"Ours: {reading}"))
        if images:
            for image in images:
                blocks.append(
                    Figure(image, f"Figure {number} ({_trace(image, inputs)})", _relative(image, inputs.report_dir))
                )
        else:
            blocks.append(Paragraph(f"Figure {number} is absent from this run (stage `{spec.stage}`)."))
        if data_paths:
            blocks.append(Paragraph("Data: " + "; ".join(_trace(p, inputs) for p in data_paths) + "."))
    for name, extra in inputs.extras.items():
        images, data_paths = _existing(extra.get("images", ())), _existing(extra.get("data", ()))
        if not images and not data_paths:
            continue
        blocks.append(Heading(2, f"Beyond the paper: {name}", f"extra-{name.replace(' ', '-')}"))
        readings = []
        for path in data_paths:
            try:
                utility_accountant = (inputs.config.get("utility") or {}).get("accountant")
                reader = {
                    "crossover": read_crossover,
                    "delta sweeps": read_sweep,
                    "epsilon at a fixed delta": read_epsilon_comparison,
                    "worst-case bracket": lambda frame: read_bracket(frame, utility_accountant=utility_accountant),
                }.get(name, read_method_comparison)
                text = reader(pd.read_csv(path))
                readings.append(text if len(data_paths) == 1 else f"[{path.name}] {text}")
            except ValueError as error:
                readings.append(f"the data file `{path}` could not be read ({error})")
        blocks.append(Paragraph("Ours: " + (" ".join(readings) or "no data file, so no reading is given.")))
        for image in images:
            blocks.append(Figure(image, f"{name} ({_trace(image, inputs)})", _relative(image, inputs.report_dir)))
        if data_paths:
            blocks.append(Paragraph("Data: " + "; ".join(_trace(p, inputs) for p in data_paths) + "."))
    blocks += _errata(inputs, rows, summary_frame, gaussian)
    # FPS map
    blocks.append(Heading(2, "FPS 2023 numbering vs arXiv 2022 numbering", "fps-map"))
    blocks.append(Table(["FPS 2023", "arXiv 2022", "evidence in the FPS text"], [list(r) for r in FPS_TO_ARXIV]))
    blocks.append(Paragraph(FPS_NOT_VISIBLE))
    blocks += _stage_section(inputs)
    return blocks


def _append_strength(blocks: list, group: pd.DataFrame) -> None:
    table = strength_table(group)
    if table is not None:
        blocks.append(Paragraph(
            f"Strength of the single-draw verdicts above: the interval each printed draw was tested against, its "
            f"width, and the probability that a value {STRENGTH_FACTOR:g}× larger or smaller than our draws would "
            "still pass."))
        blocks.append(table)


def _figure_reading(number: int, data_paths: Sequence[Path], summary, cell_counts) -> str:
    if number == 3:
        return read_data_counts(summary, cell_counts)
    if not data_paths:
        return "no data file for this figure in this run, so no reading is given."
    readings = []
    for path in data_paths:
        frame = pd.read_csv(path)
        try:
            if number == 1:
                text = read_delta_surface(frame)
            elif "tv_gaussian" in frame.columns:
                text = read_heatmap_summary(frame)
            else:
                text = read_method_comparison(frame)
        except ValueError as error:
            text = f"the data file `{path}` could not be read ({error})"
        readings.append(text if len(data_paths) == 1 else f"[{path.name}] {text}")
    return " ".join(readings)


# --------------------------------------------------------------------------------- rendering


def _md_cell(text) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def render_markdown(blocks: Sequence) -> str:
    """Markdown text of the report (figures linked by relative path)."""
    out = []
    for block in blocks:
        if isinstance(block, Heading):
            out.append(("#" * block.level) + " " + block.text)
        elif isinstance(block, Paragraph):
            out.append(block.text)
        elif isinstance(block, BulletList):
            out.append("\n".join(f"- {item}" for item in block.items))
        elif isinstance(block, Table):
            lines = ["| " + " | ".join(_md_cell(c) for c in block.columns) + " |"]
            lines.append("|" + "|".join("---" for _ in block.columns) + "|")
            lines += ["| " + " | ".join(_md_cell(c) for c in row) + " |" for row in block.rows]
            out.append("\n".join(lines))
        elif isinstance(block, Figure):
            out.append(f"![{block.caption}]({block.link})\n\n*{block.caption}*")
        else:
            raise TypeError(f"`block` must be a report block; got {type(block).__name__}.")
    return "\n\n".join(out) + "\n"


_INLINE = re.compile(r"`([^`]+)`|\*\*([^*]+)\*\*|\*([^*]+)\*|\[([^\]]+)\]\(([^)]+)\)")


def _inline_html(text: str) -> str:
    pieces, last = [], 0
    for match in _INLINE.finditer(text):
        pieces.append(html.escape(text[last : match.start()]))
        code, bold, italic, label, target = match.groups()
        if code is not None:
            pieces.append(f"<code>{html.escape(code)}</code>")
        elif bold is not None:
            pieces.append(f"<strong>{html.escape(bold)}</strong>")
        elif italic is not None:
            pieces.append(f"<em>{html.escape(italic)}</em>")
        else:
            pieces.append(f'<a href="{html.escape(target, quote=True)}">{html.escape(label)}</a>')
        last = match.end()
    pieces.append(html.escape(text[last:]))
    return "".join(pieces)


_MIME = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".svg": "image/svg+xml", ".gif": "image/gif"}

_CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;max-width:72rem;margin:2rem auto;padding:0 1rem;line-height:1.45;color:#222}
table{border-collapse:collapse;margin:0.8rem 0;font-size:0.85rem}
th,td{border:1px solid #ccc;padding:0.25rem 0.5rem;text-align:left;vertical-align:top}
th{background:#f2f2f2}
code{background:#f5f5f5;padding:0 0.2rem}
figure{margin:1rem 0}
figure img{max-width:100%;height:auto;border:1px solid #ddd}
figcaption{font-size:0.85rem;color:#555}
"""


def render_html(blocks: Sequence, *, title: str = "Reproduction report") -> str:
    """One self-contained HTML page: inline CSS, figures embedded as base64 data URIs."""
    out = [
        "<!DOCTYPE html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8">',
        f"<title>{html.escape(title)}</title>",
        f"<style>{_CSS}</style>",
        "</head>",
        "<body>",
    ]
    for block in blocks:
        if isinstance(block, Heading):
            anchor = f' id="{html.escape(block.anchor)}"' if block.anchor else ""
            out.append(f"<h{block.level}{anchor}>{_inline_html(block.text)}</h{block.level}>")
        elif isinstance(block, Paragraph):
            out.append(f"<p>{_inline_html(block.text)}</p>")
        elif isinstance(block, BulletList):
            out.append("<ul>" + "".join(f"<li>{_inline_html(i)}</li>" for i in block.items) + "</ul>")
        elif isinstance(block, Table):
            head = "".join(f"<th>{_inline_html(str(c))}</th>" for c in block.columns)
            body = "".join(
                "<tr>" + "".join(f"<td>{_inline_html(str(c))}</td>" for c in row) + "</tr>" for row in block.rows
            )
            out.append(f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>")
        elif isinstance(block, Figure):
            mime = _MIME.get(Path(block.path).suffix.lower())
            if mime is None:
                out.append(
                    f"<p>{_inline_html(block.caption)}: format {html.escape(Path(block.path).suffix)} cannot be "
                    "embedded; see the Markdown report.</p>"
                )
                continue
            data = base64.b64encode(Path(block.path).read_bytes()).decode("ascii")
            out.append(
                f'<figure><img alt="{html.escape(block.caption, quote=True)}" src="data:{mime};base64,{data}">'
                f"<figcaption>{_inline_html(block.caption)}</figcaption></figure>"
            )
        else:
            raise TypeError(f"`block` must be a report block; got {type(block).__name__}.")
    out += ["</body>", "</html>", ""]
    return "\n".join(out)
