"""One idea, one name: the public signatures of the library use the vocabulary of
docs/decisions/vocabulary.md.

Walked with ``ast`` over every module under ``src/shuffledp``: the parameters of public functions and
methods (of public classes, and of the private bases they inherit from in the same module), the names of
public functions, methods and properties, public class fields (dataclass fields and other annotated class
attributes) and public attributes set on ``self``. Private names (``_x``) and local variables are not
checked. The checks:

* no synonym of a vocabulary name (:data:`SYNONYMS`) is used as such a name;
* a ``direction`` parameter never defaults to a string (it is a :class:`~shuffledp.accounting.params.Direction`);
* the binomial pmf and its cached ranges live in one module (:data:`BINOMIAL_MODULE`);
* a limit constant (``MAX_*``, ``MIN_*``) is defined in one module only, and no module defines the bare
  ``MAX_USERS`` (each limit is named for what it limits).

:data:`PENDING` lists the (module, name) pairs still to be renamed in modules rewritten elsewhere; every
entry must still be found (an entry that no longer occurs fails, so the set only shrinks).
"""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "shuffledp"

#: the one name of each idea -> the names refused for it in public signatures
SYNONYMS: dict[str, list[str]] = {
    # the number of users n (the population the rounds sample from when there are rounds; the q n users
    # of one round are ``per_round``, a different idea)
    "n_users": ["n", "N", "users", "population", "num_users", "n_user", "nusers", "number_of_users"],
    # the local epsilon_0 of the randomizer
    "epsilon_local": [
        "e0",
        "eps0",
        "eps_0",
        "E",
        "E0",
        "local_epsilon",
        "eps_local",
        "local_eps",
        "epsilon0",
        "epsilon_0",
    ],
    # the domain size (a number of successes is ``count``, a number of trials ``n_trials``)
    "k": ["domain_size", "num_values", "d_domain", "alphabet_size"],
    # which divergence of the pair is read: a Direction, never a flag
    "direction": ["reverse", "forward", "swap", "swapped", "flip"],
}
REFUSED: dict[str, str] = {synonym: name for name, synonyms in SYNONYMS.items() for synonym in synonyms}
#: refused names that may also have meant another idea, with that idea's one name
OTHER_MEANING = {"n": "n_trials", "N": "n_trials"}
#: the command line's and the old spellings of a direction, refused as a ``direction`` default
DIRECTION_STRINGS = {"forward", "reverse", "both", "x0|x1", "x1|x0", "D||D'", "D'||D", "remove", "add"}
BINOMIAL_MODULE = "shuffledp.accounting.numerics.binomial"
BINOMIAL_NAME = re.compile(r"^(log_binom\w*|binom_pmf\w*|log_pmf|\w*PmfRange)$")
LIMIT_NAME = re.compile(r"^(MAX|MIN)_[A-Z0-9_]+$")

#: (module, name) pairs in modules being rewritten elsewhere; emptied as they adopt the vocabulary
PENDING: set[tuple[str, str]] = set()


def _public(name: str) -> bool:
    return not name.startswith("_") or name in ("__init__", "__call__")


def _parameters(function: ast.FunctionDef | ast.AsyncFunctionDef) -> Iterator[ast.arg]:
    arguments = function.args
    yield from arguments.posonlyargs + arguments.args + arguments.kwonlyargs
    for star in (arguments.vararg, arguments.kwarg):
        if star is not None:
            yield star


def _defaults(function: ast.FunctionDef | ast.AsyncFunctionDef) -> Iterator[tuple[ast.arg, ast.expr]]:
    arguments = function.args
    positional = arguments.posonlyargs + arguments.args
    yield from zip(positional[len(positional) - len(arguments.defaults) :], arguments.defaults)
    yield from ((a, d) for a, d in zip(arguments.kwonlyargs, arguments.kw_defaults) if d is not None)


def _self_attributes(function: ast.FunctionDef | ast.AsyncFunctionDef) -> Iterator[str]:
    for node in ast.walk(function):
        targets = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
            targets = [node.target]
        for target in targets:
            for item in target.elts if isinstance(target, ast.Tuple) else [target]:
                if (
                    isinstance(item, ast.Attribute)
                    and isinstance(item.value, ast.Name)
                    and item.value.id == "self"
                ):
                    yield item.attr


