"""Async copies on an NVIDIA GPU (prints; never fails on time): y = 2x + 0.5
over 256 MB of Float32 (more than the L2) by kernels/streaming.py, with 2, 3
and 4 cp.async stages a thread and with plain vector loads, on the same grids
(2, 4 and 8 blocks per multiprocessor), as a share of the device's copy
bandwidth (torch's copy_ of 1 GiB, measured in the same run); bytes read
plus written, GPU time by CUDA graph replay; kernels in fast mode (bounds
checks off), as a tuned kernel runs.

    python3 tests/bench/bench_gpu_async_copy.py     (run by scripts/gpu_tests.sh --bench)
"""

import sys
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT / "notebooks"), str(ROOT / "tests" / "bench")]

from bench_gpu import copy_bandwidth, graph_time  # noqa: E402
from timing import bounds_checks  # noqa: E402
from kernels.streaming import scale_shift_plain, scale_shift_staged  # noqa: E402

N = 64 << 20  # Float32: 256 MB each way


def main():
    with bounds_checks(False):
        run_all()


def run_all():
    copy = copy_bandwidth()
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    x = torch.randn(N, device="cuda")
    ys = [torch.empty_like(x) for _ in range(4)]
    expected = x * 2.0 + 0.5
    moved = 2 * N * 4
    print(f"y = 2x + 0.5 over {N >> 20}M Float32 on {torch.cuda.get_device_name()}; copy bandwidth "
          f"{copy / 1e9:.0f} GB/s; GPU us per call (CUDA graph replay) and % of copy bandwidth")
    print(f"{'blocks/SM':>9}  {'plain':>14}  " + "  ".join(f"{f'{s} stages':>14}" for s in (2, 3, 4)))
    for per_sm in (2, 4, 8):
        blocks = sms * per_sm
        runs = [lambda: scale_shift_plain(x, ys[0], N, 2.0, 0.5, blocks)]
        runs += [lambda s=s: scale_shift_staged(x, ys[s - 1], N, 2.0, 0.5, blocks, s) for s in (2, 3, 4)]
        cells = []
        for run, y in zip(runs, ys):
            seconds = graph_time([run], calls=16)
            assert torch.equal(y, expected), "a result is wrong"
            cells.append(f"{seconds * 1e6:6.1f} us {100 * moved / seconds / copy:3.0f}%")
        print(f"{per_sm:>9}  " + "  ".join(f"{c:>14}" for c in cells))


if __name__ == "__main__":
    main()
