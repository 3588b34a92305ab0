"""Assembling the report: the order of its sections (:func:`build_report`).

The main part opens with one verdict line per seed paper, then the Findings, the Errata and the
contents; then one section per seed paper (Biswas; Koskela; Balle; Girgis) with that stage's figures,
our work beyond the papers, and the provenance. Per-cell and per-curve tables and the rest of each
reading follow in the appendix (:mod:`~shuffledp.report.appendix`).

Room: calls :mod:`~shuffledp.report.read`, :mod:`~shuffledp.report.verdicts`,
:mod:`~shuffledp.report.findings`, :mod:`~shuffledp.report.judge`, :mod:`~shuffledp.report.sections`
and :mod:`~shuffledp.report.appendix`, and returns a list of :mod:`~shuffledp.report.blocks`; rendering
is left to :mod:`shuffledp.report.render`.
"""

from __future__ import annotations

import datetime as _dt
import json
from pathlib import Path

import pandas as pd

from shuffledp.report.appendix import appendix
from shuffledp.report.blocks import BulletList, Heading, Paragraph, Table
from shuffledp.report.findings import extra_anchor, findings, opening_data, verdict_lines
from shuffledp.report.inputs import (
    BALLE_FIGURE,
    DELTA_FLOOR,
    EQUAL_GUARANTEE,
    GIRGIS_FIGURE,
    KOSKELA_FIGURES,
    PHASE_DIAGRAM,
    PHASE_DIAGRAM_ROUNDS,
    WORST_CASE_BRACKET,
)
from shuffledp.report.judge import errata
from shuffledp.report.read import ReportInputs, existing_files, read_comparisons, relative_link, stale_stages
from shuffledp.report.sections import (
    SEED_ANCHORS,
    SEED_SECTIONS,
    beyond_section,
    biswas_section,
    read_extra,
    read_extra_all,
    seed_section,
)
from shuffledp.report.verdicts import graded_cells

__all__ = ["build_report"]

#: the anchor of the heading that ends the main part (the main part stays under 250 lines)
APPENDIX_ANCHOR = "appendix"


def build_report(inputs: ReportInputs) -> list:
    """The report as a list of blocks (render with :func:`render_markdown` / :func:`render_html`)."""
    rows, problems = read_comparisons(inputs.comparisons)
    cells = graded_cells(rows)
    summary = (
        pd.read_csv(inputs.data_summary)
        if inputs.data_summary and Path(inputs.data_summary).is_file()
        else None
    )
    gaussian = [pd.read_csv(path) for path in existing_files(inputs.gaussian_checks)]
    blocks: list = _opening_section(inputs, cells)
    blocks += _findings_section(inputs, rows, summary)
    blocks += errata(inputs, cells, summary, gaussian)
    body = biswas_section(inputs, cells, summary)
    for name in SEED_SECTIONS:
        body += seed_section(inputs, name)
    body += beyond_section(inputs)
    blocks += _contents(body)
    blocks += body
    # reference material after the main part (the main part stays under 250 lines)
    blocks += appendix(inputs, rows, cells, summary, problems)
    blocks += _stage_section(inputs)
    return blocks


def _contents(body: list) -> list:
    items = [f"[{b.text}](#{b.anchor})" for b in body if isinstance(b, Heading) and b.level == 2 and b.anchor]
    items.append(f"[Appendix: every cell, every curve, every reading in full](#{APPENDIX_ANCHOR})")
    items.append("[Provenance: configuration, commit, manifests and checksums](#provenance)")
    return [Heading(2, "Contents", "contents"), BulletList(items)]


