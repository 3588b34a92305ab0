"""docs/benchmarks.md is what benchmarks/render_page.py writes: from the recorded numbers, and from the
results under results/benchmarks/ when they exist."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _renderer():
    spec = importlib.util.spec_from_file_location("render_page", ROOT / "benchmarks" / "render_page.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_committed_page_is_the_rendered_one():
    page = (ROOT / "docs" / "benchmarks.md").read_text(encoding="utf-8")
    renderer = _renderer()
    recorded = renderer.render(ROOT / "no-such-folder")
    # the page was rendered either without results (then it is exactly that) or with some (then it starts so)
    common = recorded.split("## Latest run", 1)[0]
    assert page.startswith(common), "docs/benchmarks.md differs from benchmarks/render_page.py: rerun it"
    assert "## Latest run" in page


def test_results_are_rendered_as_tables(tmp_path):
    renderer = _renderer()
    (tmp_path / "accounting.csv").write_text("accountant,seconds\nweak-adversary,0.21\nplanted|pipe,1\n")
    (tmp_path / "utility").mkdir()
    (tmp_path / "utility" / "table5.tsv").write_text("s\th:m:s\tcpu_time\n12.5\t0:00:12\t11.9\n")
    page = renderer.render(tmp_path)
    assert "### `accounting.csv` (`python benchmarks/bench_accounting.py`)" in page
    assert "| weak-adversary | 0.21 |" in page and "| planted\\|pipe | 1 |" in page
    assert "| `utility/table5.tsv` | 12.5 | 11.9 |" in page
    assert "No results under" not in page


def test_probe_without_results_the_page_says_how_to_produce_them(tmp_path):
    page = _renderer().render(tmp_path / "empty")
    assert "No results under" in page and "python benchmarks/render_page.py" in page
