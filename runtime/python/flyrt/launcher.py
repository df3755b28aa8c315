"""``@flyc.jit``: a host launcher, traced and compiled per specialization.

The call path is the C++ Dispatcher this class extends; Python runs only on
a cache miss (``_compile``), or when the launcher is called while another
trace runs (``_inline``: a ``@flyc.jit`` helper is inlined as device code).
"""

import functools
import hashlib
import inspect
import time
import weakref
from collections import namedtuple

import numpy as np

from . import _core, compile_log, disk_cache, dtypes, factories, fp8, invalidation, specialization, tensor
from ._version import __version__
from .ast_rewrite import rewrite, traceable
from .dependencies import DependencyRecord
from .errors import KernelError, raise_at
from .expr import Stream, Tensor, is_constexpr
from .tracing import Trace, tracing
from .values import Value

CacheInfo = namedtuple("CacheInfo", "hits misses compiles evictions size")


def _compiler_id():
    """Names the compiler build and target, for disk-cache keys."""
    with open(_core.__file__, "rb") as f:
        build = hashlib.sha256(f.read()).hexdigest()[:16]
    return f"flyrt {__version__} {build} {_core.host_target_id()}"


_COMPILER_ID = None


def _param_spec(name, parameter):
    annotation = parameter.annotation
    has_default = parameter.default is not inspect.Parameter.empty
    default = parameter.default if has_default else None
    if annotation is Tensor:
        kind, scalar = specialization.PARAM_TENSOR, 0
    elif is_constexpr(annotation):
        kind, scalar = specialization.PARAM_CONSTEXPR, 0
    elif annotation is Stream or isinstance(default, Stream):
        kind, scalar = specialization.PARAM_STREAM, 0
    elif isinstance(annotation, dtypes.DType):
        if annotation not in specialization.SCALAR_CLASSES:
            raise TypeError(f"parameter '{name}': launchers take Boolean, Int32, Int64, Float32 or Float64 "
                            f"scalars, not {annotation.name}")
        kind, scalar = specialization.PARAM_SCALAR, specialization.SCALAR_CLASSES.index(annotation)
    elif annotation is inspect.Parameter.empty or annotation in (int, float, bool):
        kind, scalar = specialization.PARAM_SCALAR, 0
    else:
        raise TypeError(f"parameter '{name}' has an annotation flyrt does not know: {annotation!r}; use "
                        "fx.Tensor, fx.Int32, fx.Int64, fx.Float32, fx.Boolean, fx.Constexpr[T] or fx.Stream")
    if parameter.kind not in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY):
        raise TypeError(f"parameter '{name}': launchers take named parameters only (no *args, **kwargs)")
    return (name, kind, scalar, has_default, default)


def _adapt_tensor(value, name):
    """A numpy view of a tensor numpy cannot see directly (torch, DLPack)."""
    try:
        import torch
    except ImportError:
        torch = None
    if torch is not None and isinstance(value, torch.Tensor):
        if value.device.type != "cpu":
            raise ValueError(f"argument '{name}': the CPU backend needs CPU tensors, got one on {value.device}")
        formats = {torch.float8_e4m3fnuz: "e4m3fnuz", torch.float8_e4m3fn: "e4m3fn"}
        if value.dtype in formats:
            return fp8.as_fp8(value.detach().view(torch.uint8).numpy(), formats[value.dtype])
        if value.dtype == torch.bfloat16:
            return value.detach().view(torch.int16).numpy().view(dtypes.BFLOAT16_STORAGE)
        return value.detach().numpy()
    if hasattr(value, "__dlpack__"):
        return np.from_dlpack(value)
    raise TypeError(f"argument '{name}' must be a numpy array or a torch tensor, not {type(value).__name__}")


