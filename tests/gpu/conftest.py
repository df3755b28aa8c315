"""GPU tests: flyrt's launchers on CUDA tensors, against numpy and against
the same launchers on the CPU. Where no NVIDIA GPU (or no CUDA build of
torch) answers, none of them is collected and one line says why."""

import os
import sys
from pathlib import Path

import pytest

os.environ.setdefault("FLYDSL_RUNTIME_ENABLE_CACHE", "0")  # as tests/conftest.py: tests count compiles
ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(Path(__file__).parent), str(ROOT / "tests" / "runtime"), str(ROOT / "notebooks"),
                str(ROOT / "tests")]


def _why_not():
    try:
        import torch
    except ImportError:
        return "torch is not installed"
    if not torch.cuda.is_available():
        return "no CUDA device (torch.cuda.is_available() is False)"
    from flyrt import _core

    if not _core.cuda_available():
        return "flyrt cannot open the CUDA driver"
    return None


REASON = _why_not()
if REASON is not None:
    collect_ignore_glob = ["test_*.py"]
else:
    from test_invalidation import make_module  # noqa: F401  (its fixture, for test_cuda_invalidation)


def pytest_configure(config):
    # tests/runtime's marker, on the CPU tests whose kernels these reuse
    config.addinivalue_line("markers", "compiled_for(*targets): see tests/runtime/conftest.py")


def pytest_collection_modifyitems(items):
    # A file named on the command line is collected whatever collect_ignore_glob says: skipped, saying why.
    if REASON is not None:
        here = Path(__file__).parent
        for item in items:
            if here in item.path.parents:
                item.add_marker(pytest.mark.skip(reason=f"GPU tests (tests/gpu) not run: {REASON}"))


def pytest_report_header(config):
    if REASON is not None:
        return f"GPU tests (tests/gpu): not run: {REASON}"
    import torch

    return f"GPU tests (tests/gpu): on {torch.cuda.get_device_name()}"


def pytest_terminal_summary(terminalreporter):
    if REASON is not None:
        terminalreporter.write_line(f"GPU tests (tests/gpu) not run: {REASON}")
