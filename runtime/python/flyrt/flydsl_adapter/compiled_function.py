"""FlyDSL's other entry point, guarded: ``flyc.compile(fn, *args)``.

It returns a ``CompiledFunction`` that launches straight through its call
state, past every JitFunction check; upstream's PA decode keeps one on its
launcher (``exe._cf``) and calls it from then on. Each CompiledFunction
FlyDSL makes is tied here to the JitFunction and specialization it came
from, and each call first validates that JitFunction's dependencies with the
same guard. When the artifact it holds is no longer current (something its
trace read changed), the specialization is traced again and the
CompiledFunction rebound, in place, to the new artifact: the caller's
reference never runs stale code, and needs no change.
"""

import weakref

from . import guarded_jit, jit_caches

_origins = {}  # id(CompiledArtifact) -> _Origin, while the artifact lives (a plain dict: read on every call)


class StaleCompiledFunctionError(RuntimeError):
    """A flyc.compile result that cannot be brought up to date: call flyc.compile again."""


class _Origin:
    __slots__ = ("jit_function", "handle", "cache_key", "generation")

    def __init__(self, jit_function, cache_key):
        self.jit_function = weakref.ref(jit_function)
        self.handle = guarded_jit.attach(jit_function)
        self.cache_key = cache_key
        self.generation = self.handle.generation  # its caches then; changed: look again


def made(jit_function, cache_key, compiled):
    """FlyDSL made `compiled` for `jit_function`'s specialization `cache_key`."""
    artifact = compiled._keepalive
    if id(artifact) not in _origins:
        weakref.finalize(artifact, _origins.pop, id(artifact), None)
    _origins[id(artifact)] = _Origin(jit_function, cache_key)


def ensure_current(compiled, args):
    """Before `compiled(*args)` runs: validates, and rebinds it when stale."""
    origin = _origins.get(id(compiled._keepalive))
    jit_function = origin.jit_function() if origin is not None else None
    if jit_function is None:
        return  # not made through a guarded JitFunction, or that function is gone
    handle = origin.handle
    handle.before_call(jit_function)
    if handle.generation == origin.generation:
        return
    keyed_by_signature = jit_caches.keyed_by_signature()
    if keyed_by_signature and jit_function._mem_cache.get(origin.cache_key) is compiled._keepalive:
        origin.generation = handle.generation  # its version is current again (restored)
        return
    _rebind(compiled, jit_function, origin, args, keyed_by_signature)


def _rebind(compiled, jit_function, origin, args, keyed_by_signature):
    name = jit_function.func.__name__
    if jit_function._has_self_param:
        why = "; ".join(origin.handle.last_reasons or ["its caches were cleared"])
        raise StaleCompiledFunctionError(
            f"flyc.compile({name}, ...) is stale ({why}) and, being a method, cannot be recompiled from its "
            "call's arguments: call flyc.compile again")
    jit_function._compile_only(*args)  # traces the code as it is now, through the guard
    bound = jit_function._sig.bind(*args)
    bound.apply_defaults()
    if keyed_by_signature:
        # The key leads with FlyDSL's snapshot of the globals the code reads,
        # which an edit changes; the arguments' part must stay what it was.
        hints = jit_function._effective_compile_hints()
        specialization = jit_function._resolve_and_make_cache_key(bound.arguments, effective_hints=hints)
        if origin.cache_key[-len(specialization):] != specialization:
            raise StaleCompiledFunctionError(
                f"flyc.compile({name}, ...) is stale, and these arguments select another specialization than the "
                "one it was compiled for (a different constexpr or type): call flyc.compile again")
        origin.cache_key = jit_function._build_full_cache_key(bound.arguments, effective_hints=hints)
        artifact = jit_function._mem_cache[origin.cache_key]
    else:  # what this code traces to now, for these arguments
        origin.cache_key, artifact = jit_function._last_compiled
    origin.generation = origin.handle.generation
    if artifact is compiled._keepalive:
        return  # the code changed, and back: the same IR, the same artifact
    fresh = jit_function._make_compiled_function(origin.cache_key, bound, None)
    with compiled._call_lock:
        for slot in type(compiled).__slots__:
            if slot != "_call_lock":
                setattr(compiled, slot, getattr(fresh, slot))
