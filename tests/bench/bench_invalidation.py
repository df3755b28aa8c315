"""What invalidation costs, printed side by side in one run:

(1) a launcher call whose artifact watches 32 dependencies, nothing changed,
    next to the same call with nothing watched;
(2) the post-cell sweep with 2,000 user functions in 20 user modules and 50
    launchers, when nothing changed and when one helper changed;
(3) IPython's autoreload per-cell check (ModuleReloader.check) on the same
    modules.

    .venv/bin/python tests/bench/bench_invalidation.py
"""

import importlib
import sys
import tempfile
import textwrap
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from timing import median_time, per_call  # noqa: E402

MODULES, FUNCTIONS_PER_MODULE, LAUNCHERS, DEPENDENCIES = 20, 100, 50, 32


def write_modules(folder):
    for m in range(MODULES):
        helpers = "\n".join(f"def h{m}_{f}(v):\n    return v + {f}.0\n" for f in range(FUNCTIONS_PER_MODULE))
        (folder / f"bench_helpers_{m}.py").write_text(helpers)
    # 32 dependencies for the hot launcher: 31 helpers plus the kernel's module
    chain = " + ".join(f"bench_helpers_{i % MODULES}.h{i % MODULES}_{i}(v)" for i in range(DEPENDENCIES - 1))
    imports = "\n".join(f"import bench_helpers_{m}" for m in range(MODULES))
    launchers = "\n".join(textwrap.dedent(f"""
        @flyc.kernel
        def k{n}(x: fx.Tensor, out: fx.Tensor):
            i = fx.thread_idx.x
            if i < x.shape[0]:
                out[i] = bench_helpers_{n % MODULES}.h{n % MODULES}_{n}(x[i])

        @flyc.jit
        def l{n}(x: fx.Tensor, out: fx.Tensor):
            k{n}(x, out).launch(block=(16,))
        """) for n in range(LAUNCHERS))
    hot = textwrap.dedent("""
        import flyrt.compiler as flyc
        import flyrt.expr as fx

        def chain(v):
            return CHAIN

        @flyc.kernel
        def hot_kernel(x: fx.Tensor, y: fx.Tensor, out: fx.Tensor, n: fx.Int32):
            i = fx.thread_idx.x
            if i < n:
                out[i] = chain(x[i]) + y[i]

        @flyc.jit
        def hot(x: fx.Tensor, y: fx.Tensor, out: fx.Tensor, n: fx.Int32):
            hot_kernel(x, y, out, n).launch(block=(16,))

        @flyc.kernel
        def bare_kernel(x: fx.Tensor, y: fx.Tensor, out: fx.Tensor, n: fx.Int32):
            i = fx.thread_idx.x
            if i < n:
                out[i] = x[i] + y[i]

        @flyc.jit
        def bare(x: fx.Tensor, y: fx.Tensor, out: fx.Tensor, n: fx.Int32):
            bare_kernel(x, y, out, n).launch(block=(16,))
        """).replace("CHAIN", chain)
    (folder / "bench_launchers.py").write_text(imports + "\n" + hot + launchers)


def main():
    from flyrt import invalidation

    folder = Path(tempfile.mkdtemp(prefix="flyrt-bench-"))
    write_modules(folder)
    sys.path.insert(0, str(folder))
    launchers = importlib.import_module("bench_launchers")

    x, y, out = (np.ones(16, np.float32) for _ in range(3))
    launchers.hot(x, y, out, 16)
    (record,) = [a.record for _, a in launchers.hot._entries()]
    watched = len(record.guard)
    bare = per_call(launchers.bare, x, y, out, 16)
    guarded = per_call(launchers.hot, x, y, out, 16)
    print(f"(1) launcher call, 16 elements: no dependencies {bare * 1e9:.0f} ns, "
          f"{watched} checks ({len(record.functions)} functions, {len(record.bindings)} bindings) watched {guarded * 1e9:.0f} ns: {(guarded - bare) * 1e9:+.0f} ns per call")

    for n in range(LAUNCHERS):
        getattr(launchers, f"l{n}")(x, out)
    invalidation.reload_edited_modules()  # learn the files
    unchanged = median_time(lambda: (invalidation.reload_edited_modules(), invalidation.sweep()))
    helpers = sys.modules["bench_helpers_3"]
    original = helpers.h3_3

    def one_change():
        helpers.h3_3 = lambda v: v
        invalidation.sweep()
        helpers.h3_3 = original
        invalidation.sweep()

    changed = median_time(one_change, repeats=50) / 2
    functions = MODULES * FUNCTIONS_PER_MODULE
    print(f"(2) post-cell check, {functions} functions in {MODULES} modules, {LAUNCHERS + 2} launchers: "
          f"nothing changed {unchanged * 1e3:.3f} ms, one helper changed {changed * 1e3:.3f} ms "
          f"(marimo after its fix: 0.17 ms)")

    from IPython.extensions.autoreload import ModuleReloader

    reloader = ModuleReloader()
    reloader.enabled = True
    reloader.check_all = True
    reloader.check(check_all=True)
    autoreload = median_time(lambda: reloader.check(check_all=True))
    print(f"(3) IPython autoreload check of all modules, same process: {autoreload * 1e3:.3f} ms "
          f"({autoreload / unchanged:.1f}x flyrt's nothing-changed check)")


if __name__ == "__main__":
    main()
