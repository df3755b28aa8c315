"""flyrt's engine guarding PyPI's FlyDSL (compile-only, gfx942): in one process,
and across processes for the disk cache.

Each scenario checks what FlyDSL really traced (a sentinel helper raises when
traced; counts of traces) and what it kept (its artifacts, by identity)."""

import importlib
import itertools
import json
import os
import subprocess
import sys
import textwrap
import types
import warnings
from pathlib import Path

import pytest

flydsl = pytest.importorskip("flydsl", reason="the real FlyDSL is not installed")
torch = pytest.importorskip("torch")

import flydsl.compiler as flyc  # noqa: E402

import flyrt.flydsl_adapter as adapter  # noqa: E402
from flyrt.invalidation import factories, registry  # noqa: E402
from autotuned_source import AUTOTUNED  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
_counter = itertools.count()

HEADER = """
import functools
import flydsl.compiler as flyc
import flydsl.expr as fx
"""

# The factory-built launcher of upstream's PA decode, reduced: one kernel, two helpers.
FACTORY = """
@flyc.jit
def scale(x):
    return x * 2.0


def offset(x):
    return x + 1.0


UNUSED = 1


@functools.lru_cache(maxsize=None)
def compile_launch(block: int):
    @flyc.kernel
    def kernel(A: fx.Tensor, C: fx.Tensor):
        i = fx.block_idx.x * block + fx.thread_idx.x
        C[i] = offset(scale(A[i]))

    @flyc.jit
    def launch(A: fx.Tensor, C: fx.Tensor, n: fx.Constexpr[int]):
        kernel(A, C).launch(grid=(n // block, 1, 1), block=(block, 1, 1))

    return launch
"""


@pytest.fixture(autouse=True)
def compile_only(tmp_path, monkeypatch):
    for name in ("COMPILE_ONLY", "ARCH", "ROCM_PATH"):  # put back after the test
        if name in os.environ:
            monkeypatch.setenv(name, os.environ[name])  # a ROCm (or ROCm-shaped) install the machine names
        else:
            monkeypatch.delenv(name, raising=False)
    adapter.use_compile_only("gfx942")
    monkeypatch.setenv("FLYDSL_RUNTIME_CACHE_DIR", str(tmp_path / "flydsl-cache"))
    monkeypatch.setenv("FLYDSL_RUNTIME_ENABLE_CACHE", "1")  # FlyDSL's default, which tests/conftest.py turns off
    assert adapter.install(global_drift="recompile")


@pytest.fixture
def make_module(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path))

    def make(body=FACTORY):
        name = f"flydsl_user_mod_{next(_counter)}"
        (tmp_path / f"{name}.py").write_text(HEADER + textwrap.dedent(body))
        importlib.invalidate_caches()
        return importlib.import_module(name)

    return make


def launch_once(module, block=64):
    launcher = module.compile_launch(block)
    launcher(torch.ones(256), torch.empty(256), 256)
    return launcher


@flyc.jit
def sentinel(x):
    raise RuntimeError("SENTINEL traced")


def artifacts(launcher):
    return list(launcher._mem_cache.values())


def test_vector_add_compiles_to_gfx942_assembly(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(REPO / "notebooks"))
    monkeypatch.setenv("FLYDSL_DEBUG_DUMP_ASM", "1")
    monkeypatch.setenv("FLYDSL_DUMP_DIR", str(tmp_path / "dump"))
    from kernels.flydsl_vector_add import vector_add

    vector_add(torch.ones(1024), torch.ones(1024), torch.empty(1024), 1024)
    isa = next((tmp_path / "dump").rglob("*final_isa.s")).read_text()
    assert '.amdgcn_target "amdgcn-amd-amdhsa-unknown-gfx942"' in isa
    assert isa.count("global_load_dword ") == 2 and "v_add_f32" in isa and "global_store_dword" in isa
    assert "s_endpgm" in isa


