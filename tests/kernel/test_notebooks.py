"""Notebooks executed by `jupyter nbconvert --execute` with the xflydsl kernel."""

import subprocess
import sys
from pathlib import Path

import nbformat

REPO = Path(__file__).resolve().parents[2]
NOTEBOOKS = REPO / "notebooks"


def execute(notebook, tmp_path):
    """Runs nbconvert as a user would; returns the executed notebook."""
    subprocess.run(
        [sys.executable, "-m", "jupyter", "nbconvert", "--to", "notebook", "--execute",
         "--ExecutePreprocessor.kernel_name=xflydsl", "--ExecutePreprocessor.timeout=300",
         "--output-dir", str(tmp_path), str(notebook)],
        check=True, capture_output=True, text=True, cwd=notebook.parent,
    )
    return nbformat.read(tmp_path / notebook.name, as_version=4)


def outputs_of(cell):
    return {output.get("output_type"): output for output in cell.get("outputs", [])}


def test_getting_started_runs_and_shows_its_outputs(tmp_path):
    nb = execute(NOTEBOOKS / "01_getting_started.ipynb", tmp_path)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert all(c.execution_count == i + 1 for i, c in enumerate(code))
    assert not any(o.output_type == "error" for c in code for o in c.outputs)

    assert "Python 3.11" in outputs_of(code[0])["stream"]["text"]
    assert "array([0. , 0.5, 1. , 1.5, 2. ])" in outputs_of(code[1])["execute_result"]["data"]["text/plain"]
    assert "<b>rich output</b>" in outputs_of(code[2])["display_data"]["data"]["text/html"]
    assert "output of a subprocess is captured too" in outputs_of(code[3])["stream"]["text"]
    assert outputs_of(code[3])["execute_result"]["data"]["text/plain"] == "['0 1 4 9 16']"
    assert "Wall time" in outputs_of(code[4])["stream"]["text"]


def test_a_failing_cell_fails_nbconvert(tmp_path):
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "xflydsl", "display_name": "xflydsl", "language": "python"}
    nb.cells = [nbformat.v4.new_code_cell("assert 1 + 1 == 3, 'stale result'")]
    path = tmp_path / "failing.ipynb"
    nbformat.write(nb, path)
    out = tmp_path / "out"
    try:
        execute(path, out)
    except subprocess.CalledProcessError as error:
        assert "stale result" in error.stderr
    else:
        raise AssertionError("nbconvert accepted a failing notebook")
