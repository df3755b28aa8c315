"""RMSNorm: out = x / sqrt(mean(x^2) + eps) * weight, one block per row.

Each thread walks its row in vectors of LANES consecutive elements (the
last few, when the row length is not a multiple, one by one)."""

import flyrt.compiler as flyc
import flyrt.expr as fx

from .reductions import block_reduce, scratch_for

BLOCK = 256
LANES = 8


@flyc.kernel(known_block_size=(BLOCK, 1, 1))
def rmsnorm_kernel(x: fx.Tensor, weight: fx.Tensor, out: fx.Tensor, eps: fx.Float32):
    row = fx.block_idx.x
    t = fx.thread_idx.x
    cols = x.shape[1]
    body = cols - cols % LANES
    squares = fx.Vector.zeros(LANES, fx.Float32)
    for c in range(t * LANES, body, BLOCK * LANES):
        v = fx.Vector.load(x, (row, c), LANES)
        squares = fx.fma(v, v, squares)
    total = squares.reduce("add")
    for c in range(body + t, cols, BLOCK):
        v = x[row, c]
        total = fx.fma(v, v, total)
    total = block_reduce(total, "add", scratch_for(BLOCK), BLOCK)
    scale = fx.rsqrt(total / cols + eps)
    for c in range(t * LANES, body, BLOCK * LANES):
        v = fx.Vector.load(x, (row, c), LANES) * fx.Vector.load(weight, (c,), LANES) * scale
        v.store(out, (row, c))
    for c in range(body + t, cols, BLOCK):
        out[row, c] = x[row, c] * scale * weight[c]


@flyc.jit
def rmsnorm(x: fx.Tensor, weight: fx.Tensor, out: fx.Tensor, eps: fx.Float32 = 1e-6):
    rmsnorm_kernel(x, weight, out, eps).launch(grid=(x.shape[0],), block=(BLOCK,))
