"""Compile factories: functions that build launchers, cached by their arguments.

``flyc.compile_cache(maxsize=)`` is a drop-in for ``functools.lru_cache``
that records what each call read and evicts per entry. Plain
``functools.lru_cache`` factories are found when they build a launcher, and
cleared (``cache_clear()``) when their own code changes.
"""

import functools
import sys
import threading
import types
import weakref
from collections import OrderedDict

from ..core.cache_info import CacheInfo
from ..core.fingerprint import fingerprint, names_in
from ..core.user_code import probe
from .dependencies import DependencyRecord, Recorder, real_globals

class StaleLauncherError(RuntimeError):
    """A launcher whose compile factory changed: call the factory again."""


class FactoryLink:
    """A factory (lru_cache or compile_cache wrapper) and what it was built
    from when it built a launcher: its code, and the module constants its
    code names (a plain lru_cache runs outside any recorder, so the names in
    its code stand for what it read; functions it names are left to the
    launchers, which record the helpers they really trace)."""

    def __init__(self, wrapper, function):
        self.wrapper = wrapper
        self.function = function
        self.fingerprint = fingerprint(function)
        namespace = real_globals(function.__globals__)
        self.constants = {name: fingerprint(namespace[name]) for name in names_in(function.__code__)
                          if name in namespace and _is_constant(namespace[name])}

    @property
    def name(self):
        return self.function.__qualname__

    def check(self, launcher_name):
        """Raises StaleLauncherError (after clearing the factory) when the
        factory that built `launcher_name` changed since."""
        change = self.change()
        if change:
            self.wrapper.cache_clear()
            raise StaleLauncherError(
                f"{launcher_name} was built by {self.name}, whose code changed since; call "
                f"{self.name}(...) again for a launcher built from the new code")

    def change(self):
        current = getattr(self.wrapper, "__wrapped__", None)
        if current is not self.function or fingerprint(current) != self.fingerprint:
            return f"compile factory {self.name} ({self.function.__module__}) changed"
        namespace = real_globals(self.function.__globals__)
        for name, recorded in self.constants.items():
            if fingerprint(namespace.get(name)) != recorded:
                return f"'{name}', read by compile factory {self.name}, changed"
        return None


def _is_constant(value):
    return isinstance(value, (bool, int, float, str, bytes, tuple, list, dict, type(None)))


_strong_links = {}  # id(wrapper) -> (weakref to wrapper, FactoryLink)


def creator_of(fn):
    """The factory whose running call is defining `fn`, if any."""
    frame = sys._getframe(1)
    while frame is not None:
        if fn.__code__ in frame.f_code.co_consts:
            return _link_for(frame)
        frame = frame.f_back
    return None


def _link_for(frame):
    code = frame.f_code
    for value in list(real_globals(frame.f_globals).values()):
        wrapped = probe(value, "__wrapped__")  # any global of the user's: whatever its __getattr__ raises
        if isinstance(wrapped, types.FunctionType) and wrapped.__code__ is code and probe(value, "cache_clear"):
            existing = _strong_links.get(id(value))
            if existing is not None and existing[0]() is value and existing[1].change() is None:
                return existing[1]
            return relink(value)
    return None


def relink(wrapper):
    """A fresh link to `wrapper`'s current code; launchers built before keep
    their old link, and so know they are stale."""
    link = FactoryLink(wrapper, wrapper.__wrapped__)
    try:
        _strong_links[id(wrapper)] = (weakref.ref(wrapper), link)
    except TypeError:
        pass  # a wrapper without weak references: not swept, still checked per launcher
    return link


def registered():
    """Live factory links (lru_cache and compile_cache factories seen building launchers)."""
    links = []
    for key, (ref, link) in list(_strong_links.items()):
        if ref() is None:
            del _strong_links[key]
        else:
            links.append(link)
    return links


class _Entry:
    __slots__ = ("value", "record")

    def __init__(self, value, record):
        self.value = value
        self.record = record


class CompileCache:
    """``functools.lru_cache`` for compile factories, with per-entry dependencies."""

    def __init__(self, factory, maxsize):
        functools.update_wrapper(self, factory)
        self.maxsize = maxsize
        self._entries = OrderedDict()
        self._lock = threading.RLock()
        self.hits = self.misses = self.evictions = 0
        self.last_reasons = {}

    def __call__(self, *args, **kwargs):
        key = functools._make_key(args, kwargs, typed=False)
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None and not self._stale(key, entry):
                self._entries.move_to_end(key)
                self.hits += 1
                return entry.value
            self.misses += 1
        value, record = self._run(args, kwargs)
        with self._lock:
            self._entries[key] = _Entry(value, record)
            if self.maxsize is not None:
                while len(self._entries) > self.maxsize:
                    self._entries.popitem(last=False)
                    self.evictions += 1
        return value

    def _run(self, args, kwargs):
        """Calls the factory with its globals read through a recorder."""
        factory = self.__wrapped__
        recorder = Recorder()
        recorder.function(factory)
        recording = types.FunctionType(factory.__code__, recorder.globals_for(factory), factory.__name__,
                                       factory.__defaults__, factory.__closure__)
        recording.__kwdefaults__ = factory.__kwdefaults__
        value = recording(*args, **kwargs)
        return value, DependencyRecord(recorder, factory.__qualname__)

    def _stale(self, key, entry):
        if entry.record.guard.holds():
            return False
        reasons = entry.record.changes()
        if not reasons:
            entry.record.refresh()
            return False
        del self._entries[key]
        self.evictions += 1
        self.last_reasons[key] = reasons
        return True

    def sweep(self):
        """Evicts every stale entry now; returns the reasons."""
        reasons = []
        with self._lock:
            for key, entry in list(self._entries.items()):
                if self._stale(key, entry):
                    reasons.extend(self.last_reasons[key])
        return reasons

    def cache_info(self):
        return CacheInfo(self.hits, self.misses, self.misses, self.evictions, len(self._entries), self.maxsize)

    def cache_clear(self):
        with self._lock:
            self.evictions += len(self._entries)
            self._entries.clear()

    def __repr__(self):
        return f"<flyrt compile_cache {self.__qualname__}>"


def compile_cache(maxsize=128):
    """Decorator: ``functools.lru_cache`` for factories that build launchers,
    evicting exactly the entries whose dependencies changed."""
    if callable(maxsize) and not isinstance(maxsize, int):
        return CompileCache(maxsize, 128)
    return lambda factory: CompileCache(factory, maxsize)
