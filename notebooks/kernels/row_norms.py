"""Euclidean norm of every row of a (possibly strided) matrix.

One thread per row; four independent partial sums keep the FMA pipeline
busy (a single running sum waits on each FMA's latency)."""

import flyrt.compiler as flyc
import flyrt.expr as fx

BLOCK = 64


@flyc.kernel
def row_norms_kernel(m: fx.Tensor, norms: fx.Tensor):
    row = fx.block_idx.x * fx.block_dim.x + fx.thread_idx.x
    cols = m.shape[1]
    if row < m.shape[0]:
        s0 = s1 = s2 = s3 = 0.0
        body = cols - cols % 4
        for col in range(0, body, 4):
            v0, v1, v2, v3 = m[row, col], m[row, col + 1], m[row, col + 2], m[row, col + 3]
            s0 = fx.fma(v0, v0, s0)
            s1 = fx.fma(v1, v1, s1)
            s2 = fx.fma(v2, v2, s2)
            s3 = fx.fma(v3, v3, s3)
        for col in range(body, cols):
            v = m[row, col]
            s0 = fx.fma(v, v, s0)
        norms[row] = fx.sqrt((s0 + s1) + (s2 + s3))


@flyc.jit
def row_norms(m: fx.Tensor, norms: fx.Tensor):
    rows = m.shape[0]
    row_norms_kernel(m, norms).launch(grid=((rows + BLOCK - 1) // BLOCK,), block=(BLOCK,))
