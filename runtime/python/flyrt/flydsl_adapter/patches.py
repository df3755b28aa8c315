"""The JitFunction and CompiledFunction methods the adapter wraps, and nothing else.

- ``__init__``: notes the ``functools.lru_cache`` factory whose running call
  defines the function (before FlyDSL's AST rewriter replaces its code).
- ``_compile_or_execute`` (behind ``__call__``, ``flyc.compile`` and
  compile-only calls): validates the dependencies before FlyDSL looks at its
  caches; nested calls made while another function traces pass straight
  through.
- ``_trace_and_compile``: records what the user's code reads while it traces.
- ``_ensure_cache_manager``: folds the dependency fingerprint into the disk
  cache (``disk_key``).
- ``_make_compiled_function`` (behind ``flyc.compile``): ties the
  ``CompiledFunction`` it makes to its JitFunction and specialization, and
  ``CompiledFunction.__call__`` validates before launching
  (``compiled_function``).

Each wrapper calls FlyDSL's own method; ``remove()`` puts the originals back.
"""

import functools
import time

from .. import factories
from ..dependencies import Recorder
from . import compat, compiled_function, disk_key, guarded_jit
from .trace_recorder import TraceRecorder


class Patches:
    def __init__(self, jit_function_module):
        self._module = jit_function_module
        self._originals = {}  # (class, name) -> its own method

    def apply(self):
        jit, compiled, ir = self._module.JitFunction, self._module.CompiledFunction, self._module.ir
        init = self._wrap(jit, "__init__")
        compile_or_execute = self._wrap(jit, "_compile_or_execute")
        trace_and_compile = self._wrap(jit, "_trace_and_compile")
        ensure_cache_manager = self._wrap(jit, "_ensure_cache_manager")
        make_compiled_function = self._wrap(jit, "_make_compiled_function")
        call_compiled = self._wrap(compiled, "__call__")

        @functools.wraps(init)
        def __init__(self, func, *args, **kwargs):
            factory = factories.creator_of(func)  # before FlyDSL rewrites func.__code__
            init(self, func, *args, **kwargs)
            guarded_jit.attach(self, factory)

        @functools.wraps(compile_or_execute)
        def _compile_or_execute(self, *args, **kwargs):
            if ir.Context.current is not None:  # inlined into another trace
                return compile_or_execute(self, *args, **kwargs)
            guarded_jit.attach(self).before_call(self)
            return compile_or_execute(self, *args, **kwargs)

        @functools.wraps(trace_and_compile)
        def _trace_and_compile(self, *args, **kwargs):
            recorder = Recorder()
            start = time.perf_counter()
            with TraceRecorder(recorder):
                traced = trace_and_compile(self, *args, **kwargs)
            guarded_jit.attach(self).traced(recorder, (time.perf_counter() - start) * 1e3)
            return traced

        @functools.wraps(ensure_cache_manager)
        def _ensure_cache_manager(self, *args, **kwargs):
            ensure_cache_manager(self, *args, **kwargs)
            if disk_key.needs_folding(self.cache_manager):  # runs on every call: the common case returns here
                disk_key.fold(self, guarded_jit.attach(self))

        @functools.wraps(make_compiled_function)
        def _make_compiled_function(self, cache_key, *args, **kwargs):
            made = make_compiled_function(self, cache_key, *args, **kwargs)
            compiled_function.made(self, cache_key, made)
            return made

        @functools.wraps(call_compiled)
        def __call__(self, *args):
            compiled_function.ensure_current(self, args)
            return call_compiled(self, *args)

        wrappers = {"__init__": __init__, "_compile_or_execute": _compile_or_execute,
                    "_trace_and_compile": _trace_and_compile, "_ensure_cache_manager": _ensure_cache_manager,
                    "_make_compiled_function": _make_compiled_function}
        for name in compat.PATCHED_METHODS:  # the list compat checks is the list patched
            setattr(jit, name, wrappers[name])
        compiled.__call__ = __call__

    def _wrap(self, cls, name):
        original = cls.__dict__[name]
        self._originals[cls, name] = original
        return original

    def remove(self):
        for (cls, name), original in self._originals.items():
            setattr(cls, name, original)
        self._originals.clear()
