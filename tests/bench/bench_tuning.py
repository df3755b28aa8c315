"""A launcher's first tuned call on the CPU, its configs compiled one at a
time as each is timed, and all of them ahead on threads at once (the
autotuner's way since 2026-12-05): four configs of a kernel whose constexpr
changes its code, each side in fresh processes, disk caches off. Prints;
never fails.

    .venv/bin/python tests/bench/bench_tuning.py
"""

import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from timing import mode_line  # noqa: E402

RUNS = 3

RUN = r'''
import sys, time
import numpy as np
import flyrt.compiler as flyc
import flyrt.expr as fx
from flyrt.testing import do_bench
from flyrt.tuning import autotuner

if sys.argv[1] == "one at a time":
    autotuner.Autotuner._warm = lambda self, configs, args, kwargs: None


@flyc.kernel
def series(x: fx.Tensor, y: fx.Tensor, n: fx.Int32, TERMS: fx.Constexpr[int]):
    i = fx.block_idx.x * fx.block_dim.x + fx.thread_idx.x
    if i < n:
        v = x[i]
        total = 0.0
        for k in fx.range_constexpr(TERMS):
            total = fx.fma(total, v, float(k + 1)) + fx.exp2(v * (k % 7) * 0.01)
        y[i] = total


@flyc.jit
def run(x: fx.Tensor, y: fx.Tensor, n: fx.Int32, TERMS: fx.Constexpr[int]):
    series(x, y, n, TERMS).launch(grid=((n + 255) // 256,), block=(256,))


def quick(fn, quantiles=None):
    return do_bench(fn, warmup=1, rep=2, quantiles=quantiles, device="cpu")


tuned = flyc.autotune(configs=[flyc.Config({"TERMS": t}) for t in (200, 240, 280, 320)], key=["n"],
                      do_bench=quick)(run)
x, y = np.ones(1024, np.float32), np.zeros(1024, np.float32)
begin = time.perf_counter()
tuned(x, y, 1024)
print((time.perf_counter() - begin) * 1e3)
'''


def first_call_ms(script, how):
    env = dict(os.environ, FLYDSL_RUNTIME_ENABLE_CACHE="0")
    done = subprocess.run([sys.executable, script, how], env=env, capture_output=True, text=True, check=True)
    return float(done.stdout.strip().splitlines()[-1])


def main():
    print(mode_line())
    print(f"a launcher's first tuned call, 4 configs, {os.cpu_count()} cores (ms; median of {RUNS} processes)")
    figures = {}
    with tempfile.TemporaryDirectory() as folder:
        script = os.path.join(folder, "tuned_series.py")  # a file: the kernel's source is read from it
        with open(script, "w") as f:
            f.write(RUN)
        for how in ("one at a time", "ahead, on threads"):
            figures[how] = statistics.median(first_call_ms(script, how) for _ in range(RUNS))
            print(f"  compiled {how:<20} {figures[how]:8.1f}")
    print(f"  ratio {figures['ahead, on threads'] / figures['one at a time']:.2f}x")


if __name__ == "__main__":
    main()
