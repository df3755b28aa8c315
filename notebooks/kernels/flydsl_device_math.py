"""A softplus-and-wave kernel in real FlyDSL whose math comes from ROCm's
device library (ocml: ``sin``, ``exp2``, ``rsqrt``), built as upstream's
kernels are: nested ``functools.lru_cache`` factories (a dtype-independent
one building per-block launchers), module-level ``@flyc.jit`` helpers, and a
launcher that keeps a ``flyc.compile`` result and calls it from then on
(``_run_compiled``, as upstream's paged attention does with ``exe._cf``).

Compile-only on a machine without ROCm: ``flyrt.flydsl_adapter.use_compile_only``
links Debian's rocm-device-libs bitcode where FlyDSL looks for ROCm's.
"""

import functools

import flydsl.compiler as flyc
import flydsl.expr as fx

LOG2E = 1.4426950408889634


@flyc.jit
def wave(x):
    return fx.sin(x) * 0.5


@flyc.jit
def softplus(x):
    return fx.exp2(x * LOG2E) + 1.0


@flyc.jit
def normalized(x):
    return x * fx.rsqrt(x * x + 1.0)


@functools.lru_cache(maxsize=None)
def compile_device_math(block: int):
    @flyc.kernel
    def device_math_kernel(A: fx.Tensor, C: fx.Tensor):
        i = fx.block_idx.x * block + fx.thread_idx.x
        C[i] = normalized(softplus(A[i]) + wave(A[i]))

    @flyc.jit
    def launch_device_math(A: fx.Tensor, C: fx.Tensor, n: fx.Constexpr[int]):
        device_math_kernel(A, C).launch(grid=(n // block, 1, 1), block=(block, 1, 1))

    return launch_device_math


@functools.lru_cache(maxsize=None)
def device_math_launcher(block: int = 256):
    """The outer factory: one launcher per block size, from the inner one."""
    return compile_device_math(block)


def run_compiled(exe, *args):
    """The first call compiles (``flyc.compile``) and keeps the result on the
    launcher; later calls launch it without FlyDSL's per-call checks."""
    compiled = getattr(exe, "_cf", None)
    if compiled is not None:
        return compiled(*args)
    exe._cf = flyc.compile(exe, *args)
    return None
