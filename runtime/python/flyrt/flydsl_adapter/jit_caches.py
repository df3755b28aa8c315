"""FlyDSL's in-process caches on one JitFunction, taken out and put back together.

What describes one version of the code depends on the release (compat.py):
0.4.2 keeps compiled artifacts (``_mem_cache``), launch states
(``_call_state_cache``), the latest compile, the disk cache manager and its
key (computed once, at the first call) and snapshots of the globals it uses;
under 0.5.0, whose artifacts are keyed by their traced IR, only the calls the
adapter runs without a trace (``fast_path``) do. They are evicted, and
restored, as one.
"""

from . import compat

_EMPTY = {"_mem_cache": dict, "_call_state_cache": dict, "_extern_linkage_keys": set,
          "_used_global_vals": dict, "_global_refs_cache": dict, "_globals_prefix_cache": dict,
          "_flyrt_calls": dict}
_kind = compat.PER_SIGNATURE  # of the installed release (install())


def use(release):
    global _kind
    _kind = release.kind


def keyed_by_signature():
    """Whether the release keys its artifacts by call signature (0.4.2), not by traced IR (0.5.0)."""
    return _kind == compat.PER_SIGNATURE


def take(jit_function):
    """Empties `jit_function`'s caches; returns what they held."""
    names = compat.INSTANCE_CACHES[_kind]
    snapshot = {name: getattr(jit_function, name, None) for name in names}
    for name in names:
        empty = _EMPTY.get(name)
        setattr(jit_function, name, empty() if empty else None)
    return snapshot


def put(jit_function, snapshot):
    """Puts back caches `take` returned (an earlier version of the code, again current)."""
    for name, value in snapshot.items():
        setattr(jit_function, name, value)


def artifact_count(jit_function):
    return len(jit_function._mem_cache)
