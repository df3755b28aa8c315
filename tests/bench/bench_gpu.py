"""flyrt on an NVIDIA GPU beside its peers, in one run (prints; never fails
on time):

- cache-hit launch of a vector add (3 tensors + a scalar), host microseconds
  per call: flyrt, the same PTX through cuLaunchKernel from C++ (the floor),
  Triton, torch.add;
- first compile of that vector add to its first result, each in a fresh
  process: flyrt, Triton (empty cache);
- a helper edit to PA decode's recompiled first result;
- PA decode (FP8 KV cache) GPU time, with CUDA events and the KV cache
  cycling through more memory than the L2, against the device-to-device
  copy bandwidth measured here, and a Triton split-KV kernel.

    python3 tests/bench/bench_gpu.py        (run by scripts/gpu_tests.sh --bench)
"""

import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT / "notebooks"), str(ROOT / "tests" / "bench"), str(ROOT / "tests" / "gpu")]

import kernels.pa_decode_fp8 as pa  # noqa: E402
from cuda_arrays import cuda, host  # noqa: E402
from kernels.pa_reference import check, make_case, pa_decode_reference  # noqa: E402
from kernels.vector_add import vector_add  # noqa: E402

CALLS = 20_000


def host_per_call(fn, calls=CALLS, repeats=5):
    """Median host microseconds per call of fn() back to back (the GPU runs behind)."""
    fn()
    torch.cuda.synchronize()
    samples = []
    for _ in range(repeats):
        begin = time.perf_counter()
        for _ in range(calls):
            fn()
        samples.append((time.perf_counter() - begin) / calls * 1e6)
        torch.cuda.synchronize()
    return statistics.median(samples)


def raw_launch_us(ptx):
    """The C++ peer: cuLaunchKernel of the same PTX, compiled here with g++."""
    work = Path(tempfile.mkdtemp())
    (work / "k.ptx").write_text(ptx)
    cuda_home = os.environ.get("CUDA_HOME", "/usr/local/cuda")
    subprocess.run(["g++", "-O2", "-std=c++17", str(ROOT / "tests/bench/gpu/raw_launch.cpp"), f"-I{cuda_home}/include",
                    "-o", str(work / "raw_launch"), "-lcuda"], check=True)
    out = subprocess.run([str(work / "raw_launch"), str(work / "k.ptx"), "vector_add_kernel", str(CALLS)],
                         check=True, capture_output=True, text=True)
    return float(out.stdout)


TRITON_ADD = """
import triton
import triton.language as tl


@triton.jit
def add_kernel(a, b, c, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(c + i, tl.load(a + i, mask=i < n) + tl.load(b + i, mask=i < n), mask=i < n)


def add(a, b, c, n):
    add_kernel[(triton.cdiv(n, 256),)](a, b, c, n, BLOCK=256)
"""


def launch_overhead():
    n = 16
    a, b, c = (torch.rand(n, device="cuda") for _ in range(3))
    flyrt_us = host_per_call(lambda: vector_add(a, b, c, n))
    lowered = vector_add.lower(a, b, c, n, target="cuda")
    raw_us = raw_launch_us(lowered.device_code["vector_add_kernel"])
    triton_add = _module("triton_add", TRITON_ADD).add
    triton_us = host_per_call(lambda: triton_add(a, b, c, n))
    torch_us = host_per_call(lambda: torch.add(a, b, out=c))
    print("cache-hit launch, vector add of 16 elements (3 tensors + n), host us per call:")
    for name, us in (("flyrt", flyrt_us), ("cuLaunchKernel from C++ (same PTX)", raw_us),
                     ("Triton 3.6", triton_us), ("torch.add", torch_us)):
        print(f"  {name:<36} {us:8.2f} us   flyrt / this: {flyrt_us / us:5.2f}x")
    return flyrt_us, raw_us, triton_us, torch_us


FIRST_CALL = """
import sys, time, torch
sys.path.insert(0, {path!r})
n = 1 << 20
a, b, c = (torch.rand(n, device="cuda") for _ in range(3))
torch.cuda.synchronize()
begin = time.perf_counter()
{body}
torch.cuda.synchronize()
print((time.perf_counter() - begin) * 1e3)
"""


def first_compile():
    """Milliseconds from the launcher's first call to its first result, in a fresh process each."""
    bodies = {
        "flyrt": "from kernels.vector_add import vector_add\nvector_add(a, b, c, n)",
        "Triton 3.6": "import triton_add\ntriton_add.add(a, b, c, n)",
    }
    work = Path(tempfile.mkdtemp())
    (work / "triton_add.py").write_text(TRITON_ADD)
    results = {}
    for name, body in bodies.items():
        samples = []
        for _ in range(3):
            env = dict(os.environ, TRITON_CACHE_DIR=tempfile.mkdtemp(), FLYDSL_RUNTIME_ENABLE_CACHE="0",
                       PYTHONPATH=os.pathsep.join([str(work), str(ROOT / "notebooks"), os.environ.get("PYTHONPATH", "")]))
            script = FIRST_CALL.format(path=str(work), body=body)
            out = subprocess.run([sys.executable, "-c", script], env=env, check=True, capture_output=True, text=True)
            samples.append(float(out.stdout.strip().splitlines()[-1]))
        results[name] = statistics.median(samples)
    print("first call of a new vector add to its first result (fresh process, no disk cache), median of 3:")
    for name, ms in results.items():
        print(f"  {name:<36} {ms:8.1f} ms   flyrt / this: {results['flyrt'] / ms:5.2f}x")
    return results


