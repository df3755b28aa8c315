"""The JitFunction and CompiledFunction methods the adapter wraps, and nothing else.

Every kind of release (compat.py):

- ``__init__``: notes the ``functools.lru_cache`` factory whose running call
  defines the function (before FlyDSL's AST rewriter replaces its code).
- ``_compile_or_execute`` (behind ``__call__``, ``flyc.compile`` and
  compile-only calls): validates the dependencies before FlyDSL looks at its
  caches; nested calls made while another function traces pass straight
  through.
- ``_make_compiled_function`` (behind ``flyc.compile``): ties the
  ``CompiledFunction`` it makes to its JitFunction and specialization, and
  ``CompiledFunction.__call__`` validates before launching
  (``compiled_function``).

A release with per-signature caches (0.4.2) also has ``_trace_and_compile``
wrapped, to record what the user's code reads while it traces, and
``_ensure_cache_manager``, to fold that into its disk keys (``disk_key``).
``flydsl.autotune``'s ``Autotuner`` checks the config of each key it makes
against what the tuned code read, and keeps a manifest of that beside its
file when it loads or saves (``autotuned_configs``). A release that traces per call (0.5.0)
records around the whole traced call
instead, and runs a call whose signature it ran before without the trace
while the guard holds (``fast_path``); ``MlirCompiler.compile`` is counted,
to tell a trace that compiled from one that found its IR's artifact.

Each wrapper calls FlyDSL's own method; ``remove()`` puts the originals back.
"""

import functools
import time

from ..invalidation import factories
from ..invalidation.dependencies import Recorder
from . import compat, compiled_function, disk_key, guarded_jit
from .trace_recorder import TraceRecorder


def _recorded(handle, call, artifacts=None):
    """`call()` with what the user's code reads while it runs recorded into
    `handle`. `artifacts()`: a count that grows when the trace compiles
    (None: every trace compiles)."""
    recorder = Recorder()
    before = artifacts() if artifacts else None
    start = time.perf_counter()
    with TraceRecorder(recorder):
        result = call()
    compiled = artifacts is None or artifacts() > before
    handle.traced(recorder, (time.perf_counter() - start) * 1e3, "compiled" if compiled else "traced")
    return result


class Patches:
    def __init__(self, jit_function_module, release):
        self._module = jit_function_module
        self._release = release
        self._originals = {}  # (class, name) -> its own method

    def apply(self):
        jit, compiled = self._module.JitFunction, self._module.CompiledFunction
        init = self._wrap(jit, "__init__")
        make_compiled_function = self._wrap(jit, "_make_compiled_function")
        call_compiled = self._wrap(compiled, "__call__")

        @functools.wraps(init)
        def __init__(self, func, *args, **kwargs):
            factory = factories.creator_of(func)  # before FlyDSL rewrites func.__code__
            init(self, func, *args, **kwargs)
            guarded_jit.attach(self, factory)

        @functools.wraps(make_compiled_function)
        def _make_compiled_function(self, cache_key, *args, **kwargs):
            made = make_compiled_function(self, cache_key, *args, **kwargs)
            compiled_function.made(self, cache_key, made)
            return made

        @functools.wraps(call_compiled)
        def __call__(self, *args):
            compiled_function.ensure_current(self, args)
            return call_compiled(self, *args)

        jit.__init__, jit._make_compiled_function, compiled.__call__ = __init__, _make_compiled_function, __call__
        if self._release.kind == compat.PER_SIGNATURE:
            self._per_signature(jit)
        else:
            self._trace_per_call(jit)
        if all(self._release.has(f"Autotuner.{hook}") for hook in compat.AUTOTUNER_HOOKS):
            self._autotuner()

    def _autotuner(self):
        from flydsl.autotune import Autotuner

        from . import autotuned_configs

        make_key = self._wrap(Autotuner, "_make_key")
        load, save = self._wrap(Autotuner, "_load_disk_cache"), self._wrap(Autotuner, "_save_disk_cache")

        @functools.wraps(make_key)
        def _make_key(self, *args, **kwargs):
            key = make_key(self, *args, **kwargs)
            autotuned_configs.check(self, key)
            return key

        @functools.wraps(load)
        def _load_disk_cache(self):
            load(self)
            autotuned_configs.loaded(self)

        @functools.wraps(save)
        def _save_disk_cache(self):
            save(self)
            autotuned_configs.saved(self)

        Autotuner._make_key, Autotuner._load_disk_cache, Autotuner._save_disk_cache = (
            _make_key, _load_disk_cache, _save_disk_cache)

    def _per_signature(self, jit):
        ir = self._module.ir
        compile_or_execute = self._wrap(jit, "_compile_or_execute")
        trace_and_compile = self._wrap(jit, "_trace_and_compile")

        @functools.wraps(compile_or_execute)
        def _compile_or_execute(self, *args, **kwargs):
            if ir.Context.current is not None:  # inlined into another trace
                return compile_or_execute(self, *args, **kwargs)
            guarded_jit.attach(self).before_call(self)
            return compile_or_execute(self, *args, **kwargs)

        @functools.wraps(trace_and_compile)
        def _trace_and_compile(self, *args, **kwargs):
            return _recorded(guarded_jit.attach(self), lambda: trace_and_compile(self, *args, **kwargs))

        jit._compile_or_execute, jit._trace_and_compile = _compile_or_execute, _trace_and_compile
        if self._release.has("_ensure_cache_manager"):
            ensure_cache_manager = self._wrap(jit, "_ensure_cache_manager")

            @functools.wraps(ensure_cache_manager)
            def _ensure_cache_manager(self, *args, **kwargs):
                ensure_cache_manager(self, *args, **kwargs)
                if disk_key.needs_folding(self.cache_manager):  # runs on every call: the common case returns here
                    disk_key.fold(self, guarded_jit.attach(self))

            jit._ensure_cache_manager = _ensure_cache_manager

    def _trace_per_call(self, jit):
        from . import fast_path

        ir = self._module.ir
        compile_or_execute = self._wrap(jit, "_compile_or_execute")
        compiler = self._module.MlirCompiler
        lower = self._wrap(compiler, "compile")
        compiled = [0]  # lowerings so far: a trace that found its IR's artifact (memory, disk) lowers nothing

        @classmethod
        @functools.wraps(lower.__func__)
        def compile(cls, *args, **kwargs):
            compiled[0] += 1
            return lower.__func__(cls, *args, **kwargs)

        compiler.compile = compile

        @functools.wraps(compile_or_execute)
        def _compile_or_execute(self, args, kwargs, *, execute, return_compiled=False):
            if ir.Context.current is not None:  # inlined into another trace
                return compile_or_execute(self, args, kwargs, execute=execute, return_compiled=return_compiled)
            handle = guarded_jit.attach(self)
            handle.before_call(self)
            signature = None
            if not return_compiled:
                signature, bound = fast_path.bind(self, args, kwargs)
                call = fast_path.calls_of(self).get(signature) if signature is not None else None
                if call is not None:
                    return fast_path.run(self, call, bound, execute)
            result = _recorded(handle, lambda: compile_or_execute(self, args, kwargs, execute=execute,
                                                                  return_compiled=return_compiled),
                               lambda: compiled[0])
            fast_path.keep(self, signature)
            return result

        jit._compile_or_execute = _compile_or_execute

    def _wrap(self, cls, name):
        original = cls.__dict__[name]
        self._originals[cls, name] = original
        return original

    def remove(self):
        for (cls, name), original in self._originals.items():
            setattr(cls, name, original)
        self._originals.clear()