def test_helper_swapped_through_a_module_attribute_is_traced_and_restoring_reuses(make_module):
    helpers = make_module("@flyc.jit\ndef scale(x):\n    return x * 2.0\n")
    module = make_module(f"import {helpers.__name__}\n" + FACTORY.replace(
        "C[i] = offset(scale(A[i]))", f"C[i] = {helpers.__name__}.scale(A[i])"))
    launcher = launch_once(module)
    baseline = artifacts(launcher)
    guard = adapter.handle_of(launcher)
    assert guard.cache_info().compiles == 1

    original, helpers.scale = helpers.scale, sentinel
    with pytest.raises(RuntimeError, match="SENTINEL traced"):
        launch_once(module)
    assert any("'scale' in module" in reason for reason in guard.last_reasons)

    helpers.scale = original
    assert launch_once(module) is launcher
    assert artifacts(launcher) == baseline and all(a is b for a, b in zip(artifacts(launcher), baseline))
    assert guard.cache_info().compiles == 1  # the sentinel's trace failed; nothing else compiled


def test_global_helper_rebound_recompiles_or_raises_as_flydsl_would(make_module):
    module = make_module()
    launch_once(module)
    module.scale = sentinel
    with pytest.raises(RuntimeError, match="SENTINEL traced"):
        launch_once(module)

    assert adapter.install(global_drift="raise")  # FlyDSL 0.4.2's own contract, kept; 0.5.0 has none
    strict = make_module()
    launch_once(strict)
    strict.scale = sentinel
    expected = "global 'scale' .* changed since first compile" if per_signature() else "SENTINEL traced"
    with pytest.raises(RuntimeError, match=expected):
        launch_once(strict)


def test_plain_helper_edited_in_place_is_traced_again(make_module):
    module = make_module()
    launcher = launch_once(module)

    def offset(x):
        raise RuntimeError("SENTINEL traced")

    module.offset.__code__ = offset.__code__  # what a reload in place does to a function
    with pytest.raises(RuntimeError, match="SENTINEL traced"):
        launch_once(module)
    assert any("function offset" in reason for reason in adapter.handle_of(launcher).last_reasons)


def test_a_change_nothing_traced_read_keeps_the_artifact(make_module):
    module = make_module()
    launcher = launch_once(module)
    baseline = artifacts(launcher)
    module.UNUSED = 2
    module.brand_new_global = object()
    launch_once(module)
    assert artifacts(launcher) == baseline
    info = adapter.handle_of(launcher).cache_info()
    assert (info.compiles, info.evictions, info.hits) == (1, 0, 1)


def test_a_changed_lru_cache_factory_is_cleared_and_its_old_launcher_refuses(make_module):
    module = make_module()
    old = launch_once(module)
    variant = make_module(FACTORY.replace("block=(block, 1, 1)", "block=(block, 1, 1), smem=0"))
    module.compile_launch.__wrapped__.__code__ = variant.compile_launch.__wrapped__.__code__

    notices = dict(registry.sweep())
    assert any(what == "compile factory compile_launch" for what in notices)
    assert module.compile_launch.cache_info().currsize == 0
    with pytest.raises(factories.StaleLauncherError, match="compile_launch, whose code changed"):
        old(torch.ones(256), torch.empty(256), 256)
    assert launch_once(module) is not old


def test_a_failed_trace_keeps_nothing_and_the_fix_compiles(make_module):
    module = make_module(FACTORY.replace("return x + 1.0", "return x + undefined_name"))
    with pytest.raises(NameError, match="undefined_name"):
        launch_once(module)
    module.undefined_name = 1.0
    launcher = launch_once(module)
    assert adapter.handle_of(launcher).cache_info().compiles == 1


def test_a_debugger_trace_function_survives_a_trace(make_module):
    events = []

    def debugger(frame, event, arg):
        events.append(event)
        return None

    sys.settrace(debugger)
    try:
        launch_once(make_module())
        assert sys.gettrace() is debugger
    finally:
        sys.settrace(None)
    assert "call" in events


def test_an_untested_release_is_guarded_by_what_it_has_and_says_so(monkeypatch, make_module):
    adapter.uninstall()
    monkeypatch.setattr(flydsl, "__version__", "0.9.0")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert adapter.install(global_drift="recompile")
    (notice,) = [str(w.message) for w in caught]
    assert f"tested with flydsl 0.4.2, 0.5.0, not 0.9.0; guarding it as a release with {adapter.release.kind}" \
        in notice
    module = make_module()
    launch_once(module)
    module.scale = sentinel
    with pytest.raises(RuntimeError, match="SENTINEL traced"):  # guarded: the change is seen
        launch_once(module)


