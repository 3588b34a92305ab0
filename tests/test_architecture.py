"""docs/architecture.md stays true: every file and module it names exists, every library module is
named there, no function holds more than 60 statement lines, no module imports another module's private
names, and imports -- including those made by a string (``importlib.import_module``, ``__import__``) --
follow the layers and rooms it states."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"
DOC = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
NAMED = set(re.findall(r"`([^`\s]+)`", DOC))
#: the layers inside shuffledp.accounting, bottom to top (docs/architecture.md, docs/adding-an-accountant.md);
#: "" is the package itself (the registry)
ACCOUNTING_LAYERS = [
    {"randomizers"},
    {"params"},
    {"numerics"},
    {"views"},
    {"accountants"},
    {""},
    {"bracket", "calibrate", "community", "composition", "composition_tail"},
]
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
    "report": [
        "paper",
        "inputs",
        "hypotheses",
        "blocks",
        "read",
        "verdicts",
        "readings",
        "beyond",
        "balle",
        "judge",
        "findings",
        "girgis",
        "sections",
        "appendix",
        "build",
        "render",
    ],
    "experiments": [
        "accounting",
        "accounting_grids",
        "guarantees",
        "utility_tables",
        "utility",
        "crossover",
        "equal_guarantee",
        "exact_error",
        "compare",
        "phase_diagram",
        "rounds_guess",
        "compare_rounds",
        "koskela",
        "shuffled_gaussian",
        "girgis",
        "balle",
    ],
    "data": ["download", "source", "gowalla", "duplicates", "geometry", "summary"],
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


def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"))


def _import_calls(tree: ast.AST) -> list[ast.Call]:
    """Calls of ``importlib.import_module``, ``import_module`` or ``__import__``."""
    calls = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            called = (
                func.attr
                if isinstance(func, ast.Attribute)
                else func.id
                if isinstance(func, ast.Name)
                else None
            )
            if called in {"import_module", "__import__"}:
                calls.append(node)
    return calls


def _string_imports(tree: ast.AST) -> set[str]:
    """Modules imported by a literal string (a cycle through a string is still a cycle)."""
    return {
        call.args[0].value
        for call in _import_calls(tree)
        if call.args and isinstance(call.args[0], ast.Constant) and isinstance(call.args[0].value, str)
    }


def _computed_imports(tree: ast.AST) -> list[int]:
    """Lines importing a module whose name is computed (no reader can follow those)."""
    return sorted(
        call.lineno
        for call in _import_calls(tree)
        if not (call.args and isinstance(call.args[0], ast.Constant) and isinstance(call.args[0].value, str))
    )


def _imports(path: Path) -> set[str]:
    tree = _tree(path)
    names = _string_imports(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
        elif isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
    return {name for name in names if name == "shuffledp" or name.startswith("shuffledp.")}


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _private_uses(path: Path) -> list[str]:
    """Another module's private names used here: ``from shuffledp.x import _name``, and ``m._name`` where
    ``m`` is bound by an import from shuffledp (a module, or a class or function of one). Private *modules*
    (``shuffledp._numerics``) are the package's shared helpers and may be imported."""
    tree = _tree(path)
    found, bound = [], {}  # bound: local name -> the shuffledp name it stands for
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.ImportFrom)
            and node.module
            and node.level == 0
            and node.module.split(".")[0] == "shuffledp"
        ):
            for alias in node.names:
                target = f"{node.module}.{alias.name}"
                if _private(alias.name) and target not in MODULES:
                    found.append(f"line {node.lineno}: from {node.module} import {alias.name}")
                bound[alias.asname or alias.name] = target
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "shuffledp":
                    bound[alias.asname or alias.name.split(".")[0]] = (
                        alias.asname and alias.name
                    ) or "shuffledp"
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and _private(node.attr):
            chain, value = [node.attr], node.value
            while isinstance(value, ast.Attribute):
                chain.append(value.attr)
                value = value.value
            if isinstance(value, ast.Name) and value.id in bound:
                dotted = ".".join([value.id, *reversed(chain)])
                found.append(f"line {node.lineno}: {dotted} ({bound[value.id]})")
    return sorted(set(found))


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
    missing = sorted(
        name
        for name in MODULES
        if name != "shuffledp"
        and name not in NAMED
        and not name.startswith("shuffledp.accounting.accountants.")
    )
    assert not missing, f"modules not named in docs/architecture.md: {missing}"


def test_every_workflow_script_and_rule_file_is_named():
    files = [
        p.relative_to(ROOT).as_posix()
        for p in [*(ROOT / "workflow" / "scripts").glob("*.py"), *(ROOT / "workflow" / "rules").glob("*.smk")]
    ]
    missing = sorted(f for f in files if f not in NAMED)
    assert not missing, f"workflow files not named in docs/architecture.md: {missing}"


def _statement_lines(node: ast.AST) -> int:
    """How many source lines start a statement inside ``node`` (its own line included).

    Counted on the syntax tree, so the number does not move when the formatter wraps a long call
    over several physical lines. Modules carry no size limit: they are split by meaning, never to fit
    a line count (docs/decisions/code.md)."""
    return len({child.lineno for child in ast.walk(node) if isinstance(child, ast.stmt)})


@pytest.mark.parametrize("name", sorted(MODULES))
def test_no_function_over_60_statement_lines(name):
    long = sorted(
        f"{node.name} ({_statement_lines(node)} statement lines)"
        for node in ast.walk(_tree(MODULES[name]))
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        and _statement_lines(node) > MAX_FUNCTION_LINES
    )
    assert not long, f"{name}: functions over {MAX_FUNCTION_LINES} statement lines: {long}"


