"""Every module of the library imports, and every workflow script and rule-file helper compiles, on the
interpreter that runs the suite. The newest Python's CI run (.ci/newest-python) runs a subset of the suite
(docs/decisions/code.md, "CI"); this test is what makes that subset reach every module: a name removed
from the standard library, a syntax the newer parser refuses, or a new SyntaxWarning (an invalid escape)
fails here."""

from __future__ import annotations

import importlib
import pkgutil
import sys
import warnings
from pathlib import Path

import pytest

import shuffledp

REPO = Path(__file__).resolve().parents[1]
MODULES = sorted(
    info.name
    for info in pkgutil.walk_packages(shuffledp.__path__, prefix="shuffledp.")
    if info.name != "shuffledp.__main__"
)
SCRIPTS = sorted((REPO / "workflow" / "scripts").glob("*.py"))


def _compile_errors(paths: list[Path]) -> list[str]:
    """The paths whose source does not compile, or compiles with a warning (each warning is an error)."""
    failed = []
    for path in paths:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            try:
                compile(path.read_text(encoding="utf-8"), str(path), "exec")
            except (SyntaxError, SyntaxWarning, DeprecationWarning) as error:
                failed.append(f"{path.name}: {error}")
    return failed


def test_the_walk_finds_the_library():
    assert (
        len(MODULES) >= 50
        and "shuffledp.cli" in MODULES
        and "shuffledp.accounting.worst_case.k3.large" in MODULES
    )


@pytest.mark.parametrize("name", MODULES)
def test_every_library_module_imports(name):
    importlib.import_module(name)
    assert name in sys.modules


def test_every_workflow_script_compiles():
    assert len(SCRIPTS) >= 10
    assert _compile_errors(SCRIPTS) == []


def test_probe_a_script_that_does_not_compile_is_found(tmp_path):
    broken, escape = tmp_path / "broken.py", tmp_path / "escape.py"
    broken.write_text("def f(:\n    pass\n")
    escape.write_text('pattern = "\\d+"\n')  # an invalid escape: a warning (SyntaxWarning since Python 3.12)
    found = _compile_errors([broken, escape, SCRIPTS[0]])
    assert [line.split(":")[0] for line in found] == ["broken.py", "escape.py"]