def copy_bandwidth():
    """Device-to-device copy, bytes read + written per second (1 GiB)."""
    src = torch.empty(1 << 30, dtype=torch.uint8, device="cuda")
    dst = torch.empty_like(src)
    times = cuda_event_times(lambda: dst.copy_(src), repeats=20)
    return 2 * src.numel() / statistics.median(times)


def cuda_event_times(fn, repeats):
    """Seconds of each of `repeats` calls of fn(), between CUDA events (after a warm-up)."""
    fn()
    events = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(repeats)]
    for start, stop in events:
        start.record()
        fn()
        stop.record()
    torch.cuda.synchronize()
    return [start.elapsed_time(stop) / 1e3 for start, stop in events]


PA_SHAPES = [  # (seqs, q heads, kv heads, head, page, context)
    (64, 32, 8, 128, 16, 8192),
    (16, 16, 1, 128, 16, 4096),
    (1, 16, 1, 128, 16, 32768),
]


def pa_decode(copy):
    print(f"\nPA decode, GPU time per call (CUDA events, median of 50; KV cycling through > 60 MB of L2); "
          f"device copy {copy / 1e12:.2f} TB/s:")
    print(f"  {'(seqs, heads q/kv, head, page, ctx), format, scales':<58} {'us':>9} {'KV TB/s':>8} {'% copy':>7}")
    for seqs, q_heads, kv_heads, head, page, context in PA_SHAPES:
        for fmt, per_token in (("e4m3fnuz", False), ("e4m3fn", False), ("e4m3fn", True)):
            case = make_case(num_seqs=seqs, num_q_heads=q_heads, num_kv_heads=kv_heads, head_size=head,
                             block_size=page, context_length=context, fmt=fmt, per_token=per_token, seed=1)
            kv_bytes = 2 * seqs * kv_heads * context * head
            copies = max(1, int(np.ceil(256e6 / kv_bytes)))
            cases = [on_device(case)] + [on_device(case, fresh_caches=True) for _ in range(copies - 1)]
            out = pa.pa_decode_ps_launch(**cases[0])
            if seqs * context <= 16 * 4096:
                assert check(host(out.float()), pa_decode_reference(**case))[0], "PA decode is wrong on the GPU"
            calls = iter(range(1 << 30))
            seconds = statistics.median(cuda_event_times(
                lambda: pa.pa_decode_ps_launch(**cases[next(calls) % copies]), repeats=50))
            label = f"({seqs}, {q_heads}/{kv_heads}, {head}, {page}, {context}), {fmt}, " \
                    f"{'per-token' if per_token else 'per-tensor'}"
            print(f"  {label:<58} {seconds * 1e6:9.1f} {kv_bytes / seconds / 1e12:8.2f} "
                  f"{100 * kv_bytes / seconds / copy:6.1f}%")


def on_device(case, fresh_caches=False):
    moved = {k: cuda(v) if isinstance(v, np.ndarray) else v for k, v in case.items()}
    if fresh_caches:  # other memory with the same contents: no L2 hits across calls
        moved["key_cache"] = moved["key_cache"].clone()
        moved["value_cache"] = moved["value_cache"].clone()
    moved["context_lengths"] = torch.from_numpy(np.asarray(case["context_lengths"], np.int32)).cuda()
    return moved


def helper_edit():
    case = on_device(make_case(num_seqs=16, num_q_heads=16, num_kv_heads=1, head_size=128, context_length=4096))
    pa.pa_decode_ps_launch(**case)
    torch.cuda.synchronize()
    original = pa._normalize
    samples = []
    for factor in (2.0, 3.0, 4.0):  # versions never seen before
        def changed(acc, row, head_size, total, out, slot, q_index, g, factor=factor):
            return original(acc, row, head_size, total / factor, out, slot, q_index, g)

        begin = time.perf_counter()
        pa._normalize = changed
        pa.pa_decode_ps_launch(**case)
        torch.cuda.synchronize()
        samples.append((time.perf_counter() - begin) * 1e3)
    pa._normalize = original
    begin = time.perf_counter()
    pa.pa_decode_ps_launch(**case)
    torch.cuda.synchronize()
    back = (time.perf_counter() - begin) * 1e3
    print(f"\nhelper edit -> PA decode's recompiled first result: median {statistics.median(samples):.0f} ms "
          f"(of {', '.join(f'{s:.0f}' for s in samples)}); back to the original: {back:.1f} ms (reused)")


def _module(name, source):
    path = Path(tempfile.mkdtemp()) / f"{name}.py"
    path.write_text(textwrap.dedent(source))
    sys.path.insert(0, str(path.parent))
    return __import__(name)


def main():
    print(f"{torch.cuda.get_device_name()}, torch {torch.__version__}\n")
    launch_overhead()
    print()
    first_compile()
    helper_edit()
    pa_decode(copy_bandwidth())


if __name__ == "__main__":
    main()