class JitFunction(_core.Dispatcher):
    def __init__(self, fn):
        self.fn = fn
        self.__name__ = fn.__name__
        self.__qualname__ = fn.__qualname__
        self.__doc__ = fn.__doc__
        self.__module__ = fn.__module__
        self.__wrapped__ = fn
        self.signature = inspect.signature(fn)
        specs = [_param_spec(n, p) for n, p in self.signature.parameters.items()]
        me = weakref.ref(self)  # the dispatcher must not keep its launcher alive
        super().__init__(
            specs,
            lambda bound, key: me()._compile(bound, key),
            lambda *a, **k: me()._inline(*a, **k),
            _adapt_tensor,
            lambda record: me()._revalidate(record),
        )
        self._history = {}  # specialization key -> DependencyRecords, oldest first
        self._factory = factories.creator_of(fn)
        self.last_reasons = None  # why the latest artifact went stale
        invalidation.register(self)

    def __repr__(self):
        return f"<flyrt launcher {self.__qualname__}>"

    def __get__(self, instance, owner):
        return self if instance is None else functools.partial(self, instance)

    # -- introspection --------------------------------------------------------

    def cache_info(self):
        return CacheInfo(*self._counters())

    def cache_clear(self):
        """Drops every compiled artifact; the next call compiles again."""
        self._clear()
        self._history.clear()

    # -- invalidation -----------------------------------------------------------

    _HISTORY = 8  # earlier versions kept per specialization, for A -> B -> A

    def _check_factory(self):
        if self._factory is not None:
            self._factory.check(self.__qualname__)

    def _revalidate(self, record):
        """The C++ guard saw a change: is the artifact still what this call needs?"""
        self._check_factory()
        reasons = record.changes()
        if not reasons:
            record.refresh()
            return True
        record.last_reason = reasons
        self.last_reasons = reasons
        invalidation.note_recompile(f"launcher {self.__qualname__}", reasons)
        return False

    def sweep(self):
        """Evicts the artifacts whose dependencies changed; returns the reasons."""
        reasons = []
        for key, artifact in self._entries():
            record = artifact.record
            if record is None or artifact.guard.holds():
                continue
            changes = record.changes()
            if changes:
                self._evict(key)
                record.last_reason = changes
                self.last_reasons = changes
                reasons.extend(changes)
            else:
                record.refresh()
        return reasons

    # -- tracing ---------------------------------------------------------------

    def _inline(self, *args, **kwargs):
        return traceable(self.fn)(*args, **kwargs)

    def _trace(self, specs, bound):
        trace = Trace(self.__name__)
        types, names = [], []
        for (pname, value), spec in zip(bound.items(), specs):
            if isinstance(spec, specialization.TensorSpec):
                types.extend(tensor.native_types(spec.dtype, spec.ndim))
                names.extend([pname] + [f"{pname}.shape{i}" for i in range(spec.ndim)]
                             + [f"{pname}.stride{i}" for i in range(spec.ndim)])
            elif isinstance(spec, specialization.ScalarSpec):
                types.append(spec.dtype.ir_type)
                names.append(pname)
        code = self.fn.__code__
        host_name = trace.unique_name(self.__name__)
        builder = trace.module.add_function(
            host_name, "host", types, names, code.co_filename, code.co_firstlineno, (0, 0, 0))
        ids = list(builder.parameters)
        args = {}
        for (pname, value), spec in zip(bound.items(), specs):
            if isinstance(spec, specialization.TensorSpec):
                count = 1 + 2 * spec.ndim
                args[pname] = tensor.TensorValue(pname, spec.dtype, ids[:count], spec.contiguous)
                ids = ids[count:]
            elif isinstance(spec, specialization.ScalarSpec):
                args[pname] = Value(ids.pop(0), spec.dtype)
            else:
                args[pname] = value
        trace.builders.append(builder)
        if self._factory is not None:
            trace.recorder.function(self._factory.function)  # its code built this launcher
        with tracing(trace):
            rewrite(self.fn)(**args)
        problem = trace.module.verify()
        if problem is not None:
            message, filename, lineno = problem
            raise_at(KernelError(message, filename, lineno), filename, lineno)
        return trace, host_name

    def _compile(self, bound_args, key):
        global _COMPILER_ID
        self._check_factory()
        start = time.perf_counter()
        bound = dict(zip(self.signature.parameters, bound_args))
        specs = specialization.decode(key, bound_args)
        described = ", ".join(s.describe() for s in specs)
        history = self._history.setdefault(key, [])
        for earlier in reversed(history):
            if not earlier.changes():  # A -> B -> A: A's artifact again, no compile
                earlier.refresh()
                compile_log.record(compile_log.CompileRecord(
                    self.__qualname__, described, "dependencies match an earlier version",
                    (time.perf_counter() - start) * 1e3, "reused"))
                return earlier.artifact, False
        stale = next((r.last_reason for r in reversed(history) if r.last_reason), None)
        trace, host_name = self._trace(specs, bound)
        if _COMPILER_ID is None:
            _COMPILER_ID = _compiler_id()
        ir_text = str(trace.module)
        self.last_ir = ir_text  # for inspection: what the latest compile traced
        digest = hashlib.sha256(f"{_COMPILER_ID}\n{ir_text}".encode()).hexdigest()
        use_disk = disk_cache.enabled()
        obj = disk_cache.load(digest) if use_disk else None
        compiled = obj is None
        if compiled:
            obj, _ = trace.module.compile()
            if use_disk:
                disk_cache.store(digest, obj)
        artifact = _core.load_artifact(obj, host_name)
        record = DependencyRecord(trace.recorder, self.__qualname__)
        record.artifact, artifact.record, artifact.guard = artifact, record, record.guard
        history.append(record)
        del history[: -self._HISTORY]
        info = self.cache_info()
        if stale:
            reason = "recompiled: " + "; ".join(stale)
        else:
            reason = "first call" if info.size == 0 and info.misses == 1 else "new specialization"
        compile_log.record(compile_log.CompileRecord(
            self.__qualname__, described, reason, (time.perf_counter() - start) * 1e3,
            "compiled" if compiled else "disk cache"))
        return artifact, compiled


def jit(fn=None):
    """Decorator: a host launcher compiled per specialization."""
    if fn is None:
        return jit
    return JitFunction(fn)
