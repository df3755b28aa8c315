"""Small generic kernels the runtime tests instantiate with Python ops."""

import flyrt.compiler as flyc
import flyrt.expr as fx


@flyc.kernel
def _binary_kernel(a: fx.Tensor, b: fx.Tensor, out: fx.Tensor, n: fx.Int32, op: fx.Constexpr):
    i = fx.block_idx.x * fx.block_dim.x + fx.thread_idx.x
    if i < n:
        out[i] = op(a[i], b[i])


@flyc.jit
def binary(a: fx.Tensor, b: fx.Tensor, out: fx.Tensor, n: fx.Int32, op: fx.Constexpr):
    _binary_kernel(a, b, out, n, op).launch(grid=((n + 63) // 64,), block=(64,))


@flyc.kernel
def _unary_kernel(a: fx.Tensor, out: fx.Tensor, n: fx.Int32, op: fx.Constexpr):
    i = fx.block_idx.x * fx.block_dim.x + fx.thread_idx.x
    if i < n:
        out[i] = op(a[i])


@flyc.jit
def unary(a: fx.Tensor, out: fx.Tensor, n: fx.Int32, op: fx.Constexpr):
    _unary_kernel(a, out, n, op).launch(grid=((n + 63) // 64,), block=(64,))
