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
    python3 tests/bench/bench_gpu.py pa     PA decode alone (make main on a GPU)
    python3 tests/bench/bench_gpu.py pa-coverage   the shapes the matrix-unit kernel
                                            took over from the SIMT one (pages of 64,
                                            head 256, 32 query rows a kv head)
    python3 tests/bench/bench_gpu.py pa-versus FILE...   this tree's PA decode against
                                            other versions of its file (git show)
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

os.environ.setdefault("FLYDSL_RUNTIME_ENABLE_CACHE", "0")  # cold compiles: no earlier run's code from disk


# The driver keeps compiled PTX on disk: a first compile or an edit's
# recompile must not find code an earlier run compiled (flyrt hands the
# driver PTX; Triton hands it a cubin). Set before CUDA starts; inherited by
# the fresh processes and the kernel the benchmarks start.
os.environ["CUDA_CACHE_DISABLE"] = "1"
ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT / "notebooks"), str(ROOT / "tests" / "bench"), str(ROOT / "tests" / "bench" / "gpu"),
                str(ROOT / "tests" / "gpu")]

import flyrt  # noqa: E402
import flyrt.compiler as flyc  # noqa: E402
import flyrt.expr as fx  # noqa: E402
import kernels.pa_decode_fp8 as pa  # noqa: E402
from cuda_arrays import host  # noqa: E402
from kernels.devices import on  # noqa: E402
from kernels.pa_reference import check, make_case  # noqa: E402
from kernels.vector_add import vector_add  # noqa: E402
from torch_paged_kv import paged_kv  # noqa: E402
from timing import bounds_checks, mode_line  # noqa: E402

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


@flyc.kernel
def _nothing(n: fx.Int32):
    pass


@flyc.jit(target="cuda")
def fill_kernel_only(n: fx.Int32):
    _nothing(n).launch(block=(256,))


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
    with bounds_checks(False):
        fast_us = host_per_call(lambda: vector_add(a, b, c, n))
    stream = torch.cuda.current_stream().cuda_stream
    explicit_us = host_per_call(lambda: vector_add(a, b, c, n, stream))
    no_tensors_us = host_per_call(lambda: fill_kernel_only(n))
    raw_stream_us = host_per_call(lambda: torch._C._cuda_getCurrentRawStream(0), calls=200_000)
    lowered = vector_add.lower(a, b, c, n, target="cuda")
    raw_us = raw_launch_us(lowered.device_code["vector_add_kernel"])
    triton_add = _module("triton_add", TRITON_ADD).add
    triton_us = host_per_call(lambda: triton_add(a, b, c, n))
    torch_us = host_per_call(lambda: torch.add(a, b, out=c))
    print("cache-hit launch, vector add of 16 elements (3 tensors + n), host us per call:")
    for name, us in (("flyrt", flyrt_us), ("flyrt, fast mode (checks off)", fast_us),
                     ("flyrt, stream passed as an int", explicit_us),
                     ("flyrt, a launcher of no tensors", no_tensors_us),
                     ("(torch's current stream, from Python)", raw_stream_us),
                     ("cuLaunchKernel from C++ (same PTX)", raw_us),
                     ("Triton 3.6", triton_us), ("torch.add", torch_us)):
        print(f"  {name:<36} {us:8.2f} us   flyrt / this: {flyrt_us / us:5.2f}x")
    return flyrt_us, raw_us, triton_us, torch_us


