"""MkDocs hooks: the parts of the site that are generated at build time, so that they cannot go stale.

* the accountants table (``<!-- generated: accountants-table -->``), read from the registry of
  :mod:`shuffledp.accounting` (name, kind, scope, reference of every registered class);
* the decisions section: its navigation entries and its index (``<!-- generated: decisions-index -->``)
  list whatever pages exist under ``docs/decisions/`` (a page added there appears without editing
  ``mkdocs.yml``);
* the changelog page (``<!-- generated: changelog -->``), the repository's ``CHANGELOG.md``.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
DECISIONS = DOCS / "decisions"
if str(ROOT / "src") not in sys.path:  # the checkout's library, also when it is not installed
    sys.path.insert(0, str(ROOT / "src"))


def _cell(text: str) -> str:
    """One Markdown table cell: no line breaks, pipes escaped."""
    return " ".join(str(text).split()).replace("|", "\\|")


def accountants_table() -> str:
    """The registry as a Markdown table: one row per registered accountant, in name order."""
    from shuffledp.accounting import accountant_class, list_accountants

    rows = ["| name | kind | scope | reference |", "|---|---|---|---|"]
    for name in list_accountants():
        cls = accountant_class(name)
        rows.append(f"| `{name}` | {_cell(cls.kind.value)} | {_cell(cls.scope)} | {_cell(cls.reference)} |")
    return "\n".join(rows)


def _title(path: Path) -> str:
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("# "):
            return line[2:].strip()
    return path.stem.replace("-", " ")


def _summary(path: Path) -> str:
    """The page's first paragraph after its title, on one line."""
    lines = path.read_text(encoding="utf-8").splitlines()
    paragraph: list[str] = []
    for line in lines[1:]:
        if not line.strip():
            if paragraph:
                break
            continue
        if line.startswith(("#", "|", "<!--", "```")):
            if paragraph:
                break
            continue
        paragraph.append(line.strip())
    return " ".join(paragraph)


def decision_pages() -> list[Path]:
    """Every decision page but the index, in file-name order."""
    return sorted(path for path in DECISIONS.glob("*.md") if path.name != "index.md")


def decisions_index() -> str:
    lines = []
    for path in decision_pages():
        lines.append(f"- [{_title(path)}]({path.name}): {_summary(path)}")
    return "\n".join(lines)


def changelog() -> str:
    text = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    return re.sub(r"\A# [^\n]*\n", "", text)


GENERATED = {
    "accountants-table": accountants_table,
    "decisions-index": decisions_index,
    "changelog": changelog,
}


def on_config(config, **kwargs):
    """Fill the nav's empty "Decisions" entry with the index and every page under docs/decisions/."""
    for position, entry in enumerate(config["nav"] or []):
        if isinstance(entry, dict) and "Decisions" in entry:
            pages = ["decisions/index.md"] + [
                {_title(path): f"decisions/{path.name}"} for path in decision_pages()
            ]
            config["nav"][position] = {"Decisions": pages}
    return config


def on_page_markdown(markdown, page, config, files, **kwargs):
    """Replace every ``<!-- generated: NAME -->`` marker by its generated text."""

    def replace(match: re.Match) -> str:
        name = match.group(1)
        if name not in GENERATED:
            raise ValueError(f"{page.file.src_path}: unknown generated block {name!r}")
        return GENERATED[name]()

    return re.sub(r"<!-- generated: ([\w-]+) -->", replace, markdown)
