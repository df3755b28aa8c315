"""fx.mma on the tensor cores: the same fragments as tests/runtime/
test_matrix.py, against the exact CPU result; the matrix-unit GEMM example."""

import numpy as np
import pytest

import test_matrix as cpu
from cuda_arrays import on_gpu
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


@pytest.mark.parametrize("m,k,n", [(1, 1, 1), (70, 45, 33), (1024, 512, 768)])
def test_gemm_on_the_tensor_cores(m, k, n):
    a = RNG.standard_normal((m, k)).astype(np.float16)
    b = RNG.standard_normal((k, n)).astype(np.float16)
    *_, c = on_gpu(gemm_mma, a, b, np.full((m, n), np.nan, np.float32))
    np.testing.assert_allclose(c, a.astype(np.float64) @ b, rtol=1e-3, atol=1e-3)