def test_a_release_lacking_a_hook_the_guard_needs_is_left_alone_naming_it(monkeypatch):
    adapter.uninstall()
    from flydsl.compiler import jit_function

    monkeypatch.delattr(jit_function.JitFunction, "_make_compiled_function")
    before = dict(vars(jit_function.JitFunction))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert adapter.install() is False
    message = str(caught[0].message)
    assert f"flydsl {flydsl.__version__} is not guarded: " in message
    assert "lacks JitFunction._make_compiled_function" in message and "FlyDSL's own caching applies" in message
    assert dict(vars(jit_function.JitFunction)) == before
    assert not adapter.installed()


def test_a_release_lacking_an_optional_hook_says_what_is_not_guarded(monkeypatch):
    adapter.uninstall()
    from flydsl.compiler import jit_function

    optional = "_check_globals_drift" if per_signature() else None
    if optional is not None:  # 0.5.0 has no optional hooks: nothing to leave out there
        monkeypatch.delattr(jit_function.JitFunction, optional)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert adapter.install()
    notices = [str(w.message) for w in caught]
    if optional is None:
        assert notices == []
    else:
        assert notices == [f"flydsl {flydsl.__version__} is guarded except for FlyDSL's own 'a global changed: "
                           "restart' contract (it lacks JitFunction._check_globals_drift)"]


def test_an_autotuner_lacking_a_hook_is_left_alone_and_the_rest_guarded(monkeypatch):
    adapter.uninstall()
    from flydsl.autotune import Autotuner

    monkeypatch.delattr(Autotuner, "_save_disk_cache")
    before = dict(vars(Autotuner))
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            assert adapter.install()
        assert [str(w.message) for w in caught] == [
            f"flydsl {flydsl.__version__} is guarded except for autotuned configs dropped when the code they were "
            "tuned for changes (it lacks Autotuner._save_disk_cache)"]
        assert dict(vars(Autotuner)) == before  # none of its methods wrapped
    finally:
        adapter.uninstall()  # the next test installs the whole adapter again


def per_signature():
    """Whether the installed FlyDSL keeps its artifacts per signature (0.4.2), not per traced IR (0.5.0)."""
    from flyrt.flydsl_adapter import compat

    return adapter.release.kind == compat.PER_SIGNATURE


def test_a_corrupt_dependency_manifest_is_reported_and_rebuilt(make_module, tmp_path):
    module = make_module()
    launch_once(module)
    if not per_signature():  # FlyDSL 0.5.0 keys its disk entries by traced IR: nothing to fold in
        assert not list((tmp_path / "flydsl-cache").rglob("*.flyrt-deps.json"))
        return
    manifest, = (tmp_path / "flydsl-cache").rglob("*.flyrt-deps.json")
    manifest.write_text("{not json")
    del sys.modules[module.__name__]
    again = importlib.import_module(module.__name__)  # as a new process would: the same disk key
    with pytest.warns(RuntimeWarning, match="unreadable FlyDSL dependency manifest .* rebuilt"):
        launcher = launch_once(again)
    assert adapter.handle_of(launcher).cache_info().compiles == 1
    assert json.loads(manifest.read_text())[0]["deps"]


DISK_SCRIPT = """
import hashlib, json, sys
import torch
import flyrt.flydsl_adapter as adapter
adapter.use_compile_only("gfx942")
adapter.install()
import flydsl.compiler as flyc
import disk_helpers, disk_factory

@flyc.jit
def tripled(x):
    return x * 3.0

def run():
    launcher(torch.ones(256), torch.empty(256), 256)
    # what this call ran: 0.5.0's latest (its artifacts of every version stay); 0.4.2's only one
    artifact = launcher._last_compiled[1] if launcher._last_compiled else next(iter(launcher._mem_cache.values()))
    code = hashlib.sha256(artifact._ir_text.encode()).hexdigest()  # holds the gfx942 code object
    return {"traces": guard.traces, "compiles": guard.compiles, "loads": guard.loads, "code": code}

if sys.argv[1] == "triple":
    disk_helpers.scale = tripled
launcher = disk_factory.compile_launch(64)
guard = adapter.handle_of(launcher)
steps = [run()]
if len(sys.argv) > 2:
    disk_helpers.scale = tripled
    steps.append(run())
print(json.dumps(steps))
"""


