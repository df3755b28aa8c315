"""``C = 2 A + (B + 1)`` in real FlyDSL, structured like upstream's PA decode.

``compile_scaled_add(block)`` is a ``functools.lru_cache`` compile factory:
it defines the kernel and its ``@flyc.jit`` launcher and returns the
launcher, so calling it again with the same block size returns the same
launcher and its in-memory artifacts. The kernel calls two module-level
``@flyc.jit`` helpers: ``flydsl_helpers.scale`` through a module attribute,
``shift`` as a global of this module.
"""

import functools

import flydsl.compiler as flyc
import flydsl.expr as fx

from . import flydsl_helpers


@flyc.jit
def shift(x):
    return x + 1.0


@functools.lru_cache(maxsize=None)
def compile_scaled_add(block: int):
    @flyc.kernel
    def scaled_add_kernel(A: fx.Tensor, B: fx.Tensor, C: fx.Tensor):
        i = fx.block_idx.x * block + fx.thread_idx.x
        C[i] = flydsl_helpers.scale(A[i]) + shift(B[i])

    @flyc.jit
    def launch_scaled_add(A: fx.Tensor, B: fx.Tensor, C: fx.Tensor, n: fx.Constexpr[int]):
        scaled_add_kernel(A, B, C).launch(grid=(n // block, 1, 1), block=(block, 1, 1))

    return launch_scaled_add
