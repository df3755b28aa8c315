"""flyrt's AMD target beside the real FlyDSL (PyPI 0.4.2), both compile-only
for gfx942 on this machine: the same vector add and block sum (256 threads,
wave-shuffle sums, one LDS slot per wave), each compiled in a fresh process
(disk caches off, so every compile is cold: LLVM's target set-up included,
the Python imports not), and the two code objects' metadata and instruction
mix from llvm-readelf / llvm-objdump. Run: .venv/bin/python
tests/bench/bench_amdgpu_vs_flydsl.py (prints; never fails)."""

import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path[:0] = [str(Path(__file__).resolve().parents[1] / "runtime"), str(Path(__file__).resolve().parent)]
import code_objects  # noqa: E402
from timing import mode_line  # noqa: E402

RUNS = 3

FLYRT = r'''
import json, sys, time, numpy as np
import flyrt.compiler as flyc, flyrt.expr as fx
from timing import mode_line  # noqa: E402
BLOCK = 256

@flyc.kernel
def vadd_kernel(a: fx.Tensor, b: fx.Tensor, c: fx.Tensor, n: fx.Int32):
    i = fx.block_idx.x * BLOCK + fx.thread_idx.x
    if i < n:
        c[i] = a[i] + b[i]

@flyc.jit
def vadd(a: fx.Tensor, b: fx.Tensor, c: fx.Tensor, n: fx.Int32):
    vadd_kernel(a, b, c, n).launch(grid=((n + BLOCK - 1) // BLOCK,), block=(BLOCK,))

@flyc.kernel
def reduce_kernel(x: fx.Tensor, out: fx.Tensor, n: fx.Int32):
    t = fx.thread_idx.x
    i = fx.block_idx.x * BLOCK + t
    v = fx.Float32(0.0)
    if i < n:
        v = x[i]
    v = fx.warp_reduce(v, "add", 64)
    part = fx.shared(BLOCK // 64, fx.Float32)
    if t % 64 == 0:
        part[t // 64] = v
    fx.barrier()
    if t == 0:
        out[fx.block_idx.x] = part[0] + part[1] + part[2] + part[3]

@flyc.jit
def reduce(x: fx.Tensor, out: fx.Tensor, n: fx.Int32):
    reduce_kernel(x, out, n).launch(grid=((n + BLOCK - 1) // BLOCK,), block=(BLOCK,))

n = 1 << 20
x = np.ones(n, np.float32)
which = sys.argv[1]
start = time.perf_counter()
if which == "vadd":
    lowered = vadd.lower(x, x, x.copy(), n, target="hip", arch="gfx942")
else:
    lowered = reduce.lower(x, np.zeros(n // BLOCK, np.float32), n, target="hip", arch="gfx942")
seconds = time.perf_counter() - start
(name, code), = lowered.device_code.items()
open(sys.argv[2], "wb").write(code)
print(json.dumps({"seconds": seconds, "kernel": name}))
'''

