"""RMSNorm: out = x / sqrt(mean(x^2) + eps) * weight, one block per row."""

import flyrt.compiler as flyc
import flyrt.expr as fx

from .reductions import block_reduce, scratch_for

BLOCK = 256


@flyc.kernel(known_block_size=(BLOCK, 1, 1))
def rmsnorm_kernel(x: fx.Tensor, weight: fx.Tensor, out: fx.Tensor, eps: fx.Float32):
    row = fx.block_idx.x
    t = fx.thread_idx.x
    cols = x.shape[1]
    squares = 0.0
    for c in range(t, cols, BLOCK):
        v = x[row, c]
        squares = fx.fma(v, v, squares)
    squares = block_reduce(squares, "add", scratch_for(BLOCK), BLOCK)
    scale = fx.rsqrt(squares / cols + eps)
    for c in range(t, cols, BLOCK):
        out[row, c] = x[row, c] * scale * weight[c]


@flyc.jit
def rmsnorm(x: fx.Tensor, weight: fx.Tensor, out: fx.Tensor, eps: fx.Float32 = 1e-6):
    rmsnorm_kernel(x, weight, out, eps).launch(grid=(x.shape[0],), block=(BLOCK,))
