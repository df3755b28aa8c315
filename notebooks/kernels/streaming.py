"""Streaming through shared memory with async copies: each thread keeps
STAGES - 1 copies of 16 bytes in flight (fx.async_copy) and computes
y = alpha * x + beta on the oldest once it has landed, while the next ones
travel. `scale_shift_plain` is the same computation with plain vector loads,
to measure against (tests/bench/bench_gpu_async_copy.py).

A thread copies into and reads from its own slots only, so no barrier is
needed. Each stage is its own shared array, so the compiler can tell which
copy a read waits for (a read before its wait is a compile error)."""

import flyrt.compiler as flyc
import flyrt.expr as fx

LANES = 4  # Float32: 16 bytes a copy
BLOCK = 256
TILE = BLOCK * LANES


@flyc.kernel
def scale_shift_staged_kernel(x: fx.Tensor, y: fx.Tensor, n: fx.Int32, alpha: fx.Float32, beta: fx.Float32,
                              STAGES: fx.Constexpr[int]):
    slot = fx.thread_idx.x * LANES
    stages = [fx.shared((TILE,), fx.Float32) for _ in fx.range_constexpr(STAGES)]
    stride = fx.grid_dim.x * TILE
    first = fx.block_idx.x * TILE + slot
    for s in fx.range_constexpr(STAGES - 1):  # the first tiles in flight
        i = first + s * stride
        fx.async_copy(stages[s], slot, x, i, lanes=LANES, mask=i < n)
        fx.async_commit()
    for base in range(first, n, STAGES * stride):
        for s in fx.range_constexpr(STAGES):
            ahead = base + (s + STAGES - 1) * stride  # into the stage read one step ago
            fx.async_copy(stages[(s + STAGES - 1) % STAGES], slot, x, ahead, lanes=LANES, mask=ahead < n)
            fx.async_commit()
            fx.async_wait(STAGES - 1)  # the oldest group, stage s, has landed
            i = base + s * stride
            if i < n:
                y.store_vector(i, stages[s].load_vector(slot, LANES, align=16) * alpha + beta, align=16)
    fx.async_wait(0)  # nothing left in flight when the thread ends


@flyc.kernel
def scale_shift_plain_kernel(x: fx.Tensor, y: fx.Tensor, n: fx.Int32, alpha: fx.Float32, beta: fx.Float32):
    for i in range(fx.block_idx.x * TILE + fx.thread_idx.x * LANES, n, fx.grid_dim.x * TILE):
        y.store_vector(i, x.load_vector(i, LANES, align=16) * alpha + beta, align=16)


@flyc.jit
def scale_shift_staged(x: fx.Tensor, y: fx.Tensor, n: fx.Int32, alpha: fx.Float32, beta: fx.Float32,
                       blocks: fx.Int32, stages: fx.Constexpr[int]):
    """y[:n] = alpha * x[:n] + beta (n a multiple of 4), through `stages`
    (2 to 4) shared-memory stages per thread, on `blocks` blocks."""
    scale_shift_staged_kernel(x, y, n, alpha, beta, stages).launch(grid=(blocks,), block=(BLOCK,))


@flyc.jit
def scale_shift_plain(x: fx.Tensor, y: fx.Tensor, n: fx.Int32, alpha: fx.Float32, beta: fx.Float32,
                      blocks: fx.Int32):
    """The same, with plain vector loads."""
    scale_shift_plain_kernel(x, y, n, alpha, beta).launch(grid=(blocks,), block=(BLOCK,))
