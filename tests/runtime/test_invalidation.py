"""The invalidation engine in one process (no kernel, no cell boundary): each
scenario checks that fresh code ran (the values) and that nothing needless
compiled (the counts)."""

import importlib
import types
import itertools
import textwrap

import numpy as np
import pytest

import flyrt.compiler as flyc
from flyrt.invalidation import registry

_counter = itertools.count()

HEADER = """
import functools
import flyrt.compiler as flyc
import flyrt.expr as fx
"""


@pytest.fixture
def make_module(tmp_path, monkeypatch):
    """Writes and imports a fresh user module; returns it."""
    monkeypatch.syspath_prepend(str(tmp_path))

    def make(body, name=None):
        name = name or f"user_mod_{next(_counter)}"
        path = tmp_path / f"{name}.py"
        path.write_text(HEADER + textwrap.dedent(body))
        importlib.invalidate_caches()
        return importlib.import_module(name)

    yield make


def run(launcher, n=8):
    x = np.arange(n, dtype=np.float32)
    out = np.zeros(n, np.float32)
    launcher(x, out)
    return out


def compiles(launcher):
    return launcher.cache_info().compiles


ELEMENTWISE = """
@flyc.kernel
def kernel(x: fx.Tensor, out: fx.Tensor):
    i = fx.thread_idx.x
    out[i] = {expression}

@flyc.jit
def launch(x: fx.Tensor, out: fx.Tensor):
    kernel(x, out).launch(block=(x.shape[0],))
"""


def elementwise(expression, extra=""):
    return extra + ELEMENTWISE.format(expression=expression)


TWO_KERNELS = """
def helper(v):
    return v + 1.0

@flyc.kernel
def uses_helper(x: fx.Tensor, out: fx.Tensor):
    out[fx.thread_idx.x] = helper(x[fx.thread_idx.x])

@flyc.kernel
def doubles(out: fx.Tensor):
    out[fx.thread_idx.x] = out[fx.thread_idx.x] * 2.0

@flyc.jit
def launch(x: fx.Tensor, out: fx.Tensor):
    uses_helper(x, out).launch(block=(x.shape[0],))
    doubles(out).launch(block=(x.shape[0],))
"""


def helper_redefined_later(make_module, run):
    """The scenario, with `run` running a launcher where a target's tensors live (the GPU tests too)."""
    mod = make_module(elementwise("helper(x[i])", "def helper(v):\n    return v + 1.0\n"))
    assert run(mod.launch)[3] == 4.0
    exec("def helper(v):\n    return v * 10.0\n", mod.__dict__)
    assert run(mod.launch)[3] == 30.0
    assert compiles(mod.launch) == 2
    assert "helper" in " ".join(mod.launch.last_reasons)


def test_helper_redefined_later(make_module):
    helper_redefined_later(make_module, run)


def test_a_helper_edit_recompiles_only_the_kernel_that_inlines_it(make_module):
    from flyrt import _core

    mod = make_module(TWO_KERNELS)
    assert run(mod.launch)[3] == 8.0
    compiled, reused = _core.compiled_part_counts()
    exec("def helper(v):\n    return v * 10.0\n", mod.__dict__)
    assert run(mod.launch)[3] == 60.0
    after = _core.compiled_part_counts()
    # the kernel that inlines the helper; the launcher and the other kernel are the objects made before
    assert (after[0] - compiled, after[1] - reused) == (1, 2)


def test_helper_reached_as_module_attribute(make_module):
    helpers = make_module("def helper(v):\n    return v + 1.0\n")
    mod = make_module(f"import {helpers.__name__} as helpers\n" + elementwise("helpers.helper(x[i])"))
    assert run(mod.launch)[2] == 3.0
    helpers.helper = lambda v: v - 1.0
    assert run(mod.launch)[2] == 1.0
    assert compiles(mod.launch) == 2


def test_from_import_then_module_patch_keeps_the_old_binding(make_module):
    helpers = make_module("def helper(v):\n    return v + 1.0\n")
    mod = make_module(f"from {helpers.__name__} import helper\n" + elementwise("helper(x[i])"))
    assert run(mod.launch)[2] == 3.0
    helpers.helper = lambda v: v - 1.0  # mod still holds the old function: Python semantics
    assert run(mod.launch)[2] == 3.0
    assert compiles(mod.launch) == 1


