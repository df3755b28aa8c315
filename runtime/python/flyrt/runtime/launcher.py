"""``@flyc.jit``: a host launcher, traced and compiled per specialization.

The call path is the C++ Dispatcher this class extends; Python runs only on
a cache miss (``_compile``), or when the launcher is called while another
trace runs (``_inline``: a ``@flyc.jit`` helper is inlined as device code).
"""

import functools
import hashlib
import inspect
import sys
import time
import weakref
from collections import namedtuple

from .. import _core
from .._version import __version__
from ..core import dtypes, host_arrays, settings, specialization
from ..core.cache_info import CacheInfo
from ..core.errors import KernelError, full_tracebacks, raise_at, users_frames
from ..drivers import cuda as cuda_driver, device_libraries, targets
from ..frontend.rewriting import rewrite, traceable
from ..interpret import mode as interpret_mode
from ..invalidation import factories, registry
from ..invalidation.dependencies import DependencyRecord, Recorder
from ..language import tensor
from ..language.annotations import Stream, Tensor, is_constexpr
from ..language.tracing import Trace, interpreting, tracing
from ..language.values import Value
from . import compile_lock, compile_log, disk_cache, warm_start


@functools.lru_cache(maxsize=None)
def _compiler_build():
    with open(_core.__file__, "rb") as f:
        return f"flyrt {__version__} {hashlib.sha256(f.read()).hexdigest()[:16]}"


def _compiler_id(target):
    """Names the compiler build, this CPU (host code) and the kernels' target,
    for disk-cache keys: not the device, so identical GPUs share entries."""
    parts = [_compiler_build(), "host " + targets.cpu(32).id, "kernels " + target.id]
    if target.kind == _core.TargetKind.nvptx:
        parts.append("libdevice " + device_libraries.digest(device_libraries.libdevice()))
        parts.append("assembler " + device_libraries.file_identity(_core.ptx_assembler_path()))
    if target.kind == _core.TargetKind.amdgpu:
        parts.append("linker " + device_libraries.file_identity(_core.amdgpu_linker()))
        parts.append("ocml " + device_libraries.digest(device_libraries.ocml()))
    return " ".join(parts)


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
        while isinstance(default, Stream):  # the dispatcher reads None and ints fastest
            default = default.handle
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
    return specialization.Parameter(name, kind, scalar, has_default, default)


def _adapt_tensor(value, name):
    """A tensor the C++ dispatcher cannot read itself: a numpy view of a
    host tensor, or a device tensor's description (drivers.cuda)."""
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(value, torch.Tensor):
        cuda_driver.register_torch(torch)  # the dispatcher reads the next torch tensors itself
        if value.is_neg():
            raise TypeError(f"argument '{name}': a torch tensor with its negative bit set (a lazy negation, as "
                            "`.imag` of a conjugate view is): its memory holds the negated values; pass "
                            f"{name}.resolve_neg()")
    host = host_arrays.host_view(value)
    if host is not None:
        return host
    device = cuda_driver.device_tensor(value, name)
    if device is not None:
        return device
    raise TypeError(f"argument '{name}' must be a numpy array or a torch tensor, not {type(value).__name__}")


# What a step of a miss built: the object, its host function, the tensors it
# writes, what it read (a Recorder), the IR's digest (None from a warm start)
# and how it was had ("compiled", "disk cache", "disk cache, no trace").
# `waited`: seconds spent behind another process compiling the same key.
_Built = namedtuple("_Built", "payload host_name written recorder digest outcome waited", defaults=(0.0,))
_WAIT_WORTH_SAYING = 0.01


class Lowered:
    """A launcher compiled for one specialization without running it
    (``launcher.lower(...)``): its IR and the code each kernel became."""

    def __init__(self, target, ir, payload, llvm_ir):
        self.target = target
        self.ir = ir  # flyrt's IR, as text (after the compiler's folding)
        self.llvm_ir = llvm_ir  # the optimized LLVM modules, as text
        self.payload = payload
        self.device_code = dict(_core.device_images(payload))  # kernel name -> PTX or AMD code object (bytes)
        self.device_binaries = dict(_core.device_binaries(payload))  # kernel name -> cubin, where nvJitLink made one
        self.host_objects = _core.host_objects(payload)  # ELF objects: the host code (the CPU's kernels too)

    def __repr__(self):
        return f"<flyrt lowered for {self.target.id}: kernels {sorted(self.device_code)}>"


