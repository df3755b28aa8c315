"""What bounds checking costs: every example kernel and PA decode with checks
on (each tensor access checked, the first violation raised with tensor,
index and line: the notebook kernel's default) next to the same kernel
unchecked, in one run. Rounds alternate between the two so that machine
noise hits both alike; the figure is the fastest call of each. Checks the
compiler proves are dropped (ir::value_ranges); on the CPU a block whose
remaining checks all hold runs unchecked (codegen/cpu/bounds_inference).
Where torch sees a GPU, the same for a few kernels there; each GPU call is
timed to its end (a checked launch waits for the kernel's report).

    .venv/bin/python tests/bench/bench_bounds.py
"""

import os
import sys
import time
from pathlib import Path

import numpy as np

os.environ.setdefault("FLYDSL_RUNTIME_ENABLE_CACHE", "0")  # cold compiles: no earlier run's code from disk

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "notebooks"))

import flyrt  # noqa: E402
import kernels.pa_decode_fp8 as pa  # noqa: E402
from kernels.axpy import axpy  # noqa: E402
from kernels.devices import on  # noqa: E402
from kernels.elementwise_2d import scaled_sum  # noqa: E402
from kernels.fp8_dequant import dequantize_scale  # noqa: E402
from kernels.gemm import gemm  # noqa: E402
from kernels.gemm_mma import gemm_mma  # noqa: E402
from kernels.pa_reference import make_case  # noqa: E402
from kernels.rmsnorm import rmsnorm  # noqa: E402
from kernels.row_norms import row_norms  # noqa: E402
from kernels.softmax import softmax  # noqa: E402
from kernels.vector_add import vector_add  # noqa: E402


def cases():
    rng = np.random.default_rng(0)
    n = 1 << 24
    a, b = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    c = np.empty_like(a)
    m = rng.standard_normal((4096, 4096)).astype(np.float32)
    out = np.empty_like(m)
    rows = np.empty(4096, np.float32)
    codes = rng.integers(0, 255, (4096, 4096), dtype=np.uint8)
    g = [rng.standard_normal((512, 512)).astype(np.float32) for _ in range(2)]
    h = [rng.standard_normal((256, 256)).astype(np.float16) for _ in range(2)]
    pa_case = make_case(num_seqs=16, num_q_heads=16, num_kv_heads=1, head_size=128, block_size=16,
                        context_length=4096)
    return [
        ("vector_add 16M", lambda: vector_add(a, b, c, n)),
        ("axpy 16M", lambda: axpy(2.0, a, c, n)),
        ("elementwise_2d 4096x4096", lambda: scaled_sum(m, m, m[0], out)),
        ("row_norms 4096x4096", lambda: row_norms(m, rows)),
        ("softmax 4096x4096", lambda: softmax(m, out)),
        ("rmsnorm 4096x4096", lambda: rmsnorm(m, m[0], out)),
        ("fp8_dequant 4096x4096", lambda: dequantize_scale(codes, np.ones(1, np.float32), out)),
        ("gemm 512^3 f32 (shared tiles)", lambda: gemm(g[0], g[1], np.empty((512, 512), np.float32))),
        ("gemm_mma 256^3 f16 (exact warp MMA)", lambda: gemm_mma(h[0], h[1], np.empty((256, 256), np.float32))),
        ("PA decode (16, 16/1, 128, 16, 4096) fp8", lambda: pa.pa_decode_ps_launch(**pa_case)),
    ]


def gpu_cases():
    import torch

    if not torch.cuda.is_available():
        return []
    rng = np.random.default_rng(0)
    n = 1 << 24
    a, b = (torch.from_numpy(rng.standard_normal(n).astype(np.float32)).cuda() for _ in range(2))
    c = torch.empty_like(a)
    m = torch.from_numpy(rng.standard_normal((4096, 4096)).astype(np.float32)).cuda()
    out = torch.empty_like(m)
    pa_case = on("cuda", make_case(num_seqs=16, num_q_heads=16, num_kv_heads=1, head_size=128, block_size=16,
                                   context_length=4096))

    def synced(call):
        def run():
            call()
            flyrt.synchronize()  # the GPU's work, and a checked launch's report read
        return run
    return [
        ("vector_add 16M", synced(lambda: vector_add(a, b, c, n))),
        ("elementwise_2d 4096x4096", synced(lambda: scaled_sum(m, m, m[0], out))),
        ("softmax 4096x4096", synced(lambda: softmax(m, out))),
        ("PA decode (16, 16/1, 128, 16, 4096) fp8", synced(lambda: pa.pa_decode_ps_launch(**pa_case))),
    ]


def fastest(call, rounds=7):
    """Fastest call of each mode, alternating rounds of unchecked and checked."""
    best = {}
    for _ in range(rounds):
        for checked in (False, True):
            flyrt.set_bounds_checks(checked)
            begin = time.perf_counter()
            call()
            best[checked] = min(best.get(checked, float("inf")), time.perf_counter() - begin)
    return best[False], best[True]


def table(title, rows):
    print(f"{title:<42} {'unchecked ms':>12} {'checked ms':>11} {'cost':>7}")
    for label, call in rows:
        for checked in (False, True):  # compile both first
            flyrt.set_bounds_checks(checked)
            call()
        unchecked, checked = fastest(call)
        print(f"{label:<42} {unchecked * 1e3:>12.2f} {checked * 1e3:>11.2f} {100 * (checked / unchecked - 1):>+6.1f}%")


def main():
    table("kernel (CPU backend)", cases())
    gpu = gpu_cases()
    if gpu:
        print()
        table("kernel (GPU, to the end of the kernel)", gpu)


if __name__ == "__main__":
    main()
