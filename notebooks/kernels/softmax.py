"""Row softmax: one block per row, max and sum reduced across the block."""

import flyrt.compiler as flyc
import flyrt.expr as fx

from .reductions import block_reduce, scratch_for

BLOCK = 256
LOG2E = 1.4426950408889634


@flyc.kernel(known_block_size=(BLOCK, 1, 1))
def softmax_kernel(x: fx.Tensor, out: fx.Tensor):
    row = fx.block_idx.x
    t = fx.thread_idx.x
    cols = x.shape[1]
    scratch = scratch_for(BLOCK)
    peak = float("-inf")
    for c in range(t, cols, BLOCK):
        peak = fx.max(peak, x[row, c])
    peak = block_reduce(peak, "max", scratch, BLOCK)
    total = 0.0
    for c in range(t, cols, BLOCK):
        total = total + fx.exp2((x[row, c] - peak) * LOG2E)
    total = block_reduce(total, "add", scratch, BLOCK)
    scale = 1.0 / total
    for c in range(t, cols, BLOCK):
        out[row, c] = fx.exp2((x[row, c] - peak) * LOG2E) * scale


@flyc.jit
def softmax(x: fx.Tensor, out: fx.Tensor):
    softmax_kernel(x, out).launch(grid=(x.shape[0],), block=(BLOCK,))
