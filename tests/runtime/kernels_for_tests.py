"""Small generic kernels the runtime tests instantiate with Python ops, and
the text of a module of a kernel and its helper, for tests that write one
to a file and edit it."""

import textwrap

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


# A helper, a kernel calling it and its launcher, as a module file holds
# them (tests write it, then edit it: lines removed above shift a definition).
HELPER_MODULE_SOURCE = textwrap.dedent("""
    import flyrt.compiler as flyc
    import flyrt.expr as fx


    def twice(v):
        return v * 2.0


    @flyc.kernel
    def _k(x: fx.Tensor, out: fx.Tensor):
        out[fx.thread_idx.x] = twice(x[fx.thread_idx.x])


    @flyc.jit
    def run(x: fx.Tensor, out: fx.Tensor):
        _k(x, out).launch(block=(4,))
    """)
