"""What guarding the real FlyDSL costs, side by side in one run (compile-only, gfx942):

(1) a cached call of a factory-built FlyDSL launcher, FlyDSL alone vs with
    flyrt's adapter (the guard before each call);
(2) a first trace + compile, FlyDSL alone vs with the adapter (recording what
    the trace reads with opcode tracing in user frames);
(3) a call of a ``flyc.compile`` result (upstream PA decode's fast path),
    FlyDSL alone vs with the adapter; no GPU here, so its device launch is
    replaced by a no-op in both (what is timed is the dispatch in Python);
(4) a helper really changed: plain FlyDSL must be told (clear the factory,
    rebuild, recompile), the adapter sees it at the next call (validate,
    evict, trace again, recompile) -- the same compile on both sides;
(5) what a user of plain FlyDSL does to be sure a helper edit took effect
    (clear, rebuild, recompile) vs what the adapter does when nothing
    changed (validate, reuse);
(6) ``flydsl.autotune``'s lookup of a tuned config (``resolve_config``), FlyDSL
    alone vs with the adapter (its config's guard checked per call).

Each measure runs for the pinned FlyDSL (requirements.txt) in this process
and for the release before it (requirements-flydsl-previous.txt, from
.flydsl-previous) in a child process of the same run; one table compares
them, every ratio against the previous release alone.

    .venv/bin/python tests/bench/bench_flydsl_adapter.py
"""

import importlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from timing import best_of, mode_line  # noqa: E402

import flyrt.flydsl_adapter as adapter  # noqa: E402

KERNELS = Path(__file__).resolve().parents[2] / "notebooks" / "kernels"
_modules = iter(range(10**6))


def fresh_module(folder):
    """The notebook's scaled add (factory, kernel, two helpers) as a module never imported yet."""
    index = next(_modules)
    (folder / f"bench_fly_helpers_{index}.py").write_text((KERNELS / "flydsl_helpers.py").read_text())
    source = (KERNELS / "flydsl_scaled_add.py").read_text().replace(
        "from . import flydsl_helpers", f"import bench_fly_helpers_{index} as flydsl_helpers")
    (folder / f"bench_fly_{index}.py").write_text(source)
    importlib.invalidate_caches()
    return importlib.import_module(f"bench_fly_{index}")


def main():
    print(mode_line())
    if sys.argv[1:] == ["--child"]:
        print(json.dumps(measure()))
        return
    ours = measure()
    previous = Path(__file__).resolve().parents[2] / ".flydsl-previous"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(previous), os.environ.get("PYTHONPATH")])))
    child = subprocess.run([sys.executable, __file__, "--child"], env=env, capture_output=True, text=True, check=True)
    theirs = json.loads(child.stdout.strip().splitlines()[-1])
    base = theirs["alone"]["hit"]
    print(f"compile-only gfx942, 1024-element scaled add (two helpers); ratios against flydsl {theirs['version']} "
          "alone's cached call")
    print(f"{'flydsl':8} {'measure':58} {'alone':>12} {'with adapter':>14} {'ratio':>7}")
    for run in (theirs, ours):
        alone, guarded = run["alone"], run["guarded"]
        rows = [("cached call of the factory-built launcher", alone["hit"], guarded["hit"], 1e6, "us"),
                ("first call: trace + compile to gfx942", alone["compile"], guarded["compile"], 1e3, "ms"),
                ("call of a flyc.compile result (launch itself a no-op)", alone["compiled"], guarded["compiled"],
                 1e6, "us"),
                ("helper changed: cache_clear+recompile / next call sees it", alone["changed"], guarded["changed"],
                 1e3, "ms"),
                ("autotuned: resolve_config of a tuned key", alone["tuned"], guarded["tuned"], 1e6, "us")]
        for label, plain, with_adapter, scale, unit in rows:
            print(f"{run['version']:8} {label:58} {plain * scale:9.2f} {unit} {with_adapter * scale:11.2f} {unit} "
                  f"{with_adapter / plain:6.2f}x")
        print(f"{run['version']:8} {'cached call vs ' + theirs['version'] + ' alone':58} {alone['hit'] / base:11.2f}x "
              f"{guarded['hit'] / base:13.2f}x")