def test_global_scalar_changed_and_unrelated_global_changed(make_module):
    mod = make_module(elementwise("x[i] * SCALE", "SCALE = 2.0\nCOUNTER = 0\n"))
    assert run(mod.launch)[3] == 6.0
    mod.COUNTER += 1  # same module, not a dependency: re-checked, not recompiled
    assert run(mod.launch)[3] == 6.0
    assert compiles(mod.launch) == 1
    mod.SCALE = 3.0
    assert run(mod.launch)[3] == 9.0
    assert compiles(mod.launch) == 2
    assert "'SCALE' in module" in mod.launch.last_reasons[0] and "2.0 to 3.0" in mod.launch.last_reasons[0]


def test_dict_constant_mutated_in_place(make_module):
    mod = make_module(elementwise("x[i] * CONFIG['scale']", "CONFIG = {'scale': 2.0}\n"))
    assert run(mod.launch)[1] == 2.0
    mod.CONFIG["scale"] = 5.0
    assert run(mod.launch)[1] == 5.0
    assert compiles(mod.launch) == 2


def test_code_swapped_in_place(make_module):
    mod = make_module(elementwise("helper(x[i])", "def helper(v):\n    return v + 1.0\n"))
    held = mod.helper
    assert run(mod.launch)[1] == 2.0

    def replacement(v):
        return v + 100.0

    held.__code__ = replacement.__code__  # what IPython's autoreload does
    assert run(mod.launch)[1] == 101.0
    assert compiles(mod.launch) == 2


def test_defaults_changed(make_module):
    mod = make_module(elementwise("helper(x[i])", "def helper(v, k=2.0):\n    return v * k\n"))
    assert run(mod.launch)[2] == 4.0
    mod.helper.__defaults__ = (7.0,)
    assert run(mod.launch)[2] == 14.0
    assert compiles(mod.launch) == 2


def test_closure_cell_changed_and_closure_list_mutated(make_module):
    mod = make_module(elementwise("helper(x[i])", textwrap.dedent("""
        def make():
            factor = 2.0
            offsets = [1.0]
            def helper(v):
                return v * factor + offsets[0]
            return helper
        helper = make()
    """)))
    assert run(mod.launch)[2] == 5.0
    mod.helper.__closure__[0].cell_contents = 3.0  # factor
    assert run(mod.launch)[2] == 7.0
    mod.helper.__closure__[1].cell_contents[0] = 10.0  # offsets[0]
    assert run(mod.launch)[2] == 16.0
    assert compiles(mod.launch) == 3


def test_transitive_helper_jit_helper_and_decorated_helper(make_module):
    mod = make_module(elementwise("outer(x[i]) + device(x[i]) + wrapped(x[i])", textwrap.dedent("""
        def inner(v):
            return v + 1.0

        def outer(v):
            return inner(v) * 2.0

        @flyc.jit
        def device(v):
            return v * 0.0

        def logged(f):
            @functools.wraps(f)
            def wrapper(*args):
                return f(*args)
            return wrapper

        @logged
        def wrapped(v):
            return v * 0.0
    """)))
    assert run(mod.launch)[1] == 4.0
    exec("def inner(v):\n    return v + 2.0\n", mod.__dict__)  # transitive
    assert run(mod.launch)[1] == 6.0
    def device(v):
        return v * 1.0

    def wrapped(v):
        return v * 10.0

    mod.device.fn.__code__ = device.__code__  # the device helper's function
    assert run(mod.launch)[1] == 7.0
    mod.wrapped.__wrapped__.__code__ = wrapped.__code__  # behind functools.wraps
    assert run(mod.launch)[1] == 17.0
    assert compiles(mod.launch) == 4


def test_staticmethod_patched_on_its_class(make_module):
    mod = make_module(elementwise("Ops.scale(x[i])", textwrap.dedent("""
        class Ops:
            @staticmethod
            def scale(v):
                return v * 2.0
    """)))
    assert run(mod.launch)[3] == 6.0
    mod.Ops.scale = staticmethod(lambda v: v * 3.0)
    assert run(mod.launch)[3] == 9.0
    assert compiles(mod.launch) == 2