FLYDSL = r'''
import json, os, sys, time
from flyrt.flydsl_adapter import toolchain
toolchain.use_compile_only("gfx942")
import torch
import flydsl.compiler as flyc
import flydsl.expr as fx
from flydsl.expr import gpu, range_constexpr
from flydsl._mlir import ir
from flydsl._mlir.dialects import gpu as gpu_d
from flydsl.compiler.jit_function import _create_mlir_context
BLOCK, WAVE = 256, 64

@flyc.kernel
def vadd_kernel(A: fx.Tensor, B: fx.Tensor, C: fx.Tensor, n: fx.Int32):
    i = fx.block_idx.x * BLOCK + fx.thread_idx.x
    if i < n:
        C[i] = A[i] + B[i]

@flyc.jit
def vadd(A: fx.Tensor, B: fx.Tensor, C: fx.Tensor, n: fx.Int32, stream: fx.Stream = fx.Stream(None)):
    vadd_kernel(A, B, C, n).launch(grid=((n + BLOCK - 1) // BLOCK, 1, 1), block=(BLOCK, 1, 1), stream=stream)

@fx.struct
class Parts:
    part: fx.Array[fx.Float32, BLOCK // WAVE, 16]

@flyc.kernel
def reduce_kernel(X: fx.Tensor, Out: fx.Tensor, n: fx.Int32):
    t = fx.thread_idx.x
    b = fx.block_idx.x
    s = fx.SharedAllocator().allocate(Parts).peek().part.view(fx.make_layout(BLOCK // WAVE, 1))
    i = b * BLOCK + t
    ok = i < n
    v = ok.select(X[ok.select(i, 0)], 0.0)
    for k in range_constexpr(5, -1, -1):
        v = v + gpu.shuffle_xor(v, 1 << k, WAVE)
    if t % WAVE == 0:
        s[t // WAVE] = v
    gpu.barrier()
    if t == 0:
        Out[b] = s[0] + s[1] + s[2] + s[3]

@flyc.jit
def reduce(X: fx.Tensor, Out: fx.Tensor, n: fx.Int32, stream: fx.Stream = fx.Stream(None)):
    reduce_kernel(X, Out, n).launch(grid=((n + BLOCK - 1) // BLOCK, 1, 1), block=(BLOCK, 1, 1), stream=stream)

n = 1 << 20
x = torch.ones(n)
which = sys.argv[1]
start = time.perf_counter()
if which == "vadd":
    fn = vadd; vadd(x, x, torch.empty(n), n)
else:
    fn = reduce; reduce(x, torch.empty(n // BLOCK), n)
seconds = time.perf_counter() - start
artifact = next(iter(fn._mem_cache.values()))  # its final MLIR holds the code object (gpu.binary)
with _create_mlir_context():
    for op in ir.Module.parse(artifact.ir).body.operations:
        if op.operation.name == "gpu.binary":
            code = bytes(gpu_d.ObjectAttr(ir.ArrayAttr(op.attributes["objects"])[0]).object)
open(sys.argv[2], "wb").write(code)
print(json.dumps({"seconds": seconds, "kernel": which + "_kernel_0"}))
'''


def measure(source, which, work):
    script = os.path.join(work, f"side_{abs(hash(source))}.py")  # the tracers read the kernels' source
    with open(script, "w") as f:
        f.write(source)
    times, result = [], None
    for _ in range(RUNS):
        path = os.path.join(work, f"{which}.hsaco")
        env = dict(os.environ, FLYDSL_RUNTIME_ENABLE_CACHE="0", FLYDSL_RUNTIME_CACHE_DIR=work)
        done = subprocess.run([sys.executable, script, which, path], capture_output=True, text=True, env=env)
        if done.returncode != 0:
            raise SystemExit(done.stderr[-2000:])
        result = json.loads(done.stdout.strip().splitlines()[-1])
        times.append(result["seconds"])
        code = open(path, "rb").read()
    return statistics.median(times), result["kernel"], code


def describe(code, kernel):
    notes = code_objects.kernel_notes(code, kernel)
    lines = [line for line in code_objects.disassembly(code).splitlines() if line.startswith("\t")]
    mnemonics = [line.split()[0] for line in lines]
    memory = sum(m.startswith(("global_", "buffer_")) for m in mnemonics)
    lds = sum(m.startswith("ds_") for m in mnemonics)
    return (notes[".sgpr_count"], notes[".vgpr_count"], notes[".group_segment_fixed_size"],
            notes[".kernarg_segment_size"], len(mnemonics), memory, lds)


def main():
    print(mode_line())
    print(f"gfx942, compile-only, median of {RUNS} fresh processes each; code objects read by llvm-readelf/objdump")
    print(f"{'kernel':8} {'who':7} {'compile ms':>10} {'ratio':>6} {'SGPR':>5} {'VGPR':>5} {'LDS B':>6} "
          f"{'kernarg B':>9} {'instrs':>6} {'global':>6} {'ds_*':>5}")
    with tempfile.TemporaryDirectory() as work:
        for which in ("vadd", "reduce"):
            ours = measure(FLYRT, which, work)
            theirs = measure(FLYDSL, which, work)
            for who, (seconds, kernel, code) in (("flyrt", ours), ("FlyDSL", theirs)):
                row = describe(code, kernel)
                ratio = seconds / theirs[0]
                print(f"{which:8} {who:7} {seconds * 1e3:10.1f} {ratio:6.2f} " + " ".join(
                    f"{v:>{w}}" for v, w in zip(row, (5, 5, 6, 9, 6, 6, 5))))


if __name__ == "__main__":
    main()
