"""fx.mma on FP8 fragments (m16n8k32): exact on the CPU and in interpreter
mode for both e4m3 formats (products exact in Float32, summed in order of
k), NVIDIA's FP8 tensor-core instruction in PTX that ptxas assembles for
sm_89 and sm_90 (the kernel's PTX raised to ISA 8.4, other kernels left at
the target's own), the f16 instruction where NVIDIA's has no such FP8, and
a clear error where a target has no matrix instruction."""

import sys
from pathlib import Path

import numpy as np
import pytest

import flyrt
import flyrt.compiler as flyc
import flyrt.expr as fx
import code_objects
import ptxas
import test_matrix as matrix
from flyrt import fp8

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "notebooks"))

from kernels.gemm_fp8 import gemm_fp8  # noqa: E402

RNG = np.random.default_rng(28)
FORMATS = ["e4m3fn", "e4m3fnuz"]


def mma_fp8(a, b, c, d):
    """test_matrix.py's launcher on FP8 fragments: each warp's d = a b + c."""
    matrix.mma(a, b, c, d, 32)


def lowered(a, b, c, target, arch):
    return matrix.mma.lower(a, b, c, np.zeros_like(c), 32, target=target, arch=arch)


def reference(a, b, c):
    """C + A B in Float32, k in order: exact products, one rounding per sum."""
    a, b = fp8.dequantize(a), fp8.dequantize(b)
    acc = c.astype(np.float32).copy()
    for k in range(32):
        acc = (acc + a[:, :, k : k + 1] * b[:, k : k + 1, :]).astype(np.float32)
    return acc


def inputs(warps, fmt, integers=False):
    if integers:  # every partial sum exact in Float32 (and in any accumulator of 13 bits or more)
        a, b = RNG.integers(-8, 9, (warps, 16, 32)), RNG.integers(-8, 9, (warps, 32, 8))
        c = RNG.integers(-100, 100, (warps, 16, 8)).astype(np.float32)
    else:
        a, b = RNG.standard_normal((warps, 16, 32)) * 4, RNG.standard_normal((warps, 32, 8))
        c = RNG.standard_normal((warps, 16, 8)).astype(np.float32)
    return fp8.quantize(a, fmt), fp8.quantize(b, fmt), c


@pytest.mark.parametrize("interpret", [False, True])
@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("warps", [1, 3])
def test_fp8_fragments_multiply_exactly(warps, fmt, interpret):
    a, b, c = inputs(warps, fmt)
    d = np.full_like(c, np.nan)
    flyrt.set_interpret(interpret)
    try:
        mma_fp8(a, b, c, d)
    finally:
        flyrt.set_interpret(None)
    np.testing.assert_array_equal(d, reference(a, b, c))
    exact = c + fp8.dequantize(a).astype(np.float64) @ fp8.dequantize(b)
    np.testing.assert_allclose(d, exact, rtol=1e-5, atol=1e-5)


def test_the_fp8_gemm_example_one_format_after_the_other():
    """Both formats in one process: their kernels differ only in the MMA's
    format, which the IR text (the disk cache's key) must show."""
    m, n, k = 128, 64, 96
    a_values, b_values = RNG.integers(-6, 7, (m, k)), RNG.integers(-6, 7, (k, n))
    for each in FORMATS:
        c = np.full((m, n), np.nan, np.float32)
        gemm_fp8(fp8.quantize(a_values, each), fp8.quantize(b_values, each), c)
        np.testing.assert_array_equal(c, a_values @ b_values)
    ir = {each: gemm_fp8.lower(fp8.quantize(a_values, each), fp8.quantize(b_values, each), c, target="cpu").ir
          for each in FORMATS}
    assert ir["e4m3fn"] != ir["e4m3fnuz"]