def _compile_on_a_miss(launcher):
    """The dispatcher's miss handler for the launcher `launcher()` (a weak
    reference): an error raised while tracing shows the user's frames, not
    flyrt's, unless full tracebacks are asked for (errors.full_tracebacks)."""

    def compile(bound_args, key):
        __tracebackhide__ = True  # IPython and pytest leave out this frame too
        try:
            return launcher()._compile(bound_args, key)
        except Exception as error:
            if full_tracebacks():
                raise
            mine = users_frames(error.__traceback__)
            raise error.with_traceback(mine) if mine is not None else error

    return compile


class JitFunction(_core.Dispatcher):
    def __init__(self, fn, target=None):
        self.fn = fn
        self.__name__ = fn.__name__
        self.__qualname__ = fn.__qualname__
        self.__doc__ = fn.__doc__
        self.__module__ = fn.__module__
        self.__wrapped__ = fn
        self.signature = inspect.signature(fn)
        specs = [_param_spec(n, p) for n, p in self.signature.parameters.items()]
        me = weakref.ref(self)  # the dispatcher must not keep its launcher alive
        targets.follow_environment()
        super().__init__(
            fn.__qualname__,
            specs,
            _compile_on_a_miss(me),
            lambda *a, **k: me()._inline(*a, **k),
            _adapt_tensor,
            lambda record: me()._revalidate(record),
        )
        self._history = {}  # specialization key -> DependencyRecords, oldest first
        self._factory = factories.creator_of(fn)
        self.last_reasons = None  # why the latest artifact went stale
        self._stale_call = None  # the notice of the call that found it stale, until it is replaced
        if target is not None:
            self.set_target(target)
        registry.register(self)
        interpret_mode.apply(self)

    def __repr__(self):
        return f"<flyrt launcher {self.__qualname__}>"

    def __get__(self, instance, owner):
        return self if instance is None else functools.partial(self, instance)

    # -- introspection --------------------------------------------------------

    def cache_info(self):
        return CacheInfo(*self._counters())

    def set_target(self, name):
        """Where this launcher runs, over the default: "auto" (by its
        tensors), "cpu" or "cuda"."""
        self._target_code = targets.code_of(name)

    @property
    def target(self):
        return targets.NAMES[self._target_code]

    @property
    def interpret(self):
        """Whether this launcher runs interpreted (interpret/): True, False,
        or None (the default), as flyrt.set_interpret and FLYDSL_INTERPRET say.
        Interpreted calls neither compile nor touch the compiled artifacts."""
        return self.__dict__.get("_interpret")

    @interpret.setter
    def interpret(self, on):
        self._interpret = None if on is None else bool(on)
        interpret_mode.apply(self)

    def lower(self, *args, target="cuda", arch=None, **kwargs):
        """Traces and compiles the launcher for `args` without running it:
        host arrays stand for device tensors of their shape and dtype. For a
        GPU target, `arch` ("sm_90", "gfx942") names the GPU, else device
        0's (or compile-only mode's)."""
        code = targets.code_of(target)
        bound, key = self._specialize(args, kwargs, code)
        specs = specialization.decode(key, bound)
        description = targets.description(code, 0, settings.cpu_warp_size(), arch)
        trace = self._trace(specs, dict(zip(self.signature.parameters, bound)), description)[0]
        payload, llvm_ir = trace.module.compile(description, llvm_ir=True)
        return Lowered(description, str(trace.module), payload, llvm_ir)

    def warmup(self, *args, **kwargs):
        """Compiles (and loads) what a call with these arguments runs, without running it: a later call
        with arguments like these finds it ready. Threads may warm a launcher at once (the autotuner
        compiles its configs so): their traces take turns, their compiles run side by side."""
        super().warmup(*args, **kwargs)

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
        if record is None:
            return False  # its account is gone: compile afresh
        reasons = record.changes()
        if not reasons:
            record.refresh()
            return True
        record.last_reason = reasons
        self.last_reasons = reasons
        self._stale_call = registry.note_recompile(f"launcher {self.__qualname__}", reasons)
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

    def dependency_records(self):
        """What ``%flydsl graph`` draws: [(record, None)] of the current
        artifacts, or when none is left, [(the latest record, why it was evicted)]."""
        current = [(artifact.record, None) for _, artifact in self._entries() if artifact.record is not None]
        if current or not self.last_reasons:
            return current
        evicted = [record for records in self._history.values() for record in records if record.last_reason]
        return [(evicted[-1], evicted[-1].last_reason)] if evicted else []

    # -- tracing ---------------------------------------------------------------

    def _inline(self, *args, **kwargs):
        if interpreting():
            return self.fn(*args, **kwargs)  # a device helper, run as written
        return traceable(self.fn)(*args, **kwargs)

    def _trace(self, specs, bound, target):
        trace = Trace(self.__name__, target, Recorder())
        types, names = [], []
        for (pname, value), spec in zip(bound.items(), specs):
            if isinstance(spec, specialization.TensorSpec):
                types.extend(tensor.native_types(spec.dtype, spec.ndim, spec.index_bits))
                names.extend([pname] + [f"{pname}.shape{i}" for i in range(spec.ndim)]
                             + [f"{pname}.stride{i}" for i in range(spec.ndim)])
            elif isinstance(spec, specialization.ScalarSpec):
                types.append(spec.dtype.ir_type)
                names.append(pname)
            elif isinstance(spec, specialization.StreamSpec):
                types.append(dtypes.Int64.ir_type)
                names.append(pname)
        code = self.fn.__code__
        host_name = trace.unique_name(self.__name__)
        builder = trace.module.add_function(
            host_name, "host", types, names, code.co_filename, code.co_firstlineno, (0, 0, 0))
        with tracing(trace):  # (the arguments' values emit ops: a tensor's known strides)
            ids = list(builder.parameters)
            trace.builders.append(builder)
            args = {}
            for (pname, value), spec in zip(bound.items(), specs):
                if isinstance(spec, specialization.TensorSpec):
                    count = 1 + 2 * spec.ndim
                    args[pname] = tensor.TensorValue(pname, spec.dtype, ids[:count], spec.contiguous, spec.index_bits,
                                                     spec.align, spec.stride_multiple)
                    ids = ids[count:]
                elif isinstance(spec, specialization.ScalarSpec):
                    args[pname] = Value(ids.pop(0), spec.dtype)
                elif isinstance(spec, specialization.StreamSpec):
                    args[pname] = Value(ids.pop(0), dtypes.Int64)  # a driver's stream handle
                else:
                    args[pname] = value
                    trace.recorder.obtain(value, pname)  # a Constexpr object: its state is compiled in
            if self._factory is not None:
                trace.recorder.function(self._factory.function)  # its code built this launcher
            rewrite(self.fn)(**args)
        problem = trace.module.verify(target)
        if problem is not None:
            message, filename, lineno = problem
            raise_at(KernelError(message, filename, lineno), filename, lineno)
        written = [i for i, value in enumerate(args.values())
                   if isinstance(value, tensor.TensorValue) and value.written]  # refused when read-only
        return trace, host_name, written

    def _compile(self, bound_args, key):
        """The C++ dispatcher's miss: an artifact for `key`, from the first of
        these steps that has one (an earlier version whose dependencies match
        again, a warm start from disk, a trace and compile), then installed."""
        self._check_factory()
        start = time.perf_counter()
        specs = specialization.decode(key, bound_args)
        code, device = key[1], key[2]
        target = targets.description(code, device, settings.cpu_warp_size())
        where = targets.where(code, device, target)
        described = ", ".join(s.describe() for s in specs)
        if where:
            described = f"{where}: {described}"
        history = self._history.setdefault(key, [])
        earlier = self._reuse(history)
        if earlier is not None:
            self._replaced_by("reused", where)
            self._log(described, "dependencies match an earlier version", start, "reused")
            return earlier.artifact, False
        stale = next((r.last_reason for r in reversed(history) if r.last_reason), None)
        use_disk, compiler_id = disk_cache.enabled(), _compiler_id(target)
        warm, unremembered = warm_start.index(self, key, compiler_id) if use_disk else (None, None)
        built = self._warm_start(warm) if warm else None
        waited = 0.0
        if built is None:
            # Processes sharing the cache compile a key once: the others wait
            # here, then warm-start from what the first one stored.
            with compile_lock.held(warm) as lock:
                built = self._warm_start(warm, warn=False) if warm else None  # stored while this one looked
                if built is None:
                    built = self._trace_and_compile(specs, dict(zip(self.signature.parameters, bound_args)),
                                                    target, compiler_id, use_disk)
                    if warm:
                        unremembered = warm_start.remember(self, warm, built.recorder, built.digest,
                                                           built.host_name, built.written)
            waited = lock.waited + built.waited
        artifact = self._install(built, target, device, history)
        info = self.cache_info()
        if stale:
            reason = "recompiled: " + "; ".join(stale)
        else:
            reason = "first call" if info.size == 0 and info.misses == 1 else "new specialization"
        if unremembered:
            reason += f"; not kept for warm starts: {unremembered}"
        if waited >= _WAIT_WORTH_SAYING:
            reason += f"; waited {waited * 1e3:.0f} ms for another process compiling it"
        self._log(described, reason, start, built.outcome)
        self._replaced_by("compiled" if built.outcome == "compiled" else "disk cache", where)
        return artifact, built.outcome == "compiled"

    def _reuse(self, history):
        """A -> B -> A: the earlier version whose dependencies match again
        (its artifact serves, no compile), or None."""
        for earlier in reversed(history):
            if not earlier.changes():
                earlier.refresh()
                history.remove(earlier)
                history.append(earlier)  # the newest again: the cached artifact's record stays in history
                return earlier
        return None

    def _warm_start(self, warm, warn=True):
        """The artifact a warm start finds on disk, with what it depends on
        from its manifest (nothing traced), or None."""
        found = warm_start.lookup(self, warm, warn)
        if found is None:
            return None
        entry, recorder = found
        payload = disk_cache.load(entry["object"])
        if payload is None:
            return None
        return _Built(payload, entry["host"], entry["written"], recorder, None, "disk cache, no trace")

    def _trace_and_compile(self, specs, bound, target, compiler_id, use_disk):
        """Traces the launcher, then compiles its IR, or finds that IR's
        object in the disk cache."""
        trace, host_name, written = self._trace(specs, bound, target)
        ir_text = str(trace.module)
        self.last_ir = ir_text  # for inspection: what the latest compile traced
        digest = hashlib.sha256(f"{compiler_id}\n{ir_text}".encode()).hexdigest()
        # processes sharing the cache compile this IR once (a trace that no
        # warm start keeps comes here in each of them)
        with compile_lock.held(digest if use_disk else None) as lock:
            payload = disk_cache.load(digest) if use_disk else None
            outcome = "disk cache"
            if payload is None:
                outcome = "compiled"
                payload, _ = trace.module.compile(target)
                if use_disk:
                    disk_cache.store(digest, payload)
        waited = lock.waited
        return _Built(payload, host_name, written, trace.recorder, digest, outcome, waited)

    def _install(self, built, target, device, history):
        """Loads the built object and ties it to what it depends on; the
        dispatcher caches the artifact returned."""
        artifact = _core.load_artifact(built.payload, built.host_name, target, device)
        artifact.written_params = built.written
        record = DependencyRecord(built.recorder, self.__qualname__)
        record.artifact, artifact.record, artifact.guard = artifact, record, record.guard
        history.append(record)
        del history[: -self._HISTORY]
        return artifact

    def _log(self, described, reason, start, outcome):
        compile_log.record(compile_log.CompileRecord(
            self.__qualname__, described, reason, (time.perf_counter() - start) * 1e3, outcome))

    def device_code(self):
        """{kernel name: PTX text or AMD code object bytes} of this launcher's
        cached GPU artifacts (in compile-only mode, what it compiled)."""
        return {kernel: code for _, artifact in self._entries() for kernel, code in artifact.device_code}

    def device_kernels(self):
        """What this launcher's cached artifacts hold on GPUs: per loaded
        kernel, its name, device, registers, shared, local and constant bytes,
        what the driver was handed (image_kind "ptx", "cubin" or "code
        object", and image_bytes) and the device memory its load took
        (_core.KernelResources)."""
        return [kernel for _, artifact in self._entries() for kernel in artifact.device_kernels]

    def _replaced_by(self, outcome, where=None):
        """What replaced the artifact the last call found stale, and for which
        GPU (its notice says so)."""
        if self._stale_call is not None:
            self._stale_call.outcome, self._stale_call.where, self._stale_call = outcome, where, None


def jit(fn=None, *, target=None):
    """Decorator: a host launcher compiled per specialization; `target`
    ("auto", "cpu", "cuda") fixes where it runs."""
    if fn is None:
        return lambda f: JitFunction(f, target=target)
    return JitFunction(fn, target=target)
