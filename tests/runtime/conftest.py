"""Runtime tests. Every launcher they trace is also compiled for NVIDIA's
sm_90 and assembled by NVIDIA's ptxas (tests/runtime/ptxas.py), so a
codegen regression of the NVIDIA target fails here, on machines without a
GPU; a test's PTX that ptxas rejects fails that test."""

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
os.environ.setdefault("FLYDSL_RUNTIME_ENABLE_CACHE", "0")  # as tests/conftest.py (run alone: gpu_tests.sh)

import ptxas  # noqa: E402


@pytest.fixture(autouse=True)
def every_trace_assembles_for_sm90(monkeypatch):
    from flyrt import launcher

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
    for module in traced:
        ptxas.check_module(module)
