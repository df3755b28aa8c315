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
    changed (validate, reuse).

    .venv/bin/python tests/bench/bench_flydsl_adapter.py
"""

import importlib
import os
import sys
import tempfile
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from timing import best_of, mode_line, per_call  # noqa: E402

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
    folder = Path(tempfile.mkdtemp(prefix="bench-flydsl-"))
    sys.path.insert(0, str(folder))
    adapter.use_compile_only("gfx942")
    os.environ["FLYDSL_RUNTIME_ENABLE_CACHE"] = "0"  # in-memory caches only: nothing served from disk
    import flydsl

    a, b, c = torch.ones(1024), torch.ones(1024), torch.empty(1024)
    rows = []
    for guarded in (False, True):
        if guarded:
            adapter.install(global_drift="recompile")
        module = fresh_module(folder)
        launcher = module.compile_scaled_add(256)
        hit = per_call(lambda: launcher(a, b, c, 1024), calls=20_000)
        compile_once = best_of(lambda: fresh_module(folder).compile_scaled_add(256)(a, b, c, 1024), repeats=5)

        def rebuild():
            module.compile_scaled_add.cache_clear()
            module.compile_scaled_add(256)(a, b, c, 1024)

        changed = helper_changed(folder, module, rebuild if not guarded else lambda: launcher(a, b, c, 1024))
        rows.append((hit, compile_once, best_of(rebuild, repeats=5), compiled_call(module, a, b, c), changed))
    (plain_hit, plain_compile, plain_rebuild, plain_cf, plain_changed) = rows[0]
    (guarded_hit, guarded_compile, _, guarded_cf, guarded_changed) = rows[1]

    print(f"flydsl {flydsl.__version__}, compile-only gfx942, 1024-element scaled add (two helpers)")
    print(f"{'measure':58} {'FlyDSL alone':>14} {'with adapter':>14} {'ratio':>7}")
    print(f"{'cached call of the factory-built launcher':58} {plain_hit * 1e6:11.2f} us "
          f"{guarded_hit * 1e6:11.2f} us {guarded_hit / plain_hit:6.2f}x")
    print(f"{'first call: trace + compile to gfx942':58} {plain_compile * 1e3:11.1f} ms "
          f"{guarded_compile * 1e3:11.1f} ms {guarded_compile / plain_compile:6.2f}x")
    print(f"{'call of a flyc.compile result (launch itself a no-op)':58} {plain_cf * 1e6:11.2f} us "
          f"{guarded_cf * 1e6:11.2f} us {guarded_cf / plain_cf:6.2f}x")
    print(f"{'helper changed: cache_clear+recompile / next call sees it':58} {plain_changed * 1e3:11.1f} ms "
          f"{guarded_changed * 1e3:11.1f} ms {guarded_changed / plain_changed:6.2f}x")
    print(f"{'be sure an edit took effect: cache_clear + recompile':58} {plain_rebuild * 1e3:11.1f} ms "
          f"{'':>14} {'':>7}")
    print(f"{'  ... the adapter, nothing changed: validate + reuse':58} {'':>14} "
          f"{guarded_hit * 1e6:11.2f} us {plain_rebuild / guarded_hit:6.0f}x faster")


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
    return per_call(lambda: compiled(a, b, c, 1024), calls=50_000)


if __name__ == "__main__":
    main()
