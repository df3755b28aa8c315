"""Notebooks executed by `jupyter nbconvert --execute` with the xflydsl kernel."""

import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from jupyter_client.kernelspec import KernelSpecManager
from xflydsl_shell.dependency_graph import read_svg

REPO = Path(__file__).resolve().parents[2]
NOTEBOOKS = REPO / "notebooks"


def execute(notebook, tmp_path, kernel="xflydsl", allow_errors=False):
    """Runs nbconvert as a user would; returns the executed notebook."""
    done = subprocess.run(
        [sys.executable, "-m", "jupyter", "nbconvert", "--to", "notebook", "--execute",
         f"--ExecutePreprocessor.kernel_name={kernel}", "--ExecutePreprocessor.timeout=300",
         *(["--allow-errors"] if allow_errors else []),
         "--output-dir", str(tmp_path), str(notebook)],
        capture_output=True, text=True, cwd=notebook.parent,
    )
    assert done.returncode == 0, done.stderr  # nbconvert names the failing cell there
    return nbformat.read(tmp_path / notebook.name, as_version=4)


def outputs_of(cell):
    """Outputs by type; stream text concatenated (a stream may arrive in pieces)."""
    outputs = {output.get("output_type"): output for output in cell.get("outputs", [])}
    streams = [output.text for output in cell.get("outputs", []) if output.get("output_type") == "stream"]
    if streams:
        outputs["stream"] = {"text": "".join(streams)}
    return outputs


def test_getting_started_runs_and_shows_its_outputs(tmp_path):
    nb = execute(NOTEBOOKS / "01_getting_started.ipynb", tmp_path)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert all(c.execution_count == i + 1 for i, c in enumerate(code))
    assert not any(o.output_type == "error" for c in code for o in c.outputs)

    assert "over 1,000,003 elements" in outputs_of(code[1])["stream"]["text"]
    assert "CacheInfo(hits=10, misses=1, compiles=1, evictions=0, size=1, maxsize=None)" in \
        outputs_of(code[2])["execute_result"]["data"]["text/plain"]
    log = outputs_of(code[3])["stream"]["text"]
    # on a GPU the signature names the device first ("saxpy[cuda:0 (sm_90): Float32, ...")
    assert "saxpy[" in log and "Float32, Float32[1-d, contiguous], Float32[1-d, contiguous], Int32]: compiled" in log
    assert "Float64[1-d, contiguous]" in log and "new specialization" in log
    table = outputs_of(code[4])["display_data"]["data"]
    if "<th>device</th>" in table["text/html"]:  # on a GPU: the kernels loaded there, with their resources
        assert "<td>saxpy_kernel</td><td>cuda:0</td>" in table["text/html"] and "saxpy_kernel" in table["text/plain"]
    else:
        assert "<td>__main__.saxpy</td>" in table["text/html"] and "__main__.saxpy" in table["text/plain"]
    assert "autoreload of edited modules: on" in outputs_of(code[4])["stream"]["text"]
    assert "Wall time" in outputs_of(code[5])["stream"]["text"]


def test_pa_decode_stale_cache_regression_notebook(tmp_path):
    nb = execute(NOTEBOOKS / "pa_decode_stale_cache.ipynb", tmp_path)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert not any(o.output_type == "error" for c in code for o in c.outputs)
    assert "max_diff=" in outputs_of(code[0])["stream"]["text"]
    notice = outputs_of(code[2])["stream"]["text"]
    assert "flyrt: evicted launcher compile_pa_decode_ps.<locals>.launch_pa_decode_ps" in notice
    assert "'_load_q_fragments' in module kernels.pa_decode_fp8" in notice
    assert "sentinel observed" in outputs_of(code[3])["stream"]["text"]
    assert "compiles=1" in outputs_of(code[5])["stream"]["text"]
    assert "one-cell flow" in outputs_of(code[7])["stream"]["text"]
    # the saved pictures: before the edit, after it (the evicted launcher red), after the restore
    launcher = "compile_pa_decode_ps.<locals>.launch_pa_decode_ps"
    pictures = [read_svg(outputs_of(code[i])["execute_result"]["data"]["image/svg+xml"]) for i in (1, 4, 6)]
    # the kernel that loads the query: pa_decode_ps_kernel on the CPU, the matrix-unit variant on a GPU
    (kernel,) = [k for tail, k in pictures[0][1] if tail == launcher and (k, "_load_q_fragments") in pictures[0][1]]
    assert kernel.startswith("compile_pa_decode_ps.<locals>.pa_decode_"), kernel
    for nodes, edges in pictures[0], pictures[2]:
        assert (launcher, kernel) in edges and (kernel, "_load_q_fragments") in edges
        assert all(stroke != "red" for _, stroke in nodes.values())
    nodes, edges = pictures[1]
    (evicted,) = [label for label, (_, stroke) in nodes.items() if stroke == "red" and label.startswith(launcher)]
    (rebound,) = [label for label, (_, stroke) in nodes.items() if stroke == "red" and label.startswith("_load_q")]
    assert "now refers to a different function" in evicted and "now refers to a different function" in rebound
    # the path from the evicted launcher to the rebound helper is red, and nothing else is
    assert {edge for edge, stroke in edges.items() if stroke == "red"} == {(evicted, kernel), (kernel, rebound)}