FIRST_CALL = """
import sys, time, torch
import {library}
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
    bodies = {  # (library imported before the clock starts, the first call)
        "flyrt": ("flyrt.compiler", "from kernels.vector_add import vector_add\nvector_add(a, b, c, n)"),
        "Triton 3.6": ("triton", "import triton_add\ntriton_add.add(a, b, c, n)"),
    }
    work = Path(tempfile.mkdtemp())
    (work / "triton_add.py").write_text(TRITON_ADD)
    results = {}
    for name, (library, body) in bodies.items():
        samples = []
        for _ in range(3):
            path = os.pathsep.join([str(work), str(ROOT / "notebooks"), os.environ.get("PYTHONPATH", "")])
            # no cache on either side: Triton's, flyrt's, nor the driver's (CUDA_CACHE_DISABLE, above)
            env = dict(os.environ, TRITON_CACHE_DIR=tempfile.mkdtemp(), FLYDSL_RUNTIME_ENABLE_CACHE="0",
                       PYTHONPATH=path)
            script = FIRST_CALL.format(library=library, path=str(work), body=body)
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


def graph_time(runs, calls=64):
    """GPU seconds per call of a CUDA graph replaying `calls` calls of runs[i % len(runs)] (median of 20
    replays): no host launch cost in it, and with several runs the data cycles through more than the L2."""
    for run in runs:
        run()
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for i in range(calls):
            runs[i % len(runs)]()
    return statistics.median(cuda_event_times(graph.replay, repeats=20)) / calls


def torch_reference(case):
    """The peer in plain torch: gather the pages, dequantize, two matmuls and a softmax."""
    q, k, v = case["query"], case["key_cache"], case["value_cache"]
    tables, lengths = case["block_tables"], case["context_lengths"]
    seqs, q_heads, head = q.shape
    kv_heads, page = k.shape[1], k.shape[2]
    context = int(lengths.max())
    pages = tables[:, : context // page]

    def run():
        keys = paged_kv(k, case["k_scale"], pages) * head ** -0.5
        values = paged_kv(v, case["v_scale"], pages)
        scores = torch.einsum("sgqd,sgtd->sgqt", q.float().view(seqs, kv_heads, q_heads // kv_heads, head), keys)
        return torch.einsum("sgqt,sgtd->sgqd", scores.softmax(-1), values).reshape(seqs, q_heads, head)
    return run


def pa_decode(copy):
    import triton_pa_decode

    print(f"\nPA decode, GPU us per call (CUDA graph replay, the KV cache cycling through > 256 MB); "
          f"device copy {copy / 1e12:.2f} TB/s (bytes read + written):")
    print(f"  {'(seqs, heads q/kv, head, page, ctx), format, scales':<56} {'':<64} {'us':>8} {'KV TB/s':>8} "
          f"{'% copy':>7}")
    for shape in PA_SHAPES:
        seqs, q_heads, kv_heads, head, page, context = shape
        for fmt, per_token in (("e4m3fnuz", False), ("e4m3fn", False), ("e4m3fn", True)):
            cases, kv_bytes = cycling_cases(shape, fmt, per_token)
            label = f"({seqs}, {q_heads}/{kv_heads}, {head}, {page}, {context}), {fmt}, " \
                    f"{'per-token' if per_token else 'per-tensor'}"
            out = pa.pa_decode_ps_launch(**cases[0])
            reference = torch_reference(cases[0])().cpu().numpy()
            ok, max_diff, _ = check(host(out.float()), reference)
            assert ok, f"PA decode is wrong on the GPU: {label}: max diff {max_diff}"
            rows = []
            with bounds_checks(True):  # the default: reports read at synchronize, after the replays
                runs = [pa.pa_decode_ps_prepare(**c)[0] for c in cases]
                rows.append((graph_time(runs), "flyrt, checks on, pages/work tuned"))
                flyrt.synchronize()
            for pages_per_work in (None, 2, 4, 8, 16, 32):
                with bounds_checks(False):
                    runs = [pa.pa_decode_ps_prepare(**c, pages_per_work=pages_per_work)[0] for c in cases]
                    if pages_per_work is None:
                        tuner = dict(pa._tuned_decode_step.configs_timings)
                    best = pa._tuned_decode_step.best_config.kwargs
                    choice = pages_per_work or f"tuned: {best['pages_per_work']}, {best['blocks_per_sm']}/SM"
                    rows.append((graph_time(runs), f"flyrt, fast mode, pages/work {choice}"))
            if not per_token:
                inputs = [{k: c[k] for k in ("query", "key_cache", "value_cache", "block_tables", "context_lengths",
                                             "k_scale", "v_scale")} for c in cases]
                ok, max_diff, _ = check(host(triton_pa_decode.TritonPADecode(**inputs[0])().float()), reference)
                assert ok, f"the Triton peer is wrong: {label}: max diff {max_diff}"
                config, seconds, timed = triton_pa_decode.tune(inputs, graph_time)
                rows.append((timed[tuple(sorted(triton_pa_decode.DEFAULT.items()))], "Triton split-KV, default config"))
                rows.append((seconds, "Triton split-KV, tuned ({pages_per_part} pages/part, {tokens} tokens, "
                                      "{warps} warps, {stages} stages)".format(**config)))
                print(f"      Triton tuned over {len(timed)} configs by coordinate descent")
            if fmt == "e4m3fn" and not per_token:
                rows.append((statistics.median(cuda_event_times(torch_reference(cases[0]), repeats=5)),
                             "torch (gather, dequantize, matmul)"))
            for seconds, who in rows:
                print(f"  {label:<56} {who:<64} {seconds * 1e6:8.1f} {kv_bytes / seconds / 1e12:8.2f} "
                      f"{100 * kv_bytes / seconds / copy:6.1f}%")
                label = ""
            fastest = sorted((ms, c.kwargs["pages_per_work"], c.kwargs["blocks_per_sm"]) for c, ms in tuner.items() if ms is not None)
            print("      the tuner's do_bench (L2 flushed), fastest first: "
                  + ", ".join(f"{p} pages x {b}/SM {ms * 1e3:.1f} us" for ms, p, b in fastest[:4]))


def variant_label(variant):
    """PA decode's matrix-unit kernel variant, (warps, stages, one_launch, prefetch), in words."""
    warps, stages, one, prefetch = variant
    return (f"{warps} warps, {stages} stages{' + prefetch' if prefetch else ''}, "
            f"{'one launch' if one else 'combine kernel'}")


