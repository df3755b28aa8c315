"""flyc.autotune and do_bench on an NVIDIA GPU: CUDA events, the faster
config kept per key and per GPU model, PA decode's pages per work item tuned."""

import numpy as np
import pytest
import torch

import flyrt.compiler as flyc
import flyrt.expr as fx
import kernels.pa_decode_fp8 as pa
from cuda_arrays import host
from flyrt.testing import do_bench
from kernels.devices import on
from kernels.pa_reference import check, make_case, pa_decode_reference

pytestmark = pytest.mark.compiled_for()


@flyc.kernel
def _rounds(x: fx.Tensor, n: fx.Int32, REPS: fx.Constexpr[int]):
    i = fx.block_idx.x * fx.block_dim.x + fx.thread_idx.x
    if i < n:
        acc = x[i]
        for _ in range(REPS):
            acc = fx.sqrt(acc * acc + 1.0)
        x[i] = acc


@flyc.jit
def rounds(x: fx.Tensor, n: fx.Int32, REPS: fx.Constexpr[int]):
    _rounds(x, n, REPS).launch(grid=((n + 255) // 256,), block=(256,))


def test_do_bench_times_gpu_work_by_events():
    x = torch.zeros(1 << 20, device="cuda")
    light = do_bench(lambda: rounds(x, x.numel(), 1), device="gpu", return_mode="median")
    heavy = do_bench(lambda: rounds(x, x.numel(), 4000), device="gpu", return_mode="median")
    assert 0 < light < heavy and heavy > 20 * light, (light, heavy)
    low, mid, high = do_bench(lambda: rounds(x, x.numel(), 1), quantiles=[0.2, 0.5, 0.8])
    assert low <= mid <= high  # device=None: a GPU torch reaches times on it


def test_autotune_on_the_gpu_keeps_the_faster_config_for_this_gpu(tmp_path, monkeypatch):
    monkeypatch.setenv("FLYDSL_RUNTIME_ENABLE_CACHE", "1")
    monkeypatch.setenv("FLYDSL_RUNTIME_CACHE_DIR", str(tmp_path))
    tuned = flyc.autotune(configs=[flyc.Config({"REPS": 4000}), flyc.Config({"REPS": 2})], key=["n"],
                          restore_value=["x"], warmup=2, rep=10)(rounds)
    x = torch.zeros(1 << 20, device="cuda")
    tuned(x, x.numel())
    assert tuned.best_config == flyc.Config({"REPS": 2})
    np.testing.assert_allclose(x.cpu().numpy(), np.sqrt(2.0), rtol=1e-6)  # restored, then one call: sqrt(sqrt(1))
    [stored] = tmp_path.rglob("tuned/*/*.json")
    assert torch.cuda.get_device_name() in stored.read_text() and "sm_" in stored.read_text()


def test_pa_decode_pages_per_work_come_from_the_tuner():
    case = make_case(seed=3, num_seqs=4, variable_lengths=True, context_length=600)
    pa._tuned_decode_step.cache_clear()
    out = pa.pa_decode_ps_launch(**on("cuda", case))
    ok, max_diff, _ = check(host(out.float()), pa_decode_reference(**case), True)
    assert ok, max_diff
    timings = pa._tuned_decode_step.configs_timings
    assert sorted(c.kwargs["pages_per_work"] for c in timings) == list(pa.PAGES_PER_WORK)
    assert pa._tuned_decode_step.best_config == min(timings, key=timings.get)
