"""Rooms share public names only, inside shuffledp.report too: no module of the report imports a private name
(``_name``) from another module; what two rooms share is public in the room that owns it."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPORT = Path(__file__).resolve().parents[2] / "src" / "shuffledp" / "report"


def private_imports(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("shuffledp"):
            found += [
                f"from {node.module} import {a.name}"
                for a in node.names
                if a.name.startswith("_") and not a.name.startswith("__")
            ]
    return found


@pytest.mark.parametrize("path", sorted(REPORT.glob("*.py")), ids=lambda p: p.name)
def test_no_private_name_is_imported_across_modules(path):
    assert private_imports(path) == []


def test_the_check_sees_a_private_import(tmp_path):
    planted = tmp_path / "planted.py"
    planted.write_text(
        "from shuffledp.report.read import _format_number, format_cell\nfrom __future__ import x\n"
    )
    assert private_imports(planted) == ["from shuffledp.report.read import _format_number"]
