"""Euclidean norm of every row of a (possibly strided) matrix."""

import flyrt.compiler as flyc
import flyrt.expr as fx

BLOCK = 64


@flyc.kernel
def row_norms_kernel(m: fx.Tensor, norms: fx.Tensor):
    row = fx.block_idx.x * fx.block_dim.x + fx.thread_idx.x
    if row < m.shape[0]:
        total = 0.0
        for col in range(m.shape[1]):
            v = m[row, col]
            total = fx.fma(v, v, total)
        norms[row] = fx.sqrt(total)


@flyc.jit
def row_norms(m: fx.Tensor, norms: fx.Tensor):
    rows = m.shape[0]
    row_norms_kernel(m, norms).launch(grid=((rows + BLOCK - 1) // BLOCK,), block=(BLOCK,))
