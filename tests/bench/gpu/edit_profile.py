"""Where a helper edit's first result spends its time: PA decode (16 seqs,
16/1 heads, head 128, page 16, 4k context, pages per work item given) after
a `_load_q_fragments` never seen before, split into the launcher's trace,
the IR's verification, its compile (LLVM and, where on, the PTX assembled
in-process), the artifact's load (the driver's module load), and the rest
(preparing the step, the launch, waiting for the GPU); then the slowest
Python-level calls of one edit, by cProfile. On a machine without a GPU,
compile-only for sm_90 (no load, no launch). Prints; never fails.

    python3 tests/bench/gpu/edit_profile.py [EDITS]
"""

import cProfile
import io
import pstats
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import bench_gpu  # noqa: E402  (its cases, torch, flyrt's disk cache off)
import kernels.pa_decode_fp8 as pa  # noqa: E402
from flyrt import _core  # noqa: E402
from flyrt.runtime import launcher as launcher_module  # noqa: E402
from kernels.pa_reference import make_case  # noqa: E402

PHASES = ("trace", "verify", "compile", "load")
spent = dict.fromkeys(PHASES, 0.0)


def timed(phase, function):
    def wrapper(*args, **kwargs):
        begin = time.perf_counter()
        try:
            return function(*args, **kwargs)
        finally:
            spent[phase] += time.perf_counter() - begin
    return wrapper


def main():
    edits = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    torch = bench_gpu.torch
    on_gpu = torch.cuda.is_available()
    case = make_case(num_seqs=16, num_q_heads=16, num_kv_heads=1, head_size=128, context_length=4096)
    if on_gpu:
        case = bench_gpu.on("cuda", case)
    else:
        import flyrt
        flyrt.set_compile_only("sm_90")

    def first_result():
        pa.pa_decode_ps_launch(**case, pages_per_work=8)
        if on_gpu:
            torch.cuda.synchronize()

    first_result()
    launcher_module.JitFunction._trace = timed("trace", launcher_module.JitFunction._trace)
    _core.Module.verify = timed("verify", _core.Module.verify)
    _core.Module.compile = timed("compile", _core.Module.compile)
    _core.load_artifact = timed("load", _core.load_artifact)
    original = pa._load_q_fragments

    def edit(factor):
        def changed(*args, factor=factor):  # the scale, the helper's last argument, times a new factor
            return original(*args[:-1], args[-1] * factor)
        pa._load_q_fragments = changed

    rows = []
    for k in range(edits):
        edit(1000.0 + k)
        spent.update(dict.fromkeys(PHASES, 0.0))
        begin = time.perf_counter()
        first_result()
        total = time.perf_counter() - begin
        # (_trace verifies what it traced)
        rest = total - spent["trace"] - spent["compile"] - spent["load"]
        rows.append({**spent, "trace": spent["trace"] - spent["verify"], "rest": rest, "total": total})
    print(f"{torch.cuda.get_device_name() if on_gpu else 'compile-only, sm_90'}: a helper edit to PA decode's "
          f"first result, ms (rest: preparing the step, the launch, waiting for the GPU)")
    columns = (*PHASES, "rest", "total")
    print("".join(f"{c:>10s}" for c in ("edit", *columns)))
    for k, row in enumerate(rows):
        print(f"{k:>10d}" + "".join(f"{row[c] * 1e3:10.1f}" for c in columns))
    print(f"{'median':>10s}" + "".join(f"{statistics.median(r[c] for r in rows) * 1e3:10.1f}" for c in columns))

    edit(2000.0)
    profile = cProfile.Profile()
    profile.enable()
    first_result()
    profile.disable()
    for order in ("tottime", "cumulative"):
        text = io.StringIO()
        pstats.Stats(profile, stream=text).sort_stats(order).print_stats(25)
        print(f"\none edit under cProfile, by {order}:")
        print("\n".join(text.getvalue().splitlines()[4:]))
    pa._load_q_fragments = original


if __name__ == "__main__":
    main()
