"""Every caption of `snakemake --report` renders as reStructuredText without warnings or errors.

Snakemake renders each caption through Jinja2 and then docutils (``publish_parts(..., writer_name=
"html")``); a docutils error (e.g. "Undefined substitution referenced" from ``|x|``) breaks the report.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import ClassVar

import jinja2
import pytest
from docutils.core import publish_parts
from docutils.utils import SystemMessage

REPO = Path(__file__).resolve().parents[1]
REPORT = REPO / "workflow" / "report"


def referenced_captions() -> set[Path]:
    found = set()
    for rules in (REPO / "workflow" / "rules").glob("*.smk"):
        for name in re.findall(r'caption="\.\./report/([^"]+)"', rules.read_text()):
            found.add(REPORT / name)
    for name in re.findall(r'^report:\s*"([^"]+)"', (REPO / "Snakefile").read_text(), flags=re.M):
        found.add(REPO / name)
    return found


CAPTIONS = sorted(set(REPORT.glob("*.rst")) | referenced_captions())


def test_every_referenced_caption_exists_and_is_checked():
    referenced = referenced_captions()
    assert len(referenced) >= 10
    assert all(path.is_file() for path in referenced), sorted(p.name for p in referenced if not p.is_file())


@pytest.mark.parametrize("caption", CAPTIONS, ids=[path.name for path in CAPTIONS])
def test_caption_renders_without_docutils_messages(caption):
    class Snakemake:
        config: ClassVar[dict] = {}

    text = (
        jinja2.Environment(undefined=jinja2.StrictUndefined)
        .from_string(caption.read_text())
        .render(snakemake=Snakemake, categories={}, files={})
    )
    try:
        # halt on any warning or error (level 2+); report nothing to stderr
        publish_parts(text, writer="html", settings_overrides={"halt_level": 2, "report_level": 5})
    except SystemMessage as message:
        pytest.fail(f"{caption.name}: {message}")


def test_the_check_catches_a_substitution_reference():
    with pytest.raises(SystemMessage, match="Undefined substitution referenced"):
        publish_parts(
            "error |a - b| here", writer="html", settings_overrides={"halt_level": 2, "report_level": 5}
        )
