"""What invalidation costs, printed side by side in one run:

(1) a launcher call, nothing changed, next to the same call with nothing
    watched: its kernel reading 32 values as module attributes; 16 of them
    and 16 attributes read through objects (instance attributes, class
    attributes through instances); 32 reads through objects (instance
    attributes as `o.x` and `getattr(o, "x")`, __slots__ members as `s.x`
    and `operator.attrgetter("x")(s)`); 8 attributes library code computes
    (`arr.shape`, read again per call); 31 helpers reached as module attributes;
(2) the post-cell check (edited-file stats, then the sweep) with 2,000 user
    functions in 20 user modules and 50 launchers reading 200 objects'
    attributes, when nothing changed, and when one helper or one object's
    attribute changed (each time an eviction, asserted);
(3) IPython's autoreload per-cell check (ModuleReloader.check) on the same
    modules.

    .venv/bin/python tests/bench/bench_invalidation.py
"""

import importlib
import statistics
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from timing import median_time, mode_line, per_call_interleaved  # noqa: E402

MODULES, FUNCTIONS_PER_MODULE, LAUNCHERS, DEPENDENCIES = 20, 100, 50, 32
OBJECTS_PER_LAUNCHER = 4  # 200 watched objects in all


OBJECTS = textwrap.dedent("""
    class Config:
        pass


    class Knob:
        gain = 1.0


    configs = [Config() for _ in range(NUMBER)]
    for c in configs:
        c.scale = 1.0
    knobs = [Knob() for _ in range(8)]


    class Slotted:
        __slots__ = ("a", "b")


    slotted = [Slotted() for _ in range(8)]
    for s in slotted:
        s.a, s.b = 1.0, 2.0
    shaped = [np.zeros(i + 1) for i in range(8)]
    """) + "".join(f"v{i} = {i}.0\n" for i in range(32))


# A launcher of the per-call measure: `value` is what its kernel adds to y[i].
LAUNCHER = """

@flyc.kernel
def {name}_kernel(x: fx.Tensor, y: fx.Tensor, out: fx.Tensor, n: fx.Int32):
    i = fx.thread_idx.x
    if i < n:
        out[i] = {value} + y[i]


@flyc.jit
def {name}(x: fx.Tensor, y: fx.Tensor, out: fx.Tensor, n: fx.Int32):
    {name}_kernel(x, y, out, n).launch(block=(16,))
"""