def pa_decode_quick(copy):
    """PA decode as users get it (fast mode, the tuner's choice) beside the kernel's other variants at the
    tuner's pages per work item and split, the default checked mode as tuned, and the Triton peer at the
    config `tune` found for the shape on this machine kind (triton_pa_decode.TUNED): per-tensor scales,
    both formats."""
    import triton_pa_decode

    print(f"\nPA decode, GPU us per call (CUDA graph replay, the KV cache cycling through > 256 MB); "
          f"device copy {copy / 1e12:.2f} TB/s (bytes read + written):")
    summary = []
    for shape in PA_SHAPES:
        seqs, q_heads, kv_heads, head, page, context = shape
        for fmt in ("e4m3fn", "e4m3fnuz"):
            cases, kv_bytes = cycling_cases(shape, fmt)
            label = f"({seqs}, {q_heads}/{kv_heads}, {head}, {page}, {context}), {fmt}"
            reference = torch_reference(cases[0])().cpu().numpy()
            with bounds_checks(False):
                prepared = [pa.pa_decode_ps_prepare(**c) for c in cases]  # the tuner times its choices
                steps = [step for step, _ in prepared]
                best = pa._tuned_decode_step.best_config.kwargs
                tuner = dict(pa._tuned_decode_step.configs_timings)
                out = prepared[0][1]
                out.fill_(float("nan"))
                steps[0]()
                ok, max_diff, _ = check(host(out.float()), reference)
                assert ok, f"PA decode is wrong on the GPU: {label}: max diff {max_diff}"
                tuned = graph_time(steps)
                tuned_variant = pa._variant(pa._tuned_decode_step.best_config)
                rows = [(tuned, "flyrt, tuned: {pages_per_work} pages/work, {blocks_per_sm}/SM, ".format(**best)
                         + variant_label(tuned_variant))]
                for variant in pa.VARIANTS:
                    if variant != tuned_variant:
                        warps, stages, one, prefetch = variant
                        runs = [pa._Step(step.buffers, stages, one, warps, prefetch) for step in steps]
                        rows.append((graph_time(runs), "flyrt, same split, " + variant_label(variant)))
            with bounds_checks(True):  # the default mode, as a notebook runs it: tuned for it apart
                checked = [pa.pa_decode_ps_prepare(**c)[0] for c in cases]
                mode_best = pa._tuned_decode_step.best_config
                checked_s = graph_time(checked)
                rows.append((checked_s, "flyrt, checks on (the default), tuned: {pages_per_work}, {blocks_per_sm}/SM, "
                                        .format(**mode_best.kwargs) + variant_label(pa._variant(mode_best))))
                flyrt.synchronize()  # what the checked replays reported
            inputs = [{k: c[k] for k in ("query", "key_cache", "value_cache", "block_tables", "context_lengths",
                                         "k_scale", "v_scale")} for c in cases]
            config = triton_pa_decode.TUNED[shape, fmt]
            peer = [triton_pa_decode.TritonPADecode(**i, **config) for i in inputs]
            ok, max_diff, _ = check(host(peer[0]().float()), reference)
            assert ok, f"the Triton peer is wrong: {label}: max diff {max_diff}"
            triton_s = graph_time(peer)
            rows.append((triton_s, "Triton split-KV ({pages_per_part} pages/part, {tokens} tokens, {warps} warps, "
                                   "{stages} stages)".format(**config)))
            for seconds, who in rows:
                print(f"  {label:<40} {who:<72} {seconds * 1e6:8.1f} us {100 * kv_bytes / seconds / copy:6.1f}% "
                      f"of copy")
                label = ""
            fastest = sorted((ms, tuple(c.kwargs.values())) for c, ms in tuner.items() if ms is not None)
            print("      the tuner's do_bench (L2 flushed), fastest first: "
                  + ", ".join(f"{choice} {ms * 1e3:.1f} us" for ms, choice in fastest[:5]), flush=True)
            summary.append((shape, fmt, tuned, min(seconds for seconds, who in rows if who.startswith("flyrt, ")
                                                   and "checks on" not in who), checked_s, triton_s))
    print("\nsummary, us: shape, format, flyrt tuned, flyrt best variant, flyrt checked, Triton, tuned / Triton")
    for shape, fmt, tuned, best_variant, checked_s, triton_s in summary:
        print(f"  {shape} {fmt:<9} {tuned * 1e6:8.1f} {best_variant * 1e6:8.1f} {checked_s * 1e6:8.1f} "
              f"{triton_s * 1e6:8.1f} {tuned / triton_s:6.2f}x")


