"""Where a small PA decode step's GPU time goes: the kernels' own start and
end times (CUPTI, through torch.profiler) in a replayed CUDA graph of
decode steps as tuned (fast mode, e4m3fn, the KV cache cycling past the L2,
as bench_gpu.py pa-quick times them). Prints, per shape, the main kernel's
duration, when the combine kernel starts (launched beside the main kernel's
tail, it waits for its end) and how long after the main kernel it ends,
and the gap to the next step. Nsight Compute runs each kernel alone, caches
flushed; this is the step as a replay runs it.

    python3 tests/bench/gpu/pa_decode_timeline.py
"""

import json
import statistics
import sys
import tempfile
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import bench_gpu  # noqa: E402  (its cases; importing it runs no benchmark)
import kernels.pa_decode_fp8 as pa  # noqa: E402
from timing import bounds_checks  # noqa: E402

SHAPES = [(16, 16, 1, 128, 16, 4096), (1, 16, 1, 128, 16, 32768)]
CALLS = 32  # steps a graph replays


def kernel_spans(graph, replays=3):
    """(start, end, name) in µs of every kernel `replays` replays of `graph` ran, in start order."""
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as profile:
        for _ in range(replays):
            graph.replay()
        torch.cuda.synchronize()
    trace = Path(tempfile.mkdtemp()) / "trace.json"
    profile.export_chrome_trace(str(trace))
    events = json.loads(trace.read_text())["traceEvents"]
    return sorted((e["ts"], e["ts"] + e["dur"], e["name"]) for e in events if e.get("cat") == "kernel")


def main():
    median = statistics.median
    for shape in SHAPES:
        cases, _ = bench_gpu.cycling_cases(shape, "e4m3fn")
        with bounds_checks(False):
            steps = [pa.pa_decode_ps_prepare(**case)[0] for case in cases]
            choice = pa._tuned_decode_step.best_config.describe()
            per_step = bench_gpu.graph_time(steps) * 1e6  # (runs each step once first)
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph):
                for i in range(CALLS):
                    steps[i % len(steps)]()
            graph.replay()
            torch.cuda.synchronize()
            spans = kernel_spans(graph)
        mains = [s for s in spans if "mma_kernel" in s[2]]
        combines = [s for s in spans if "combine" in s[2]]
        n = min(len(mains), len(combines))
        print(f"{shape} e4m3fn, fast mode, {choice}: {per_step:.1f} us a step (graph replay)")
        print(f"  main kernel {median(m[1] - m[0] for m in mains[:n]):.2f} us; the combine kernel starts "
              f"{median(c[0] - m[0] for m, c in zip(mains, combines)):.2f} us after it and ends "
              f"{median(c[1] - m[1] for m, c in zip(mains, combines)):.2f} us after its end; the next step's "
              f"main kernel starts {median(mains[i + 1][0] - combines[i][1] for i in range(n - 1)):.2f} us "
              f"after that; a step every {median(mains[i + 1][0] - mains[i][0] for i in range(n - 1)):.2f} us")


if __name__ == "__main__":
    main()
