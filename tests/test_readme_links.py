"""Relative links in README.md and CHANGELOG.md resolve to files of the repository (and their anchors to
headings). The documentation site's own links are checked by `mkdocs build --strict` (.ci/docs)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")


def _anchor(heading: str) -> str:
    """The anchor MkDocs (and GitHub) give a Markdown heading: lower case, punctuation dropped, spaces to -."""
    text = re.sub(r"[^\w\s-]", "", heading.strip().lower())
    return re.sub(r"\s+", "-", text)


def broken_links(text: str, base: Path) -> list[str]:
    """Every relative link of ``text`` (a file in ``base``) whose target or anchor does not exist."""
    broken = []
    for target in LINK.findall(text):
        if re.match(r"[a-z]+:", target):  # https:, mailto:
            continue
        path, _, anchor = target.partition("#")
        resolved = (base / path).resolve() if path else None
        if resolved is not None and not resolved.exists():
            broken.append(f"{target}: no such file")
            continue
        if anchor and (resolved is None or resolved.suffix == ".md"):
            page = resolved.read_text(encoding="utf-8") if resolved else text
            headings = {_anchor(line.lstrip("#")) for line in page.splitlines() if line.startswith("#")}
            if anchor not in headings:
                broken.append(f"{target}: no heading with anchor #{anchor}")
    return broken


@pytest.mark.parametrize("name", ["README.md", "CHANGELOG.md"])
def test_relative_links_resolve(name):
    text = (ROOT / name).read_text(encoding="utf-8")
    assert LINK.findall(text), f"{name} has no links to check"
    assert not broken_links(text, ROOT), broken_links(text, ROOT)


def test_probe_a_broken_link_and_a_broken_anchor_are_found():
    planted = "See [the guide](docs/guide/nowhere.md), [data](docs/guide/data.md#no-such-heading), [ok](docs/guide/data.md#local-files-and-the-stand-ins), [web](https://example.org/x)."
    found = broken_links(planted, ROOT)
    assert found == [
        "docs/guide/nowhere.md: no such file",
        "docs/guide/data.md#no-such-heading: no heading with anchor #no-such-heading",
        "docs/guide/data.md#local-files-and-the-stand-ins: no heading with anchor #local-files-and-the-stand-ins",
    ]
    assert broken_links("[fine](docs/guide/data.md#download-or-local-files)", ROOT) == []
