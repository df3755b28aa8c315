"""Runtime tests. Every launcher they trace is also compiled for NVIDIA's
sm_90 and assembled by NVIDIA's ptxas (tests/runtime/ptxas.py), and
compiled for AMD's gfx942 and its code object read by LLVM's readelf and
objdump (tests/runtime/code_objects.py), so a codegen regression of either
GPU target fails here, on machines without a GPU; a test whose kernels
ptxas rejects, or whose code object is wrong, fails. A test whose kernels use
what a GPU target lacks (e4m3fnuz MMA on NVIDIA) names the targets they compile for
with ``@pytest.mark.compiled_for("amdgpu")``. The other CPythons' runs
(scripts/test_pythons.sh) leave these checks to the main suite
(``--no-gpu-code-checks``): the code is the same whichever Python traced it."""

import hashlib
import os
import signal
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
os.environ.setdefault("FLYDSL_RUNTIME_ENABLE_CACHE", "0")  # as tests/conftest.py (run alone: gpu_tests.sh)

import code_objects  # noqa: E402
import ptxas  # noqa: E402


@pytest.fixture
def ctrl_c():
    """Python's own Ctrl-C handler for the test, as in a terminal: a process a
    shell started in the background (`cmd &`) inherits SIGINT ignored and
    keeps it so, and then neither a SIGINT nor _thread.interrupt_main() raises."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


def pytest_addoption(parser):
    parser.addoption("--no-gpu-code-checks", action="store_true",
                     help="trace without compiling for sm_90 and gfx942 after each test: for the other CPythons' "
                          "runs (scripts/test_pythons.sh), whose traces give the code the main suite checks")


def pytest_configure(config):
    config.addinivalue_line("markers", "compiled_for(*targets): the GPU targets ('nvptx', 'amdgpu') the test's "
                                       "kernels are also compiled for (default: both)")


_CHECKED = set()  # (target, digest of a module's text) compiled and checked in this process


@pytest.fixture(autouse=True)
def every_trace_compiles_for_sm90_and_gfx942(monkeypatch, request):
    if request.config.getoption("--no-gpu-code-checks"):
        yield
        return
    from flyrt.runtime import launcher

    traced = []
    trace = launcher.JitFunction._trace

    def recording(self, specs, bound, target):
        result = trace(self, specs, bound, target)
        traced.append(result[0].module)
        return result

    monkeypatch.setattr(launcher.JitFunction, "_trace", recording)
    yield
    if ptxas.find() is None:
        pytest.fail("NVIDIA's ptxas is missing: install requirements.txt (nvidia-cuda-nvcc-cu12)")
    marker = request.node.get_closest_marker("compiled_for")
    targets = marker.args if marker is not None else ("nvptx", "amdgpu")
    for module in traced:
        # a module's text is what its compile depends on (the disk cache keys compiles by it): many tests
        # trace the same kernels, which are compiled and checked once a process
        text = hashlib.sha256(str(module).encode()).digest()
        for target, check in (("nvptx", ptxas.check_module), ("amdgpu", code_objects.check_module)):
            if target in targets and (target, text) not in _CHECKED:
                check(module)
                _CHECKED.add((target, text))
