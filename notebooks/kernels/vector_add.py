"""c = a + b, one thread per element."""

import flyrt.compiler as flyc
import flyrt.expr as fx

BLOCK = 256


@flyc.kernel
def vector_add_kernel(a: fx.Tensor, b: fx.Tensor, c: fx.Tensor, n: fx.Int32):
    i = fx.block_idx.x * fx.block_dim.x + fx.thread_idx.x
    if i < n:
        c[i] = a[i] + b[i]


@flyc.jit
def vector_add(a: fx.Tensor, b: fx.Tensor, c: fx.Tensor, n: fx.Int32, stream: fx.Stream = fx.Stream(None)):
    vector_add_kernel(a, b, c, n).launch(grid=((n + BLOCK - 1) // BLOCK,), block=(BLOCK,), stream=stream)
