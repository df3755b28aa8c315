"""FlyDSL's in-process caches on one JitFunction, taken out and put back together.

A JitFunction keeps compiled artifacts (``_mem_cache``), launch states
(``_call_state_cache``), the latest compile (``_last_compiled``), the disk
cache manager and its key (computed once, at the first call), and snapshots
of the globals it uses (checked for drift against the first compile). They
describe one version of the code, so they are evicted, and restored, as one.
"""

from . import compat

_EMPTY = {"_mem_cache": dict, "_call_state_cache": dict, "_extern_linkage_keys": set,
          "_used_global_vals": dict, "_global_refs_cache": dict, "_globals_prefix_cache": dict}


def take(jit_function):
    """Empties `jit_function`'s caches; returns what they held."""
    snapshot = {name: getattr(jit_function, name) for name in compat.INSTANCE_CACHES}
    for name in compat.INSTANCE_CACHES:
        empty = _EMPTY.get(name)
        setattr(jit_function, name, empty() if empty else None)
    return snapshot


def put(jit_function, snapshot):
    """Puts back caches `take` returned (an earlier version of the code, again current)."""
    for name, value in snapshot.items():
        setattr(jit_function, name, value)


def artifact_count(jit_function):
    return len(jit_function._mem_cache)
