"""Async copies on the GPU (cp.async), against numpy: the streaming example
through 2 to 4 stages on more tiles than threads, a masked tail, and the
Int16 pairs that take cp.async's 4-byte form."""

import numpy as np
import pytest

import test_async_copy as cpu
from cuda_arrays import on_gpu
from kernels.streaming import scale_shift_plain, scale_shift_staged

RNG = np.random.default_rng(5)


@pytest.mark.parametrize("stages", [2, 3, 4])
def test_the_staged_stream(stages):
    n = 4 * 1_000_003
    x = RNG.standard_normal(n + 8).astype(np.float32)
    _, y, *_ = on_gpu(scale_shift_staged, x, np.full(n + 8, -7.0, np.float32), n, 2.0, 0.5, 264, stages)
    np.testing.assert_array_equal(y[:n], x[:n] * np.float32(2.0) + np.float32(0.5))
    assert (y[n:] == -7.0).all()
    _, plain, *_ = on_gpu(scale_shift_plain, x, np.zeros(n + 8, np.float32), n, 2.0, 0.5, 264)
    np.testing.assert_array_equal(plain, np.where(np.arange(n + 8) < n, y, 0))


def test_a_masked_tail_reads_nothing_and_writes_zeros():
    x = np.arange(1, 21, dtype=np.int16)
    _, out, _ = on_gpu(cpu.gather_tail, x, np.full(64, -1, np.int16), len(x))
    np.testing.assert_array_equal(out[:20], x)
    assert (out[20:] == 0).all()
