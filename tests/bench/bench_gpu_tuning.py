"""flyrt.testing.do_bench beside triton.testing.do_bench, in one run, on the
same kernels (prints; never fails on time): a flyrt vector add and Triton's,
each large (768 MB of traffic, far past the 60 MB L2) and small (12 MB, where
the L2 flush between calls decides what is measured). Both flush the L2
before each call and time by CUDA events; each figure is the median of five
alternating rounds of the tool's own median.

    python3 tests/bench/bench_gpu_tuning.py      (run by scripts/gpu_tests.sh --bench)
"""

import statistics
import sys
from pathlib import Path

import torch
import triton.testing

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT / "notebooks"), str(ROOT / "tests" / "bench")]

import flyrt.testing  # noqa: E402
from bench_gpu import TRITON_ADD, _module  # noqa: E402
from kernels.vector_add import vector_add  # noqa: E402
from timing import bounds_checks, mode_line  # noqa: E402


def main():
    with bounds_checks(False):
        print(mode_line())
        print("do_bench medians (ms per call), CUDA events, L2 flushed before each call:")
        print(f"  {'kernel':<34} {'flyrt.testing':>14} {'triton.testing':>15} {'ratio':>7} {'GB/s (flyrt)':>13}")
        triton_add = _module("triton_add", TRITON_ADD).add
        for n in (64 << 20, 1 << 20):
            a, b, c = (torch.rand(n, device="cuda") for _ in range(3))
            for name, fn in ((f"flyrt vector add, {n >> 20}M floats", lambda: vector_add(a, b, c, n)),
                             (f"Triton vector add, {n >> 20}M floats", lambda: triton_add(a, b, c, n))):
                ours, theirs = [], []
                for _ in range(5):
                    ours.append(flyrt.testing.do_bench(fn, device="gpu", return_mode="median"))
                    theirs.append(triton.testing.do_bench(fn, return_mode="median"))
                mine, peer = statistics.median(ours), statistics.median(theirs)
                print(f"  {name:<34} {mine:14.4f} {peer:15.4f} {mine / peer:7.3f} {12 * n / mine / 1e6:13.0f}")


if __name__ == "__main__":
    torch.cuda.init()
    main()
