"""PA decode as tuned, for Nsight Compute: the tuner runs outside the
profiled range, then a few decode steps inside it (cudaProfilerStart/Stop),
so that `ncu --profile-from-start off` sees the chosen kernels only. Prints
the tuner's choice.

    ncu --profile-from-start off --clock-control none -k regex:pa_ \\
        python3 tests/bench/gpu/pa_decode_profile.py SEQS Q_HEADS KV_HEADS CONTEXT FORMAT

Tune it first in a run without the profiler, both runs sharing a disk cache
(FLYDSL_RUNTIME_ENABLE_CACHE=1, FLYDSL_RUNTIME_CACHE_DIR): under ncu the tuner
times its choices through the profiler's interception of every launch and
picks another. scripts/gpu_quick.sh does so for the benchmark's small shape."""

import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import bench_gpu  # noqa: E402  (its cases; importing it runs no benchmark, turns flyrt's disk cache off)
import flyrt.compiler as flyc  # noqa: E402
import kernels.pa_decode_fp8 as pa  # noqa: E402
from timing import bounds_checks  # noqa: E402

STEPS = 3


def main():
    seqs, q_heads, kv_heads, context = (int(a) for a in sys.argv[1:5])
    fmt = sys.argv[5]
    case = bench_gpu.device_case(seqs, q_heads, kv_heads, 128, 16, context, fmt, False, seed=0)
    with bounds_checks(False):
        step, _ = pa.pa_decode_ps_prepare(**case)  # tuned here, outside the profiled range
        step()
        torch.cuda.synchronize()
        source = [r.source for r in flyc.compile_log() if r.launcher.startswith("autotuned")][-1]
        kept = pa._tuned_decode_step.not_persisted
        print(f"PA decode ({seqs}, {q_heads}/{kv_heads}, 128, 16, {context}) {fmt}: {source} "
              f"{pa._tuned_decode_step.best_config.describe()}{f' (not on disk: {kept})' if kept else ''}",
              flush=True)
        torch.cuda.profiler.start()
        for _ in range(STEPS):
            step()
        torch.cuda.synchronize()
        torch.cuda.profiler.stop()


if __name__ == "__main__":
    main()
