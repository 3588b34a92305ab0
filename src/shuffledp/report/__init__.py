"""The reproduction report: paper tables cell by cell, figures with a reading, errata, provenance.

The report is assembled as a list of small blocks (:class:`Heading`, :class:`Paragraph`,
:class:`Table`, :class:`BulletList`, :class:`Figure`) and rendered twice: as Markdown (figures linked
by relative path) and as one self-contained HTML file (figures embedded as base64, inline CSS, no
external asset). Nothing here computes privacy or utility: every number is read from a stage output
(``*_comparison.csv``, figure data, the data summary, the stage manifests), and every reading of a
figure is derived from that figure's data, never written in advance.

Verdicts come from the comparison CSVs (columns :data:`shuffledp.tables.COMPARISON_COLUMNS`) and are
reported in levels (:mod:`~shuffledp.report.verdicts`; ``docs/decisions/workflow.md``).

Rooms, in the order the data passes through them (each imports only from rooms above it):

==============  ======================================================================================
``paper``       what the paper claims: its tables, figures (with the quoted claim), FPS -> arXiv map
``inputs``      which workflow outputs the report reads, by role (from plain lists of paths; called by
                ``workflow/rules/report.smk``), and the names of the sections beyond the paper
``hypotheses``  Table II's n = 1,000 "Our δ" cells under readings fixed in advance (its own rule; the one
                room that computes δ)
``blocks``      the document model (Heading, Paragraph, Table, BulletList, Figure)
``read``        stage outputs -> tidy frames (comparison rows, method summaries, provenance); the only
                room that opens result files besides the sections' readers
``verdicts``    verdicts in levels (reproduced, matches if truncated, within 1 %, off, not comparable),
                a row printed in two blocks counted once, the seed papers' verdict tables counted
``readings``    judging figures: one reading per figure, computed from its data
``beyond``      judging what goes beyond the paper: three calibrations, the delta floor, the equal
                guarantee, Koskela et al.'s curves, the phase diagram
``balle``       Balle et al.'s Figure 3 verdicts
``judge``       judging claims: verdict strength, empty cells, Gaussian checks, data counts, errata
``findings``    the opening: one verdict line per seed paper and one sentence per finding
``girgis``      Girgis et al.'s verdicts
``sections``    the main part: one section per seed paper with its figures, our work beyond the papers
``appendix``    every cell, every verdict row, the rest of each reading, the files read, the FPS map
``build``       the order of sections
``render``      blocks -> Markdown or self-contained HTML
==============  ======================================================================================

The workflow script (``workflow/scripts/reproduction_report.py``) only builds :class:`ReportInputs`,
calls :func:`build_report` and writes the two renderings.
"""

from shuffledp.report.beyond import (
    read_delta_floor,
    read_equal_guarantee,
    read_koskela_verdicts,
    read_three_calibrations,
)
from shuffledp.report.blocks import BulletList, Figure, Heading, Paragraph, Table
from shuffledp.report.build import build_report
from shuffledp.report.judge import (
    read_data_counts,
    read_empty_cells,
    read_gaussian_checks,
    read_verdict_strength,
    strength_table,
)
from shuffledp.report.paper import FIGURES, FPS_TO_ARXIV, PAPER_TABLES
from shuffledp.report.read import VERDICTS, ReportInputs, method_summary, read_comparisons, verdict_counts
from shuffledp.report.readings import (
    read_bracket,
    read_crossover,
    read_delta_surface,
    read_epsilon_comparison,
    read_heatmap_summary,
    read_method_comparison,
    read_sweep,
)
from shuffledp.report.render import render_html, render_markdown

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
    "ReportInputs",
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
    "read_three_calibrations",
    "read_delta_floor",
    "read_equal_guarantee",
    "read_koskela_verdicts",
    "read_gaussian_checks",
    "read_verdict_strength",
    "strength_table",
    "read_empty_cells",
    "build_report",
    "render_markdown",
    "render_html",
]
