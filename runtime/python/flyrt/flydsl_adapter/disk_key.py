"""FlyDSL's disk cache, keyed by what each artifact's trace read as well.

FlyDSL names a cache directory after a hash of the function's source and the
sources its ``co_names`` walk finds, computed once per JitFunction; a helper
reached any other way (a module attribute, a plain helper edited in place)
leaves that name unchanged, so ``FLYDSL_RUNTIME_ENABLE_CACHE=1`` could serve
an artifact of other code, even in a new process. The adapter's cache
manager (a ``JitCacheManager`` subclass, FlyDSL's files untouched) stores
each artifact under FlyDSL's key plus a digest of the dependencies its trace
recorded, and beside it a manifest of those dependencies (module, name,
fingerprint). A lookup recomputes the fingerprints of each manifest's
dependencies in this process and reads only an entry whose dependencies all
match; an artifact whose dependencies cannot be named portably (an object
known only by identity) is not written to disk at all.
"""

import contextlib
import json
import time
import warnings

from ..invalidation.manifests import describe, digest, holds, recorder_from


def manager_class(jit_cache_manager):
    class FoldedCacheManager(jit_cache_manager):
        """FlyDSL's JitCacheManager, its keys extended by the dependency digest."""

        def __init__(self, cache_dir, handle):
            super().__init__(cache_dir)
            self._handle = handle

        def _manifest_file(self, cache_key):
            return self.cache_dir / f"{self._safe_key(cache_key)}.flyrt-deps.json"

        def _manifests(self, cache_key):
            path = self._manifest_file(cache_key)
            try:
                manifests = json.loads(path.read_text())
                if not isinstance(manifests, list) or not all(isinstance(m, dict) for m in manifests):
                    raise ValueError("not a list of manifests")
                return manifests
            except FileNotFoundError:
                return []  # nothing stored for this key yet
            except (OSError, ValueError) as error:
                warnings.warn(f"flyrt: unreadable FlyDSL dependency manifest {path} ({error}); "
                              "its artifacts are not used, and it is rebuilt", RuntimeWarning, stacklevel=2)
                return []

        def get(self, cache_key):
            for manifest in reversed(self._manifests(cache_key)):
                specs = manifest.get("deps", [])
                if not holds(specs):
                    continue
                start = time.perf_counter()
                value = super().get(f"{cache_key}|flyrt-deps={manifest.get('digest')}")
                if value is not None:
                    # No trace ran: what it depends on comes from the manifest.
                    self._handle.traced(recorder_from(specs), (time.perf_counter() - start) * 1e3, "disk cache")
                    return value
            return None

        @contextlib.contextmanager
        def compile_lock(self, cache_key, *, accept_cached=None):
            # FlyDSL's lock on the plain key serializes compiles across
            # processes; entries are only ever read and written folded.
            with super().compile_lock(cache_key, accept_cached=lambda value: False):
                existing = self.get(cache_key)
                if existing is not None and (accept_cached is None or accept_cached(existing)):
                    yield existing, None
                else:
                    yield None, lambda value: self._store(cache_key, value)

        def _store(self, cache_key, value):
            trace = self._handle.latest_trace
            specs = describe(trace) if trace is not None else None
            if specs is None:
                return
            key_digest = digest(specs)
            folded = f"{cache_key}|flyrt-deps={key_digest}"
            self._write_cache_file(self._cache_file(folded), value)
            self.memory_cache[folded] = value
            manifests = [m for m in self._manifests(cache_key) if m.get("digest") != key_digest]
            manifests.append({"digest": key_digest, "deps": specs})
            temporary = self._manifest_file(cache_key).with_suffix(".tmp")
            temporary.write_text(json.dumps(manifests))
            temporary.replace(self._manifest_file(cache_key))

    return FoldedCacheManager


_folded_class = None


def needs_folding(manager):
    """A cache manager FlyDSL made (not ours, not None: disk cache on)."""
    return manager is not None and type(manager) is not _folded_class


def fold(jit_function, handle):
    """After FlyDSL chose this function's cache manager: ours, on the same directory."""
    global _folded_class
    manager = jit_function.cache_manager
    if _folded_class is None:
        _folded_class = manager_class(type(manager))
    jit_function.cache_manager = _folded_class(manager.cache_dir, handle)
