"""The report speaks of the papers and the project only, and every figure's caption names its figure.

* No development words: issue numbers, branch-like names, paths of the project's tools, docs and tests,
  machine paths, or remarks about what could not be found, in the built report nor in the text sources
  that build it (the string constants of the report's modules and of the seed papers' stages, whose
  notes and causes the report quotes, and the figures' captions).
* Every caption of a seed paper's figure names the paper and the figure number of its file name, and no
  caption is shown twice.
Each check has a probe that plants a violation and shows the check fails."""

from __future__ import annotations

import ast
import base64
import re
from pathlib import Path

import pytest

from shuffledp import report
from shuffledp.report.inputs import BALLE_FIGURE, GIRGIS_FIGURE, KOSKELA_FIGURES
from shuffledp.report.sections import IMAGE_CAPTIONS

ROOT = Path(__file__).resolve().parents[2]
PNG_1x1 = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)

#: what a reader of the report should never meet
DEVELOPMENT_WORDS = {
    "issue number": r"\b[Ii]ssues?\s*#?\d+|\b[Ii]ssue's\b|\bthe issue\b",
    "branch-like name": r"\b[a-wyz]\d{1,3}-[a-z]{2,}\b",
    "tool, doc or test path": r"\btools/|\bdocs/|\btests/\S*\.py|\.\./shared|/work/",
    "remark on what could not be found": (
        r"could not be (?:retrieved|found|fetched|downloaded)|\bgarbled\b|\b001_\*|\bnot (?:available|retrievable) "
        r"here\b|where we can read it"
    ),
}
_PATTERN = re.compile("|".join(f"(?P<w{i}>{p})" for i, p in enumerate(DEVELOPMENT_WORDS.values())))

#: the text sources the report quotes: its own modules and the seed papers' stages (notes, known causes)
SOURCES = [
    *sorted((ROOT / "src" / "shuffledp" / "report").glob("*.py")),
    *(
        ROOT / "src" / "shuffledp" / "experiments" / f"{name}.py"
        for name in ("koskela", "balle", "girgis", "shuffled_gaussian", "guarantees")
    ),
]
#: the captions of the figures of the papers and of the bracket
CAPTIONS = sorted((ROOT / "workflow" / "report").glob("*.rst"))  # every caption the report shows


def development_words(text: str) -> list[str]:
    """Every development word of ``text``, as (kind: match)."""
    kinds = list(DEVELOPMENT_WORDS)
    return [f"{kinds[int(m.lastgroup[1:])]}: {m.group(0)}" for m in _PATTERN.finditer(text)]


def string_constants(path: Path) -> list[str]:
    """The string constants of a module, docstrings left out (they document code, the report never shows them)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    return [
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings
    ]


@pytest.mark.parametrize(
    "planted",
    [
        "as Issue 34's goals ask",
        "see issue 3",
        "merged from i33-gb",
        "written by tools/transcribe_balle.py",
        "(docs/decisions/girgis.md)",
        "tests/experiments/test_balle.py checks it",
        "our copy (001_*.txt is a garbled fragment)",
        "the publication could not be retrieved here",
        "the issue text records n_x0 = 80",
    ],
)
def test_the_check_finds_a_planted_development_word(planted):
    assert development_words(f"A sentence of the report, {planted}, and more.")


def test_the_check_leaves_the_reports_own_words_alone():
    text = (
        "Table IV's x0-bin cells; n_x0 = 0.8 n; results/accounting/bracket.csv; config/quick.yaml; "
        "data/bundled/SOURCE.md; ε0 = 4; k = 10; the paper's text states n_x0 = 80; 1e-6"
    )
    assert development_words(text) == []


@pytest.mark.parametrize("path", [*SOURCES, *CAPTIONS], ids=lambda p: p.name)
def test_no_development_word_in_the_text_sources_of_the_report(path):
    texts = [path.read_text(encoding="utf-8")] if path.suffix == ".rst" else string_constants(path)
    assert [w for text in texts for w in development_words(text)] == []


def test_no_development_word_in_the_built_report():
    """The report of this checkout's workflow run, when one is present."""
    path = ROOT / "results" / "report" / "reproduction-report.md"
    if not path.is_file():
        pytest.skip("no workflow run in this checkout (results/report/reproduction-report.md)")
    assert development_words(path.read_text(encoding="utf-8")) == []


# ------------------------------------------------------------------ captions

_PAPERS = {"koskela": "Koskela et al.", "balle": "Balle et al.", "girgis": "Girgis et al."}


def caption_problems(markdown: str) -> list[str]:
    """Every image of a seed paper's figure (file ``<paper>_fig<N>.png``) whose caption does not name the
    paper and "Fig. N", and every caption shown twice."""
    problems, seen = [], set()
    for caption, link in re.findall(r"!\[([^\]]*)\]\(([^)]*)\)", markdown):
        if caption in seen:
            problems.append(f"caption shown twice: {caption}")
        seen.add(caption)
        match = re.fullmatch(r"(koskela|balle|girgis)_fig(\d+)\.png", Path(link).name)
        if match is None:
            continue
        paper, number = match.groups()
        named = re.findall(r"\bFig(?:ure|s?\.)\s*(\d+)(?:\s*-\s*(\d+))?", caption)
        if not caption.startswith(_PAPERS[paper]) or [(number, "")] != named[:1] or any(b for _, b in named):
            problems.append(f"{Path(link).name}: {caption}")
    return problems


@pytest.fixture
def seed_report(tmp_path):
    def build(captions=None) -> str:
        extras = {}
        for name, stems in (
            (KOSKELA_FIGURES, ("koskela_fig1", "koskela_fig2", "koskela_fig3", "koskela_fig4")),
            (BALLE_FIGURE, ("balle_fig2", "balle_fig3")),
            (GIRGIS_FIGURE, ("girgis_fig2",)),
        ):
            images = []
            for stem in stems:
                image = tmp_path / f"{stem}.png"
                image.write_bytes(PNG_1x1)
                images.append(image)
            extras[name] = {"images": images, "data": []}
        inputs = report.ReportInputs(
            config={"seed": 3},
            report_dir=tmp_path,
            comparisons=[],
            figures={},
            figure_data={},
            producers={},
            checksums={},
            expected_stages=[],
            config_sha256="cd" * 32,
            git={"commit": "0", "dirty": False},
            extras=extras,
        )
        return report.render_markdown(report.build_report(inputs))

    return build


def test_every_caption_names_the_paper_and_the_figure_of_its_file(seed_report):
    markdown = seed_report()
    assert caption_problems(markdown) == []
    for stem, caption in IMAGE_CAPTIONS.items():
        assert f"![{caption}]" in markdown, stem


def test_the_caption_check_finds_a_wrong_number_a_range_and_a_repeated_caption(monkeypatch, seed_report):
    from shuffledp.report import sections

    wrong = {
        **IMAGE_CAPTIONS,
        "balle_fig2": IMAGE_CAPTIONS["balle_fig3"],  # Fig. 2 captioned "Fig. 3", the caption shown twice
        "koskela_fig4": "Koskela et al. Figures 1-3: the figure",
    }
    monkeypatch.setattr(sections, "IMAGE_CAPTIONS", wrong)
    problems = caption_problems(seed_report())
    assert any(p.startswith("balle_fig2.png") for p in problems)
    assert any(p.startswith("caption shown twice") for p in problems)
    assert any(p.startswith("koskela_fig4.png") for p in problems)
