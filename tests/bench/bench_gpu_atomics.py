"""Atomics on an NVIDIA GPU beside torch's, in one run (prints; never fails
on time): the same histogram of 32M Int32 values (128 MB, more than the L2),
flyrt's (kernels/histogram.py: per-block shared-memory counts, then global
atomics) against torch's index_add_ and scatter_add_ into the same counts,
each zeroing the counts first; GPU time by CUDA graph replay, and the values'
bandwidth against the device's copy bandwidth measured here. torch's
index_add_ and scatter_add_ also read a tensor of ones (their API has no
constant source): the GB/s column counts the values alone for every row.

    python3 tests/bench/bench_gpu_atomics.py     (run by scripts/gpu_tests.sh --bench)
"""

import sys
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT / "notebooks"), str(ROOT / "tests" / "bench")]

from bench_gpu import copy_bandwidth, graph_time  # noqa: E402
from kernels.histogram import histogram  # noqa: E402

N = 32 << 20
BLOCKS = 132 * 8  # eight blocks per multiprocessor of an H200


def main():
    copy = copy_bandwidth()
    print(f"histogram of {N >> 20}M Int32 values on {torch.cuda.get_device_name()}; copy bandwidth "
          f"{copy / 1e9:.0f} GB/s (GPU us per call, CUDA graph replay)")
    print(f"{'bins':>6}  {'flyrt':>8}  {'index_add_':>10}  {'scatter_add_':>12}  {'flyrt GB/s':>10}  "
          f"{'vs index_add_':>13}  {'vs scatter_add_':>15}")
    for bins in (256, 4096):
        values = torch.randint(0, bins, (N,), device="cuda", dtype=torch.int32)
        as_long = values.long()
        ones = torch.ones(N, device="cuda", dtype=torch.int32)
        counts = [torch.zeros(bins, device="cuda", dtype=torch.int32) for _ in range(3)]
        expected = torch.bincount(values, minlength=bins).int()

        def ours():
            counts[0].zero_()
            histogram(values, counts[0], N, BLOCKS, bins)

        def index_add():
            counts[1].zero_()
            counts[1].index_add_(0, values, ones)

        def scatter_add():
            counts[2].zero_()
            counts[2].scatter_add_(0, as_long, ones)

        times = [graph_time([run], calls=16) for run in (ours, index_add, scatter_add)]
        for c in counts:
            assert torch.equal(c, expected), "a histogram is wrong"
        gbps = N * 4 / times[0] / 1e9
        print(f"{bins:>6}  {times[0] * 1e6:>8.1f}  {times[1] * 1e6:>10.1f}  {times[2] * 1e6:>12.1f}  "
              f"{gbps:>10.0f}  {times[1] / times[0]:>12.2f}x  {times[2] / times[0]:>14.2f}x")


if __name__ == "__main__":
    main()
