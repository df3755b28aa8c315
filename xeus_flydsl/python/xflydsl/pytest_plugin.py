"""pytest runs regression notebooks on the xflydsl kernel.

    pytest -p xflydsl.pytest_plugin --xflydsl notebooks/ -n 2

(a pip install registers the plugin: `-p` is then not needed). Each
`*.ipynb` is a test run on a fresh kernel through nbclient; a failure shows
the cell, its source, the error and the kernel's notices (what it evicted
and why). Per-notebook figures (cells, compiles, artifacts the disk cache
gave, seconds, device) go to the terminal summary and to JUnit XML as
properties. With pytest-xdist each worker starts its own kernels, pinned to
its own GPU where there are GPUs (worker_devices.py), on ports of its own
(worker_ports.py). `--xflydsl-cache-dir`
gives every worker, and every host mounting the directory, one disk cache:
a key is compiled once (flyrt/runtime/compile_lock.py), under the cache's
trust rules.
"""

import importlib
import os
import warnings

import pytest

from . import worker_devices, worker_ports

# Registered for every pytest run where the wheel is installed: nothing here
# may need more than pytest until --xflydsl asks for notebooks, which run
# through nbclient (the wheel's "notebooks" extra).
_PORTS = pytest.StashKey()  # this process's WorkerPorts, or None: jupyter_client picks

NEEDS = "--xflydsl runs notebooks through nbclient and nbformat: pip install 'xeus-flydsl[notebooks]'"


def pytest_addoption(parser):
    group = parser.getgroup("xflydsl", "regression notebooks on the xflydsl kernel")
    group.addoption("--xflydsl", action="store_true", help="run *.ipynb files as tests on the xflydsl kernel")
    group.addoption("--xflydsl-timeout", type=float, default=600.0, metavar="SECONDS",
                    help="what one cell may take (default 600)")
    group.addoption("--xflydsl-cache-dir", metavar="DIR",
                    help="a disk cache the kernels of every worker share (FLYDSL_RUNTIME_CACHE_DIR, turned on)")
    group.addoption("--xflydsl-gpus", metavar="LIST",
                    help="the GPUs workers take, e.g. 0,1; a GPU named twice is shared by two workers "
                         "(default: CUDA_VISIBLE_DEVICES, else what nvidia-smi lists); 'none' runs every worker "
                         "on the CPU")


def pytest_configure(config):
    if not config.getoption("xflydsl"):
        return
    try:
        importlib.import_module(".notebook_run", __package__)  # here, not at the top: see NEEDS
    except ImportError as error:
        raise pytest.UsageError(f"{NEEDS} ({error})") from None
    cache = config.getoption("xflydsl_cache_dir")
    if cache:
        _share_cache(os.path.abspath(cache))
    devices = _devices(config.getoption("xflydsl_gpus"))
    # "gw0", "gw1", ... in an xdist worker: xdist's own record of it, not the environment, which a
    # pytest started from inside a worker (pytester's) inherits while being no worker itself
    worker = getattr(config, "workerinput", {}).get("workerid")
    if worker is None:
        try:
            worker_devices.check_workers(getattr(config.option, "numprocesses", None) or 1, devices)
        except worker_devices.TooManyWorkers as error:
            raise pytest.UsageError(str(error)) from None
        index, workers = 0, 1  # a serial run: the first GPU, as worker gw0 would
    else:
        index, workers = int(worker.removeprefix("gw")), config.workerinput["workercount"]
    device = worker_devices.pin(index, devices)
    ports = worker_ports.worker_slice(index, workers)
    config.stash[_PORTS] = worker_ports.WorkerPorts(ports) if ports else None
    config.pluginmanager.register(_Figures(device, worker is None and cache), "xflydsl-figures")


def _devices(option):
    if option is None:
        return worker_devices.visible_devices()
    return [] if option.strip() == "none" else [d.strip() for d in option.split(",") if d.strip()]


