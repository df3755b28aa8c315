"""The edit loop's compile on this machine, no GPU needed: PA decode
(16 seqs, 16/1 heads, head 128, page 16) compiled for sm_90 in compile-only
mode after a helper edit (a `_load_q_fragments` never seen before), as a
notebook's re-run cell compiles it: the launcher traced again, its IR
verified, LLVM run for the kernels whose IR changed (a kernel that does not
inline the helper, the combine kernel, is reused from this process's
compiles, or from the payload its warm start loaded), then NVIDIA's assembler on the PTX the edit changed, as the GPU
machine's nvJitLink does in-process (ptxas here: the pinned
nvidia-cuda-nvcc-cu12's; an unchanged kernel keeps the cubin nvJitLink
made of its PTX).
The driver's load is the one step left out. A fresh process: the first edit
after a warm-started launch, then the median of later edits. Prints; never
fails.

    .venv/bin/python tests/bench/bench_edit_loop.py
"""

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from timing import mode_line  # noqa: E402

EDITS = 7

RUN = r'''
import json, statistics, subprocess, sys, tempfile, time
sys.path[:0] = sys.argv[1:3]
import flyrt
from flyrt import _core
import kernels.pa_decode_fp8 as pa
from kernels.pa_reference import make_case
import ptxas

spent = {"verify": 0.0, "llvm": 0.0}
seen_ptx = set()
new_ptx = []


def timed(name, method, after=None):
    def wrapper(self, *args, **kwargs):
        begin = time.perf_counter()
        out = method(self, *args, **kwargs)
        spent[name] += time.perf_counter() - begin
        if after is not None:
            after(out)
        return out
    return wrapper


def keep_new_ptx(out):
    for _, ptx in _core.device_images(out[0]):
        if ptx not in seen_ptx:
            seen_ptx.add(ptx)
            new_ptx.append(ptx)


_core.Module.verify = timed("verify", _core.Module.verify)
_core.Module.compile = timed("llvm", _core.Module.compile, keep_new_ptx)

flyrt.set_compile_only("sm_90")
case = make_case(num_seqs=16, num_q_heads=16, num_kv_heads=1, head_size=128, context_length=256)
pa.pa_decode_ps_launch(**case)
run, _ = pa.pa_decode_ps_prepare(**case)
seen_ptx.update(run.launcher.device_code().values())  # the warm start's PTX: not new to this process
original = pa._load_q_fragments


def assemble(ptx):
    with tempfile.TemporaryDirectory() as work:
        source = f"{work}/k.ptx"
        with open(source, "w") as f:
            f.write(ptx)
        begin = time.perf_counter()
        subprocess.run([ptxas.find(), f"-arch={ptxas.ARCH}", source, "-o", f"{work}/k.cubin"], check=True)
        return time.perf_counter() - begin


def edit(factor):
    def changed(*args, factor=factor):  # the scale, the helper's last argument, times a new factor
        return original(*args[:-1], args[-1] * factor)

    pa._load_q_fragments = changed
    spent.update(verify=0.0, llvm=0.0)
    new_ptx.clear()
    compiled_before = _core.compiled_part_counts()[0]
    begin = time.perf_counter()
    run.launcher.warmup(*run.args)
    total = time.perf_counter() - begin
    ptxas_s = sum(assemble(ptx) for ptx in new_ptx)
    ms = {"trace": total - spent["verify"] - spent["llvm"], "verify": spent["verify"], "llvm": spent["llvm"],
          "ptxas": ptxas_s, "total": total + ptxas_s}
    return {k: v * 1e3 for k, v in ms.items()} | {"kernels": _core.compiled_part_counts()[0] - compiled_before,
                                                  "ptx_lines": sum(p.count("\n") for p in new_ptx)}


base = float(sys.argv[4])  # factors no earlier run used: no edit's object is in the disk cache
first = edit(base)
later = [edit(base + 1 + k) for k in range(int(sys.argv[3]))]
print(json.dumps({"first": first, "later": {k: statistics.median(e[k] for e in later) for k in first}}))
'''


def measure(cache, base):
    here = Path(__file__).resolve()
    paths = [str(here.parents[2] / "notebooks"), str(here.parents[1] / "runtime")]
    env = dict(os.environ, FLYDSL_RUNTIME_ENABLE_CACHE="1", FLYDSL_RUNTIME_CACHE_DIR=cache)
    done = subprocess.run([sys.executable, "-c", RUN, *paths, str(EDITS), str(base)], env=env, capture_output=True,
                          text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main():
    print(mode_line())
    with tempfile.TemporaryDirectory() as cache:
        measure(cache, 100)  # fills the disk cache: the next run's first launch is a warm start
        result = measure(cache, 200)
    print(f"PA decode compiled for sm_90 after a helper edit (ms; a fresh process; median of {EDITS} later edits)")
    columns = ("trace", "verify", "llvm", "ptxas", "total")
    print(f"{'':32s}" + "".join(f"{c:>9s}" for c in columns) + f"{'kernels':>9s}{'PTX lines':>11s}")
    for key, label in (("first", "first edit after a warm start"), ("later", "later edits (median)")):
        row = result[key]
        print(f"{label:32s}" + "".join(f"{row[c]:9.1f}" for c in columns) +
              f"{row['kernels']:9.0f}{row['ptx_lines']:11.0f}")
    print("trace: tracing the launcher and its kernels, and the rest of the call; llvm: LLVM, for the kernels whose "
          "IR changed (kernels: how many); ptxas: their PTX assembled for sm_90 (the GPU's nvJitLink does this "
          "in-process; the driver's load is not counted)")


if __name__ == "__main__":
    main()
