"""FlyDSL's autotuner, keyed by the code it tuned too.

``flydsl.autotune`` keeps the best config per key, in memory and in
``~/.flydsl/autotune/<name>.json``; the key covers shapes, dtypes, strides,
the architecture, FlyDSL's own sources and the environment, not the
kernel's code: after a helper edit the config tuned for the old code would
be used again, in this process and in the next. The adapter adds to each key
a digest of the code the tuned function runs: its own code, closure and
defaults, and, transitively, every function, FlyDSL function and constant
its code names (portable fingerprints, which another process computes the
same). An edit makes a new key, so that config is tuned again, lazily; the
old one stays under the old key, so changing the code back (A -> B -> A)
finds A's config without tuning. A re-tune because the code changed is
noted like a recompile (the kernel's notice says why).
"""

import hashlib
import types

from .. import invalidation
from ..fingerprint import fingerprint, names_in
from ..manifests import portable_fingerprint
from ..user_code import is_user_function
from . import source_function

_DEPTH = 8  # helpers calling helpers, at most
_last_digest = {}  # (id(autotuner), key without the digest) -> digest, to say why a key is new


def code_digest(jit_function):
    """A digest of the code `jit_function` runs, from its source function out."""
    parts, seen = [], set()
    _visit(source_function(jit_function), parts, seen, 0)
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]


def _visit(function, parts, seen, depth):
    if id(function) in seen or depth > _DEPTH:
        return
    seen.add(id(function))
    parts.append(f"{function.__module__}.{function.__qualname__}={fingerprint(function)}")
    namespace = function.__globals__
    for name in sorted(names_in(function.__code__) & namespace.keys()):
        _named(name, namespace[name], parts, seen, depth)
    for cell in function.__closure__ or ():
        try:
            _named("<closure>", cell.cell_contents, parts, seen, depth)
        except ValueError:
            pass  # an empty cell


def _named(name, value, parts, seen, depth):
    inner = _function_of(value)
    if inner is not None:
        _visit(inner, parts, seen, depth + 1)
    elif not isinstance(value, types.ModuleType):
        printed = portable_fingerprint(value)
        if printed is not None:  # a constant another process sees the same; objects only by identity: left out
            parts.append(f"{name}={printed}")


def _function_of(value):
    """The user's function `value` runs (a FlyDSL JitFunction or kernel: the one it was written as)."""
    if isinstance(value, types.FunctionType):
        return value if is_user_function(value) else None
    if type(value).__module__.startswith("flydsl.compiler"):
        try:
            inner = source_function(value)
        except AttributeError:
            return None
        return inner if isinstance(inner, types.FunctionType) and is_user_function(inner) else None
    return None


def keyed(autotuner, key):
    """`key` (FlyDSL's) with the digest of the code the tuned function runs."""
    digest = code_digest(autotuner.fn)
    last = _last_digest.get((id(autotuner), key))
    if last is not None and last != digest:
        notice = invalidation.note_recompile(
            f"autotuned {source_function(autotuner.fn).__qualname__}",
            ["the code it runs changed since its config was chosen: its config is the one tuned for this code "
             "(tuned now if none was)"])
        notice.outcome = "compiled"
    _last_digest[id(autotuner), key] = digest
    return key + (str(("_flyrt_code_", digest)),)  # a string, as FlyDSL's parts are: its disk cache is JSON
