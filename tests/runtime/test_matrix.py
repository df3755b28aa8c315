"""fx.mma, the warp-level matrix multiply-accumulate: on the CPU the exact
result (products exact in Float32, summed in order of k) from the fragments
each lane holds, for every warp of a block; misuse is a compile error at
its line."""

import numpy as np
import pytest

import flyrt.compiler as flyc
import flyrt.expr as fx
from flyrt.core import dtypes

RNG = np.random.default_rng(12)


@flyc.kernel
def _mma(a: fx.Tensor, b: fx.Tensor, c: fx.Tensor, d: fx.Tensor, k: fx.Constexpr):
    warp = fx.thread_idx.x // 32  # each warp multiplies its own matrices
    fa = fx.Vector.from_elements([a[(warp, *fx.a_position(i, k=k))] for i in range(k // 2)])
    fb = fx.Vector.from_elements([b[(warp, *fx.b_position(i, k=k))] for i in range(k // 4)])
    fc = fx.Vector.from_elements([c[(warp, *fx.c_position(i))] for i in range(4)])
    fd = fx.mma(fa, fb, fc)
    for i in fx.range_constexpr(4):
        d[(warp, *fx.c_position(i))] = fd[i]


@flyc.jit
def mma(a: fx.Tensor, b: fx.Tensor, c: fx.Tensor, d: fx.Tensor, k: fx.Constexpr = 16):
    """Each warp's d = a b + c; k: 16, or 32 on FP8 (test_fp8_mma.py)."""
    _mma(a, b, c, d, k).launch(block=(32 * a.shape[0],))


def reference(a, b, c):
    """C + A B in Float32, k in order: exact products, one rounding per sum."""
    acc = c.astype(np.float32).copy()
    for k in range(16):
        acc = (acc + a[:, :, k : k + 1].astype(np.float32) * b[:, k : k + 1, :].astype(np.float32)).astype(np.float32)
    return acc


def bfloat16(x):
    bits = x.astype(np.float32).view(np.uint32)
    return ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16).view(dtypes.BFLOAT16_STORAGE)


def as_float32(bf16):
    return (bf16.view(np.uint16).astype(np.uint32) << 16).view(np.float32)


def inputs(warps):
    a = RNG.standard_normal((warps, 16, 16)).astype(np.float16)
    b = RNG.standard_normal((warps, 16, 8)).astype(np.float16)
    c = RNG.standard_normal((warps, 16, 8)).astype(np.float32)
    return a, b, c


@pytest.mark.parametrize("warps", [1, 3])
def test_float16_fragments_multiply_exactly(warps):
    a, b, c = inputs(warps)
    d = np.zeros_like(c)
    mma(a, b, c, d)
    np.testing.assert_array_equal(d, reference(a, b, c))
    np.testing.assert_allclose(d, c + a.astype(np.float64) @ b, rtol=1e-5, atol=1e-5)


def test_bfloat16_fragments():
    a, b, c = inputs(2)
    a16, b16 = bfloat16(a), bfloat16(b)
    d = np.zeros_like(c)
    mma(a16, b16, c, d)
    np.testing.assert_array_equal(d, reference(as_float32(a16), as_float32(b16), c))


@flyc.kernel
def _bad(a: fx.Tensor, d: fx.Tensor):
    t = fx.thread_idx.x
    f = fx.Vector.load(a, 0, 8)
    if t < 16:
        d[t] = fx.mma(f, fx.Vector.load(a, 0, 4), fx.Vector.zeros(4))[0]


@flyc.jit
def bad(a: fx.Tensor, d: fx.Tensor):
    _bad(a, d).launch(block=(32,))


@flyc.kernel
def _wrong_types(a: fx.Tensor, d: fx.Tensor):
    f = fx.Vector.load(a, 0, 8)
    d[fx.thread_idx.x] = fx.mma(f, f, fx.Vector.zeros(4))[0]


@flyc.jit
def bad_types(a: fx.Tensor, d: fx.Tensor):
    _wrong_types(a, d).launch(block=(32,))


def test_misuse_is_an_error_at_its_line():
    a = np.zeros(8, np.float16)
    with pytest.raises(flyc.KernelError, match="fx.mma in kernel _bad sits under control flow"):
        bad(a, np.zeros(32, np.float32))
    with pytest.raises(TypeError, match="b must be a 4-lane Float16"):
        bad_types(np.zeros(8, np.float16), np.zeros(32, np.float32))


def test_warps_of_64_lanes_have_no_mma():
    fx.set_warp_size(64)
    try:
        with pytest.raises(flyc.KernelError, match="fx.mma needs warps of 32 lanes"):
            mma(*inputs(1), np.zeros((1, 16, 8), np.float32))
    finally:
        fx.set_warp_size(32)


def test_the_nvidia_target_uses_the_tensor_cores():
    a, b, c = inputs(2)
    ptx = mma.lower(a, b, c, np.zeros_like(c), target="cuda", arch="sm_90").device_code["_mma"]
    assert "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32" in ptx
    with pytest.raises(flyc.KernelError, match="sm_80 or newer.*; this target is sm_75"):
        mma.lower(a, b, c, np.zeros_like(c), target="cuda", arch="sm_75")
