"""y = alpha * x + y, one thread per element."""

import flyrt.compiler as flyc
import flyrt.expr as fx

BLOCK = 256


@flyc.kernel(known_block_size=(BLOCK, 1, 1))
def axpy_kernel(alpha: fx.Float32, x: fx.Tensor, y: fx.Tensor, n: fx.Int32):
    i = fx.block_idx.x * BLOCK + fx.thread_idx.x
    if i < n:
        y[i] = fx.fma(alpha, x[i], y[i])


@flyc.jit
def axpy(alpha: fx.Float32, x: fx.Tensor, y: fx.Tensor, n: fx.Int32):
    axpy_kernel(alpha, x, y, n).launch(grid=((n + BLOCK - 1) // BLOCK,), block=(BLOCK,))
