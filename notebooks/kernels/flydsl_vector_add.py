"""A vector add in the real FlyDSL's API (``pip install flydsl``), for AMD GPUs.

On a machine without one, ``flyrt.flydsl_adapter.use_compile_only("gfx942")``
compiles it to gfx942 code objects without launching anything.
"""

import flydsl.compiler as flyc
import flydsl.expr as fx

BLOCK = 256


@flyc.kernel
def vector_add_kernel(A: fx.Tensor, B: fx.Tensor, C: fx.Tensor):
    i = fx.block_idx.x * BLOCK + fx.thread_idx.x
    C[i] = A[i] + B[i]


@flyc.jit
def vector_add(A: fx.Tensor, B: fx.Tensor, C: fx.Tensor, n: fx.Constexpr[int]):
    vector_add_kernel(A, B, C).launch(grid=(n // BLOCK, 1, 1), block=(BLOCK, 1, 1))
