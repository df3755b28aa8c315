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
