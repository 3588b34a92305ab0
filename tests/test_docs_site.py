"""The documentation site: its generated parts (docs/hooks.py) and its strict build."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

from shuffledp.accounting import accountant_class, list_accountants

ROOT = Path(__file__).resolve().parents[1]


def _hooks():
    spec = importlib.util.spec_from_file_location("docs_hooks", ROOT / "docs" / "hooks.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_accountants_table_is_the_registry():
    table = _hooks().accountants_table().splitlines()
    assert table[0] == "| name | kind | scope | reference |"
    rows = table[2:]
    assert [row.split(" | ")[0] for row in rows] == [f"| `{name}`" for name in list_accountants()]
    for name, row in zip(list_accountants(), rows):
        assert f" | {accountant_class(name).kind.value} | " in row


def test_probe_a_registered_accountant_appears_in_the_table(monkeypatch):
    import shuffledp.accounting as registry

    weak = registry.accountant_class("weak-adversary")
    planted = type("PlantedBound", (weak,), {"name": "planted-bound", "scope": "a | planted scope"})
    monkeypatch.setitem(registry._REGISTRY, "planted-bound", lambda: planted)
    table = _hooks().accountants_table()
    assert "| `planted-bound` | upper bound | a \\| planted scope |" in table


def test_the_decisions_nav_lists_every_decision_page():
    hooks = _hooks()
    config = {"nav": [{"Home": "index.md"}, {"Decisions": []}]}
    pages = hooks.on_config(config)["nav"][1]["Decisions"]
    assert pages[0] == "decisions/index.md"
    listed = {next(iter(entry.values())) for entry in pages[1:]}
    on_disk = {
        f"decisions/{p.name}" for p in (ROOT / "docs" / "decisions").glob("*.md") if p.name != "index.md"
    }
    assert listed == on_disk and len(on_disk) >= 10


def test_probe_an_unknown_generated_block_is_refused():
    class Page:
        class file:
            src_path = "planted.md"

    with pytest.raises(ValueError, match="unknown generated block 'nothing'"):
        _hooks().on_page_markdown("<!-- generated: nothing -->", Page, {}, [])


@pytest.mark.slow  # builds the whole site (about 10 s)
@pytest.mark.skipif(importlib.util.find_spec("mkdocs") is None, reason="the `docs` extra is not installed")
@pytest.mark.skipif(
    os.environ.get("SHUFFLEDP_SITE_BUILT") == ".ci/docs",
    reason="this CI run built the same site strict in its own step (.ci/docs)",
)
def test_the_site_builds_strict(tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        env={"NO_MKDOCS_2_WARNING": "1", "PATH": "/usr/bin:/bin"},
        check=False,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert (tmp_path / "site" / "accountants" / "index.html").is_file()