COVERAGE_SHAPES = [  # (seqs, q heads, kv heads, head, page, context): the SIMT kernel's until 2026-12-05
    (16, 16, 1, 128, 64, 4096),
    (16, 16, 1, 256, 16, 4096),
    (16, 32, 1, 128, 16, 4096),
]


def pa_decode_coverage(copy):
    """PA decode (fast mode, e4m3fn, tuned) on the shapes the matrix-unit kernel took over, beside the SIMT
    kernel that ran them before (pa.USE_MMA_KERNEL = False, its pages per work item tuned) and the Triton
    peer tuned here by coordinate descent."""
    import triton_pa_decode

    print(f"\nPA decode where the matrix units are new, GPU us per call (graph replay, > 256 MB of KV cycled); "
          f"device copy {copy / 1e12:.2f} TB/s:")
    for shape in COVERAGE_SHAPES:
        cases, kv_bytes = cycling_cases(shape, "e4m3fn")
        reference = torch_reference(cases[0])().cpu().numpy()
        rows = []
        for kernel, wanted in (("matrix units", None), ("SIMT", False)):
            pa.USE_MMA_KERNEL = wanted
            pa._tuned_decode_step.cache_clear()  # tuned for this kernel apart
            with bounds_checks(False):
                prepared = [pa.pa_decode_ps_prepare(**c) for c in cases]
                best = pa._tuned_decode_step.best_config
                step, out = prepared[0]
                out.fill_(float("nan"))
                step()
                ok, max_diff, _ = check(host(out.float()), reference)
                assert ok, f"PA decode ({kernel}) is wrong on the GPU: {shape}: max diff {max_diff}"
                rows.append((graph_time([step for step, _ in prepared]),
                             f"flyrt, {kernel}, tuned: {best.kwargs['pages_per_work']} pages/work, "
                             f"{best.kwargs['blocks_per_sm']}/SM" + (f", {variant_label(pa._variant(best))}"
                                                                     if wanted is None else "")))
        pa.USE_MMA_KERNEL = None
        inputs = [{k: c[k] for k in ("query", "key_cache", "value_cache", "block_tables", "context_lengths",
                                     "k_scale", "v_scale")} for c in cases]
        config, triton_s, timed = triton_pa_decode.tune(inputs, graph_time)
        rows.append((triton_s, "Triton split-KV, tuned over {} configs ({pages_per_part} pages/part, {tokens} "
                               "tokens, {warps} warps, {stages} stages)".format(len(timed), **config)))
        label = str(shape)
        for seconds, who in rows:
            print(f"  {label:<32} {who:<88} {seconds * 1e6:8.1f} us {100 * kv_bytes / seconds / copy:6.1f}% of copy "
                  f"{seconds / triton_s:5.2f}x Triton", flush=True)
            label = ""


