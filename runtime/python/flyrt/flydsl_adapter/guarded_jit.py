"""One FlyDSL JitFunction as flyrt's invalidation engine sees it.

The handle keeps what the JitFunction's traces read (one dependency record
for all its specializations, since FlyDSL's caches describe one version of
the code), checks it before every call with flyrt's C++ guard, and when
something the traces read changed, takes all of FlyDSL's caches out together
and keeps them as history: changing the code back (A -> B -> A) puts A's
artifacts back without compiling. Like flyrt's own launchers, it is
registered with ``flyrt.invalidation.registry`` so the kernel's after-cell sweep
evicts eagerly and says why.
"""

import threading
import time
import weakref

from ..core.cache_info import CacheInfo
from ..invalidation import registry
from ..invalidation.dependencies import DependencyRecord, Recorder
from ..runtime import compile_log
from . import jit_caches
from .compat import source_function

_handles = weakref.WeakKeyDictionary()  # JitFunction -> GuardedJit
GLOBAL_DRIFT = ("raise", "recompile")
_global_drift = "raise"


def set_global_drift(mode):
    global _global_drift
    if mode not in GLOBAL_DRIFT:
        raise ValueError(f"global_drift={mode!r}: expected one of {', '.join(GLOBAL_DRIFT)}")
    _global_drift = mode


class _EntryView:
    """What ``%flydsl why`` and ``%flydsl graph`` read of a cached artifact."""

    __slots__ = ("record", "guard")

    def __init__(self, record):
        self.record = record
        self.guard = record.guard if record is not None else None


