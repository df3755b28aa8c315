"""flyc.autotune and do_bench on an NVIDIA GPU: CUDA events, the faster
config kept per key and per GPU model, PA decode's pages per work item tuned."""

import importlib
import sys

import numpy as np
import pytest
import torch

import flyrt.compiler as flyc
import kernels.pa_decode_fp8 as pa
from cuda_arrays import host
from flyrt.testing import do_bench
from kernels.devices import on
from kernel_cells import AUTOTUNED
from kernels.pa_reference import check, make_case, pa_decode_reference

pytestmark = pytest.mark.compiled_for()


@pytest.fixture
def work(tmp_path, monkeypatch):
    """The CPU tests' launcher over REPS (kernel_cells.AUTOTUNED), not tuned."""
    (tmp_path / "gpu_tuned.py").write_text(AUTOTUNED)
    monkeypatch.syspath_prepend(str(tmp_path))
    yield importlib.import_module("gpu_tuned").work.fn
    sys.modules.pop("gpu_tuned", None)


def test_do_bench_times_gpu_work_by_events(work):
    x = torch.ones(1 << 20, device="cuda")
    light = do_bench(lambda: work(x, x.numel(), 1), device="gpu", return_mode="median")
    heavy = do_bench(lambda: work(x, x.numel(), 4000), device="gpu", return_mode="median")
    assert 0 < light and heavy > 5 * light, (light, heavy)  # 4000 rounds of a helper, or one
    low, mid, high = do_bench(lambda: work(x, x.numel(), 1), quantiles=[0.2, 0.5, 0.8])
    assert low <= mid <= high  # device=None: a GPU torch reaches times on it


def test_autotune_on_the_gpu_keeps_the_faster_config_for_this_gpu(work, tmp_path, monkeypatch):
    monkeypatch.setenv("FLYDSL_RUNTIME_ENABLE_CACHE", "1")
    monkeypatch.setenv("FLYDSL_RUNTIME_CACHE_DIR", str(tmp_path))
    tuned = flyc.autotune(configs=[flyc.Config({"REPS": 3000}), flyc.Config({"REPS": 3})], key=["n"],
                          restore_value=["x"], warmup=2, rep=10)(work)
    x = torch.ones(1 << 20, device="cuda")
    tuned(x, x.numel())
    assert tuned.best_config == flyc.Config({"REPS": 3})
    np.testing.assert_allclose(x.cpu().numpy(), 1.875)  # restored after timing, then one call
    [stored] = tmp_path.rglob("tuned/*/*.json")
    assert torch.cuda.get_device_name() in stored.read_text() and "sm_" in stored.read_text()


class _Holder:
    """A host function's tensors kept in an object of the caller's, as PA decode's plans keep theirs."""

    def __init__(self, x):
        self.x = x


def test_a_host_function_hiding_its_tensors_is_timed_on_the_gpu(work):
    """Its launches are asynchronous: the wall clock would time their host cost, alike for any work."""

    @flyc.autotune(configs=[flyc.Config({"reps": 3000}), flyc.Config({"reps": 3})], key=["n"], warmup=2, rep=10)
    def step(held, n, reps):
        work(held.x, n, reps)

    held = _Holder(torch.ones(1 << 20, device="cuda"))
    step(held, held.x.numel())
    timings = step.configs_timings
    assert step.best_config == flyc.Config({"reps": 3})
    assert timings[flyc.Config({"reps": 3000})] > 5 * timings[flyc.Config({"reps": 3})], timings


def test_pa_decode_pages_per_work_come_from_the_tuner():
    case = make_case(seed=3, num_seqs=4, variable_lengths=True, context_length=600)
    pa._tuned_decode_step.cache_clear()
    out = pa.pa_decode_ps_launch(**on("cuda", case))
    ok, max_diff, _ = check(host(out.float()), pa_decode_reference(**case), True)
    assert ok, max_diff
    timings = pa._tuned_decode_step.configs_timings
    choices = ("pages_per_work", "blocks_per_sm", "warps", "stages", "one_launch", "prefetch")
    assert sorted(tuple(c.kwargs[k] for k in choices) for c in timings) == sorted(
        (p, b, *variant) for p in pa.PAGES_PER_WORK for b in pa.BLOCKS_PER_SM for variant in pa.VARIANTS
        if p >= variant[0])  # the split too (workers left to it), and the kernel's variants
    assert pa._tuned_decode_step.best_config == min(timings, key=timings.get)
    pa.pa_decode_ps_launch(**on("cuda", case), workers=40)
    assert {c.kwargs["blocks_per_sm"] for c in pa._tuned_decode_step.configs_timings} == {
        pa.DEFAULT_BLOCKS_PER_SM}  # workers given: pages per work alone