def test_two_launchers_share_a_helper_a_third_does_not(make_module):
    mod = make_module(textwrap.dedent("""
        def shared(v):
            return v + 1.0

        @flyc.kernel
        def k1(x: fx.Tensor, out: fx.Tensor):
            out[fx.thread_idx.x] = shared(x[fx.thread_idx.x])

        @flyc.kernel
        def k2(x: fx.Tensor, out: fx.Tensor):
            out[fx.thread_idx.x] = shared(x[fx.thread_idx.x]) * 2.0

        @flyc.kernel
        def k3(x: fx.Tensor, out: fx.Tensor):
            out[fx.thread_idx.x] = x[fx.thread_idx.x]

        @flyc.jit
        def l1(x: fx.Tensor, out: fx.Tensor):
            k1(x, out).launch(block=(x.shape[0],))

        @flyc.jit
        def l2(x: fx.Tensor, out: fx.Tensor):
            k2(x, out).launch(block=(x.shape[0],))

        @flyc.jit
        def l3(x: fx.Tensor, out: fx.Tensor):
            k3(x, out).launch(block=(x.shape[0],))
    """))
    for launcher in (mod.l1, mod.l2, mod.l3):
        run(launcher)
    exec("def shared(v):\n    return v + 5.0\n", mod.__dict__)
    assert run(mod.l1)[0] == 5.0 and run(mod.l2)[0] == 10.0 and run(mod.l3)[0] == 0.0
    assert [compiles(launcher) for launcher in (mod.l1, mod.l2, mod.l3)] == [2, 2, 1]


def a_b_a_reuses_the_first_artifact(make_module, run):
    """A helper replaced, then put back: the first artifact again, not a compile
    (with `run` running where a target's tensors live: the GPU tests too)."""
    mod = make_module(elementwise("helper(x[i])", "def helper(v):\n    return v + 1.0\n"))
    original = mod.helper
    assert run(mod.launch)[3] == 4.0
    mod.helper = lambda v: v - 1.0
    assert run(mod.launch)[3] == 2.0
    mod.helper = original
    assert run(mod.launch)[3] == 4.0
    assert compiles(mod.launch) == 2  # A, B; A again without compiling
    assert flyc.compile_log()[-1].source == "reused"


def test_a_b_a_reuses_the_first_artifact(make_module):
    a_b_a_reuses_the_first_artifact(make_module, run)


SEED = """
SCALE = 1.0

def _load_q_fragments(q, i):
    return q[i] * SCALE

@{decorator}
def compile_decode(group: int = 1):
    @flyc.kernel
    def decode_kernel(q: fx.Tensor, out: fx.Tensor):
        i = fx.thread_idx.x
        out[i] = _load_q_fragments(q, i) + group

    @flyc.jit
    def launch_decode(q: fx.Tensor, out: fx.Tensor):
        decode_kernel(q, out).launch(block=(q.shape[0],))

    return {{"launch": launch_decode, "kernel": decode_kernel}}
"""


@pytest.mark.parametrize("decorator", ["functools.lru_cache(maxsize=256)", "flyc.compile_cache(maxsize=256)"])
def test_seed_flow_in_one_process(make_module, decorator):
    """FlyDSL#453: patch the helper, rerun the same shape without clearing
    anything: the sentinel must be observed; restore: the original artifact
    comes back without compiling."""
    mod = make_module(SEED.format(decorator=decorator))
    launch = mod.compile_decode(1)["launch"]
    assert run(launch)[2] == 3.0
    original = mod._load_q_fragments

    def sentinel(q, i):
        raise RuntimeError("sentinel traced")

    mod._load_q_fragments = sentinel
    with pytest.raises(RuntimeError, match="sentinel traced"):
        run(mod.compile_decode(1)["launch"])
    mod._load_q_fragments = original
    launch = mod.compile_decode(1)["launch"]
    assert run(launch)[2] == 3.0
    assert launch.cache_info().compiles == 1  # the restore re-used the original artifact


def test_compile_cache_evicts_per_entry_and_factory_code_change(make_module):
    mod = make_module(SEED.format(decorator="flyc.compile_cache(maxsize=8)"))
    first = mod.compile_decode(1)
    second = mod.compile_decode(2)
    assert mod.compile_decode(1) is first and mod.compile_decode(2) is second
    assert mod.compile_decode.cache_info().currsize == 2
    mod.SCALE = 1.0  # same value: nothing evicted
    assert mod.compile_decode(1) is first
    assert run(first["launch"])[2] == 3.0
    changed = make_module(SEED.replace("+ group", "+ group * 100").format(
        decorator="flyc.compile_cache(maxsize=8)")).compile_decode.__wrapped__
    mod.compile_decode.__wrapped__.__code__ = changed.__code__  # the factory's code changes in place
    registry.sweep()
    rebuilt = mod.compile_decode(1)
    assert rebuilt is not first and mod.compile_decode(2) is not second  # every entry was built by the old code
    assert run(rebuilt["launch"])[2] == 102.0


