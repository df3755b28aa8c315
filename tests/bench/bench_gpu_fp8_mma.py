"""The FP8 tensor cores on an NVIDIA GPU against the f16 path, in one run
(prints; never fails on time): the same FP8 A (M x K) and B (K x N),
C = A B in Float32, by kernels/gemm_fp8.py (fx.mma on FP8 fragments: one
mma.sync m16n8k32 per 16 x 8 x 32 for e4m3fn; for e4m3fnuz, which NVIDIA's
FP8 has not, each lane decodes its fragments to Float16 for two m16n8k16)
and by kernels/gemm_mma.py (the bytes converted to Float16 as they are
staged, then mma.sync m16n8k16), the two kernels' tiles and staging
otherwise alike; each with its fragments read by ldmatrix (fx.a_fragment,
fx.b_fragment) and gathered element by element (gather=True); torch's
float32 matmul of the dequantized values checks each first (within 2^-10 of
the magnitudes summed). GPU time by CUDA graph replay over three input pairs
(more than the 60 MB L2 in all), TFLOP/s as 2 M N K.

    python3 tests/bench/bench_gpu_fp8_mma.py     (run by scripts/gpu_tests.sh --bench)
"""

import sys
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT / "notebooks"), str(ROOT / "tests" / "bench")]

from bench_gpu import graph_time  # noqa: E402
from kernels.gemm_fp8 import gemm_fp8  # noqa: E402
from kernels.gemm_mma import gemm_mma  # noqa: E402
from timing import bounds_checks  # noqa: E402

SHAPES = [(4096, 4096, 4096), (8192, 2048, 4096)]  # M, N, K
PAIRS = 3
FORMATS = {"e4m3fn": torch.float8_e4m3fn, "e4m3fnuz": torch.float8_e4m3fnuz}


KERNELS = {"FP8 mma": gemm_fp8, "f16 mma": gemm_mma}


def main():
    print(f"C = A B, FP8 A and B, Float32 C, on {torch.cuda.get_device_name()} (fast mode; GPU ms per call, "
          "CUDA graph replay); each kernel with its fragments read by ldmatrix and gathered element by element")
    print(f"{'format':>8}  {'M x N x K':>18}  {'FP8 mma':>9}  {'gathered':>9}  {'f16 mma':>9}  {'gathered':>9}  "
          f"{'FP8 TFLOP/s':>11}  {'f16 TFLOP/s':>11}  {'FP8 vs f16':>10}  {'ldmatrix FP8':>12}  {'f16':>5}")
    for (m, n, k), fmt in [(shape, fmt) for shape in SHAPES for fmt in FORMATS]:
        pairs = [((torch.randn(m, k, device="cuda") * 2).to(FORMATS[fmt]),
                  (torch.randn(k, n, device="cuda") * 2).to(FORMATS[fmt])) for _ in range(PAIRS)]
        out = torch.empty(m, n, device="cuda")
        times = {}
        with bounds_checks(False):
            for (name, gemm), gather in [(kernel, gather) for kernel in KERNELS.items() for gather in (False, True)]:
                a, b = pairs[0]
                gemm(a, b, out, gather)
                error = (out - a.float() @ b.float()).abs() / (a.float().abs() @ b.float().abs())
                assert float(error.max()) <= 2.0**-10, (name, gather, float(error.max()))
                times[name, gather] = graph_time(
                    [lambda a=a, b=b, g=gemm, gather=gather: g(a, b, out, gather) for a, b in pairs], calls=6)
        flops = 2 * m * n * k
        fp8, f16 = times["FP8 mma", False], times["f16 mma", False]
        print(f"{fmt:>8}  {f'{m} x {n} x {k}':>18}  {fp8 * 1e3:9.2f}  {times['FP8 mma', True] * 1e3:9.2f}  "
              f"{f16 * 1e3:9.2f}  {times['f16 mma', True] * 1e3:9.2f}  {flops / fp8 / 1e12:11.1f}  "
              f"{flops / f16 / 1e12:11.1f}  {f16 / fp8:9.2f}x  {times['FP8 mma', True] / fp8:11.2f}x  "
              f"{times['f16 mma', True] / f16:4.2f}x")


if __name__ == "__main__":
    main()
