"""Warm start: a launcher's artifact found on disk in a new process without
tracing it again.

Tracing is most of a cache hit's cost in a fresh process (the Python runs to
build the IR the disk entry is keyed by). So beside the compiled object, each
compile writes a manifest under a key that needs no trace: the compiler
build and target, the launcher's module, name and code (its fingerprint
covers the kernels and helpers a compile factory closed over), and the
specialization key. The manifest lists what the trace read (invalidation/manifests.py);
a lookup serves an entry only while each of those still has its fingerprint
in this process, and the artifact it loads is guarded by them as a traced one
would be. A trace that read something known only by identity (an object,
a buffer, a nested function the launcher does not close over) is not
remembered: the compile log says so, and the next process traces.
"""

import hashlib
import os
import re
import types

from ..core import specialization
from ..core.fingerprint import filled, fingerprint
from ..core.user_code import probe
from ..invalidation import manifests
from . import disk_cache, sealed_json

_KEPT = 8  # versions per launcher and specialization (A -> B -> A across processes)


def closure_functions(fn):
    """Functions reachable from `fn`'s closure, by id: the kernels and helpers
    a factory defined, whose code the launcher's fingerprint covers."""
    found, stack = {}, [fn]
    while stack:
        value = stack.pop()
        value = probe(value, "fn", value)  # a kernel's or a launcher's function
        if not isinstance(value, types.FunctionType) or id(value) in found:
            continue
        found[id(value)] = value
        stack.extend(cell.cell_contents for cell in value.__closure__ or () if filled(cell))
    return found


def index(launcher, key, compiler_id):
    """The key of `launcher`'s manifests for specialization `key`, or (None, why not)."""
    if not specialization.portable(key):
        return None, "a Constexpr argument known only by identity"
    printed = fingerprint(launcher.fn)
    if not manifests.portable(printed):
        return None, "its code closes over an object known only by identity"
    device_free = list(key[:2]) + [0] + list(key[3:])  # identical GPUs share entries
    text = "\n".join([compiler_id, f"{launcher.fn.__module__}.{launcher.__qualname__}", printed,
                      repr(device_free)])
    return hashlib.sha256(text.encode()).hexdigest(), None


def _path(name):
    return os.path.join(disk_cache.directory(), "warm", name[:2], name + ".json")


def _entries(name, warn=True):
    """The versions stored for `name`; an unreadable or untrusted manifest is
    said once, by the lookup (warn), and replaced by the next compile's."""
    return sealed_json.read(_path(name), "warm-start manifest", warn)


def lookup(launcher, name, warn=True):
    """(entry, recorder) of the newest stored version of `name` whose
    dependencies all hold in this process, or None (a manifest that cannot
    be used is said when `warn`)."""
    for entry in reversed(_entries(name, warn)):
        specs = entry.get("deps")
        if not _well_formed(entry) or not manifests.holds(specs):
            continue
        recorder = manifests.recorder_from(specs)
        for function in closure_functions(launcher.fn).values():
            recorder.function(function)
        manifests.restore_readers(recorder, entry.get("readers"))
        return entry, recorder
    return None


def _well_formed(entry):
    """An entry as remember() writes them: an object digest (a file name in the
    cache, never a path), the host function's name, the parameters it writes."""
    return (isinstance(entry.get("deps"), list) and isinstance(entry.get("object"), str)
            and re.fullmatch(r"[0-9a-f]{64}", entry["object"]) is not None and isinstance(entry.get("host"), str)
            and isinstance(entry.get("written"), list) and all(isinstance(i, int) for i in entry["written"]))


def remember(launcher, name, recorder, obj, host_name, written):
    """Writes what a compile of `name` read beside its object `obj`; returns
    None, or why it could not (nothing raised: the launch never depends on it)."""
    specs = manifests.describe(recorder, covered=closure_functions(launcher.fn))
    if specs is None:
        return "it read something known only by identity (an object, a buffer or a nested function)"
    entries = [e for e in _entries(name, warn=False) if e.get("deps") != specs]
    entries.append({"deps": specs, "object": obj, "host": host_name, "written": written,
                    "readers": manifests.readers(recorder)})
    return sealed_json.write(_path(name), entries[-_KEPT:], "manifest")