def test_factories_and_launchers_count_in_one_cache_info(make_module):
    mod = make_module(SEED.format(decorator="flyc.compile_cache(maxsize=2)"))
    launch = mod.compile_decode(1)["launch"]
    for group in (1, 2, 3):  # 1 is a hit; 3 pushes out the oldest entry
        mod.compile_decode(group)
    factory = mod.compile_decode.cache_info()
    run(launch)
    run(launch)
    launcher = launch.cache_info()
    assert type(factory) is type(launcher)
    assert factory == (1, 3, 3, 1, 2, 2) and factory.currsize == factory.size == 2  # functools' name too
    assert (launcher.hits, launcher.misses, launcher.compiles, launcher.size, launcher.maxsize) == (1, 1, 1, 1, None)


def test_lru_cache_factory_is_cleared_when_its_code_changes(make_module):
    mod = make_module(SEED.format(decorator="functools.lru_cache(maxsize=256)"))
    launch = mod.compile_decode(1)["launch"]
    assert run(launch)[2] == 3.0
    new_factory = make_module(SEED.replace("+ group", "+ group * 100").format(
        decorator="functools.lru_cache(maxsize=256)")).compile_decode.__wrapped__
    mod.compile_decode.__wrapped__.__code__ = new_factory.__code__
    notices = registry.sweep()
    assert any("compile factory compile_decode" in what for what, _ in notices)
    assert mod.compile_decode.cache_info().currsize == 0
    assert run(mod.compile_decode(1)["launch"])[2] == 102.0
    with pytest.raises(flyc.StaleLauncherError, match="call compile_decode"):
        run(launch)  # the launcher built from the old code refuses to run


def test_module_file_edited_on_disk(make_module, tmp_path):
    mod = make_module(elementwise("helper(x[i])", "def helper(v):\n    return v + 1.0\n"), name="edited_mod")
    held = mod.launch
    registry.reload_edited_modules()  # learns the file as it is
    assert run(held)[1] == 2.0
    path = tmp_path / "edited_mod.py"
    path.write_text(path.read_text().replace("v + 1.0", "v + 50.0"))
    assert registry.reload_edited_modules() == ["edited_mod"]
    assert run(held)[1] == 51.0  # the launcher the user holds runs the new code
    assert compiles(held) == 2
    assert registry.reload_edited_modules() == []


def test_sweep_reports_exactly_what_changed(make_module):
    mod = make_module(elementwise("helper(x[i])", "def helper(v):\n    return v + 1.0\n"))
    run(mod.launch)
    registry.sweep()
    assert [n for n in registry.sweep() if mod.launch.__qualname__ in n[0]] == []  # nothing changed
    exec("def helper(v):\n    return v + 2.0\n", mod.__dict__)
    notices = registry.sweep()
    assert any("launcher launch" in what and "'helper'" in " ".join(r) for what, r in notices)
    assert mod.launch.cache_info().size == 0  # evicted eagerly...
    assert compiles(mod.launch) == 1  # ...but not recompiled until called
    assert run(mod.launch)[1] == 3.0


def test_lru_cache_factory_reading_a_module_constant(make_module):
    mod = make_module(textwrap.dedent("""
        OFFSET = 1.0

        @functools.lru_cache(maxsize=None)
        def build():
            offset = OFFSET * 2.0  # read when the factory runs, baked in through the closure

            @flyc.kernel
            def kernel(x: fx.Tensor, out: fx.Tensor):
                out[fx.thread_idx.x] = x[fx.thread_idx.x] + offset

            @flyc.jit
            def launch(x: fx.Tensor, out: fx.Tensor):
                kernel(x, out).launch(block=(x.shape[0],))

            return launch
    """))
    assert run(mod.build())[0] == 2.0
    mod.OFFSET = 5.0
    notices = registry.sweep()
    assert any("'OFFSET', read by compile factory build" in " ".join(r) for _, r in notices)
    assert run(mod.build())[0] == 10.0


# -- reads through objects ------------------------------------------------------------


CONFIG = """
class Config:
    def __init__(self):
        self.scale = 2.0
        self.other = 0

cfg = Config()
"""


