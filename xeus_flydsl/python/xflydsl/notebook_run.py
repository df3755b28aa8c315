"""One regression notebook run on a fresh xflydsl kernel through nbclient:
its outcome, the kernel's notices and the run's figures.

After the notebook's own cells, one more cell (not part of the notebook)
reads the kernel's compile log, so the figures count what the notebook did:
compiles, and artifacts the disk cache gave (a warm start or an object
found by its IR) instead of a compile.
"""

import json
import re
import tempfile
import time
from dataclasses import dataclass, field

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError, CellTimeoutError, DeadKernelError

KERNEL = "xflydsl"
_FIGURES_MARK = "xflydsl-figures:"
_FIGURES_CELL = f"""\
import json as _json
import flyrt.compiler as _flyc
_sources = [_r.source for _r in _flyc.compile_log()]
print({_FIGURES_MARK!r} + _json.dumps({{"compiles": _sources.count("compiled"),
    "from_cache": sum(_s.startswith("disk cache") for _s in _sources)}}))
"""
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


@dataclass
class Failure:
    """Why a notebook failed: the cell (its index among code cells, 0 first,
    and its source) and what went wrong there."""

    cell_index: int  # None: the kernel did not start
    source: str
    error: str
    kernel_died: bool = False


@dataclass
class NotebookRun:
    cells: int = 0
    seconds: float = 0.0
    compiles: int = 0
    from_cache: int = 0
    notices: list = field(default_factory=list)  # the kernel's "flyrt: ..." lines
    kernel_stderr: str = ""
    failure: Failure = None

    def figures(self):
        return {"cells": self.cells, "compiles": self.compiles, "from_cache": self.from_cache,
                "seconds": round(self.seconds, 2)}


def run_notebook(path, timeout, cwd, ports=None):
    """Executes the notebook at `path` (cells in `cwd`, each allowed
    `timeout` seconds) on a new kernel, which is shut down after. It stops at
    the first error, as nbconvert does; the figures are read even then.
    `ports` ({"shell_port": ..., ...}) are the kernel's; None: jupyter_client
    picks them."""
    nb = nbformat.read(path, as_version=4)
    run = NotebookRun(cells=sum(c.cell_type == "code" for c in nb.cells))
    client = NotebookClient(nb, timeout=timeout, kernel_name=KERNEL, resources={"metadata": {"path": str(cwd)}})
    if ports:
        # cache_ports off: else the manager replaces the ports with its own picks
        client.km = client.kernel_manager_class(kernel_name=KERNEL, cache_ports=False, **ports)
    cells = list(nb.cells)
    nb.cells.append(nbformat.v4.new_code_cell(_FIGURES_CELL))  # nbclient writes each result into nb.cells
    index = 0
    start = time.perf_counter()
    with tempfile.TemporaryFile("w+") as stderr:  # what the kernel process prints outside the protocol
        started = False
        try:
            with client.setup_kernel(stderr=stderr, cleanup_kc=True):
                started = True
                try:
                    for index, cell in enumerate(cells):
                        client.execute_cell(cell, index)
                except (CellExecutionError, CellTimeoutError) as error:
                    run.failure = _failure(nb, index, error)
                run.seconds = time.perf_counter() - start
                client.execute_cell(nb.cells[-1], len(cells))
        except DeadKernelError as error:
            run.failure = run.failure or _failure(nb, index, error)
            run.seconds = run.seconds or time.perf_counter() - start
        except RuntimeError as error:  # jupyter_client's "Kernel died before replying to kernel_info"
            if started:
                raise
            run.failure = Failure(None, "", f"{type(error).__name__}: {error}", kernel_died=True)
        stderr.seek(0)
        run.kernel_stderr = stderr.read()
    _read_outputs(run, nb.cells)
    return run


def _read_outputs(run, cells):
    """The figures line and the kernel's notices, from the cells' streams."""
    for cell in cells:
        for output in cell.get("outputs", []):
            if output.get("output_type") != "stream":
                continue
            for line in _ANSI.sub("", output.get("text", "")).splitlines():
                if line.startswith(_FIGURES_MARK):
                    counted = json.loads(line[len(_FIGURES_MARK):])
                    run.compiles, run.from_cache = counted["compiles"], counted["from_cache"]
                elif line.startswith("flyrt:"):
                    run.notices.append(line)


def _failure(nb, index, error):
    """The cell at `index` (the last one started) and what went wrong there."""
    cell = nb.cells[index]
    code_index = sum(c.cell_type == "code" for c in nb.cells[:index])
    errors = [o for o in cell.outputs if o.output_type == "error"]
    if errors:
        text = _ANSI.sub("", "\n".join(errors[0].traceback))
    else:  # a dead kernel or a timeout ends the cell without an error output
        shown = "".join(o.get("text", "") for o in cell.outputs if o.output_type == "stream")
        text = f"{type(error).__name__}: {error}" + (f"\nthe cell's last output:\n{shown}" if shown else "")
    return Failure(code_index, cell.source, text, isinstance(error, DeadKernelError))
