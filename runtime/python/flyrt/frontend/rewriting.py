"""Functions made ready to run inside a trace: the pure rewrite of
ast_rewrite bound to what its calls reach (control_flow for the control
flow, reads for every read of Python state), the function recorded as a
dependency and its globals read through the trace's recorder.

reads traces the user's helpers it meets with `traceable`, which it is
handed here rather than importing: this module is built on it."""

import inspect
import types

from ..invalidation.dependencies import real_globals
from ..language import control_flow, reads
from ..language.tracing import active
from .ast_rewrite import READS, RUNTIME, rewritten_code


def rewrite(fn):
    """`fn` with its control flow rewritten (same globals, defaults, cells).
    During a trace the function is recorded as a dependency, and its globals
    are read through the trace's recorder."""
    new_code = rewritten_code(fn)
    namespace = real_globals(fn.__globals__)
    namespace.setdefault(RUNTIME, control_flow)
    namespace.setdefault(READS, reads)
    trace = active()
    if trace is not None:
        trace.recorder.function(fn)
        trace.recorder.running(fn, new_code)
        namespace = trace.recorder.globals_for(fn)
    cells = dict(zip(fn.__code__.co_freevars, fn.__closure__ or ()))
    closure = tuple(cells[name] for name in new_code.co_freevars)
    new = types.FunctionType(new_code, namespace, fn.__name__, fn.__defaults__, closure or None)
    new.__kwdefaults__ = fn.__kwdefaults__
    new.__qualname__ = fn.__qualname__
    new.__wrapped_original__ = fn
    return new


# Generators and coroutines run as written: their bodies cannot become branch functions.
_RUN_AS_WRITTEN = inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR | inspect.CO_ITERABLE_COROUTINE


def traceable(fn):
    """`fn` ready to run inside a trace: rewritten when its source is a
    plain definition; otherwise (a lambda, code without source, a
    generator) as written, its globals still read through the trace's recorder."""
    if not fn.__code__.co_flags & _RUN_AS_WRITTEN:
        try:
            return rewrite(fn)
        except (OSError, TypeError, SyntaxError):
            pass
    trace = active()
    if trace is None:
        return fn
    trace.recorder.function(fn)
    trace.recorder.running(fn, fn.__code__)
    plain = types.FunctionType(fn.__code__, trace.recorder.globals_for(fn), fn.__name__, fn.__defaults__,
                               fn.__closure__)
    plain.__kwdefaults__ = fn.__kwdefaults__
    return plain


reads.trace_helpers_with(traceable)