def test_an_instance_attribute_changed_and_an_unrelated_one(make_module):
    mod = make_module(elementwise("x[i] * cfg.scale", CONFIG))
    assert run(mod.launch)[3] == 6.0
    mod.cfg.other = 1  # the same object, not a dependency: re-checked, not recompiled
    assert run(mod.launch)[3] == 6.0
    assert compiles(mod.launch) == 1
    mod.cfg.scale = 3.0
    assert run(mod.launch)[3] == 9.0
    assert compiles(mod.launch) == 2
    assert mod.launch.last_reasons == ["cfg.scale changed from 2.0 to 3.0"]


def test_a_class_attribute_through_an_instance_then_shadowed_on_it(make_module):
    mod = make_module(elementwise("x[i] * k.scale", "class K:\n    scale = 2.0\n\nk = K()\n"))
    assert run(mod.launch)[3] == 6.0
    mod.K.scale = 6.0
    assert run(mod.launch)[3] == 18.0
    assert "K.scale changed from 2.0 to 6.0" in mod.launch.last_reasons
    mod.k.scale = 7.0  # the instance's own now hides the class's
    assert run(mod.launch)[3] == 21.0
    assert "k.scale is now set on the object, over its class's" in mod.launch.last_reasons
    assert compiles(mod.launch) == 3


METHODS = """
class Ops:
    def scale(self, v):
        return v * 2.0

ops = Ops()
"""


def test_a_method_patched_on_the_class_shadowed_on_the_instance_and_redefined_identically(make_module):
    mod = make_module(elementwise("ops.scale(x[i])", METHODS))
    assert run(mod.launch)[3] == 6.0
    namespace = {}
    exec("def scale(self, v):\n    return v * 2.0\n", namespace)
    mod.Ops.scale = namespace["scale"]  # identical code: nothing to recompile
    assert run(mod.launch)[3] == 6.0
    assert compiles(mod.launch) == 1
    mod.Ops.scale = lambda self, v: v * 3.0
    assert run(mod.launch)[3] == 9.0
    assert "Ops.scale now refers to a different function" in mod.launch.last_reasons
    mod.ops.scale = lambda v: v * 4.0
    assert run(mod.launch)[3] == 12.0
    assert compiles(mod.launch) == 3


def test_a_property_and_what_its_getter_reads(make_module):
    mod = make_module(elementwise("x[i] * p.scale", """
class P:
    def __init__(self):
        self._factor = 2.0

    @property
    def scale(self):
        return self._factor + 1.0

p = P()
"""))
    assert run(mod.launch)[3] == 9.0
    mod.p._factor = 3.0
    assert run(mod.launch)[3] == 12.0
    assert "self._factor of a P changed from 2.0 to 3.0" in mod.launch.last_reasons
    mod.P.scale = property(lambda self: 10.0)
    assert run(mod.launch)[3] == 30.0
    assert compiles(mod.launch) == 3


def test_a_simple_namespace_and_an_object_reached_through_another(make_module):
    settings = "import types\nsettings = types.SimpleNamespace(inner=types.SimpleNamespace(scale=2.0))\n"
    mod = make_module(elementwise("x[i] * settings.inner.scale", settings))
    assert run(mod.launch)[3] == 6.0
    mod.settings.inner.scale = 5.0
    assert run(mod.launch)[3] == 15.0
    assert "settings.inner.scale changed from 2.0 to 5.0" in mod.launch.last_reasons
    mod.settings.inner = types.SimpleNamespace(scale=1.0)
    assert run(mod.launch)[3] == 3.0
    assert compiles(mod.launch) == 3


def test_a_slots_attribute_is_watched_by_value(make_module):
    mod = make_module(elementwise("x[i] * s.scale",
                                  "class S:\n    __slots__ = ('scale', 'other')\n\ns = S()\ns.scale = 2.0\n"))
    assert run(mod.launch)[3] == 6.0
    mod.s.other = 1.0  # the other slot: checked, not recompiled
    assert run(mod.launch)[3] == 6.0 and compiles(mod.launch) == 1
    mod.s.scale = 4.0
    assert run(mod.launch)[3] == 12.0
    assert mod.launch.last_reasons == ["s.scale changed from 2.0 to 4.0"]
    del mod.s.scale
    with pytest.raises(AttributeError, match="scale"):
        run(mod.launch)