def test_disk_cache_entries_are_keyed_by_what_their_trace_read(tmp_path):
    """FlyDSL's own key misses a helper reached as a module attribute; ours does not."""
    (tmp_path / "disk_helpers.py").write_text(HEADER + "\n@flyc.jit\ndef scale(x):\n    return x * 2.0\n")
    (tmp_path / "disk_factory.py").write_text("import disk_helpers\n" + HEADER + FACTORY.replace(
        "C[i] = offset(scale(A[i]))", "C[i] = disk_helpers.scale(A[i])"))
    (tmp_path / "script.py").write_text(DISK_SCRIPT)
    env = dict(os.environ, FLYDSL_RUNTIME_CACHE_DIR=str(tmp_path / "cache"),
               PYTHONPATH=os.pathsep.join(filter(None, [str(tmp_path), os.environ.get("PYTHONPATH")])),
               FLYDSL_RUNTIME_ENABLE_CACHE="1")

    def run(*args):
        done = subprocess.run([sys.executable, "script.py", *args], cwd=tmp_path, env=env,
                              capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout.strip().splitlines()[-1])

    double, = run("double")
    triple, = run("triple")
    assert (double["compiles"], double["loads"], triple["compiles"], triple["loads"]) == (1, 0, 1, 0)
    assert double["code"] != triple["code"]  # triple did not get double's artifact
    loaded, swapped = run("double", "swap")
    if per_signature():
        # Both from disk; and guarded after a load: the manifest names what the artifact read.
        assert loaded == {**double, "traces": 0, "compiles": 0, "loads": 1}
        assert swapped == {**triple, "traces": 0, "compiles": 0, "loads": 2}
        manifests = list((tmp_path / "cache").rglob("*.flyrt-deps.json"))
        assert len(manifests) == 1 and len(json.loads(manifests[0].read_text())) == 2
    else:  # FlyDSL 0.5.0 traces, then finds each IR's artifact on disk: nothing compiles
        assert loaded == {**double, "compiles": 0}
        assert swapped == {**triple, "traces": 2, "compiles": 0}


# Helpers and values reached through objects: the same reads flyrt's front end records.
THROUGH_OBJECTS = """
import types


@flyc.jit
def doubled(x):
    return x * 2.0


class Ops:
    def scale(self, x):
        return x * self.factor


class Config:
    pass


cfg = Config()
cfg.fn = doubled
cfg.unrelated = 1
ops = Ops()
ops.factor = 2.0
consts = types.SimpleNamespace(bias=1.0)

""" + FACTORY.replace("C[i] = offset(scale(A[i]))", "C[i] = ops.scale(cfg.fn(A[i])) + consts.bias")


def test_a_jit_helper_stored_on_an_object_is_seen_when_rebound(make_module):
    module = make_module(THROUGH_OBJECTS)
    launcher = launch_once(module)
    guard = adapter.handle_of(launcher)
    _, bindings = guard.record.names()
    assert {"cfg.fn", "self.factor of a Ops", "ops.scale", "Ops.scale", "consts.bias"} <= set(bindings), bindings

    module.cfg.unrelated = 2  # same object, another attribute: nothing recompiles
    launch_once(module)
    assert guard.cache_info().compiles == 1

    original, module.cfg.fn = module.cfg.fn, sentinel
    traces_the_sentinel(module, guard, because_of="cfg.fn")
    module.cfg.fn = original
    launch_once(module)
    assert guard.cache_info().compiles == 1  # the first artifact again, from history


def traces_the_sentinel(module, guard, because_of):
    with pytest.raises(RuntimeError, match="SENTINEL traced"):
        launch_once(module)
    assert any(because_of in reason for reason in guard.last_reasons), guard.last_reasons


