"""Row softmax: one block per row, max and sum reduced across the block.

Each thread walks its row in vectors of LANES consecutive elements (the
last few, when the row length is not a multiple, one by one)."""

import flyrt.compiler as flyc
import flyrt.expr as fx

from .reductions import block_reduce, scratch_for

BLOCK = 256
LANES = 8
LOG2E = 1.4426950408889634


@flyc.kernel(known_block_size=(BLOCK, 1, 1))
def softmax_kernel(x: fx.Tensor, out: fx.Tensor):
    row = fx.block_idx.x
    t = fx.thread_idx.x
    cols = x.shape[1]
    body = cols - cols % LANES
    scratch = scratch_for(BLOCK)

    peaks = fx.Vector.broadcast(float("-inf"), LANES)
    for c in range(t * LANES, body, BLOCK * LANES):
        peaks = fx.max(peaks, fx.Vector.load(x, (row, c), LANES))
    peak = peaks.reduce("max")
    for c in range(body + t, cols, BLOCK):
        peak = fx.max(peak, x[row, c])
    peak = block_reduce(peak, "max", scratch, BLOCK)

    sums = fx.Vector.zeros(LANES, fx.Float32)
    for c in range(t * LANES, body, BLOCK * LANES):
        sums = sums + fx.exp2((fx.Vector.load(x, (row, c), LANES) - peak) * LOG2E)
    total = sums.reduce("add")
    for c in range(body + t, cols, BLOCK):
        total = total + fx.exp2((x[row, c] - peak) * LOG2E)
    total = block_reduce(total, "add", scratch, BLOCK)

    scale = 1.0 / total
    for c in range(t * LANES, body, BLOCK * LANES):
        (fx.exp2((fx.Vector.load(x, (row, c), LANES) - peak) * LOG2E) * scale).store(out, (row, c))
    for c in range(body + t, cols, BLOCK):
        out[row, c] = fx.exp2((x[row, c] - peak) * LOG2E) * scale


@flyc.jit
def softmax(x: fx.Tensor, out: fx.Tensor):
    softmax_kernel(x, out).launch(grid=(x.shape[0],), block=(BLOCK,))