def cycling_cases(shape, fmt, per_token=False):
    """(cases, KV bytes of one): as many cases of `shape` as make more than 256 MB of KV cache, so that
    replaying them in turn cycles the cache through more than the L2."""
    seqs, _, kv_heads, head, _, context = shape
    kv_bytes = 2 * seqs * kv_heads * context * head
    copies = max(1, int(np.ceil(256e6 / kv_bytes)))
    return [device_case(*shape, fmt, per_token, seed) for seed in range(copies)], kv_bytes


def device_case(seqs, q_heads, kv_heads, head, page, context, fmt, per_token, seed):
    """A PA decode case made on the GPU (numpy's make_case is too slow for a GB of cache): FP8 codes of
    magnitude up to about a quarter of the format's largest, no NaN codes; the layout of make_case."""
    generator = torch.Generator(device="cuda").manual_seed(seed)
    pages = context // page
    blocks = seqs * pages + 3
    shape = (blocks, kv_heads, page, head)

    def codes():
        magnitude = torch.randint(0, 0x70, shape, device="cuda", dtype=torch.uint8, generator=generator)
        sign = torch.randint(0, 2, shape, device="cuda", dtype=torch.uint8, generator=generator) << 7
        code = magnitude | sign
        code = torch.where(code == 0x80, torch.zeros_like(code), code)  # e4m3fnuz's NaN
        return code.view(torch.float8_e4m3fnuz if fmt == "e4m3fnuz" else torch.float8_e4m3fn)

    def scales(value):
        if not per_token:
            return torch.tensor([value], device="cuda")
        return torch.rand((blocks, kv_heads, page), device="cuda", generator=generator) * value + value / 2

    table = torch.randperm(blocks, device="cuda", generator=generator)[: seqs * pages].reshape(seqs, pages)
    return dict(query=torch.randn((seqs, q_heads, head), device="cuda", generator=generator), key_cache=codes(),
                value_cache=codes(), block_tables=table.to(torch.int32),
                context_lengths=torch.full((seqs,), context, device="cuda", dtype=torch.int32),
                k_scale=scales(0.005), v_scale=scales(0.01))