def test_values_and_methods_read_through_objects_recompile_when_changed(make_module):
    module = make_module(THROUGH_OBJECTS)
    launcher = launch_once(module)
    guard = adapter.handle_of(launcher)

    module.consts.bias = 3.0
    launch_once(module)
    assert guard.cache_info().compiles == 2 and any("consts.bias" in r for r in guard.last_reasons)
    module.ops.factor = 5.0  # read as self.factor inside the method
    launch_once(module)
    assert guard.cache_info().compiles == 3 and any("self.factor" in r for r in guard.last_reasons)

    def raising(self, x):
        raise RuntimeError("SENTINEL traced")

    original, module.Ops.scale = module.Ops.scale, raising  # patched on the class
    traces_the_sentinel(module, guard, because_of="Ops.scale")
    module.Ops.scale = original
    launch_once(module)
    assert guard.cache_info().compiles == 3  # the last artifact again, from history
    module.ops.scale = types.MethodType(raising, module.ops)  # shadowed on the instance
    traces_the_sentinel(module, guard, because_of="ops.scale")


# Upstream PA decode's calling pattern (kernels/common/tensor_shim.py, _run_compiled):
# flyc.compile once, keep the CompiledFunction on the launcher, call it directly from then on.
RUN_COMPILED = FACTORY + """

def run_compiled(exe, *args):
    compiled = getattr(exe, "_cf", None)
    if compiled is not None:
        return compiled(*args)
    exe._cf = flyc.compile(exe, *args)
"""


@flyc.jit
def tripled(x):
    return x * 3.0


@pytest.fixture
def launches(monkeypatch):
    """CompiledFunction calls launch the artifact they hold; recorded here
    (no GPU): FlyDSL's call state stands in for its device runtime."""
    from flydsl.compiler import jit_function
    from flydsl.runtime import device_runtime

    monkeypatch.delenv("COMPILE_ONLY")  # flyc.compile returns nothing in compile-only mode; CPU tensors launch nothing
    launched = []
    monkeypatch.setattr(device_runtime, "ensure_compile_runtime_pairing_from_env", lambda backend: None)
    monkeypatch.setattr(jit_function, "_call_state_from_spec",
                        lambda spec, artifact: lambda args: launched.append(artifact))
    return launched


def test_a_compiled_function_kept_on_the_launcher_never_launches_stale_code(make_module, launches):
    module = make_module(RUN_COMPILED)
    launcher = module.compile_launch(64)
    args = (torch.ones(256), torch.empty(256), 256)
    module.run_compiled(launcher, *args)  # compiles; CPU tensors: nothing launched
    compiled, first = launcher._cf, next(iter(launcher._mem_cache.values()))
    module.run_compiled(launcher, *args)
    guard = adapter.handle_of(launcher)
    assert launches == [first] and guard.cache_info().compiles == 1

    original, module.scale = module.scale, sentinel
    with pytest.raises(RuntimeError, match="SENTINEL traced"):
        module.run_compiled(launcher, *args)
    assert launches == [first] and any("'scale'" in reason for reason in guard.last_reasons)

    module.scale = original  # back to what it was compiled from: its artifact, current again
    module.run_compiled(launcher, *args)
    assert launches == [first, first] and guard.cache_info().compiles == 1

    module.scale = tripled  # a real change: the kept CompiledFunction is rebound to the new artifact
    module.run_compiled(launcher, *args)
    assert launcher._cf is compiled and compiled._keepalive is not first
    assert launches == [first, first, compiled._keepalive] and guard.cache_info().compiles == 2
    module.run_compiled(launcher, *args)
    assert guard.cache_info().compiles == 2 and len(launches) == 4


def test_a_stale_compiled_function_called_for_another_specialization(make_module, launches):
    """0.4.2 keys a CompiledFunction's artifact by its specialization: another
    one is refused, saying so; 0.5.0 keys by the traced IR: it is rebound to
    what these arguments trace to now."""
    module = make_module(RUN_COMPILED)
    launcher = module.compile_launch(64)
    module.run_compiled(launcher, torch.ones(256), torch.empty(256), 256)
    module.scale = tripled
    if per_signature():
        with pytest.raises(adapter.StaleCompiledFunctionError,
                           match="another specialization .* call flyc.compile again"):
            module.run_compiled(launcher, torch.ones(512), torch.empty(512), 512)
        assert launches == []
    else:
        module.run_compiled(launcher, torch.ones(512), torch.empty(512), 512)
        assert launches == [launcher._cf._keepalive] and launcher._last_compiled[1] is launcher._cf._keepalive


