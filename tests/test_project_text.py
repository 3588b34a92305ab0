"""What the project writes for its readers speaks of the project only: no machine paths, issue numbers or
branch names in the README, the changelog, the documentation site, the config files (the tiny test run's
included), the workflow and the report's text. (The why of a choice goes on a decision page,
docs/decisions/, in words.)"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: what is checked: files, or folders whose text files are all checked
SCOPE = [
    "README.md",
    "CHANGELOG.md",
    "mkdocs.yml",
    "docs",
    "config",
    ".test/config",
    "workflow",
    "src/shuffledp/report",
]
TEXT_SUFFIXES = {".md", ".yml", ".yaml", ".smk", ".py", ".rst", ".txt", ".css", ".html", ""}

#: name -> pattern; each hit is reported with its file and line
FORBIDDEN = {
    "machine path": re.compile(r"/(?:work|tmp|home)/"),
    "issue number": re.compile(r"\bissues? \d+|(?<![\w&:\"'#])#\d+\b", re.IGNORECASE),
    "branch name": re.compile(r"\bi\d{2}[a-z]?(?:-[a-z0-9]+)?\b"),
    "the removed development diary": re.compile(r"reproduction-notes"),
}

#: (file, kind) pairs that are allowed: the changelog names the diary it says was removed
ALLOWED = {("CHANGELOG.md", "the removed development diary")}


def _files() -> list[Path]:
    found = []
    for name in SCOPE:
        path = ROOT / name
        if path.is_file():
            found.append(path)
        elif path.is_dir():
            found += [
                p
                for p in sorted(path.rglob("*"))
                if p.is_file() and p.suffix in TEXT_SUFFIXES and "__pycache__" not in p.parts
            ]
    return found


#: an issue number split over two lines ("issue" at the end of one, the number at the start of the next,
#: after a comment sign)
SPLIT_ISSUE = re.compile(r"\bissues?[ \t]*\n[ \t]*(?:#[ \t]*)?\d+\b", re.IGNORECASE)


def hits(text: str) -> list[tuple[int, str, str]]:
    """(line number, kind, matched text) of every forbidden pattern in ``text``."""
    found = []
    for number, line in enumerate(text.splitlines(), start=1):
        for kind, pattern in FORBIDDEN.items():
            found += [(number, kind, match.group(0)) for match in pattern.finditer(line)]
    for match in SPLIT_ISSUE.finditer(text):
        found.append((text.count("\n", 0, match.start()) + 1, "issue number", match.group(0)))
    return found


def test_the_scope_exists():
    files = _files()
    assert len(files) > 50
    for name in ("README.md", "mkdocs.yml", "config/config.yaml", "workflow/rules/common.smk"):
        assert ROOT / name in files


@pytest.mark.parametrize("path", _files(), ids=lambda path: str(path.relative_to(ROOT)))
def test_no_machine_paths_issue_numbers_or_branch_names(path):
    name = str(path.relative_to(ROOT))
    found = [
        hit
        for hit in hits(path.read_text(encoding="utf-8", errors="replace"))
        if (name, hit[1]) not in ALLOWED
    ]
    assert not found, "\n".join(f"{path.relative_to(ROOT)}:{n}: {kind}: {text!r}" for n, kind, text in found)


@pytest.mark.parametrize(
    "planted,kind",
    [
        ("see /work/base/src for the code", "machine path"),
        ("run it from /tmp/standin/results", "machine path"),
        ("the files under /home/user/data", "machine path"),
        ("the bracket goal of issue 34", "issue number"),
        ("fixed in Issues 21 and 22", "issue number"),
        ("as agreed in #35", "issue number"),
        ("the figure drew it until issue\n21 changed that", "issue number"),
        ("  # decided in issue\n  # 34, see there", "issue number"),
        ("measured on branch i34-k4mid", "branch name"),
        ("see i24f for the timings", "branch name"),
        ("details in docs/reproduction-notes.md", "the removed development diary"),
    ],
)
def test_probe_planted_text_is_found(planted, kind):
    assert [k for _, k, _ in hits(f"A line.\n{planted}\n")] == [kind]


@pytest.mark.parametrize(
    "clean",
    [
        'colour = "#117733"',  # a hex colour, not an issue
        "color:#222;margin:0",
        "branch and bound over blocks of datasets",
        "see [the data guide](docs/guide/data.md#local-files)",
        "k = 2, n = 10^4 and eps0 = 1",
    ],
)
def test_probe_ordinary_text_is_not_flagged(clean):
    assert hits(clean) == []
