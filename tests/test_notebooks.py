"""The notebooks are committed without outputs and run top to bottom with the venv's kernel."""

from __future__ import annotations

import sys
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("*.ipynb"))
_TIMEOUT_SECONDS = 120  # per cell; the whole notebook is meant to take well under 30 s


def test_there_is_a_notebook():
    assert [p.name for p in NOTEBOOKS] and "explore_delta.ipynb" in [p.name for p in NOTEBOOKS]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_is_committed_without_outputs(path):
    notebook = nbformat.read(path, as_version=4)
    nbformat.validate(notebook)
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    assert code
    assert all(cell.outputs == [] and cell.execution_count is None for cell in code)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_executes(path, tmp_path):
    notebook = nbformat.read(path, as_version=4)
    # an extra last cell (in memory only) reports which interpreter the kernel runs
    notebook.cells.append(nbformat.v4.new_code_cell("import sys; print(sys.executable)"))
    # run from a scratch folder so "../results" is empty there: the no-results branch is exercised
    # deterministically (the results branch is covered by tests/report/test_report.py's functions)
    client = NotebookClient(
        notebook,
        timeout=_TIMEOUT_SECONDS,
        kernel_name="python3",
        resources={"metadata": {"path": str(tmp_path)}},
    )
    client.execute()  # raises CellExecutionError with the failing cell's traceback
    outputs = [output for cell in notebook.cells if cell.cell_type == "code" for output in cell.outputs]
    assert not [o for o in outputs if o.get("output_type") == "error"]
    text = "\n".join(str(o.get("text", "")) + str(o.get("data", {}).get("text/plain", "")) for o in outputs)
    assert "not registered" not in text, "the notebook names an accountant the registry does not have"
    assert "no workflow results under" in text
    # the kernel is this interpreter (the venv), so the notebook sees the same library
    assert notebook.cells[-1].outputs[0]["text"].strip() == sys.executable