BUFFERS = """
import numpy

W = numpy.array([2.0, 5.0], dtype=numpy.float32)
BIG = numpy.zeros(2048, dtype=numpy.float32)  # 8 KiB: more than the guard compares per call

""" + FACTORY


def test_an_element_of_a_buffer_read_while_tracing_is_watched(make_module):
    module = make_module(BUFFERS.replace("C[i] = offset(scale(A[i]))", "C[i] = A[i] * float(W[0])"))
    launcher = launch_once(module)
    guard = adapter.handle_of(launcher)
    module.W[1] = 9.0  # an element the trace did not read
    launch_once(module)
    assert guard.cache_info().compiles == 1
    module.W[0] = 3.0
    launch_once(module)
    assert guard.cache_info().compiles == 2 and guard.last_reasons == ["W[0] changed"]


def test_a_large_buffer_read_while_tracing_is_refused_at_its_line(make_module):
    from flyrt.core.errors import KernelError

    module = make_module(BUFFERS.replace("C[i] = offset(scale(A[i]))", "C[i] = A[i] * float(BIG[3])"))
    with pytest.raises(KernelError, match=r"BIG\[3\] reads a ndarray of 8192 bytes while tracing.*fx.Tensor") as error:
        launch_once(module)
    line = next(n for n, text in enumerate(Path(module.__file__).read_text().splitlines(), 1) if "BIG[3]" in text)
    assert (error.value.filename, error.value.lineno) == (module.__file__, line)


def test_a_kernel_calling_rocms_device_library_compiles_and_is_guarded(tmp_path, monkeypatch):
    """ocml's sin, exp2 and rsqrt need ROCm's amdgcn bitcode: found where
    use_compile_only linked Debian's rocm-device-libs."""
    monkeypatch.syspath_prepend(str(REPO / "notebooks"))
    monkeypatch.setenv("FLYDSL_DEBUG_DUMP_ASM", "1")
    monkeypatch.setenv("FLYDSL_DUMP_DIR", str(tmp_path / "dump"))
    from kernels import flydsl_device_math as math_module

    launcher = math_module.device_math_launcher(256)
    launcher(torch.ones(1024), torch.empty(1024), 1024)
    isa = next((tmp_path / "dump").rglob("*final_isa.s")).read_text()
    assert '.amdgcn_target "amdgcn-amd-amdhsa-unknown-gfx942"' in isa
    assert "__ocml" not in isa and "s_swappc" not in isa  # every ocml call linked in and inlined
    # what ocml's bodies lower to: sin's Payne-Hanek reduction (2/pi's leading
    # bits), exp2's hardware exp, rsqrt's correctly rounded sqrt and division
    for mark in ("0xa2f9836e", "v_exp_f32", "v_sqrt_f32", "v_div_scale_f32"):
        assert mark in isa, mark
    guard = adapter.handle_of(launcher)
    original, math_module.wave = math_module.wave, sentinel
    try:
        with pytest.raises(RuntimeError, match="SENTINEL traced"):
            launcher(torch.ones(1024), torch.empty(1024), 1024)
    finally:
        math_module.wave = original
    assert any("'wave' in module" in reason for reason in guard.last_reasons)


def test_a_device_library_kernel_kept_as_a_compile_result_is_rebound(monkeypatch, launches):
    monkeypatch.syspath_prepend(str(REPO / "notebooks"))
    from kernels import flydsl_device_math as math_module

    launcher = math_module.compile_device_math(128)
    args = (torch.ones(256), torch.empty(256), 256)
    math_module.run_compiled(launcher, *args)
    math_module.run_compiled(launcher, *args)
    first = launcher._cf._keepalive
    original, math_module.softplus = math_module.softplus, tripled
    try:
        math_module.run_compiled(launcher, *args)
    finally:
        math_module.softplus = original
    assert launches == [first, launcher._cf._keepalive] and launcher._cf._keepalive is not first


