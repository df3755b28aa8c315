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