class GuardedJit:
    HISTORY = 8  # earlier versions kept, for A -> B -> A

    def __init__(self, jit_function, factory):
        self._jit_function = weakref.ref(jit_function)  # the handle must not keep it alive
        original = source_function(jit_function)
        self.__name__ = original.__name__
        self.__qualname__ = original.__qualname__
        self.__module__ = original.__module__
        self._factory = factory  # flyrt.factories.FactoryLink of the lru_cache that built it, or None
        self._recorder = None  # every read of the traces since the last eviction
        self.record = None
        self.latest_trace = None  # Recorder of the latest trace alone (disk-cache key)
        self._history = []  # [(DependencyRecord, caches)], oldest first
        self.last_reasons = None
        self._stale_call = None  # the notice of the call that found it stale, until it is replaced
        self.calls = self.traces = self.compiles = self.loads = self.evictions = 0
        self.generation = 0  # bumped whenever the caches are taken out or put back
        # The kernel's sweep (main thread) may meet a launch from another thread.
        self._lock = threading.RLock()
        registry.register(self)

    def __repr__(self):
        return f"<flyrt guard of FlyDSL jit {self.__qualname__}>"

    # -- before every top-level call -------------------------------------------

    def before_call(self, jit_function):
        self.calls += 1
        record = self.record
        if record is not None and record.guard.holds():
            return  # the common case, lock-free: nothing the traces read changed
        with self._lock:
            self._validate(jit_function)

    def _validate(self, jit_function):
        if self.record is not None and not self.record.guard.holds():
            self._check_factory()
            reasons = self.record.changes()
            if not reasons:
                self.record.refresh()
            else:
                if _global_drift == "raise" and hasattr(jit_function, "_check_globals_drift"):
                    _check_flydsl_drift(jit_function)  # 0.4.2's contract; 0.5.0 has none
                self._evict(jit_function, reasons)
                self._stale_call = registry.note_recompile(f"launcher {self.__qualname__}", reasons)
        if self.record is None:  # first call, or evicted (perhaps by a sweep)
            self._check_factory()
            if self._history:
                self._restore_match(jit_function)

    def _check_factory(self):
        if self._factory is not None:
            self._factory.check(self.__qualname__)

    def _evict(self, jit_function, reasons):
        self._history.append((self.record, jit_caches.take(jit_function)))
        self.generation += 1
        del self._history[: -self.HISTORY]
        self._recorder = self.record = None
        self.last_reasons = reasons
        self.evictions += 1

    def _restore_match(self, jit_function):
        start = time.perf_counter()
        for index in range(len(self._history) - 1, -1, -1):
            record, caches = self._history[index]
            if record.changes():
                continue
            del self._history[index]
            record.refresh()
            jit_caches.put(jit_function, caches)
            self.generation += 1
            self.record = record
            self._recorder = Recorder.of(record)
            compile_log.record(compile_log.CompileRecord(
                self.__qualname__, "all specializations", "dependencies match an earlier version",
                (time.perf_counter() - start) * 1e3, "reused"))
            self._replaced_by("reused")
            return

    # -- around every trace ----------------------------------------------------

    def traced(self, recorder, milliseconds, source="compiled"):
        """A trace finished ("compiled"; "traced": FlyDSL 0.5.0 found what it
        traced among its artifacts) or a disk-cache entry was loaded ("disk
        cache"): what it read joins the record."""
        with self._lock:
            self._join(recorder, milliseconds, source)

    def _join(self, recorder, milliseconds, source):
        if source == "disk cache":
            self.loads += 1
        else:
            self.traces += 1
            self.compiles += source == "compiled"
            self.latest_trace = recorder
        factory = self._factory
        if factory is not None:  # its code built this JitFunction; the guard watches its module too
            recorder.function(factory.function)
            module_globals = factory.function.__globals__
            recorder.read(module_globals, module_globals, factory.function.__name__, factory.wrapper)
        if self._recorder is None:
            self._recorder = Recorder()
        self._recorder.merge(recorder)
        reason = ("recompiled: " + "; ".join(self.last_reasons) if self.last_reasons and self.record is None
                  else "first call" if self.traces + self.loads == 1 else "new specialization")
        if source == "traced":
            reason += " (traced; the artifact of that IR was FlyDSL's already)"
        self.record = DependencyRecord(self._recorder, self.__qualname__)
        compile_log.record(compile_log.CompileRecord(self.__qualname__, "FlyDSL", reason, milliseconds, source))
        self._replaced_by(source)

    def _replaced_by(self, outcome):
        """What replaced the caches the last call found stale (its notice says so)."""
        if self._stale_call is not None:
            self._stale_call.outcome, self._stale_call = outcome, None

    # -- the engine's launcher interface (sweep, magics) ------------------------

    def sweep(self):
        jit_function = self._jit_function()
        with self._lock:
            if jit_function is None or self.record is None or self.record.guard.holds():
                return []
            reasons = self.record.changes()
            if not reasons:
                self.record.refresh()
                return []
            self._evict(jit_function, reasons)
            return reasons

    def cache_info(self):
        jit_function = self._jit_function()
        size = jit_caches.artifact_count(jit_function) if jit_function is not None else 0
        misses = self.traces + self.loads
        return CacheInfo(self.calls - misses, misses, self.compiles, self.evictions, size)

    def cache_clear(self):
        jit_function = self._jit_function()
        with self._lock:
            if jit_function is not None:
                jit_caches.take(jit_function)
            self.generation += 1
            self._history.clear()
            self._recorder = self.record = None

    def dependency_records(self):
        """As flyrt's launchers: the current record, or the evicted one and why."""
        if self.record is not None:
            return [(self.record, None)]
        if self._history and self.last_reasons:
            return [(self._history[-1][0], self.last_reasons)]
        return []

    def _entries(self):
        return [("all specializations", _EntryView(self.record))] if self.record is not None else []


def _check_flydsl_drift(jit_function):
    """FlyDSL's own contract: a global its first compile captured raises when it changes."""
    for owner_cls in list(jit_function._used_global_vals):
        jit_function._check_globals_drift(owner_cls)


def handle_of(jit_function):
    return _handles.get(jit_function)


def attach(jit_function, factory=None):
    handle = _handles.get(jit_function)
    if handle is None:
        handle = _handles[jit_function] = GuardedJit(jit_function, factory)
    return handle
