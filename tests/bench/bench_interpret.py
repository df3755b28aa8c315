"""Interpreter mode (FLYDSL_INTERPRET) next to the compiled CPU target, in one
run: seconds per call of each, warm (compiled: after its first compile and
5000 calls, which the CPU launch's cost model settles within, the median of 5
loops of 200 calls; interpreted: after one call, which starts
the worker threads, the median of 3 calls), and the ratio.

    .venv/bin/python tests/bench/bench_interpret.py
"""

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "notebooks"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from timing import mode_line, per_call  # noqa: E402  (and timing's disk-cache setting: cold compiles)
import flyrt  # noqa: E402
import kernels.pa_decode_fp8 as pa  # noqa: E402
from kernels.pa_reference import make_case  # noqa: E402
from kernels.softmax import softmax  # noqa: E402
from kernels.vector_add import vector_add  # noqa: E402


def main():
    print(mode_line())
    rng = np.random.default_rng(0)
    a, b, c = (rng.standard_normal(4096).astype(np.float32) for _ in range(3))
    x = rng.standard_normal((4, 1024)).astype(np.float32)
    out = np.zeros_like(x)
    case = make_case(seed=1, num_seqs=1, context_length=64)
    cases = [
        ("vector add, 4096 elements (16 blocks of 256)", lambda: vector_add(a, b, c, 4096)),
        ("row softmax 4 x 1024 (block reductions: shuffles, barriers)", lambda: softmax(x, out)),
        ("PA decode FP8, 1 seq, 4 q heads, 64 tokens, head 64", lambda: pa.pa_decode_ps_launch(**case)),
    ]
    print(f"{'kernel':62} {'compiled (s)':>13} {'interpreted (s)':>16} {'slowdown':>10}")
    for label, run in cases:
        flyrt.set_interpret(False)
        for _ in range(5000):  # the CPU launch learns what blocks cost (launch/cpu/block_cost) before it settles
            run()
        compiled = per_call(run, calls=200, repeats=5)
        flyrt.set_interpret(True)
        interpreted = per_call(run, calls=1, repeats=3)
        flyrt.set_interpret(None)
        print(f"{label:62} {compiled:13.2e} {interpreted:16.3f} {interpreted / compiled:9.0f}x")


if __name__ == "__main__":
    main()