def measure():
    """This process's FlyDSL, alone and then with the adapter."""
    folder = Path(tempfile.mkdtemp(prefix="bench-flydsl-"))
    sys.path.insert(0, str(folder))
    adapter.use_compile_only("gfx942")
    os.environ["FLYDSL_RUNTIME_ENABLE_CACHE"] = "0"  # in-memory caches only: nothing served from disk
    import flydsl

    a, b, c = torch.ones(1024), torch.ones(1024), torch.empty(1024)
    results = {"version": flydsl.__version__}
    for guarded in (False, True):
        if guarded:
            adapter.install(global_drift="recompile")
        module = fresh_module(folder)
        launcher = module.compile_scaled_add(256)
        hit = seconds_per_call(lambda: launcher(a, b, c, 1024))
        compile_once = best_of(lambda: fresh_module(folder).compile_scaled_add(256)(a, b, c, 1024), repeats=5)

        def rebuild():
            module.compile_scaled_add.cache_clear()
            module.compile_scaled_add(256)(a, b, c, 1024)

        changed = helper_changed(folder, module, rebuild if not guarded else lambda: launcher(a, b, c, 1024))
        results["guarded" if guarded else "alone"] = {
            "hit": hit, "compile": compile_once, "rebuild": best_of(rebuild, repeats=5),
            "compiled": compiled_call(module, a, b, c), "changed": changed,
            "tuned": tuned_lookup(launcher, folder / f"autotune-{guarded}", a, b, c)}
    return results


def tuned_lookup(launcher, cache_dir, a, b, c):
    """Per lookup of a tuned config; tuned once first (no GPU: each candidate
    compiles and is given a time)."""
    from flydsl.autotune import Autotuner, Config

    os.environ["FLYDSL_AUTOTUNE_CACHE_DIR"] = str(cache_dir)
    times = iter((2.0, 1.0))

    def bench(kernel_call, warmup, rep):
        kernel_call()
        return next(times)

    tuner = Autotuner(launcher, [Config(waves_per_eu=1), Config(waves_per_eu=2)], ["n"], 0, 1, do_bench_fn=bench)
    tuner.resolve_config(a, b, c, 1024)
    return seconds_per_call(lambda: tuner.resolve_config(a, b, c, 1024))


def seconds_per_call(fn, budget=0.3, repeats=5):
    """Median seconds per call of fn() over `repeats` batches of about
    `budget` seconds each (a call of FlyDSL 0.5.0 alone traces: 10 ms and more)."""
    fn()
    begin = time.perf_counter()
    fn()
    calls = max(1, int(budget / max(time.perf_counter() - begin, 1e-7)))
    samples = []
    for _ in range(repeats):
        begin = time.perf_counter()
        for _ in range(calls):
            fn()
        samples.append((time.perf_counter() - begin) / calls)
    return statistics.median(samples)


def helper_changed(folder, module, run_after_the_change, repeats=5):
    """Fastest seconds from a helper replaced by one never compiled before
    (a new module, a new constant, each time) to the launcher's result with it."""
    samples = []
    for _ in range(repeats + 1):
        name = f"bench_fly_variant_{next(_modules)}"
        (folder / f"{name}.py").write_text((KERNELS / "flydsl_helpers.py").read_text().replace(
            "x * 2.0", f"x * {3.0 + len(samples)}"))
        importlib.invalidate_caches()
        module.flydsl_helpers.scale = importlib.import_module(name).scale
        begin = time.perf_counter()
        run_after_the_change()
        samples.append(time.perf_counter() - begin)
    return min(samples[1:])


def compiled_call(module, a, b, c):
    """Per call of flyc.compile's CompiledFunction, its device launch a no-op (no GPU here)."""
    import flydsl.compiler as flyc

    os.environ.pop("COMPILE_ONLY")  # flyc.compile returns nothing in compile-only mode
    try:
        compiled = flyc.compile(module.compile_scaled_add(128), a, b, c, 1024)
    finally:
        os.environ["COMPILE_ONLY"] = "1"
    compiled._call_state, compiled._runtime_ready = (lambda args: None), True
    return seconds_per_call(lambda: compiled(a, b, c, 1024))


if __name__ == "__main__":
    main()
