"""docs/architecture.md stays true: every file and module it names exists, every library module is
named there, no module exceeds 600 lines, and imports follow the layers and rooms it states."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"
DOC = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
NAMED = set(re.findall(r"`([^`\s]+)`", DOC))
MAX_LINES = 600
#: inside shuffledp.accounting (issue 19: each room one job)
MAX_ACCOUNTING_LINES = 500
#: the layers inside shuffledp.accounting, bottom to top (docs/architecture.md, docs/adding-an-accountant.md);
#: "" is the package itself (the registry)
ACCOUNTING_LAYERS = [{"randomizers"}, {"params"}, {"numerics"}, {"views"}, {"accountants"}, {""},
                     {"bracket", "calibrate", "community", "composition", "composition_tail"}]
MAX_FUNCTION_LINES = 60

#: the layers of docs/architecture.md, top to bottom (first component after ``shuffledp``)
LAYERS = [
    {"", "_numerics", "_validation", "_random", "_progress", "io", "joblog"},
    {"accounting", "tables", "reference"},
    {"config"},
    {"mechanisms", "estimators", "metrics"},
    {"data"},
    {"experiments"},
    {"plotting"},
    {"provenance"},
    {"report"},
    {"cli", "__main__"},
]
#: rooms inside a package that must only import rooms listed before them
ROOM_ORDER = {
    "report": ["paper", "inputs", "blocks", "read", "readings", "beyond", "balle", "judge", "findings", "girgis", "build", "render"],
    "experiments": ["accounting", "guarantees", "utility_tables", "utility", "equal_guarantee", "exact_error", "compare",
                    "phase_diagram", "koskela", "shuffled_gaussian", "girgis", "balle"],
    "data": ["download", "gowalla", "duplicates", "geometry", "summary"],
}


def _modules() -> dict[str, Path]:
    found = {}
    for path in (SRC / "shuffledp").rglob("*.py"):
        parts = path.relative_to(SRC).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


MODULES = _modules()


def _imports(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
        elif isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
    return {name for name in names if name == "shuffledp" or name.startswith("shuffledp.")}


def _layer(module: str) -> int:
    part = module.split(".")[1] if "." in module else ""
    for rank, layer in enumerate(LAYERS):
        if part in layer:
            return rank
    raise AssertionError(f"{module} is in no layer of docs/architecture.md")


@pytest.mark.parametrize("name", sorted(n for n in NAMED if n.startswith("shuffledp")))
def test_every_module_named_exists(name):
    assert name in MODULES, f"docs/architecture.md names `{name}`, which is not a module under src/"


@pytest.mark.parametrize("name", sorted(n for n in NAMED if "/" in n and not n.startswith("results/")))
def test_every_file_named_exists(name):
    assert (ROOT / name).exists(), f"docs/architecture.md names `{name}`, which does not exist"


def test_every_library_module_is_named():
    # accountant modules are indexed by the registry (docs/adding-an-accountant.md: one module plus one
    # registry line), so the page need not name each one
    missing = sorted(name for name in MODULES if name != "shuffledp" and name not in NAMED
                     and not name.startswith("shuffledp.accounting.accountants."))
    assert not missing, f"modules not named in docs/architecture.md: {missing}"


def test_every_workflow_script_and_rule_file_is_named():
    files = [p.relative_to(ROOT).as_posix() for p in [*(ROOT / "workflow" / "scripts").glob("*.py"),
                                                      *(ROOT / "workflow" / "rules").glob("*.smk")]]
    missing = sorted(f for f in files if f not in NAMED)
    assert not missing, f"workflow files not named in docs/architecture.md: {missing}"


@pytest.mark.parametrize("name", sorted(MODULES))
def test_no_module_over_600_lines(name):
    lines = MODULES[name].read_text(encoding="utf-8").count("\n")
    limit = MAX_ACCOUNTING_LINES if name.startswith("shuffledp.accounting") else MAX_LINES
    assert lines <= limit, f"{name} has {lines} lines (at most {limit}); split it by job"


@pytest.mark.parametrize("name", sorted(MODULES))
def test_imports_never_run_up_the_layers(name):
    mine = _layer(name)
    upward = sorted(target for target in _imports(MODULES[name]) if _layer(target) > mine)
    assert not upward, f"{name} (layer {mine}) imports from a lower layer: {upward}"


@pytest.mark.parametrize("package", sorted(ROOM_ORDER))
def test_rooms_import_only_rooms_before_them(package):
    order = ROOM_ORDER[package]
    assert sorted(order) == sorted(
        name.split(".")[2] for name in MODULES if name.startswith(f"shuffledp.{package}.")
    ), f"ROOM_ORDER[{package!r}] must list every module of shuffledp.{package}"
    for position, room in enumerate(order):
        for target in _imports(MODULES[f"shuffledp.{package}.{room}"]):
            parts = target.split(".")
            if len(parts) > 2 and parts[1] == package:
                assert parts[2] in order[:position], f"shuffledp.{package}.{room} imports {target}, listed after it"


def _accounting_layer(module: str) -> int:
    parts = module.split(".")
    room = parts[2] if len(parts) > 2 else ""
    for rank, layer in enumerate(ACCOUNTING_LAYERS):
        if room in layer:
            return rank
    raise AssertionError(f"{module} is in no layer of ACCOUNTING_LAYERS")


ACCOUNTING = sorted(name for name in MODULES if name == "shuffledp.accounting" or name.startswith("shuffledp.accounting."))


@pytest.mark.parametrize("name", ACCOUNTING)
def test_accounting_layers_import_downwards_only(name):
    mine = _accounting_layer(name)
    targets = [t for t in _imports(MODULES[name]) if t == "shuffledp.accounting" or t.startswith("shuffledp.accounting.")]
    upward = sorted(t for t in targets if _accounting_layer(t) > mine)
    assert not upward, f"{name} imports from a layer above it: {upward}"
    if name.startswith("shuffledp.accounting.accountants.") and not name.endswith(".base"):
        siblings = sorted(t for t in targets if t.startswith("shuffledp.accounting.accountants.")
                          and not t.endswith(".base"))
        assert not siblings, f"{name} imports another accountant (share a view instead): {siblings}"


@pytest.mark.parametrize("name", ACCOUNTING)
def test_no_function_over_60_lines_in_accounting(name):
    tree = ast.parse(MODULES[name].read_text(encoding="utf-8"))
    long = sorted(f"{node.name} ({node.end_lineno - node.lineno + 1} lines)" for node in ast.walk(tree)
                  if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
                  and node.end_lineno - node.lineno + 1 > MAX_FUNCTION_LINES)
    assert not long, f"{name}: functions over {MAX_FUNCTION_LINES} lines: {long}"
