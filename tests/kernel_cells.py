"""Cells the kernel tests on the CPU and on the GPU both run."""

# A launcher storing x into y from `offset` on (one block of 64 threads):
# with bounds checks, copy_at(x, y, 200000000) is an IndexError at line 7.
FAR_STORE = """\
import flyrt.compiler as flyc
import flyrt.expr as fx

@flyc.kernel
def far_store(x: fx.Tensor, y: fx.Tensor, offset: fx.Int32):
    i = fx.thread_idx.x
    y[i + offset] = x[i]

@flyc.jit
def copy_at(x: fx.Tensor, y: fx.Tensor, offset: fx.Int32):
    far_store(x, y, offset).launch(block=(64,))
"""

# A launcher whose 4 threads print (fx.printf) what they hold.
PRINTF = """\
import flyrt.compiler as flyc
import flyrt.expr as fx

@flyc.kernel
def shout(x: fx.Tensor):
    i = fx.thread_idx.x
    fx.printf("thread %d holds %.1f\\n", i, x[i])

@flyc.jit
def say(x: fx.Tensor):
    shout(x).launch(block=(4,))
"""
PRINTED = [f"thread {i} holds {i}.0" for i in range(4)]

# A module with an autotuned launcher whose two configs differ in cost by
# construction (3000 helper calls per element or 3), and a do_bench that
# counts what it timed (TIMED). A call from ones gives 1.875 everywhere;
# so does `repeated`, a host function tuned over how many launches it makes.
AUTOTUNED = """\
import functools

import flyrt.compiler as flyc
import flyrt.expr as fx

OFFSET = 1.0
UNRELATED = 0

def helper(v):
    return v * 0.5 + OFFSET

@flyc.kernel
def _work(x: fx.Tensor, n: fx.Int32, REPS: fx.Constexpr[int]):
    i = fx.block_idx.x * fx.block_dim.x + fx.thread_idx.x
    if i < n:
        acc = x[i]
        for _ in range(REPS):
            acc = helper(acc)
        x[i] = acc

def timed(fn, quantiles=None):
    TIMED.append(fn)
    from flyrt.testing import do_bench
    return do_bench(fn, warmup=1, rep=5, quantiles=quantiles, device="cpu")

TIMED = []

@flyc.autotune(configs=[flyc.Config({"REPS": 3000}), flyc.Config({"REPS": 3})], key=["n"], restore_value=["x"],
               do_bench=timed)
@flyc.jit
def work(x: fx.Tensor, n: fx.Int32, REPS: fx.Constexpr[int]):
    _work(x, n, REPS).launch(grid=((n + 63) // 64,), block=(64,))

@flyc.jit
def once(x: fx.Tensor, n: fx.Int32):
    _work(x, n, 3).launch(grid=((n + 63) // 64,), block=(64,))

def calls_of_once(x, n, calls):
    for _ in range(calls):
        once(x, n)

repeated = flyc.autotune(configs=[flyc.Config({"calls": 200}), flyc.Config({"calls": 1})], key=["n"],
                         restore_value=["x"], do_bench=timed)(calls_of_once)

@functools.lru_cache(maxsize=None)
def make_scaler(block):
    @flyc.kernel
    def _scale(x: fx.Tensor, n: fx.Int32):
        i = fx.block_idx.x * fx.block_dim.x + fx.thread_idx.x
        if i < n:
            x[i] = helper(x[i])

    @flyc.jit
    def scale(x: fx.Tensor, n: fx.Int32):
        _scale(x, n).launch(grid=((n + block - 1) // block,), block=(block,))

    return scale

def scale_in_blocks(x, n, block):
    make_scaler(block)(x, n)

scaled = flyc.autotune(configs=[flyc.Config({"block": 32}), flyc.Config({"block": 64})], key=["n"],
                       restore_value=["x"], do_bench=timed)(scale_in_blocks)
"""
