"""The code speaks of the project only: no issue numbers, branch names, pointers to the removed development
diary or phrases that date the work (the chronology of a working session) in the library, the workflow, the config, the
benchmarks and tools, nor in the tests' names, comments and docstrings. The reason for a choice is written
as a reason (or on a decision page, docs/decisions/), never as a pointer into the project's history.

The patterns are tests/test_project_text.py's (which checks the reader-facing text: README, docs, config,
workflow, report) plus the dated-work phrases; a file that test already checks is checked here for those
phrases only, so a hit fails once. The tests' string literals are not checked: probes plant hits there.
"""

from __future__ import annotations

import ast
import functools
import io
import re
import sys
import tokenize
from pathlib import Path

import pytest
from test_project_text import TEXT_SUFFIXES, hits
from test_project_text import _files as _reader_files

ROOT = Path(__file__).resolve().parents[1]

#: checked whole (every line of every text file)
CODE_SCOPE = ["src/shuffledp", "workflow", "config", "benchmarks", "tools", "notebooks"]
CODE_SUFFIXES = TEXT_SUFFIXES | {".sh", ".ipynb"}
#: checked in their comments, docstrings and the names of their functions and classes
TEST_SCOPE = "tests"

#: name -> pattern, beside tests/test_project_text.py's FORBIDDEN
DATED_WORK = {
    "dated work": re.compile(r"\b(?:last|this|next) (?:stop|session)\b", re.IGNORECASE),
    # (tests/test_project_text.py finds the diary's file name)
    "the removed development diary": re.compile(r"\breproduction notes\b", re.IGNORECASE),
}
#: a function or class named after an issue ("test_issue34_...", "..._the_issue_grid"); "issue numbers" is
#: the subject of the checks themselves
ISSUE_IN_NAME = re.compile(r"\bissues?(?:\d+)?\b(?! numbers?\b)", re.IGNORECASE)

#: files that still hold hits and are being rewritten elsewhere: skipped until their rewrite is merged, then
#: removed from this set (test_pending_files_still_hold_hits says which ones may go)
PENDING: set[str] = set()


def _dated_hits(text: str) -> list[tuple[int, str, str]]:
    """(line number, kind, matched text) of every dated-work phrase in ``text``."""
    return [
        (number, kind, match.group(0))
        for number, line in enumerate(text.splitlines(), start=1)
        for kind, pattern in DATED_WORK.items()
        for match in pattern.finditer(line)
    ]


def code_hits(text: str, checked_elsewhere: bool = False) -> list[tuple[int, str, str]]:
    """Every hit in a code file's whole text; only the dated-work phrases if tests/test_project_text.py
    checks that file already."""
    found = _dated_hits(text)
    return found if checked_elsewhere else hits(text) + found


def _shift(found: list[tuple[int, str, str]], first_line: int) -> list[tuple[int, str, str]]:
    return [(number + first_line - 1, kind, matched) for number, kind, matched in found]


def _comments(source: str) -> str:
    """``source`` with every line cut to its comment (empty if it has none): line numbers kept, and a
    comment running over several lines read as one text."""
    lines = [""] * len(source.splitlines())
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            lines[token.start[0] - 1] = token.string
    return "\n".join(lines)


