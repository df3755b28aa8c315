"""Calls FlyDSL 0.5.0 would trace, run without a trace while nothing the
last trace read has changed.

FlyDSL 0.5.0 traces the launcher on every call and looks its artifact up by
the traced IR: fresh, but ~10 ms a call. Under the adapter, the guard
(``GuardedJit.before_call``) already answers whether anything a trace read
changed; when nothing did, the same arguments' signature selects the same
IR, hence the same artifact, so the call runs it directly through a kept
``CallState``, as FlyDSL's ``CompiledFunction`` does. The signature is
FlyDSL's own: each runtime argument's ``cache_signature`` (its type, dtype,
layout), each ``Constexpr`` value, the compile hints, the target and the
environment values FlyDSL's keys read. A call whose signature cannot be told
(an unhashable constexpr, a method's bound ``self``) always traces.

The calls kept belong to one version of the code: they live on the
JitFunction as ``_flyrt_calls``, which ``jit_caches`` takes out with the
rest when the guard evicts, and puts back for A -> B -> A.
"""

from flydsl.compiler import jit_function as flydsl_jit
from flydsl.compiler.protocol import cache_signature
from flydsl.expr.typing import Constexpr
from flydsl.utils import env

CALLS = "_flyrt_calls"


class Call:
    """One signature's artifact and the state that launches it."""

    __slots__ = ("cache_key", "artifact", "state")

    def __init__(self, cache_key, artifact):
        self.cache_key, self.artifact, self.state = cache_key, artifact, None


def calls_of(jit_function):
    calls = jit_function.__dict__.get(CALLS)
    if calls is None:
        calls = jit_function.__dict__[CALLS] = {}
    return calls


def bind(jit_function, args, kwargs):
    """(signature, bound arguments) of a call, resolved as FlyDSL resolves
    them; (None, None) when it cannot be told without tracing."""
    bound_self, args = jit_function._split_self(args)
    if bound_self is not None:
        return None, None
    bound = jit_function._sig.bind(*args, **kwargs)
    bound.apply_defaults()
    jit_function._resolve_arguments(bound.arguments)
    parameters = jit_function._sig.parameters
    signature = []
    try:
        for name, value in bound.arguments.items():
            annotation = parameters[name].annotation
            if annotation is not parameters[name].empty and Constexpr.is_constexpr_annotation(annotation):
                hash(value)
                signature.append(("constexpr", type(value), value))
            else:
                signature.append(cache_signature(value))
        target = flydsl_jit.get_backend().target
        signature.append(repr(sorted(jit_function._effective_compile_hints().items())))
        signature.append(repr(target))
        signature.append(flydsl_jit._cache_invalidating_env_values(target))
        signature.append(env.compile.compile_only)
        hash(tuple(signature))
    except TypeError:
        return None, None
    return tuple(signature), bound


def run(jit_function, call, bound, execute):
    """The call as FlyDSL's own would run it, from the kept artifact."""
    if env.compile.compile_only or not execute:
        return None
    args = tuple(bound.arguments.values())
    if call.state is None:
        from flydsl.runtime.device_runtime import ensure_compile_runtime_pairing_from_env

        ensure_compile_runtime_pairing_from_env(flydsl_jit.get_backend().target.backend)
        call.state = flydsl_jit._build_call_state(jit_function._sig, args, call.artifact)
    return call.state(args)


def keep(jit_function, signature):
    """After a traced call of `signature`: keeps what it ran."""
    last = jit_function._last_compiled
    if signature is not None and last is not None:
        calls_of(jit_function)[signature] = Call(*last)
