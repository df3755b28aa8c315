"""The example kernels of notebooks/kernels against numpy, on odd shapes."""

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "notebooks"))

from kernels.axpy import axpy  # noqa: E402
from kernels.elementwise_2d import scaled_sum  # noqa: E402
from kernels.row_norms import row_norms  # noqa: E402
from kernels.vector_add import vector_add  # noqa: E402

RNG = np.random.default_rng(42)


@pytest.mark.parametrize("n", [1, 255, 257, 100_003])
def test_vector_add(n):
    a, b = RNG.standard_normal(n).astype(np.float32), RNG.standard_normal(n).astype(np.float32)
    c = np.zeros(n + 5, np.float32)
    vector_add(a, b, c, n)
    np.testing.assert_array_equal(c[:n], a + b)
    np.testing.assert_array_equal(c[n:], 0)


@pytest.mark.parametrize("n", [1, 1000, 123_457])
def test_axpy(n):
    x, y = RNG.standard_normal(n).astype(np.float32), RNG.standard_normal(n).astype(np.float32)
    expected = (np.float32(1.5) * x.astype(np.float64) + y).astype(np.float32)
    axpy(1.5, x, y, n)
    np.testing.assert_allclose(y, expected, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("shape", [(1, 1), (33, 17), (129, 300)])
def test_row_norms_of_strided_matrices(shape):
    base = RNG.standard_normal((shape[0] * 2, shape[1] * 3)).astype(np.float32)
    for m in (base[: shape[0], : shape[1]], base[::2, ::3], base[::2, ::3].T.copy().T):
        norms = np.zeros(m.shape[0], np.float32)
        row_norms(m, norms)
        np.testing.assert_allclose(norms, np.linalg.norm(m.astype(np.float64), axis=1), rtol=1e-5)


@pytest.mark.parametrize("shape", [(1, 1), (7, 33), (65, 129)])
def test_elementwise_2d_grid(shape):
    x, y = RNG.standard_normal(shape).astype(np.float32), RNG.standard_normal(shape).astype(np.float32)
    bias = RNG.standard_normal(shape[1]).astype(np.float32)
    out = np.zeros(shape, np.float32)
    scaled_sum(x, y, bias, out)
    np.testing.assert_allclose(out, x * y + bias, rtol=1e-6, atol=1e-6)


from flyrt import fp8  # noqa: E402
from kernels.fp8_dequant import dequantize_scale  # noqa: E402
from kernels.gemm import gemm  # noqa: E402
from kernels.rmsnorm import rmsnorm  # noqa: E402
from kernels.softmax import softmax  # noqa: E402


@pytest.mark.parametrize("shape", [(1, 1), (3, 4096), (5, 1000), (2, 257)])
def test_row_softmax(shape):
    x = (RNG.standard_normal(shape) * 4).astype(np.float32)
    out = np.zeros_like(x)
    softmax(x, out)
    e = np.exp(x.astype(np.float64) - x.max(axis=1, keepdims=True))
    np.testing.assert_allclose(out, e / e.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("shape", [(1, 1), (4, 4096), (7, 999)])
def test_rmsnorm(shape):
    x = RNG.standard_normal(shape).astype(np.float32)
    w = RNG.standard_normal(shape[1]).astype(np.float32)
    out = np.zeros_like(x)
    rmsnorm(x, w, out, 1e-6)
    x64 = x.astype(np.float64)
    expected = x64 / np.sqrt((x64 ** 2).mean(axis=1, keepdims=True) + 1e-6) * w
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("m,k,n", [(1, 1, 1), (17, 33, 5), (64, 64, 64), (100, 37, 129)])
def test_tiled_gemm(m, k, n):
    a = RNG.standard_normal((m, k)).astype(np.float32)
    b = RNG.standard_normal((k, n)).astype(np.float32)
    c = np.zeros((m, n), np.float32)
    gemm(a, b, c)
    np.testing.assert_allclose(c, a.astype(np.float64) @ b, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("fmt", ["e4m3fnuz", "e4m3fn"])
@pytest.mark.parametrize("per_row", [False, True])
def test_fp8_dequantize_and_scale(fmt, per_row):
    shape = (6, 1001)
    codes = fp8.quantize(RNG.standard_normal(shape) * 50, fmt)
    scales = RNG.uniform(0.5, 2.0, shape[0] if per_row else 1).astype(np.float32)
    out = np.zeros(shape, np.float32)
    dequantize_scale(codes, scales, out, per_row)
    expected = fp8.dequantize(codes) * (scales[:, None] if per_row else scales[0])
    np.testing.assert_array_equal(out, expected.astype(np.float32))


from kernels.gemm_mma import gemm_mma  # noqa: E402


@pytest.mark.parametrize("m,k,n", [(1, 1, 1), (16, 16, 8), (70, 45, 33), (128, 64, 96)])
def test_gemm_on_the_matrix_units(m, k, n):
    a = RNG.standard_normal((m, k)).astype(np.float16)
    b = RNG.standard_normal((k, n)).astype(np.float16)
    c = np.full((m, n), np.nan, np.float32)
    gemm_mma(a, b, c)
    np.testing.assert_allclose(c, a.astype(np.float64) @ b, rtol=1e-4, atol=1e-4)
