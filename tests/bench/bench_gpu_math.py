"""The math functions on an NVIDIA GPU beside torch's, in one run (prints;
never fails on time or accuracy; tests/gpu/test_cuda_ops.py asserts the
bounds):

- accuracy: the largest error in ulps over each function's test range
  (tests/runtime/test_math.py's inputs and exact references), flyrt on the
  CPU, flyrt on the GPU, and torch's same function on the same GPU values;
- speed: GELU (the erf form) and SiLU over 32M Float32 values (128 MB in,
  128 MB out; two inputs alternate, so the data cycles through more than
  the L2), kernels/activations.py against torch.nn.functional's, GPU time
  by CUDA graph replay, bytes read + written per second.

    python3 tests/bench/bench_gpu_math.py     (run by scripts/gpu_tests.sh --bench)
"""

import sys
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT / "notebooks"), str(ROOT / "tests" / "bench"), str(ROOT / "tests" / "runtime")]

import flyrt.expr as fx  # noqa: E402
import test_math as cpu_math  # noqa: E402
from bench_gpu import copy_bandwidth, graph_time  # noqa: E402
from timing import bounds_checks  # noqa: E402
from kernels.activations import activation, gelu, silu  # noqa: E402
from kernels_for_tests import binary, unary  # noqa: E402

N = 32 << 20
TORCH = {"sin": torch.sin, "cos": torch.cos, "tanh": torch.tanh, "erf": torch.erf, "pow": torch.pow,
         "sigmoid": torch.sigmoid}


def flyrt_on(device, name, arguments):
    tensors = [torch.from_numpy(a).to(device) for a in arguments]
    out = torch.zeros_like(tensors[0])
    function = getattr(fx, name)
    if len(tensors) == 2:
        binary(*tensors, out, out.numel(), function)
    else:
        unary(tensors[0], out, out.numel(), function)
    return out.cpu().numpy()


def accuracy():
    print("largest error in ulps over the test ranges (tests/runtime/test_math.py)")
    print(f"{'function':>9} {'dtype':>8}  {'flyrt CPU':>9}  {'flyrt GPU':>9}  {'torch GPU':>9}")
    for dtype in (np.float32, np.float64):
        for name in sorted(cpu_math.CPU_ULPS):
            arguments, exact = cpu_math.inputs(name, dtype)
            cpu = cpu_math.ulp_error(flyrt_on("cpu", name, arguments), exact, dtype)
            gpu = cpu_math.ulp_error(flyrt_on("cuda", name, arguments), exact, dtype)
            peer = TORCH[name](*(torch.from_numpy(a).cuda() for a in arguments)).cpu().numpy()
            print(f"{name:>9} {dtype.__name__:>8}  {cpu:9.2f}  {gpu:9.2f}  {cpu_math.ulp_error(peer, exact, dtype):9.2f}")


def speed():
    copy = copy_bandwidth()
    inputs = [torch.randn(N, device="cuda") * 4 for _ in range(2)]
    out = torch.empty_like(inputs[0])
    print(f"\n{N >> 20}M Float32 values in and out on {torch.cuda.get_device_name()} (copy bandwidth "
          f"{copy / 1e9:.0f} GB/s; GPU us per call, CUDA graph replay)")
    print(f"{'activation':>10}  {'run':<22}  {'us':>8}  {'GB/s':>6}  {'vs torch':>8}")
    moved = 8 * N
    for label, f, peer in (("gelu", gelu, torch.nn.functional.gelu), ("silu", silu, torch.nn.functional.silu)):
        activation(inputs[0], out, f)
        torch.testing.assert_close(out, peer(inputs[0]), rtol=1e-5, atol=1e-6)
        theirs = graph_time([lambda x=x: peer(x) for x in inputs])
        rows = [("torch.nn.functional", theirs)]
        for checks in (True, False):
            with bounds_checks(checks):
                ours = graph_time([lambda x=x: activation(x, out, f) for x in inputs])
            rows.append(("flyrt, checks on" if checks else "flyrt, fast mode", ours))
        for name, seconds in rows:
            print(f"{label:>10}  {name:<22}  {seconds * 1e6:8.1f}  {moved / seconds / 1e9:6.0f}  {theirs / seconds:7.2f}x")


if __name__ == "__main__":
    accuracy()
    speed()