@pytest.mark.compiled_for("nvptx")
@pytest.mark.parametrize("arch", ["sm_89", "sm_90"])
def test_nvidia_kernels_use_the_fp8_tensor_cores(arch):
    a, b, c = inputs(2, "e4m3fn")
    ptx = lowered(a, b, c, "cuda", arch).device_code["_mma"]
    assert "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32" in ptx
    assert ".version 8.4" in ptx  # the instruction's ISA, for this kernel alone
    ptxas.assemble(ptx, f"_mma_fp8_{arch}")
    plain = gemm_fp8.lower(fp8.quantize(np.ones((64, 32)), "e4m3fn"), fp8.quantize(np.ones((32, 32)), "e4m3fn"),
                           np.zeros((64, 32), np.float32), target="cuda", arch=arch).device_code["gemm_fp8_kernel"]
    assert "ldmatrix.sync.aligned.m8n8.x4.shared.b16" in plain  # A's fragments
    assert "ldmatrix.sync.aligned.m8n8.x2.shared.b16" in plain  # B's, from its transpose
    ptxas.assemble(plain, "gemm_fp8_kernel")
    f16 = matrix.inputs(1)
    plain = matrix.mma.lower(*f16, np.zeros_like(f16[2]), target="cuda", arch=arch).device_code["_mma"]
    assert ".version 8.4" not in plain  # the target's own ISA version (7.8 for sm_89, 8.0 for sm_90)


@pytest.mark.compiled_for("nvptx")
@pytest.mark.parametrize("fmt, arch", [("e4m3fnuz", "sm_90"), ("e4m3fnuz", "sm_80"), ("e4m3fn", "sm_80")])
def test_nvidia_kernels_take_other_fp8_through_f16_tensor_cores(fmt, arch):
    """e4m3fnuz (no NVIDIA tensor core's FP8), and FP8 before sm_89: decoded
    exactly in each lane, two m16n8k16 f16 MMAs, no cross-lane moves."""
    a, b, c = inputs(1, fmt)
    ptx = lowered(a, b, c, "cuda", arch).device_code["_mma"]
    assert ptx.count("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32") == 2
    assert "e4m3.e4m3" not in ptx and "shfl" not in ptx
    assert ("cvt.rn.f16x2.e4m3x2" in ptx) == (arch == "sm_90")  # sm_89's conversion instruction
    ptxas.assemble(ptx, f"_mma_{fmt}_{arch}")


def test_before_sm80_fp8_fragments_are_an_error_at_the_line():
    a, b, c = inputs(1, "e4m3fn")
    with pytest.raises(flyc.KernelError, match="from sm_80 on") as raised:
        lowered(a, b, c, "cuda", "sm_75")
    assert "test_matrix.py:" in str(raised.value)  # the kernel's fx.mma line


@flyc.jit
def one_wave(a: fx.Tensor, b: fx.Tensor, c: fx.Tensor, d: fx.Tensor):
    """test_matrix.py's kernel on FP8 fragments in a block of 64 threads: a whole AMD wave, as fx.mma there
    needs."""
    matrix._mma(a, b, c, d, 32).launch(block=(64,))


@pytest.mark.compiled_for("amdgpu")
@pytest.mark.parametrize("fmt, arch, native", [("e4m3fnuz", "gfx942", True), ("e4m3fn", "gfx942", False),
                                               ("e4m3fnuz", "gfx90a", False)])
def test_amd_kernels_multiply_fp8_on_the_matrix_cores(fmt, arch, native):
    """gfx94x's FP8 MFMA is e4m3fnuz's; e4m3fn (and FP8 on gfx90a, which has
    none) is decoded exactly to f16 for two 16x16x16 MFMAs a half-wave."""
    a, b, c = inputs(2, fmt)
    used = code_objects.instructions(one_wave.lower(a, b, c, np.zeros_like(c), target="hip",
                                                    arch=arch).device_code["_mma"])
    assert ("v_mfma_f32_16x16x32_fp8_fp8" in used) == native
    assert ("v_mfma_f32_16x16x16_f16" in used or "v_mfma_f32_16x16x16f16" in used) != native


@flyc.kernel
def _mixed(a: fx.Tensor, d: fx.Tensor):
    f = fx.Vector.load(a, 0, 16)
    d[fx.thread_idx.x] = fx.mma(f, fx.Vector.load(a, 0, 16), fx.Vector.zeros(4))[0]


@flyc.jit
def mixed(a: fx.Tensor, d: fx.Tensor):
    _mixed(a, d).launch(block=(32,))


@pytest.mark.compiled_for()
def test_fragments_of_the_wrong_size_are_a_type_error():
    with pytest.raises(TypeError, match="b must be a 8-lane Float8E4M3FN fragment"):
        mixed(fp8.quantize(np.ones(16), "e4m3fn"), np.zeros(32, np.float32))
