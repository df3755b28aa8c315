"""Warm start, side by side in one run: a fresh process's first PA decode
result (16 seqs, 16/1 heads, head 128, context 4096) with the disk cache
off (trace + LLVM), on but tracing first (the object found by its IR, as
before warm starts: the manifests are removed before each such run), and
warm (manifest checked, object loaded, no trace); each against the same
process's second call, which is what preparing the arguments and launching
cost. The same through the kernel: a new kernel (a restart) re-running the
notebook's PA cell, request to reply. And what checking a manifest of 50
dependencies costs.

    .venv/bin/python tests/bench/bench_warm_start.py
"""

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
sys.path.insert(0, str(NOTEBOOKS.parent / "tests"))

from kernel_session import KernelSession  # noqa: E402
from timing import mode_line  # noqa: E402

PA_SETUP = f"""
import sys
sys.path.insert(0, {str(NOTEBOOKS)!r})
import kernels.pa_decode_fp8 as pa
from kernels.pa_reference import make_case
case = make_case(num_seqs=16, num_q_heads=16, num_kv_heads=1, head_size=128, context_length=4096)
"""

FIRST_RESULT = textwrap.dedent("""
    import sys, time
    sys.path.insert(0, sys.argv[1])
    import kernels.pa_decode_fp8 as pa
    from kernels.pa_reference import make_case
    case = make_case(num_seqs=16, num_q_heads=16, num_kv_heads=1, head_size=128, context_length=4096)
    begin = time.perf_counter()
    pa.pa_decode_ps_launch(**case)
    first = time.perf_counter() - begin
    begin = time.perf_counter()
    pa.pa_decode_ps_launch(**case)
    print(first, time.perf_counter() - begin)
""")


def first_result(cache, enabled):
    env = dict(os.environ, FLYDSL_RUNTIME_ENABLE_CACHE=enabled, FLYDSL_RUNTIME_CACHE_DIR=str(cache))
    out = subprocess.run([sys.executable, "-c", FIRST_RESULT, str(NOTEBOOKS)], env=env, capture_output=True,
                         text=True, check=True).stdout.split()
    return float(out[0]), float(out[1])


def kernel_cell(cache, enabled):
    """Seconds from the PA cell's request to its reply in a new kernel."""
    os.environ.update(FLYDSL_RUNTIME_ENABLE_CACHE=enabled, FLYDSL_RUNTIME_CACHE_DIR=str(cache))
    session = KernelSession()
    try:
        assert session.execute(PA_SETUP)[0]["status"] == "ok"
        begin = time.perf_counter()
        assert session.execute("pa.pa_decode_ps_launch(**case);")[0]["status"] == "ok"
        return time.perf_counter() - begin
    finally:
        session.shutdown()


def manifest_check_cost():
    """Seconds to check a manifest of 25 helpers and 25 module constants."""
    from flyrt.invalidation import manifests
    from flyrt.invalidation.dependencies import Recorder

    folder = Path(tempfile.mkdtemp(prefix="bench-warm-"))
    (folder / "fifty_deps.py").write_text("\n".join(
        [f"C{i} = {i}.5" for i in range(25)] + [f"def h{i}(v):\n    return v * C{i}\n" for i in range(25)]))
    sys.path.insert(0, str(folder))
    import fifty_deps

    recorder = Recorder()
    for i in range(25):
        recorder.read(fifty_deps.__dict__, fifty_deps.__dict__, f"C{i}", getattr(fifty_deps, f"C{i}"))
        recorder.function(getattr(fifty_deps, f"h{i}"))
    specs = manifests.describe(recorder)
    assert len(specs) == 50 and manifests.holds(specs)
    rounds = []
    for _ in range(5):
        begin = time.perf_counter()
        for _ in range(200):
            manifests.holds(specs)
        rounds.append((time.perf_counter() - begin) / 200)
    return min(rounds)


def main():
    print(mode_line())
    cache = Path(tempfile.mkdtemp(prefix="bench-warm-cache-"))
    first_result(cache, "1")  # fills the cache
    rows = {"disk cache off (trace + LLVM)": [], "disk cache on, tracing first": [], "warm start (no trace)": []}
    for _ in range(3):  # interleaved
        rows["disk cache off (trace + LLVM)"].append(first_result(cache, "0"))
        shutil.rmtree(cache / "warm", ignore_errors=True)
        rows["disk cache on, tracing first"].append(first_result(cache, "1"))  # writes the manifest again
        rows["warm start (no trace)"].append(first_result(cache, "1"))
    print("fresh process -> first PA decode result (16, 16/1, 128, 16, 4096); median of 3, ms")
    print(f"  {'':<34} {'first call':>11} {'second call':>12} {'first - second':>15}")
    for label, samples in rows.items():
        first = statistics.median(s[0] for s in samples) * 1e3
        second = statistics.median(s[1] for s in samples) * 1e3
        print(f"  {label:<34} {first:>11.1f} {second:>12.1f} {first - second:>15.1f}")
    cells = {"disk cache off": [], "disk cache on, after a restart (warm)": []}
    kernel_cell(cache, "1")  # the manifests and objects a first kernel leaves
    for _ in range(3):
        cells["disk cache off"].append(kernel_cell(cache, "0"))
        cells["disk cache on, after a restart (warm)"].append(kernel_cell(cache, "1"))
    print("\nthrough the kernel: a new kernel re-running the PA cell, request -> reply; median of 3, ms")
    for label, samples in cells.items():
        print(f"  {label:<40} {statistics.median(samples) * 1e3:>8.1f}")
    print(f"\nchecking a manifest of 50 dependencies (25 helpers, 25 constants): {manifest_check_cost() * 1e6:.0f} us")
    shutil.rmtree(cache, ignore_errors=True)


if __name__ == "__main__":
    main()