def _flydsl_outcomes(nb):
    code = [c for c in nb.cells if c.cell_type == "code"]
    return [outputs_of(cell).get("stream", {}).get("text", "") for cell in code], code


def _flydsl_version():
    import flydsl  # the release this process (and the kernels it starts, through PYTHONPATH) imports

    return flydsl.__version__


def test_flydsl_stale_cache_notebook_under_xflydsl(tmp_path):
    pytest.importorskip("flydsl", reason="FlyDSL is not installed here")
    nb = execute(NOTEBOOKS / "flydsl_stale_cache.ipynb", tmp_path)
    texts, code = _flydsl_outcomes(nb)
    assert not any(o.output_type == "error" for c in code for o in c.outputs)
    assert f"flydsl {_flydsl_version()}; xflydsl's adapter guarding it: True" in texts[0]
    assert '.amdgcn_target "amdgcn-amd-amdhsa-unknown-gfx942"' in texts[1]
    assert "helper reached as flydsl_helpers.scale: sentinel observed" in texts[3]
    assert "helper put back: the cached artifact ran" in texts[4]
    assert "helper reached as a global: sentinel observed" in texts[5]
    assert "helper put back: the cached artifact ran" in texts[6]
    assert "a cached call of the launcher: " in texts[7]
    assert "compiles=1, evictions=2" in texts[8]


def test_flydsl_stale_cache_notebook_under_ipykernel_shows_what_flydsl_does_alone(tmp_path):
    """The same notebook in ipykernel, FlyDSL unguarded: 0.4.2 runs the old
    artifact (the upstream bug); 0.5.0 traces every call, which sees these
    sentinels, and nothing guards the kernel."""
    pytest.importorskip("flydsl", reason="FlyDSL is not installed here")
    if "python3" not in KernelSpecManager().find_kernel_specs():
        pytest.skip("no ipykernel kernelspec here (the GPU machine's bundle brings xflydsl alone)")
    nb = execute(NOTEBOOKS / "flydsl_stale_cache.ipynb", tmp_path, kernel="python3", allow_errors=True)
    texts, code = _flydsl_outcomes(nb)
    assert "xflydsl's adapter guarding it: False" in texts[0]
    errors = [o for o in code[-1].outputs if o.output_type == "error"]
    if _flydsl_version() == "0.4.2":
        assert "helper reached as flydsl_helpers.scale: the cached artifact ran" in texts[3]
        assert "helper reached as a global: FlyDSL refused: FlyDSL: global 'shift'" in texts[5]
        assert not any("sentinel observed" in text for text in texts)
        assert errors and errors[0].evalue == "stale artifact: the cached artifact ran"
    else:
        assert "helper reached as flydsl_helpers.scale: sentinel observed" in texts[3]
        assert "helper reached as a global: sentinel observed" in texts[5]
        assert errors and errors[0].evalue == f"flydsl {_flydsl_version()} is not guarded in this kernel"


def test_helper_edit_workflow_notebook(tmp_path):
    # on a copy of the folder, though the notebook edits a copy of its own (never the folder's file)
    copy = tmp_path / "notebooks"
    shutil.copytree(NOTEBOOKS, copy, ignore=shutil.ignore_patterns("__pycache__"))
    nb = execute(copy / "helper_edit_workflow.ipynb", tmp_path / "out")
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert not any(o.output_type == "error" for c in code for o in c.outputs)
    text = outputs_of(code[2])["stream"]["text"]
    assert "flyrt: reloaded edited module kernels.pa_decode_fp8" in text
    assert "evicted launcher" in text and "_load_q_fragments" in text
    assert "new numbers: the softmax scale doubled" in text
    assert "restored" in outputs_of(code[4])["stream"]["text"]
    kernel_file = Path("kernels") / "pa_decode_fp8.py"
    assert (copy / kernel_file).read_text() == (NOTEBOOKS / kernel_file).read_text()


def test_a_failing_cell_fails_nbconvert(tmp_path):
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "xflydsl", "display_name": "xflydsl", "language": "python"}
    nb.cells = [nbformat.v4.new_code_cell("assert 1 + 1 == 3, 'stale result'")]
    path = tmp_path / "failing.ipynb"
    nbformat.write(nb, path)
    out = tmp_path / "out"
    with pytest.raises(AssertionError, match="stale result"):  # nbconvert failed, naming the cell's error
        execute(path, out)