def write_modules(folder):
    for m in range(MODULES):
        helpers = "\n".join(f"def h{m}_{f}(v):\n    return v + {f}.0\n" for f in range(FUNCTIONS_PER_MODULE))
        (folder / f"bench_helpers_{m}.py").write_text(helpers)
    objects = OBJECTS.replace("NUMBER", str(LAUNCHERS * OBJECTS_PER_LAUNCHER + 8))
    objects += "".join(f"config{i} = configs[{i}]\n" for i in range(LAUNCHERS * OBJECTS_PER_LAUNCHER + 8))
    objects += "".join(f"knob{i} = knobs[{i}]\n" for i in range(8))
    objects += "".join(f"slotted{i} = slotted[{i}]\nshaped{i} = shaped[{i}]\n" for i in range(8))
    objects = "import operator\nimport numpy as np\n" + objects
    (folder / "bench_objects.py").write_text(objects)
    # 32 dependencies for the hot launcher: 31 helpers plus the kernel's module
    chain = " + ".join(f"bench_helpers_{i % MODULES}.h{i % MODULES}_{i}(v)" for i in range(DEPENDENCIES - 1))
    # ... and half of them read through objects: 8 instance attributes, 8 class attributes through instances
    half = DEPENDENCIES // 2
    reads = [f"bench_objects.config{LAUNCHERS * OBJECTS_PER_LAUNCHER + i}.scale" for i in range(half // 2)]
    reads += [f"bench_objects.knob{i}.gain" for i in range(half // 2)]
    values = " + ".join(f"bench_objects.v{i}" for i in range(DEPENDENCIES))
    values_and_objects = " + ".join([f"bench_objects.v{i}" for i in range(half)] + reads)
    imports = "\n".join(f"import bench_helpers_{m}" for m in range(MODULES)) + "\nimport bench_objects\nimport operator"
    launchers = "\n".join(textwrap.dedent(f"""
        @flyc.kernel
        def k{n}(x: fx.Tensor, out: fx.Tensor):
            i = fx.thread_idx.x
            if i < x.shape[0]:
                out[i] = bench_helpers_{n % MODULES}.h{n % MODULES}_{n}(x[i]) * (OBJECT_READS)

        @flyc.jit
        def l{n}(x: fx.Tensor, out: fx.Tensor):
            k{n}(x, out).launch(block=(16,))
        """).replace("OBJECT_READS", " + ".join(
            f"bench_objects.config{n * OBJECTS_PER_LAUNCHER + j}.scale" for j in range(OBJECTS_PER_LAUNCHER)))
        for n in range(LAUNCHERS))
    first = LAUNCHERS * OBJECTS_PER_LAUNCHER
    through = [f"bench_objects.config{first + i}.scale" for i in range(8)]
    through += [f"getattr(bench_objects.config{first + i}, 'scale')" for i in range(8)]
    through += [f"bench_objects.slotted{i}.a" for i in range(8)]
    through += [f"operator.attrgetter('b')(bench_objects.slotted{i})" for i in range(8)]
    computed = " + ".join(f"float(bench_objects.shaped{i}.shape[0])" for i in range(8))
    measured = "".join(LAUNCHER.format(name=name, value=value) for name, value in (
        ("bare", "x[i]"), ("hot", "chain(x[i])"), ("values", f"x[i] * ({values})"),
        ("objects", f"x[i] * ({values_and_objects})"), ("through", f"x[i] * ({' + '.join(through)})"),
        ("computed", f"x[i] * ({computed})")))
    header = f"import flyrt.compiler as flyc\nimport flyrt.expr as fx\n\n\ndef chain(v):\n    return {chain}\n"
    (folder / "bench_launchers.py").write_text(imports + "\n" + header + measured + launchers)


def main():
    print(mode_line())
    from flyrt.invalidation import registry

    folder = Path(tempfile.mkdtemp(prefix="flyrt-bench-"))
    write_modules(folder)
    sys.path.insert(0, str(folder))
    launchers = importlib.import_module("bench_launchers")

    x, y, out = (np.ones(16, np.float32) for _ in range(3))
    kinds = {"bare": "nothing watched", "values": "32 module attributes", "objects": "16 of them through objects",
             "through": "32 through objects", "computed": "8 computed attributes", "hot": "31 helpers"}
    times = per_call_interleaved({name: getattr(launchers, name) for name in kinds}, x, y, out, 16)
    print("(1) launcher call, 16 elements, nothing changed (fastest of 9 rounds, the four alternating):")
    for name, what in kinds.items():
        entries = getattr(launchers, name)._entries()
        (record,) = [a.record for _, a in entries] if name != "bare" else [None]
        counts = ""
        if record is not None:
            through_objects = sum(b.label is not None for b in record.bindings) + len(record.reads)
            counts = (f"{len(record.functions) + len(record.bindings) + len(record.reads)} dependencies: "
                      f"{len(record.functions)} functions, {len(record.bindings) + len(record.reads) - through_objects}"
                      f" module/class bindings, {through_objects} read through objects; {len(record.guard)} guard "
                      "checks")
        print(f"    {what:26} {times[name] * 1e9:5.0f} ns {(times[name] - times['bare']) * 1e9:+4.0f} ns  {counts}")

    for n in range(LAUNCHERS):
        getattr(launchers, f"l{n}")(x, out)
    registry.reload_edited_modules()  # learn the files

    def check():  # what the kernel does after each cell
        registry.reload_edited_modules()
        return registry.sweep()

    unchanged = median_time(check)
    helpers = sys.modules["bench_helpers_3"]
    config = sys.modules["bench_objects"].config12  # read by l3
    original = helpers.h3_3

    def evicting(change, undo, repeats=50):
        """Median seconds of the same check when it finds a change and evicts (the
        launcher run again before each, untimed, so there is an artifact to evict)."""
        samples = []
        for _ in range(repeats):
            launchers.l3(x, out)
            change()
            begin = time.perf_counter()
            notices = check()
            samples.append(time.perf_counter() - begin)
            assert notices, "the change evicted nothing: the row would not measure an eviction"
            undo()
        return statistics.median(samples)

    changed = evicting(lambda: setattr(helpers, "h3_3", lambda v: v), lambda: setattr(helpers, "h3_3", original))
    attribute = evicting(lambda: setattr(config, "scale", 2.0), lambda: setattr(config, "scale", 1.0))
    functions = MODULES * FUNCTIONS_PER_MODULE
    print(f"(2) post-cell check, {functions} functions in {MODULES} modules, {LAUNCHERS + 3} launchers, "
          f"{LAUNCHERS * OBJECTS_PER_LAUNCHER} watched objects: nothing changed {unchanged * 1e3:.3f} ms, "
          f"one helper changed {changed * 1e3:.3f} ms, one object attribute changed {attribute * 1e3:.3f} ms, "
          "each with the file stats and one eviction (marimo after its fix: 0.17 ms, published, not measured here)")

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
