"""docs/adding-an-accountant.md stays true: one module plus its registration make an accountant
appear in the CLI, the config schema, table labels, the plotting palette and the composition layer.

The toy accountant lives in a temporary module (no file of the repository is edited); it borrows the
clones-krr view, so its composition must equal clones-krr's.
"""

from __future__ import annotations

import contextlib
import io
import json
import sys
import textwrap
from pathlib import Path

import pytest

from shuffledp import accounting
from shuffledp.config import load_schema

ROOT = Path(__file__).resolve().parents[2]
TOY = textwrap.dedent("""
    from shuffledp.accounting.accountants.base import Accountant, BoundKind
    from shuffledp.accounting.views.clones import pair as clones


    class Toy(Accountant):
        name = "toy-accountant"
        kind = BoundKind.UPPER
        scope = "all neighbouring datasets (replace-one), both directions (the clones-krr view)"
        reference = "tests/accounting/test_adding_an_accountant.py"
        label = "toy (upper bound)"
        colour = "#123456"

        view_class = clones.KrrClonesView  # its PLD and composed tail are derived from the view's outcomes

        def log_delta_for_epsilon(self, epsilons):
            return self.view().log_delta(self._checked_epsilons(epsilons))
""")


@pytest.fixture()
def toy(tmp_path, monkeypatch):
    (tmp_path / "toy_accountant_module.py").write_text(TOY, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    registry = dict(accounting._REGISTRY)
    import toy_accountant_module

    accounting.register(toy_accountant_module.Toy)
    yield "toy-accountant"
    accounting._REGISTRY.clear()
    accounting._REGISTRY.update(registry)
    sys.modules.pop("toy_accountant_module", None)


def _cli(argv):
    from shuffledp.cli import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(argv) == 0
    return out.getvalue()


def test_toy_accountant_appears_everywhere(toy):
    listed = json.loads(_cli(["accountants", "--json"]))
    assert {"name": toy, "kind": "upper bound"}.items() <= next(r for r in listed if r["name"] == toy).items()
    schema = load_schema(ROOT / "config" / "schema" / "config.schema.yaml")
    assert toy in schema["properties"]["accounting"]["$defs"]["accountant"]["enum"]
    assert toy in schema["properties"]["koskela"]["$defs"]["accountant"]["enum"]  # composable
    from shuffledp.experiments.accounting import ACCOUNTANT_LABELS
    from shuffledp.plotting import style

    assert ACCOUNTANT_LABELS[toy] == "toy (upper bound)"
    assert style.colour_of(toy) == "#123456" and style.PALETTE[toy] == "#123456"
    from shuffledp.accounting.composition import composable, compose

    assert composable()[toy] is accounting.BoundKind.UPPER
    ours = compose(toy, epsilon_local=1.0, n_users=200, k=4, compositions=3).epsilon_for_delta(1e-6)
    theirs = compose("clones-krr", epsilon_local=1.0, n_users=200, k=4, compositions=3).epsilon_for_delta(
        1e-6
    )
    assert ours == theirs
    assert (
        float(
            _cli(
                [
                    "epsilon",
                    "--accountant",
                    toy,
                    "--eps0",
                    "1",
                    "--n",
                    "200",
                    "--k",
                    "4",
                    "--delta",
                    "1e-6",
                    "--json",
                ]
            )
            .split('"eps": ')[1]
            .split(",")[0]
        )
        > 0
    )


def test_unregistered_after_the_fixture():
    assert "toy-accountant" not in accounting.list_accountants()


def test_register_refuses_a_clash_and_a_bad_target():
    class Clash(accounting.accountant_class("strong-adversary")):
        name = "weak-adversary"

    class Nameless(accounting.accountant_class("strong-adversary")):
        pass  # inherits "strong-adversary": a plug-in must name itself

    registry = dict(accounting._REGISTRY)
    with pytest.raises(ValueError, match="already registered to WeakAdversary"):
        accounting.register(Clash)
    with pytest.raises(ValueError, match="`accountant` must set its own class attribute `name`"):
        accounting.register(Nameless)
    with pytest.raises(
        ValueError, match=r"`accountant` must be a subclass of shuffledp\.accounting\.Accountant"
    ):
        accounting.register("toy_accountant_module:Toy")  # the former "module:Class" form is gone
    assert registry == accounting._REGISTRY
    accounting.register(accounting.accountant_class("weak-adversary"))  # the same class again: a no-op
    assert accounting.list_accountants() == sorted(registry)


def test_every_registry_entry_names_its_class():
    for name in accounting.list_accountants():
        assert accounting.accountant_class(name).name == name
