"""Block-level SIMT on the CPU: barriers, shared memory, warp shuffles."""

import numpy as np
import pytest

import flyrt.compiler as flyc
import flyrt.expr as fx

HERE = __file__


def line_of(text):
    with open(HERE) as f:
        return next(n for n, source in enumerate(f, 1) if text in source and "line_of(" not in source)


@flyc.kernel
def _reverse_blocks(x: fx.Tensor, out: fx.Tensor, width: fx.Constexpr[int]):
    buf = fx.shared(width, fx.Float32)
    t = fx.thread_idx.x
    base = fx.block_idx.x * width
    buf[t] = x[base + t]
    fx.barrier()
    out[base + t] = buf[width - 1 - t]


@flyc.jit
def reverse_blocks(x: fx.Tensor, out: fx.Tensor, width: fx.Constexpr[int]):
    _reverse_blocks(x, out, width).launch(grid=(x.shape[0] // width,), block=(width,))


@pytest.mark.parametrize("width", [1, 7, 64, 256])
def test_values_written_before_a_barrier_are_seen_by_every_thread_after(width):
    blocks = 513  # many blocks, run in parallel: shared memory must not leak between them
    x = np.random.default_rng(width).standard_normal(blocks * width).astype(np.float32)
    out = np.zeros_like(x)
    reverse_blocks(x, out, width)
    np.testing.assert_array_equal(out, x.reshape(blocks, width)[:, ::-1].ravel())


@flyc.kernel
def _block_ids(out: fx.Tensor):
    mine = fx.shared(1, fx.Int32)
    t = fx.thread_idx.x
    if t == 0:
        mine[0] = fx.block_idx.x * 1000
    fx.barrier()
    seen = mine[0]
    fx.barrier()  # several barriers in sequence
    if t == 1:
        mine[0] = -1
    fx.barrier()
    out[fx.block_idx.x, t] = seen + (mine[0] == -1)


@flyc.jit
def block_ids(out: fx.Tensor):
    _block_ids(out).launch(grid=(out.shape[0],), block=(out.shape[1],))


def test_shared_memory_is_per_block_and_barriers_chain():
    out = np.zeros((2000, 16), np.int32)
    block_ids(out)
    np.testing.assert_array_equal(out, np.broadcast_to(np.arange(2000)[:, None] * 1000 + 1, out.shape))


@flyc.kernel
def _tiled_sum(x: fx.Tensor, out: fx.Tensor, n: fx.Int32, tile: fx.Constexpr[int]):
    buf = fx.shared(tile, fx.Float32)
    t = fx.thread_idx.x
    total = 0.0
    for start in range(0, n, tile):  # a uniform dynamic loop with barriers inside
        i = start + t
        buf[t] = x[i] if i < n else 0.0
        fx.barrier()
        for k in range(tile):
            total = total + buf[k]
        fx.barrier()
    out[t] = total


@flyc.jit
def tiled_sum(x: fx.Tensor, out: fx.Tensor, n: fx.Int32, tile: fx.Constexpr[int]):
    _tiled_sum(x, out, n, tile).launch(block=(tile,))


@pytest.mark.parametrize("n", [1, 31, 32, 1000])
def test_barriers_inside_a_uniform_dynamic_loop(n):
    x = np.arange(n, dtype=np.float32)
    out = np.zeros(32, np.float32)
    tiled_sum(x, out, n, 32)
    np.testing.assert_array_equal(out, np.full(32, x.sum(), np.float32))


@flyc.kernel
def _dynamic(x: fx.Tensor, out: fx.Tensor):
    n = x.shape[0]
    buf = fx.dynamic_shared(fx.Float64, n)
    t = fx.thread_idx.x
    buf[t] = x[t] * 2.0
    fx.barrier()
    out[t] = buf[(t + 1) % n]


@flyc.jit
def dynamic(x: fx.Tensor, out: fx.Tensor):
    n = x.shape[0]
    _dynamic(x, out).launch(block=(n,), smem=n * 8)


def test_dynamic_shared_memory_from_smem():
    x = np.arange(100, dtype=np.float64)
    out = np.zeros_like(x)
    dynamic(x, out)
    np.testing.assert_array_equal(out, np.roll(x * 2, -1))


@flyc.kernel
def _warp_ops(x: fx.Tensor, out: fx.Tensor, width: fx.Constexpr[int], src: fx.Constexpr[int],
              offset: fx.Constexpr[int]):
    t = fx.thread_idx.x
    v = x[t]
    out[0, t] = fx.shuffle(v, src, width)
    out[1, t] = v.shuffle_xor(offset, width)
    out[2, t] = fx.warp_reduce(v, "add", width)
    out[3, t] = fx.warp_reduce(v, "max", width)
    out[4, t] = fx.warp_reduce(v, "min", width)


@flyc.jit
def warp_ops(x: fx.Tensor, out: fx.Tensor, width: fx.Constexpr[int], src: fx.Constexpr[int],
             offset: fx.Constexpr[int]):
    _warp_ops(x, out, width, src, offset).launch(block=(x.shape[0],))


def reference(x, width, src, offset):
    groups = x.reshape(-1, width)
    lanes = np.arange(width)
    return np.stack([
        np.repeat(groups[:, src % width], width),
        groups[:, lanes ^ offset].ravel(),
        np.repeat(groups.sum(axis=1), width),
        np.repeat(groups.max(axis=1), width),
        np.repeat(groups.min(axis=1), width),
    ])


@pytest.mark.parametrize("warp", [32, 64])
def test_every_warp_op_for_every_width(warp):
    fx.set_warp_size(warp)
    try:
        assert fx.warp_size() == warp
        x = np.random.default_rng(warp).integers(-1000, 1000, 2 * warp).astype(np.float64)
        width = 1
        while width <= warp:
            for src, offset in [(0, 0), (width - 1, width // 2), (width + 3, width - 1)]:
                out = np.zeros((5, 2 * warp))
                warp_ops(x, out, width, src, offset % width if width > 1 else 0)
                np.testing.assert_array_equal(out, reference(x, width, src, offset % width if width > 1 else 0),
                                              err_msg=f"warp {warp}, width {width}")
            width *= 2
    finally:
        fx.set_warp_size(32)


@flyc.kernel
def _divergent(x: fx.Tensor):
    t = fx.thread_idx.x
    if t < 16:
        fx.barrier()  # not every thread gets here
    x[t] = 0.0


@flyc.jit
def divergent(x: fx.Tensor):
    _divergent(x).launch(block=(32,))


@flyc.kernel
def _divergent_loop(x: fx.Tensor):
    t = fx.thread_idx.x
    for k in range(t):
        x[t] = fx.shuffle_xor(x[t], 1)  # a shuffle in a loop whose trip count depends on the thread


@flyc.jit
def divergent_loop(x: fx.Tensor):
    _divergent_loop(x).launch(block=(32,))


def test_barriers_and_shuffles_in_divergent_control_flow_are_errors_at_their_line():
    with pytest.raises(flyc.KernelError, match="every thread of the block must reach it") as info:
        divergent(np.zeros(32, np.float32))
    assert info.value.lineno == line_of("fx.barrier()  # not every thread")
    assert f"line {line_of('if t < 16:')}" in str(info.value)
    with pytest.raises(flyc.KernelError, match="a warp shuffle") as info:
        divergent_loop(np.zeros(32, np.float32))
    assert info.value.lineno == line_of("x[t] = fx.shuffle_xor(x[t], 1)")


@flyc.kernel
def _barrier_in_while(x: fx.Tensor, n: fx.Int32):
    k = 0
    while k < n:
        fx.barrier()
        k += 1
    x[fx.thread_idx.x] = k


@flyc.jit
def barrier_in_while(x: fx.Tensor, n: fx.Int32):
    _barrier_in_while(x, n).launch(block=(4,))


def test_barrier_in_a_while_loop_is_a_clear_error():
    with pytest.raises(flyc.KernelError, match="use a for loop over range") as info:
        barrier_in_while(np.zeros(4, np.float32), 3)
    assert info.value.lineno == line_of("while k < n:")
