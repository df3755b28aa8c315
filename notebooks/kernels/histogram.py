"""A histogram by atomics: each block counts its share of the values into a
shared-memory histogram (atomics between its threads), then adds that into
the global one (atomics between blocks), the privatized histogram GPU
kernels use."""

import flyrt.compiler as flyc
import flyrt.expr as fx

BLOCK = 256


@flyc.kernel
def histogram_kernel(values: fx.Tensor, counts: fx.Tensor, n: fx.Int32, bins: fx.Constexpr[int]):
    local = fx.shared((bins,), fx.Int32)
    t = fx.thread_idx.x
    for b in range(t, bins, BLOCK):
        local[b] = 0
    fx.barrier()
    i = fx.block_idx.x * BLOCK + t
    stride = fx.grid_dim.x * BLOCK
    while i < n:
        fx.atomic_add(local, values[i], 1, scope="block")
        i += stride
    fx.barrier()
    for b in range(t, bins, BLOCK):
        if local[b] != 0:
            fx.atomic_add(counts, b, local[b], scope="device")


@flyc.jit
def histogram(values: fx.Tensor, counts: fx.Tensor, n: fx.Int32, blocks: fx.Int32, bins: fx.Constexpr[int]):
    """counts[b] += how many of values[:n] equal b (0 <= b < bins); `counts`
    is Int32 and must start at what it should add to."""
    histogram_kernel(values, counts, n, bins).launch(grid=(blocks,), block=(BLOCK,))
