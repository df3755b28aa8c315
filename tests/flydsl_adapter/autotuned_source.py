"""A FlyDSL ``@autotune`` kernel whose helper the tests edit: a module's text
(tests/flydsl_adapter/test_adapter.py) and a notebook cell (test_kernel_integration.py).
No GPU here: its benchmark compiles each candidate and takes the candidate's
time from TIMES, in the order FlyDSL benchmarks them."""

AUTOTUNED = """
import flydsl.compiler as flyc
import flydsl.expr as fx
from flydsl.autotune import Config, autotune

TIMES = []


def bench(kernel_call, warmup, rep):
    kernel_call()  # compiles the candidate (compile-only), as a real benchmark's first run does
    return TIMES.pop(0)


def offset(x):
    return x + 1.0


@flyc.kernel
def tuned_kernel(A: fx.Tensor, C: fx.Tensor, BLOCK: fx.Constexpr[int]):
    i = fx.block_idx.x * BLOCK + fx.thread_idx.x
    C[i] = offset(A[i])


@autotune(configs=[Config(BLOCK=64), Config(BLOCK=128)], key=["n"], do_bench=bench)
@flyc.jit
def tuned(A: fx.Tensor, C: fx.Tensor, n: fx.Constexpr[int], BLOCK: fx.Constexpr[int]):
    tuned_kernel(A, C, BLOCK).launch(grid=(n // BLOCK, 1, 1), block=(BLOCK, 1, 1))
"""
