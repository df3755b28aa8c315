"""The example kernels of notebooks/kernels on the GPU, against numpy, on odd
shapes and strided views made on the device."""

import numpy as np
import pytest
import torch

from cuda_arrays import cuda, host, on_gpu
from flyrt import fp8
from kernels.axpy import axpy
from kernels.elementwise_2d import scaled_sum
from kernels.fp8_dequant import dequantize_scale
from kernels.gemm import gemm
from kernels.rmsnorm import rmsnorm
from kernels.row_norms import row_norms
from kernels.softmax import softmax
from kernels.vector_add import vector_add

RNG = np.random.default_rng(42)


@pytest.mark.parametrize("n", [1, 255, 257, 1_000_003])
def test_vector_add(n):
    a, b = RNG.standard_normal(n).astype(np.float32), RNG.standard_normal(n).astype(np.float32)
    *_, c, _ = on_gpu(vector_add, a, b, np.zeros(n + 5, np.float32), n)
    np.testing.assert_array_equal(c[:n], a + b)
    np.testing.assert_array_equal(c[n:], 0)


def test_axpy():
    x, y = RNG.standard_normal(123_457).astype(np.float32), RNG.standard_normal(123_457).astype(np.float32)
    expected = (np.float32(1.5) * x.astype(np.float64) + y).astype(np.float32)
    _, _, y, _ = on_gpu(axpy, 1.5, x, y, len(x))
    np.testing.assert_allclose(y, expected, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("shape", [(1, 1), (33, 17), (129, 300)])
def test_row_norms_of_strided_views_on_the_device(shape):
    base = cuda(RNG.standard_normal((shape[0] * 2, shape[1] * 3)).astype(np.float32))
    for m in (base[: shape[0], : shape[1]], base[::2, ::3], base[::2, ::3].t().contiguous().t()):
        norms = torch.zeros(m.shape[0], device="cuda")
        row_norms(m, norms)
        expected = np.linalg.norm(host(m).astype(np.float64), axis=1)
        np.testing.assert_allclose(host(norms), expected, rtol=1e-5)


def test_elementwise_2d_grid():
    x, y = RNG.standard_normal((65, 129)).astype(np.float32), RNG.standard_normal((65, 129)).astype(np.float32)
    bias = RNG.standard_normal(129).astype(np.float32)
    *_, out = on_gpu(scaled_sum, x, y, bias, np.zeros_like(x))
    np.testing.assert_allclose(out, x * y + bias, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("shape", [(1, 1), (3, 4096), (5, 1000), (2, 257)])
def test_row_softmax(shape):
    x = (RNG.standard_normal(shape) * 4).astype(np.float32)
    _, out = on_gpu(softmax, x, np.zeros_like(x))
    e = np.exp(x.astype(np.float64) - x.max(axis=1, keepdims=True))
    np.testing.assert_allclose(out, e / e.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("shape", [(1, 1), (4, 4096), (7, 999)])
def test_rmsnorm(shape):
    x, w = RNG.standard_normal(shape).astype(np.float32), RNG.standard_normal(shape[1]).astype(np.float32)
    _, _, out, _ = on_gpu(rmsnorm, x, w, np.zeros_like(x), 1e-6)
    x64 = x.astype(np.float64)
    np.testing.assert_allclose(out, x64 / np.sqrt((x64**2).mean(axis=1, keepdims=True) + 1e-6) * w, rtol=1e-5,
                               atol=1e-6)


@pytest.mark.parametrize("m,k,n", [(1, 1, 1), (17, 33, 5), (100, 37, 129), (512, 512, 512)])
def test_tiled_gemm(m, k, n):
    a, b = RNG.standard_normal((m, k)).astype(np.float32), RNG.standard_normal((k, n)).astype(np.float32)
    *_, c = on_gpu(gemm, a, b, np.zeros((m, n), np.float32))
    np.testing.assert_allclose(c, a.astype(np.float64) @ b, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("fmt", ["e4m3fnuz", "e4m3fn"])
@pytest.mark.parametrize("per_row", [False, True])
def test_fp8_dequantize_and_scale_from_torch_float8(fmt, per_row):
    codes = fp8.quantize(RNG.standard_normal((6, 1001)) * 50, fmt)
    scales = RNG.uniform(0.5, 2.0, 6 if per_row else 1).astype(np.float32)
    *_, out, _ = on_gpu(dequantize_scale, codes, scales, np.zeros((6, 1001), np.float32), per_row)
    np.testing.assert_array_equal(out, fp8.dequantize(codes) * (scales[:, None] if per_row else scales[0]))