def _share_cache(path):
    """Turns the disk cache on at `path` for this process and the kernels and
    workers it starts; a directory the cache would not trust is refused."""
    os.makedirs(path, mode=0o700, exist_ok=True)
    os.environ["FLYDSL_RUNTIME_ENABLE_CACHE"] = "1"
    os.environ["FLYDSL_RUNTIME_CACHE_DIR"] = path
    from flyrt.runtime import cache_trust

    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        usable = cache_trust.directory_usable(path)
    if not usable:
        raise pytest.UsageError("\n".join(str(w.message) for w in said) or f"flyrt does not trust {path}")


def pytest_collect_file(file_path, parent):
    if (parent.config.getoption("xflydsl") and file_path.suffix == ".ipynb"
            and ".ipynb_checkpoints" not in file_path.parts):
        return NotebookFile.from_parent(parent, path=file_path)
    return None


class NotebookFile(pytest.File):
    def collect(self):
        yield NotebookItem.from_parent(self, name="run")


class NotebookFailed(Exception):
    def __init__(self, run):
        super().__init__(run.failure.error)
        self.run = run


class NotebookItem(pytest.Item):
    def runtest(self):
        from . import notebook_run

        ports = self.config.stash[_PORTS]
        run = notebook_run.run_notebook(self.path, self.config.getoption("xflydsl_timeout"), self.path.parent,
                                        ports.take() if ports else None)
        figures = self.config.pluginmanager.get_plugin("xflydsl-figures")
        self.user_properties.extend(run.figures().items())
        self.user_properties.append(("device", figures.device or "cpu"))
        if run.failure is not None:
            raise NotebookFailed(run)

    def repr_failure(self, excinfo, style=None):
        if not isinstance(excinfo.value, NotebookFailed):
            return super().repr_failure(excinfo, style)
        run = excinfo.value.run
        failure = run.failure
        if failure.cell_index is None:
            parts = [f"{self.path.name}: the kernel did not start", "--- what went wrong ---", failure.error.rstrip()]
        else:
            how = "the kernel died" if failure.kernel_died else "an error"
            parts = [f"{self.path.name}: code cell {failure.cell_index + 1} failed ({how})",
                     "--- the cell ---", failure.source.rstrip(), "--- what went wrong ---", failure.error.rstrip()]
        if run.notices:
            parts += ["--- the kernel's notices ---", *run.notices]
        if run.kernel_stderr.strip():
            parts += ["--- the kernel's stderr (last lines) ---", *run.kernel_stderr.rstrip().splitlines()[-20:]]
        return "\n".join(parts)

    def reportinfo(self):
        return self.path, None, f"notebook {self.path.name}"


class _Figures:
    """The figures of each notebook run (from the workers' reports), shown
    at the end; the controller also removes lock files killed kernels left."""

    COLUMNS = ("cells", "compiles", "from_cache", "seconds", "device")

    def __init__(self, device, sweeps_cache):
        self.device = device
        self.sweeps_cache = sweeps_cache
        self.rows = []

    def pytest_runtest_logreport(self, report):
        properties = dict(report.user_properties)
        if report.when == "call" and "compiles" in properties:
            notebook = report.nodeid.removesuffix("::run")
            self.rows.append((notebook, report.outcome, *(properties[c] for c in self.COLUMNS)))

    def pytest_terminal_summary(self, terminalreporter):
        if not self.rows:
            return
        from flyrt.core.tables import aligned_text

        totals = [sum(row[i] for row in self.rows) for i in range(2, 6)]
        rows = sorted(self.rows) + [("total", "", *totals[:3], round(totals[3], 2), "")]
        terminalreporter.write_sep("=", "xflydsl notebooks")
        terminalreporter.write_line(aligned_text(f"{len(self.rows)} notebooks (seconds: each one's wall time)",
                                                 ("notebook", "outcome", *self.COLUMNS), rows))

    def pytest_unconfigure(self):
        if self.sweeps_cache:
            from flyrt.runtime import compile_lock

            compile_lock.sweep()