EDITED_OFFSET = "def offset(x):\n    return x + 2.0\n"


@pytest.fixture
def autotuned(make_module, monkeypatch, tmp_path):
    monkeypatch.setenv("FLYDSL_AUTOTUNE_CACHE_DIR", str(tmp_path / "autotune"))
    module = make_module(AUTOTUNED)
    calls = []

    def resolve(tuner, times):
        """The BLOCK `tuner` resolves for a call, and how many candidates it benchmarked."""
        module.TIMES[:] = times
        registry.collect_recompiles()
        block = tuner.resolve_config(torch.ones(256), torch.empty(256), 256).kwargs["BLOCK"]
        calls.append([n for n in registry.drain_recompiles() if n.what.startswith("autotuned")])
        return block, len(times) - len(module.TIMES)

    resolve.notices = calls
    return module, resolve, tmp_path / "autotune"


def test_an_autotuned_config_is_dropped_when_the_code_it_was_tuned_for_changes(autotuned):
    """FlyDSL's autotune key has no fingerprint of the code: an edited helper
    would keep the config tuned for the old code, in memory and on disk. The
    adapter ties each config to the engine's record of what the tuned code
    read: an edit drops it (memory and disk) and this call tunes again."""
    module, resolve, folder = autotuned
    assert resolve(module.tuned, [2.0, 1.0]) == (128, 2)  # both candidates compiled and timed
    assert resolve(module.tuned, [2.0, 1.0]) == (128, 0) and resolve.notices[-1] == []
    on_disk = json.loads((folder / "tuned.json").read_text())
    manifests = json.loads((folder / "tuned.flyrt-deps.json").read_text())
    assert list(on_disk) == list(manifests)
    assert any(name == "offset" for _, _, name, _ in manifests[next(iter(manifests))])

    exec(EDITED_OFFSET, module.__dict__)  # the kernel's helper edited in a cell
    assert resolve(module.tuned, [0.5, 1.0]) == (64, 2)
    [notice] = resolve.notices[-1]
    assert notice.what == "autotuned tuned" and notice.outcome == "re-tuned"
    assert any("'offset'" in reason for reason in notice.reasons), notice.reasons
    assert "re-tuned autotuned tuned" in registry.format_notice([], [notice])
    [config] = json.loads((folder / "tuned.json").read_text()).values()
    assert config == {"BLOCK": 64}  # the old code's config is gone from disk too
    assert resolve(module.tuned, [9.0, 9.0]) == (64, 0)

    exec("A = 1", module.__dict__)  # a change that changes nothing it read: kept
    assert resolve(module.tuned, [9.0, 9.0]) == (64, 0) and resolve.notices[-1] == []


def test_another_process_keeps_a_config_whose_code_is_unchanged_and_drops_one_whose_code_changed(autotuned):
    from flydsl.autotune import Autotuner

    module, resolve, folder = autotuned
    assert resolve(module.tuned, [2.0, 1.0]) == (128, 2)

    def fresh():  # what another process's decorator makes: the configs from disk
        return Autotuner(module.tuned.fn, module.tuned.configs, ["n"], 5, 25, do_bench_fn=module.bench)

    assert resolve(fresh(), [9.0, 9.0]) == (128, 0)
    exec(EDITED_OFFSET, module.__dict__)
    assert resolve(fresh(), [0.5, 1.0]) == (64, 2)
    [notice] = resolve.notices[-1]
    assert any("'offset'" in reason for reason in notice.reasons), notice.reasons

    (folder / "tuned.flyrt-deps.json").unlink()  # tuned without the adapter: what it fits is unknown
    assert resolve(fresh(), [2.0, 1.0]) == (128, 2)
    [notice] = resolve.notices[-1]
    assert "nothing records what its code read" in notice.reasons[0]

    (folder / "tuned.flyrt-deps.json").write_text("{not json")
    with pytest.warns(RuntimeWarning, match="unreadable autotune manifest"):
        tuner = fresh()
    assert resolve(tuner, [0.5, 1.0]) == (64, 2)
    assert resolve(fresh(), [9.0, 9.0]) == (64, 0)  # the manifest was written again
