"""The edit loop's compile on this machine, no GPU needed: PA decode
(16 seqs, 16/1 heads, head 128, page 16) lowered for sm_90 in compile-only
mode after a helper edit (a `_load_q_fragments` never seen before), as
bench_gpu.py's helper edit does before the driver's PTX compile. Each run is
a fresh process: the first edit after a warm-started launch (the kernels'
source rewritten for the first time in that process), then the median of
later edits (tracing and LLVM); once on one core (the kernels' compiles then
take turns) and once on all of them (each kernel on a thread
of its own). Prints; never fails.

    .venv/bin/python tests/bench/bench_edit_loop.py
"""

import json
import os
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from timing import mode_line  # noqa: E402

EDITS = 7

RUN = r'''
import json, os, statistics, sys, time
sys.path.insert(0, sys.argv[1])
cores = int(sys.argv[2])
os.sched_setaffinity(0, sorted(os.sched_getaffinity(0))[:cores])
import flyrt
import kernels.pa_decode_fp8 as pa
from kernels.pa_reference import make_case

flyrt.set_compile_only("sm_90")
case = make_case(num_seqs=16, num_q_heads=16, num_kv_heads=1, head_size=128, context_length=256)
pa.pa_decode_ps_launch(**case)
run, _ = pa.pa_decode_ps_prepare(**case)
original = pa._load_q_fragments


def edit(factor):
    def changed(query, q_rows, row, q_token, q_head, head_size, scale, factor=factor):
        return original(query, q_rows, row, q_token, q_head, head_size, scale * factor)

    pa._load_q_fragments = changed
    begin = time.perf_counter()
    run.launcher.lower(*run.args, target="cuda")
    return (time.perf_counter() - begin) * 1e3


first = edit(1.5)
later = [edit(2.0 + k) for k in range(int(sys.argv[3]))]
print(json.dumps({"first": first, "later": statistics.median(later)}))
'''


def measure(cores, cache):
    notebooks = str(Path(__file__).resolve().parents[2] / "notebooks")
    env = dict(os.environ, FLYDSL_RUNTIME_ENABLE_CACHE="1", FLYDSL_RUNTIME_CACHE_DIR=cache)
    done = subprocess.run([sys.executable, "-c", RUN, notebooks, str(cores), str(EDITS)], env=env,
                          capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main():
    import tempfile

    print(mode_line())
    cores = len(os.sched_getaffinity(0))
    with tempfile.TemporaryDirectory() as cache:
        measure(cores, cache)  # fills the disk cache: the next runs' first launch is a warm start
        one, every = measure(1, cache), measure(cores, cache)
    print(f"PA decode lowered for sm_90 after a helper edit (ms; a fresh process each; {EDITS} later edits)")
    print(f"{'':38s}{'1 core':>10s}{f'{cores} cores':>10s}{'ratio':>8s}")
    for key, label in (("first", "first edit after a warm start"), ("later", "later edits (median)")):
        print(f"{label:38s}{one[key]:10.1f}{every[key]:10.1f}{every[key] / one[key]:7.2f}x")


if __name__ == "__main__":
    main()
