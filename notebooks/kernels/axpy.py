"""y = alpha * x + y, each thread striding over the array (grid-stride loop)."""

import flyrt.compiler as flyc
import flyrt.expr as fx

BLOCK = 256


@flyc.kernel(known_block_size=(BLOCK, 1, 1))
def axpy_kernel(alpha: fx.Float32, x: fx.Tensor, y: fx.Tensor, n: fx.Int32):
    stride = fx.grid_dim.x * BLOCK
    for i in range(fx.block_idx.x * BLOCK + fx.thread_idx.x, n, stride):
        y[i] = fx.fma(alpha, x[i], y[i])


@flyc.jit
def axpy(alpha: fx.Float32, x: fx.Tensor, y: fx.Tensor, n: fx.Int32, blocks: fx.Constexpr[int] = 64):
    axpy_kernel(alpha, x, y, n).launch(grid=(blocks,), block=(BLOCK,))