def _foreign_private_attributes(path: Path) -> list[str]:
    """``obj._name`` read or written on an object other than ``self``/``cls`` where this module does not
    define ``_name`` (as ``self._name = ...``, a class-level name, a method or a ``__slots__`` entry): the
    private state of another module's objects (or of a library's: dp_accounting's)."""
    tree, defined, used = _tree(path), set(), []
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    defined.add(item.name)
                targets = (
                    item.targets
                    if isinstance(item, ast.Assign)
                    else [item.target]
                    if isinstance(item, ast.AnnAssign)
                    else []
                )
                defined.update(t.id for t in targets if isinstance(t, ast.Name))
                if any(isinstance(t, ast.Name) and t.id == "__slots__" for t in targets):
                    defined.update(
                        e.value for e in getattr(item.value, "elts", []) if isinstance(e, ast.Constant)
                    )
        elif isinstance(node, ast.Attribute) and _private(node.attr):
            if isinstance(node.value, ast.Name) and node.value.id in {"self", "cls"}:
                if isinstance(node.ctx, ast.Store):
                    defined.add(node.attr)
            else:
                used.append((node.attr, node.lineno))
    return sorted({f"line {line}: .{attr}" for attr, line in used if attr not in defined})


@pytest.mark.parametrize("name", sorted(MODULES))
def test_no_private_attributes_of_another_modules_objects(name):
    uses = _foreign_private_attributes(MODULES[name])
    assert not uses, f"{name} reads or writes private attributes it does not define: {uses}"


@pytest.mark.parametrize("name", sorted(MODULES))
def test_no_private_names_of_another_module(name):
    uses = _private_uses(MODULES[name])
    assert not uses, f"{name} uses private names of other modules (make them public or move the code): {uses}"


def test_the_registry_imports_nothing_by_string():
    tree = _tree(MODULES["shuffledp.accounting"])
    strings = sorted(_string_imports(tree))
    importlib = sorted(
        alias.name
        for node in ast.walk(tree)
        if isinstance(node, (ast.Import, ast.ImportFrom))
        for alias in node.names
        if "importlib" in (alias.name, getattr(node, "module", None))
    )
    assert not strings and not importlib, (
        f"shuffledp.accounting imports by string: {strings}, importlib imported: {importlib}; "
        "import each accountant module with an import statement (see its loaders)"
    )


@pytest.mark.parametrize("name", sorted(MODULES))
def test_no_import_by_a_computed_name(name):
    lines = _computed_imports(_tree(MODULES[name]))
    assert not lines, f"{name} imports a module by a computed name (lines {lines}); use an import statement"


def test_the_architecture_checks_can_fail(tmp_path):
    """The readers above see what they must (a check that cannot fail proves nothing)."""
    probe = tmp_path / "probe.py"
    probe.write_text(
        "import importlib\nimport shuffledp.accounting.params as params\n"
        "from shuffledp.accounting.views.base import _private_helper, DEFAULT_K\n"
        "from shuffledp import _numerics\n"
        "def f():\n    importlib.import_module('shuffledp.report')\n    __import__('shuffledp.cli')\n"
        "    return params._KRR_CACHE, _numerics.logsumexp, DEFAULT_K.__class__\n",
        encoding="utf-8",
    )
    assert _imports(probe) == {
        "shuffledp.accounting.params",
        "shuffledp.accounting.views.base",
        "shuffledp",
        "shuffledp.report",
        "shuffledp.cli",
    }
    assert _private_uses(probe) == [
        "line 3: from shuffledp.accounting.views.base import _private_helper",
        "line 8: params._KRR_CACHE (shuffledp.accounting.params)",
    ]
    probe.write_text(
        "class A:\n    __slots__ = ('_s',)\n    _c = 1\n    def __init__(self):\n        self._x = 0\n"
        "    def _m(self, other):\n        return other._x + other._s + other._c + other._m + other._y\n"
        "def f(law):\n    law._sums = 1\n",
        encoding="utf-8",
    )
    assert _foreign_private_attributes(probe) == ["line 7: ._y", "line 9: ._sums"]
    assert _computed_imports(
        ast.parse("import importlib\nname = 'shuffledp.cli'\nimportlib.import_module(name)\n")
    ) == [3]


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
                assert parts[2] in order[:position], (
                    f"shuffledp.{package}.{room} imports {target}, listed after it"
                )


def _accounting_layer(module: str) -> int:
    parts = module.split(".")
    room = parts[2] if len(parts) > 2 else ""
    for rank, layer in enumerate(ACCOUNTING_LAYERS):
        if room in layer:
            return rank
    raise AssertionError(f"{module} is in no layer of ACCOUNTING_LAYERS")


ACCOUNTING = sorted(
    name for name in MODULES if name == "shuffledp.accounting" or name.startswith("shuffledp.accounting.")
)


@pytest.mark.parametrize("name", ACCOUNTING)
def test_accounting_layers_import_downwards_only(name):
    mine = _accounting_layer(name)
    targets = [
        t
        for t in _imports(MODULES[name])
        if t == "shuffledp.accounting" or t.startswith("shuffledp.accounting.")
    ]
    upward = sorted(t for t in targets if _accounting_layer(t) > mine)
    assert not upward, f"{name} imports from a layer above it: {upward}"
    if name.startswith("shuffledp.accounting.accountants.") and not name.endswith(".base"):
        siblings = sorted(
            t
            for t in targets
            if t.startswith("shuffledp.accounting.accountants.") and not t.endswith(".base")
        )
        assert not siblings, f"{name} imports another accountant (share a view instead): {siblings}"