def hits_in_test_module(source: str) -> list[tuple[int, str, str]]:
    """Every hit in a test module's comments, docstrings and names of functions and classes (its other
    string literals may hold planted hits: they are the probes)."""
    comments = _comments(source)
    found = hits(comments) + _dated_hits(comments)
    tree = ast.parse(source)
    for node in [tree, *ast.walk(tree)]:
        if not isinstance(node, ast.Module | ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            continue
        docstring = ast.get_docstring(node, clean=False)
        if docstring is not None:
            found += _shift(hits(docstring) + _dated_hits(docstring), node.body[0].lineno)
        if not isinstance(node, ast.Module):
            words = node.name.replace("_", " ")
            found += [(node.lineno, "issue in a name", node.name) for _ in ISSUE_IN_NAME.finditer(words)]
            found += [(node.lineno, kind, node.name) for _, kind, _ in hits(words) + _dated_hits(words)]
    return sorted(set(found))


def _code_files() -> list[Path]:
    found = []
    for name in CODE_SCOPE:
        found += [
            p
            for p in sorted((ROOT / name).rglob("*"))
            if p.is_file() and p.suffix in CODE_SUFFIXES and "__pycache__" not in p.parts
        ]
    return found


def _test_files() -> list[Path]:
    return sorted(p for p in (ROOT / TEST_SCOPE).rglob("*.py") if "__pycache__" not in p.parts)


def _name(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


@functools.cache
def _checked_elsewhere() -> frozenset[Path]:
    return frozenset(_reader_files())


def file_hits(path: Path) -> list[tuple[int, str, str]]:
    """The hits of one file of either scope."""
    text = path.read_text(encoding="utf-8", errors="replace")
    if _name(path).startswith(TEST_SCOPE + "/"):
        return hits_in_test_module(text)
    return code_hits(text, checked_elsewhere=path in _checked_elsewhere())


def _report(path: Path, found: list[tuple[int, str, str]]) -> str:
    return "\n".join(f"{_name(path)}:{n}: {kind}: {text!r}" for n, kind, text in found)


def test_the_scopes_exist():
    code, tests = _code_files(), _test_files()
    assert len(code) > 100 and len(tests) > 100
    assert ROOT / "src/shuffledp/cli.py" in code and ROOT / "workflow/rules/common.smk" in code
    assert Path(__file__) in tests
    assert all((ROOT / name).is_file() for name in PENDING), sorted(
        n for n in PENDING if not (ROOT / n).is_file()
    )


@pytest.mark.parametrize(
    "path",
    [p for p in _code_files() + _test_files() if _name(p) not in PENDING],
    ids=_name,
)
def test_no_history_in_code(path):
    found = file_hits(path)
    assert not found, _report(path, found)


def test_pending_files_still_hold_hits():
    """A pending file without a hit is rewritten: it leaves PENDING, so that it stays clean."""
    clean = sorted(name for name in PENDING if not file_hits(ROOT / name))
    assert not clean, f"remove from PENDING (no hit left): {clean}"


# --- probes ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "planted, kind",
    [
        ("# the bracket goal of issue 34\n", "issue number"),
        ("# measured on branch i35-flow\n", "branch name"),
        ("# derivation in docs/reproduction-notes.md\n", "the removed development diary"),
        ('"""Derivation in the reproduction notes."""\n', "the removed development diary"),
        ("# as measured this session\n", "dated work"),
        ("# the grid of the last stop\n", "dated work"),
        ('X = "see i24f for the timings"\n', "branch name"),
    ],
)
def test_probe_a_planted_hit_in_code_fails_the_check(tmp_path, planted, kind):
    found = code_hits(f'"""A module."""\n\n{planted}')
    assert [(n, k) for n, k, _ in found] == [(3, kind)]  # the line of the planted text


@pytest.mark.parametrize(
    "planted, kind, line",
    [
        ('def test_issue34_goal():\n    """Checks it."""\n', "issue in a name", 3),
        ("def test_the_issue_grid():\n    pass\n", "issue in a name", 3),
        ("def test_i35_flow_keys():\n    pass\n", "branch name", 3),
        ('def test_goal():\n    """The goal of issue 34."""\n', "issue number", 4),
        ("def test_goal():\n    pass  # kept since issue\n    # 21 changed it\n", "issue number", 4),
        ('class TestGoal:\n    """As this session found."""\n', "dated work", 4),
    ],
)
def test_probe_a_planted_hit_in_a_test_module_fails_the_check(planted, kind, line):
    found = hits_in_test_module(f'"""Tests."""\n\n{planted}')
    assert [(n, k) for n, k, _ in found] == [(line, kind)]


def test_probe_a_tests_probe_strings_and_own_subject_are_not_hits():
    source = (
        '"""Tests of the check for issue numbers."""\n'
        "def test_no_issue_numbers_or_branch_names():\n"
        '    assert hits("the bracket goal of issue 34")  # a planted string, not a comment\n'
    )
    assert hits_in_test_module(source) == []


def test_probe_the_real_check_fails_on_a_planted_file(tmp_path, monkeypatch):
    """file_hits, as test_no_history_in_code calls it, on a code file and a test file with one hit each."""
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    (tmp_path / "src").mkdir()
    (tmp_path / "tests").mkdir()
    code = tmp_path / "src" / "m.py"
    code.write_text('"""M (issue 35)."""\n', encoding="utf-8")
    test = tmp_path / "tests" / "test_m.py"
    test.write_text('def test_issue12_grid():\n    assert "issue 12"\n', encoding="utf-8")
    assert [k for _, k, _ in file_hits(code)] == ["issue number"]
    assert [k for _, k, _ in file_hits(test)] == ["issue in a name"]  # the string is a probe's