def _functions(module: str, function, owner: str) -> Iterator[tuple[str, str, str]]:
    """(where, name, what) of a public function or method: its own name and its parameters' names."""
    where = f"{module}:{owner}{function.name}"
    if function.name != "__init__" and function.name != "__call__":
        yield where, function.name, "name"
    for parameter in _parameters(function):
        if parameter.arg not in ("self", "cls") and not parameter.arg.startswith("_"):
            yield where, parameter.arg, "parameter"
    for parameter, default in _defaults(function):
        if (
            parameter.arg == "direction"
            and isinstance(default, ast.Constant)
            and isinstance(default.value, str)
        ):
            yield where, "direction", f"string default {default.value!r}"


def _class_body(module: str, cls: ast.ClassDef, owner: str) -> Iterator[tuple[str, str, str]]:
    for node in cls.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if _public(node.name):
                yield from _functions(module, node, owner)
            for attribute in _self_attributes(node):
                if not attribute.startswith("_"):
                    yield f"{module}:{owner}{attribute}", attribute, "attribute"
        elif (
            isinstance(node, ast.AnnAssign)
            and isinstance(node.target, ast.Name)
            and not node.target.id.startswith("_")
        ):
            yield f"{module}:{owner}{node.target.id}", node.target.id, "field"


def public_names(tree: ast.Module, module: str) -> Iterator[tuple[str, str, str]]:
    """(where, name, what) of every public name of the module's signatures (module docstring)."""
    classes = {node.name: node for node in tree.body if isinstance(node, ast.ClassDef)}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and _public(node.name):
            yield from _functions(module, node, "")
        elif isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
            seen, todo = set(), [node]
            while todo:  # the class and the private bases it inherits from in this module
                cls = todo.pop()
                if cls.name in seen:
                    continue
                seen.add(cls.name)
                yield from _class_body(module, cls, f"{node.name}.")
                todo += [classes[b.id] for b in cls.bases if isinstance(b, ast.Name) and b.id in classes]


def violations(tree: ast.Module, module: str) -> list[tuple[str, str, str]]:
    """(module, name, message) of every synonym and string direction in the module's public names."""
    found = []
    for where, name, what in public_names(tree, module):
        if what.startswith("string default"):
            found.append((module, name, f"{where}: `direction` has a {what}; use a Direction member"))
        elif name in REFUSED:
            also = f" (or `{OTHER_MEANING[name]}` if it is not that)" if name in OTHER_MEANING else ""
            found.append((module, name, f"{where}: {what} `{name}` is a synonym of `{REFUSED[name]}`{also}"))
    return found


@functools.cache
def _modules() -> dict[str, ast.Module]:
    """Module name -> tree of every library module; parsed when a test first asks (not at import: every
    pytest worker imports this module), then shared."""
    trees = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        module = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        trees[module] = ast.parse(path.read_text(encoding="utf-8"))
    return trees


def _constants(tree: ast.Module) -> Iterator[str]:
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
        for target in targets:
            if isinstance(target, ast.Name):
                yield target.id


def limit_violations(
    trees: dict[str, ast.Module], pending: frozenset | set = frozenset()
) -> list[tuple[str, str, str]]:
    """(module, name, message) of each limit constant also defined in another module (not a ``pending``
    one), and of each bare ``MAX_USERS``."""
    defined: dict[str, list[str]] = {}
    for module, tree in trees.items():
        for name in _constants(tree):
            if LIMIT_NAME.match(name):
                defined.setdefault(name, []).append(module)
    found = []
    for name, modules in defined.items():
        for module in modules:
            if name == "MAX_USERS":
                found.append(
                    (module, name, f"{module}: `MAX_USERS` says no limit; name it for what it limits")
                )
            elif others := sorted({m for m in modules if m != module and (m, name) not in pending}):
                found.append((module, name, f"{module}: `{name}` is also defined in {others}"))
    return found


def binomial_violations(trees: dict[str, ast.Module]) -> list[tuple[str, str, str]]:
    """(module, name, message) of each binomial pmf function or pmf-range class outside BINOMIAL_MODULE."""
    found = []
    for module, tree in trees.items():
        for node in tree.body:
            if (
                isinstance(node, (ast.FunctionDef, ast.ClassDef))
                and BINOMIAL_NAME.match(node.name)
                and module != BINOMIAL_MODULE
            ):
                found.append((module, node.name, f"{module}: `{node.name}` belongs in {BINOMIAL_MODULE}"))
    return found


