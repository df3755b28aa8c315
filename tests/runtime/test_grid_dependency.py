"""Kernels that overlap the one before (fx.launch_dependents,
fx.wait_for_prior_grids): on the CPU, on AMD GPUs and in interpreter mode
kernels run in stream order and both calls do nothing, so the results are
those of two plain launches; NVIDIA's code from sm_90 carries griddepcontrol
with the wait ahead of every read of the first kernel's results (the launch
itself, and the overlap, are tests/gpu/test_cuda_launch.py's)."""

import numpy as np
import pytest

import flyrt.compiler as flyc
import flyrt.expr as fx

import code_objects


@flyc.kernel
def _scale(x: fx.Tensor, y: fx.Tensor, n: fx.Int32, factor: fx.Float32):
    fx.launch_dependents()
    i = fx.block_idx.x * fx.block_dim.x + fx.thread_idx.x
    if i < n:
        y[i] = x[i] * factor


@flyc.kernel
def _shift(y: fx.Tensor, offsets: fx.Tensor, out: fx.Tensor, n: fx.Int32):
    i = fx.block_idx.x * fx.block_dim.x + fx.thread_idx.x
    if i < n:
        offset = offsets[i]  # the host's: there before _scale began
        fx.wait_for_prior_grids()
        out[i] = y[i] + offset


@flyc.jit
def scale_then_shift(x: fx.Tensor, y: fx.Tensor, offsets: fx.Tensor, out: fx.Tensor, n: fx.Int32,
                     factor: fx.Float32):
    _scale(x, y, n, factor).launch(grid=((n + 127) // 128,), block=(128,))
    _shift(y, offsets, out, n).launch(grid=((n + 127) // 128,), block=(128,))


def _arrays(n):
    rng = np.random.default_rng(3)
    x, offsets = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    return x, np.zeros(n, np.float32), offsets, np.zeros(n, np.float32)


@pytest.mark.parametrize("interpret", [False, True], ids=["compiled", "interpreted"])
def test_the_second_kernel_reads_the_first_ones_results(interpret):
    n = 300 if interpret else 100_003
    x, y, offsets, out = _arrays(n)
    scale_then_shift.interpret = interpret
    try:
        for factor in (2.0, -3.0):  # a second launch reads the new results, not the old
            scale_then_shift(x, y, offsets, out, n, factor)
            np.testing.assert_array_equal(out, x * np.float32(factor) + offsets)
    finally:
        scale_then_shift.interpret = None


def test_the_ir_names_each_call():
    x, y, offsets, out = _arrays(256)
    ir = scale_then_shift.lower(x, y, offsets, out, 256, 2.0, target="cpu").ir
    assert "grid_dependency.launch_dependents" in ir and "grid_dependency.wait" in ir


def test_sm90_code_waits_before_it_reads_the_first_kernels_results():
    x, y, offsets, out = _arrays(256)
    ptx = scale_then_shift.lower(x, y, offsets, out, 256, 2.0, target="cuda", arch="sm_90").device_code
    assert "griddepcontrol.launch_dependents;" in ptx["_scale"] and "griddepcontrol" not in ptx["_scale"].replace(
        "griddepcontrol.launch_dependents;", "")
    before, wait, after = ptx["_shift"].partition("griddepcontrol.wait;")
    assert wait and "griddepcontrol" not in before + after
    # the offsets' load before the wait, y's after it
    assert before.count("ld.global.f32") == 1 and after.count("ld.global.f32") == 1


def test_before_sm90_and_on_amd_gpus_both_calls_are_nothing():
    x, y, offsets, out = _arrays(256)
    ptx = scale_then_shift.lower(x, y, offsets, out, 256, 2.0, target="cuda", arch="sm_80").device_code
    assert ptx and not any("griddepcontrol" in code for code in ptx.values())
    code = scale_then_shift.lower(x, y, offsets, out, 256, 2.0, target="hip", arch="gfx942").device_code
    assert "global_load_dword" in code_objects.disassembly(code["_shift"])


def test_outside_a_kernel_they_are_an_error_at_their_line():
    @flyc.jit
    def waits_on_the_host(x: fx.Tensor):
        fx.wait_for_prior_grids()

    with pytest.raises(flyc.KernelError, match=r"fx.wait_for_prior_grids\(\) and fx.launch_dependents\(\) belong "
                                                r"in a kernel") as raised:
        waits_on_the_host(np.zeros(4, np.float32))
    assert raised.value.filename == __file__