def helper_edit():
    """A helper edit to PA decode's recompiled first result, its PTX compiled by the driver at load and then
    assembled by nvJitLink on the compile's threads, in this one process (each edit a version never seen),
    with pages per work item given (one compile); then the same edit through the tuner, as users call it (its
    config kept for the edited code, untimed: on_edit="keep"), and after retune() (every config compiled and
    timed again)."""
    from flyrt import _core
    from flyrt.drivers import device_libraries

    case = on("cuda", make_case(num_seqs=16, num_q_heads=16, num_kv_heads=1, head_size=128, context_length=4096))
    pa.pa_decode_ps_launch(**case)
    torch.cuda.synchronize()
    original = pa._load_q_fragments  # the seed bug's helper, in both PA kernels
    factors = iter(range(2, 100))

    def edited():
        factor = float(next(factors))

        def changed(*args, factor=factor):  # the scale, the helper's last argument, times a new factor
            return original(*args[:-1], args[-1] * factor)
        return changed

    run, _ = pa.pa_decode_ps_prepare(**case, pages_per_work=8)
    launcher, args = run.launcher, run.args
    assembler = device_libraries.find_ptx_assembler() if os.environ.get("FLYDSL_NVJITLINK") else ""
    if not assembler:
        os.environ["FLYDSL_NVJITLINK"] = "1"
        assembler = device_libraries.find_ptx_assembler()
        del os.environ["FLYDSL_NVJITLINK"]
    print("\nhelper edit -> PA decode's recompiled first result (ms, median of 3 edits):")
    for name, path in (("PTX compiled by the driver at load", ""), ("PTX assembled by nvJitLink", assembler)):
        if name.endswith("nvJitLink") and not path:
            print(f"  {name}: no nvJitLink on this machine")
            continue
        _core.set_ptx_assembler_path(path)
        samples = []
        for _ in range(3):
            begin = time.perf_counter()
            pa._load_q_fragments = edited()
            pa.pa_decode_ps_launch(**case, pages_per_work=8)
            torch.cuda.synchronize()
            samples.append((time.perf_counter() - begin) * 1e3)
        kinds = sorted({k.image_kind for k in launcher.device_kernels()})
        lowered = []  # the same recompile without loading: tracing, LLVM (and nvJitLink when on)
        for _ in range(3):
            pa._load_q_fragments = edited()
            begin = time.perf_counter()
            launcher.lower(*args, target="cuda")
            lowered.append((time.perf_counter() - begin) * 1e3)
        print(f"  {name:<36} {statistics.median(samples):6.0f} (of {', '.join(f'{s:.0f}' for s in samples)}); "
              f"compiling without loading {statistics.median(lowered):.0f}; images loaded: {', '.join(kinds)}")
    _core.set_ptx_assembler_path(device_libraries.ptx_assembler())  # as this process had it
    kept = []
    for _ in range(3):
        pa._load_q_fragments = edited()
        begin = time.perf_counter()
        pa.pa_decode_ps_launch(**case)
        torch.cuda.synchronize()
        kept.append((time.perf_counter() - begin) * 1e3)
    print(f"  {'through the tuner, its choice kept':<36} {statistics.median(kept):6.0f} (of "
          f"{', '.join(f'{s:.0f}' for s in kept)}): {pa._tuned_decode_step.best_config.describe()}")
    pa._tuned_decode_step.retune()
    begin = time.perf_counter()
    pa.pa_decode_ps_launch(**case)
    torch.cuda.synchronize()
    print(f"  then retune() ({len(pa._tuned_decode_step.configs_timings)} configs compiled and timed): "
          f"{(time.perf_counter() - begin) * 1e3:.0f} ms")
    pa._load_q_fragments = original
    begin = time.perf_counter()
    pa.pa_decode_ps_launch(**case)
    torch.cuda.synchronize()
    print(f"  back to the original: {(time.perf_counter() - begin) * 1e3:.1f} ms (reused)")