def test_an_element_of_a_small_array_read_while_tracing(make_module):
    mod = make_module(elementwise("x[i] * float(W[0])", "import numpy as np\nW = np.array([2.0, 5.0])\n"))
    assert run(mod.launch)[3] == 6.0
    mod.W[1] = 9.0  # its contents changed, but the compiled value is the same: checked, not recompiled
    assert run(mod.launch)[3] == 6.0
    assert compiles(mod.launch) == 1
    mod.W[0] = 7.0
    assert run(mod.launch)[3] == 21.0
    assert mod.launch.last_reasons == ["W[0] changed"]
    mod.W[0] = 7.0  # the same bytes again: nothing to do
    assert run(mod.launch)[3] == 21.0
    assert compiles(mod.launch) == 2


def test_bytearrays_and_torch_cpu_tensors_are_watched_too(make_module):
    torch = pytest.importorskip("torch")
    mod = make_module(elementwise("x[i] * float(T[0]) + B[0]",
                                  "import torch\nT = torch.tensor([2.0])\nB = bytearray([1])\n"))
    assert run(mod.launch)[3] == 7.0
    mod.T[0] = 3.0
    assert run(mod.launch)[3] == 10.0
    mod.B[0] = 5
    assert run(mod.launch)[3] == 14.0
    assert compiles(mod.launch) == 3
    assert isinstance(mod.T, torch.Tensor)


def test_bfloat16_and_fp8_torch_tables_are_watched_like_any_buffer(make_module):
    pytest.importorskip("torch")
    mod = make_module(elementwise("x[i] * float(T[0]) + float(F[0])",
                                  "import torch\nT = torch.tensor([2.0], dtype=torch.bfloat16)\n"
                                  "F = torch.tensor([1.0]).to(torch.float8_e4m3fn)\n"))
    assert run(mod.launch)[3] == 7.0
    mod.T[0] = 3.0
    assert run(mod.launch)[3] == 10.0
    mod.F[0] = 2.0
    assert run(mod.launch)[3] == 11.0
    assert compiles(mod.launch) == 3
    assert mod.launch.last_reasons == ["F[0] changed"]


def test_an_element_of_a_large_array_is_a_clear_error(make_module):
    mod = make_module(elementwise("x[i] * float(BIG[0])", "import numpy as np\nBIG = np.ones(100_000)\n"))
    with pytest.raises(flyc.KernelError, match=r"BIG\[0\] reads a ndarray of 800000 bytes while tracing.*"
                                               r"pass BIG as an fx.Tensor argument") as info:
        run(mod.launch)
    assert info.value.filename == mod.__file__


def test_a_helper_rebound_while_other_threads_call_the_launcher(make_module):
    """A compile that traced an old helper must not be installed with a guard taken after the
    rebinding (it would pass forever): threads keep calling while the helper changes 37 times."""
    import threading
    import time

    mod = make_module(elementwise("helper(x[i])", "def helper(v):\n    return v + 0.0\n"))
    stop = threading.Event()

    def keep_calling():
        x, out = np.arange(8, dtype=np.float32), np.zeros(8, np.float32)
        while not stop.is_set():
            mod.launch(x, out)

    threads = [threading.Thread(target=keep_calling) for _ in range(4)]
    for thread in threads:
        thread.start()
    try:
        for k in range(1, 38):
            exec(f"def helper(v):\n    return v + {k}.0\n", mod.__dict__)
            time.sleep(0.003)
    finally:
        stop.set()
        for thread in threads:
            thread.join()
    assert run(mod.launch)[3] == 3.0 + 37.0


@pytest.mark.parametrize("still_holds", [True, False])
def test_a_revalidation_that_clears_the_cache_leaves_nothing_dangling(make_module, monkeypatch, still_holds):
    """Revalidating runs Python, which may evict this very launcher's
    artifacts (a compile factory's check does): the lookup must not use the
    entry it found before, and the call compiles afresh."""
    mod = make_module(elementwise("x[i] * SCALE", "SCALE = 2.0\nCOUNTER = 0\n"))
    assert run(mod.launch)[3] == 6.0

    calls = []

    def clear_then_answer(record):
        calls.append(record)
        mod.launch.cache_clear()
        return still_holds

    monkeypatch.setattr(mod.launch, "_revalidate", clear_then_answer)
    mod.COUNTER += 1  # the guard sees the module change: revalidate runs
    for _ in range(3):
        assert run(mod.launch)[3] == 6.0
    assert len(calls) == 1 and compiles(mod.launch) == 2  # the fresh artifact's guard holds
