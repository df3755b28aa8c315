"""fx.mma on the tensor cores: the same fragments as tests/runtime/
test_matrix.py and test_fp8_mma.py, against the exact CPU result; the
matrix-unit GEMM examples (f16 and FP8), with their fragments read by
ldmatrix and gathered; ldmatrix's fragments as test_fragments.py's."""

import numpy as np
import pytest

import test_fp8_mma as fp8_cpu
import test_fragments as fragments
import test_matrix as cpu
from cuda_arrays import on_gpu
from flyrt import fp8
from kernels.gemm_fp8 import gemm_fp8
from kernels.gemm_mma import gemm_mma

RNG = np.random.default_rng(13)


@pytest.mark.parametrize("bf16", [False, True])
def test_mma_matches_the_exact_result(bf16):
    a, b, c = cpu.inputs(4)
    if bf16:
        a, b = cpu.bfloat16(a), cpu.bfloat16(b)
    exact = np.zeros_like(c)
    cpu.mma(a, b, c, exact)
    *_, d = on_gpu(cpu.mma, a, b, c, np.zeros_like(c))
    np.testing.assert_allclose(d, exact, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("kind, row, col", fragments.CASES)
def test_ldmatrix_fragments_are_the_positions_elements(kind, row, col):
    tile, k = fragments.tile_of(kind)
    outputs = [np.zeros((32, 16), tile.dtype) for _ in range(3)]
    _, *got, _, _ = on_gpu(fragments.fragments, tile, *outputs, row, col)
    for name, out, want in zip("a b bt".split(), got, fragments.expected(tile, row, col, 0, k)):
        np.testing.assert_array_equal(out.view(np.uint8), want.view(np.uint8), err_msg=name)


@pytest.mark.parametrize("gather", [False, True])
@pytest.mark.parametrize("m,k,n", [(1, 1, 1), (70, 45, 33), (1024, 512, 768)])
def test_gemm_on_the_tensor_cores(m, k, n, gather):
    a = RNG.standard_normal((m, k)).astype(np.float16)
    b = RNG.standard_normal((k, n)).astype(np.float16)
    _, _, c, _ = on_gpu(gemm_mma, a, b, np.full((m, n), np.nan, np.float32), gather)
    np.testing.assert_allclose(c, a.astype(np.float64) @ b, rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize("fmt", fp8_cpu.FORMATS)  # e4m3fnuz: decoded to f16 in each lane
def test_fp8_mma_on_the_tensor_cores_matches_the_cpu_where_the_sums_are_exact(fmt):
    a, b, c = fp8_cpu.inputs(4, fmt, integers=True)
    *_, d = on_gpu(fp8_cpu.mma_fp8, a, b, c, np.zeros_like(c))
    np.testing.assert_array_equal(d, fp8_cpu.reference(a, b, c))


@pytest.mark.parametrize("fmt", fp8_cpu.FORMATS)
def test_fp8_mma_on_the_tensor_cores_is_close_to_the_exact_result(fmt):
    """The accumulation's order and rounding are the hardware's (unspecified
    in the PTX ISA): within 2^-12 of the sum of the magnitudes it adds."""
    a, b, c = fp8_cpu.inputs(4, fmt)
    *_, d = on_gpu(fp8_cpu.mma_fp8, a, b, c, np.zeros_like(c))
    da, db = fp8.dequantize(a).astype(np.float64), fp8.dequantize(b).astype(np.float64)
    exact = c + da @ db
    magnitude = np.abs(c) + np.abs(da) @ np.abs(db)
    error = np.max(np.abs(d - exact) / magnitude)
    print(f"{fmt} mma.sync: largest error {error:.2e} of the magnitudes summed")
    assert error <= 2.0**-12


@pytest.mark.parametrize("gather", [False, True])
@pytest.mark.parametrize("fmt", fp8_cpu.FORMATS)
@pytest.mark.parametrize("m,k,n", [(64, 32, 32), (1024, 512, 768)])
def test_fp8_gemm_on_the_tensor_cores(m, k, n, fmt, gather):
    a_values, b_values = RNG.integers(-3, 4, (m, k)), RNG.integers(-3, 4, (k, n))
    a, b = fp8.quantize(a_values, fmt), fp8.quantize(b_values, fmt)
    _, _, c, _ = on_gpu(gemm_fp8, a, b, np.full((m, n), np.nan, np.float32), gather)
    np.testing.assert_array_equal(c, a_values @ b_values)  # integer sums below 2^13: exact in a 14-bit accumulator