def _all_violations(
    trees: dict[str, ast.Module], pending: frozenset | set = frozenset()
) -> list[tuple[str, str, str]]:
    found = [v for module, tree in trees.items() for v in violations(tree, module)]
    return found + limit_violations(trees, pending) + binomial_violations(trees)


def test_public_signatures_use_the_vocabulary():
    found = _all_violations(_modules(), PENDING)
    bad = sorted({message for module, name, message in found if (module, name) not in PENDING})
    assert not bad, "synonyms in public signatures (docs/decisions/vocabulary.md):\n" + "\n".join(bad)


def test_every_pending_entry_is_still_found():
    live = {(module, name) for module, name, _ in _all_violations(_modules())}
    stale = sorted(PENDING - live)
    assert not stale, f"PENDING entries no longer found (remove them): {stale}"


def test_the_synonym_table_is_consistent():
    names = set(SYNONYMS)
    assert not names & set(REFUSED), "a vocabulary name is also refused as a synonym"
    assert len(REFUSED) == sum(len(v) for v in SYNONYMS.values()), "a synonym is listed under two names"


# ------------------------------------------------------------------------------------------- probes


def _probe(source: str, tmp_path: Path, module: str = "shuffledp.probe") -> list[tuple[str, str, str]]:
    path = tmp_path / "probe.py"
    path.write_text(source, encoding="utf-8")
    trees = {module: ast.parse(path.read_text(encoding="utf-8"))}
    return _all_violations(trees)


@pytest.mark.parametrize(
    "source, name",
    [
        ("def delta(eps0, n_users):\n    return eps0\n", "eps0"),
        ("def delta(*, epsilon_local, n):\n    return n\n", "n"),
        ("class A:\n    def run(self, local_epsilon):\n        pass\n", "local_epsilon"),
        (
            "class _Base:\n    def __init__(self, population):\n        pass\n\nclass A(_Base):\n    pass\n",
            "population",
        ),
        ("from dataclasses import dataclass\n\n@dataclass\nclass S:\n    E: float\n", "E"),
        ("class A:\n    def __init__(self, x):\n        self.n, self.e0 = x, x\n", "e0"),
        ("def pld(view, reverse: bool):\n    pass\n", "reverse"),
        ("def law(*, direction: str = 'forward'):\n    pass\n", "direction"),
        ("class A:\n    @property\n    def eps0(self):\n        return 1.0\n", "eps0"),
    ],
)
def test_probe_a_planted_synonym_fails(source, name, tmp_path):
    found = _probe(source, tmp_path)
    assert name in {n for _, n, _ in found}, found


@pytest.mark.parametrize(
    "source",
    [
        "def delta(*, epsilon_local, n_users, k, direction=None):\n    def inner(n, e0):\n        return n\n",
        "def _private(n, eps0):\n    n_local = n\n    return n_local\n",
        "class _Hidden:\n    def run(self, eps0):\n        self.e0 = eps0\n",
        "class A:\n    def run(self, n_users):\n        n = n_users\n        self._n = n\n",
    ],
)
def test_probe_private_names_and_locals_pass(source, tmp_path):
    assert _probe(source, tmp_path) == []


def test_probe_limit_and_binomial_checks_fail(tmp_path):
    trees = {
        "shuffledp.a": ast.parse("MAX_USERS = 10\nMAX_CELLS = 3\n"),
        "shuffledp.b": ast.parse("MAX_CELLS = 4\ndef log_binom_pmf(count, n_trials):\n    pass\n"),
        "shuffledp.c": ast.parse("class PmfRange:\n    pass\n"),
    }
    found = {(module, name) for module, name, _ in limit_violations(trees) + binomial_violations(trees)}
    assert found == {
        ("shuffledp.a", "MAX_USERS"),
        ("shuffledp.a", "MAX_CELLS"),
        ("shuffledp.b", "MAX_CELLS"),
        ("shuffledp.b", "log_binom_pmf"),
        ("shuffledp.c", "PmfRange"),
    }