def _opening_section(inputs: ReportInputs, cells: pd.DataFrame) -> list:
    """Title, what is reproduced (with the time of writing), what the verdicts mean, and warnings of
    stale or missing stages."""
    blocks: list = [Heading(1, inputs.title)]
    # the first screen names the data and the grids before any verdict
    blocks.append(
        Paragraph(opening_data(_data_source(inputs), inputs.config.get("grid_profile"), inputs.config))
    )
    created = _dt.datetime.now(tz=_dt.UTC).isoformat(timespec="seconds")
    koskela = [
        read_extra(inputs, KOSKELA_FIGURES, n) for n in ("koskela_verdicts.csv", "koskela_fig4_verdicts.csv")
    ]
    blocks.append(Heading(2, "Verdicts", "verdicts"))
    blocks.append(
        BulletList(
            verdict_lines(
                cells,
                koskela=koskela[0],
                koskela_fig4=koskela[1],
                balle=read_extra(inputs, BALLE_FIGURE),
                girgis=read_extra(inputs, GIRGIS_FIGURE),
                anchors={
                    "biswas": SEED_ANCHORS["Biswas"],
                    **{
                        k: SEED_ANCHORS[n]
                        for k, n in (
                            ("koskela", KOSKELA_FIGURES),
                            ("balle", BALLE_FIGURE),
                            ("girgis", GIRGIS_FIGURE),
                        )
                    },
                },
            )
        )
    )
    blocks.append(
        Paragraph(
            "Levels: **reproduced**, our value rounds to the printed one (for the paper's single Monte-Carlo draws, "
            "the draw lies inside our 95% interval of one draw); **reproduced (the printed value; not a guarantee)**, "
            "a cell of Biswas et al.'s own δ that eq. (6) as printed gives where eq. (6) is not the exact δ: the "
            "paper's number is recomputed, but it understates the exact δ and is no DP guarantee, so it is never "
            "counted as reproduced; "
            "**matches if truncated**, cutting ours after the "
            "printed digit gives the printed value; **within 1 %**; **off**, with how far in the appendix; **not "
            "comparable**, a cell that holds nobody under our numbering; **not reproducible as specified**, the "
            "paper does not give what the value needs; **explained**, not reproduced, with a documented cause. "
            f"Written {created}; arXiv 2022 numbering for Biswas et al. (FPS map in the appendix)."
        )
    )
    present = sorted(
        {s for s in inputs.expected_stages if inputs.manifests.get(s) and Path(inputs.manifests[s]).is_file()}
    )
    absent = [s for s in inputs.expected_stages if s not in present]
    stale = stale_stages(inputs, present)
    if stale:
        blocks.append(
            Paragraph(
                "**Stale results:** the manifest of stage(s) "
                + "; ".join(
                    f"{stage} (differs in {', '.join(f'`{k}`' for k in keys[:5])}{', ...' if len(keys) > 5 else ''})"
                    for stage, keys in stale.items()
                )
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
    return blocks


def _data_source(inputs: ReportInputs) -> dict | None:
    """``results/data/source_label.json`` when the run has it (else ``None``: no Gowalla data)."""
    path = inputs.data_source
    if path is None or not Path(path).is_file():
        return None
    return json.loads(Path(path).read_text(encoding="utf-8"))


def _findings_section(inputs: ReportInputs, rows: pd.DataFrame, summary_frame: pd.DataFrame | None) -> list:
    """The answer first: one sentence per finding, each with its numbers and a link to its section."""
    floor = read_extra_all(inputs, DELTA_FLOOR)
    bullets = findings(
        rows,
        bracket=read_extra(inputs, WORST_CASE_BRACKET),
        equal=read_extra(inputs, EQUAL_GUARANTEE),
        grid=read_extra(inputs, PHASE_DIAGRAM, "phase_diagram.csv"),
        boundary=read_extra(inputs, PHASE_DIAGRAM, "phase_diagram_boundary.csv"),
        koskela=read_extra(inputs, KOSKELA_FIGURES, "koskela_verdicts.csv"),
        balle=read_extra(inputs, BALLE_FIGURE, "balle_verdicts.csv"),
        balle_claims=read_extra(inputs, BALLE_FIGURE, "balle_claims.csv"),
        floor=floor,
        summary=summary_frame,
        rounds=read_extra(inputs, PHASE_DIAGRAM_ROUNDS, "phase_diagram_rounds.csv"),
        grid_profile=inputs.config.get("grid_profile"),
        anchors={
            "bracket": extra_anchor(WORST_CASE_BRACKET),
            "equal": extra_anchor(EQUAL_GUARANTEE),
            "phase": extra_anchor(PHASE_DIAGRAM),
            "koskela": SEED_ANCHORS[KOSKELA_FIGURES],
            **({"floor": extra_anchor(DELTA_FLOOR)} if floor is not None else {}),
            **(
                {"rounds": extra_anchor(PHASE_DIAGRAM_ROUNDS)}
                if (inputs.extras.get(PHASE_DIAGRAM_ROUNDS) or {}).get("data")
                else {}
            ),
            **({"balle": SEED_ANCHORS[BALLE_FIGURE]} if "balle" in inputs.expected_stages else {}),
        },
    )
    return [Heading(2, "Findings", "findings"), BulletList(bullets)]


def _stage_section(inputs: ReportInputs) -> list:
    blocks: list = [Heading(2, "Provenance", "provenance")]
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
                    f"[{relative_link(path, inputs.report_dir)}]({relative_link(path, inputs.report_dir)})",
                    str(len(manifest.get("outputs", []))),
                    "; ".join(sources) or "–",
                    str((manifest.get("git") or {}).get("commit") or "–")[:12],
                    manifest["config"]["sha256"][:12],
                ]
            )
        else:
            rows.append([stage, "absent from this run", "–", "–", "–", "–"])
    blocks.append(
        Table(["stage", "manifest", "outputs", "inputs (sha256 prefix)", "commit", "config sha256"], rows)
    )
    return blocks
