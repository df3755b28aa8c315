"""Shared memory, barriers and warp shuffles on the GPU: the kernels of
tests/runtime/test_block.py, plus what only GPUs allow (barriers in while
loops, shared memory past 48 KiB)."""

import numpy as np
import pytest

import flyrt.compiler as flyc
import flyrt.expr as fx
import test_block as cpu
from cuda_arrays import cuda, on_gpu


@pytest.mark.parametrize("width", [1, 7, 64, 256, 1024])
def test_values_written_before_a_barrier_are_seen_after_it(width):
    x = np.random.default_rng(width).standard_normal(513 * width).astype(np.float32)
    _, out, _ = on_gpu(cpu.reverse_blocks, x, np.zeros_like(x), width)
    np.testing.assert_array_equal(out, x.reshape(513, width)[:, ::-1].ravel())


def test_shared_memory_is_per_block_and_barriers_chain():
    (out,) = on_gpu(cpu.block_ids, np.zeros((2000, 16), np.int32))
    np.testing.assert_array_equal(out, np.broadcast_to(np.arange(2000)[:, None] * 1000 + 1, out.shape))


@pytest.mark.parametrize("n", [1, 31, 32, 1000])
def test_barriers_inside_a_uniform_dynamic_loop(n):
    x = np.arange(n, dtype=np.float32)
    _, out, _, _ = on_gpu(cpu.tiled_sum, x, np.zeros(32, np.float32), n, 32)
    np.testing.assert_array_equal(out, np.full(32, x.sum(), np.float32))


def test_dynamic_shared_memory_from_smem():
    x = np.arange(100, dtype=np.float64)
    _, out = on_gpu(cpu.dynamic, x, np.zeros_like(x))
    np.testing.assert_array_equal(out, np.roll(x * 2, -1))


def test_every_warp_op_for_every_width():
    x = np.random.default_rng(9).integers(-1000, 1000, 64).astype(np.float64)
    width = 1
    while width <= 32:
        for src, offset in [(0, 0), (width - 1, width // 2), (width + 3, width - 1)]:
            offset = offset % width if width > 1 else 0
            _, out, *_ = on_gpu(cpu.warp_ops, x, np.zeros((5, 64)), width, src, offset)
            np.testing.assert_array_equal(out, cpu.reference(x, width, src, offset), err_msg=f"width {width}")
        width *= 2


def test_shuffles_in_a_partial_last_warp():
    x = np.random.default_rng(10).integers(-1000, 1000, 40).astype(np.float64)  # a warp and 8 threads
    _, out, *_ = on_gpu(cpu.warp_ops, x, np.zeros((5, 40)), 8, 3, 5)
    np.testing.assert_array_equal(out, cpu.reference(x, 8, 3, 5))


def test_barrier_in_a_while_loop_runs_on_the_gpu():
    x, _ = on_gpu(cpu.barrier_in_while, np.zeros(4, np.float32), 3)
    np.testing.assert_array_equal(x, [3, 3, 3, 3])


@flyc.kernel
def _big_shared(x: fx.Tensor, out: fx.Tensor):
    buf = fx.shared(24 * 1024, fx.Float32)  # 96 KiB: past the 48 KiB a kernel gets unasked
    t = fx.thread_idx.x
    for i in range(t, 24 * 1024, 256):
        buf[i] = x[i]
    fx.barrier()
    for i in range(t, 24 * 1024, 256):
        out[i] = buf[24 * 1024 - 1 - i]


@flyc.jit
def big_shared(x: fx.Tensor, out: fx.Tensor):
    _big_shared(x, out).launch(block=(256,))


def test_shared_memory_beyond_48_kib():
    x = np.arange(24 * 1024, dtype=np.float32)
    _, out = on_gpu(big_shared, x, np.zeros_like(x))
    np.testing.assert_array_equal(out, x[::-1])


def test_warp_size_is_the_targets():
    @flyc.kernel
    def _warp(out: fx.Tensor):
        out[fx.thread_idx.x] = fx.warp_size()

    @flyc.jit
    def warp(out: fx.Tensor):
        _warp(out).launch(block=(4,))

    fx.set_warp_size(64)  # the CPU's: the GPU's stays 32
    try:
        out = cuda(np.zeros(4, np.int32))
        warp(out)
        assert out.tolist() == [32] * 4
    finally:
        fx.set_warp_size(32)