# (shape, pages per work item, variants): a kernel change's A/B, on the shapes and variants the tuner picks
# from on the H100 and H200 (docs/performance.md)
VERSUS_PLAN = [
    ((16, 16, 1, 128, 16, 4096), 4, [(4, 1, False, True), (4, 1, True, True), (8, 1, False, True),
                                      (8, 1, True, True), (1, 1, False, False)]),
    ((1, 16, 1, 128, 16, 32768), 8, [(8, 1, False, True), (8, 1, True, True), (4, 1, False, True),
                                      (4, 1, True, True), (1, 1, False, False)]),
    ((64, 32, 8, 128, 16, 8192), 32, [(1, 1, False, False), (4, 1, False, True)]),
    # the small shapes at the split the tuner chose on a lent H100 (2026-12-07)
    ((16, 16, 1, 128, 16, 4096), 32, [(8, 1, False, True)]),
    ((1, 16, 1, 128, 16, 32768), 16, [(8, 1, False, True)]),
]


def pa_decode_versus(other_files):
    """This tree's PA decode against other versions of kernels/pa_decode_fp8.py (`git show REV:path >
    FILE`), all on the same inputs and variants, each with its own host code (no tuner: pages per work item
    given), fast mode, e4m3fn, checked against the torch reference, timed by graph replay in turn twice, the
    faster of each kept."""
    sides = {Path(f).stem: _module(f"pa_decode_fp8_{i}", Path(f).read_text()) for i, f in enumerate(other_files)}
    sides["this"] = pa
    print(f"\nPA decode, GPU us per call (CUDA graph replay, the KV cache cycling through > 256 MB), "
          f"this tree's kernels against {', '.join(other_files)}, fast mode:")
    for shape, pages_per_work, variants in VERSUS_PLAN:
        cases, _ = cycling_cases(shape, "e4m3fn")
        reference = torch_reference(cases[0])().cpu().numpy()
        with bounds_checks(False):
            prepared = {who: [module.pa_decode_ps_prepare(**c, pages_per_work=pages_per_work) for c in cases]
                        for who, module in sides.items()}
            for warps, stages, one_launch, prefetch in variants:
                times = {who: [] for who in sides}
                for who in list(sides) * 2:
                    runs = [sides[who]._Step(step.buffers, stages, one_launch, warps, prefetch)
                            for step, _ in prepared[who]]
                    out = prepared[who][0][1]
                    out.fill_(float("nan"))
                    runs[0]()
                    ok, max_diff, _ = check(host(out.float()), reference)
                    assert ok, f"PA decode ({who}) is wrong on the GPU: {shape}: max diff {max_diff}"
                    times[who].append(graph_time(runs) * 1e6)
                this = min(times["this"])
                others = "  ".join(f"{who} {min(t):7.1f} (this/{who} {this / min(t):5.3f})"
                                   for who, t in times.items() if who != "this")
                print(f"  {str(shape):<32} e4m3fn, {pages_per_work:>2} pages/work, "
                      f"{variant_label((warps, stages, one_launch, prefetch)):<40} this {this:7.1f}  {others}",
                      flush=True)


def _module(name, source):
    path = Path(tempfile.mkdtemp()) / f"{name}.py"
    path.write_text(textwrap.dedent(source))
    sys.path.insert(0, str(path.parent))
    return __import__(name)


def main():
    print(mode_line())
    print(f"{torch.cuda.get_device_name()}, torch {torch.__version__}\n")
    if sys.argv[1:] == ["pa"]:  # PA decode alone (the main job's GPU section)
        pa_decode(copy_bandwidth())
        return
    if sys.argv[1:] == ["pa-quick"]:  # PA decode as tuned, its variants, and the peer at its known config
        pa_decode_quick(copy_bandwidth())
        return
    if sys.argv[1:] == ["pa-coverage"]:  # the shapes the matrix-unit kernel took over, beside the SIMT one
        pa_decode_coverage(copy_bandwidth())
        return
    if sys.argv[1:2] == ["pa-versus"]:  # a kernel change's A/B: this tree's PA decode against other versions
        pa_decode_versus(sys.argv[2:])
        return
    if sys.argv[1:] == ["launch"]:  # the launch and the edit loop alone
        launch_overhead()
        helper_edit()
        return
    launch_overhead()
    print()
    first_compile()
    helper_edit()
    pa_decode(copy_bandwidth())


if __name__ == "__main__":
    main()
