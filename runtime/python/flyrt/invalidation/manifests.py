"""Dependency manifests: what a trace read, written so another process can
check it. A manifest names each binding read and function run by where it
lives (module, or class in a module), its name and a fingerprint another
process computes the same; a trace that read something known only by
identity (an object's instance dict, a nested function, a buffer) has no
manifest. Disk entries keyed by such manifests (flyrt's warm start, the
FlyDSL adapter's disk keys) are served only while every dependency still has
its fingerprint, and the guard of what is loaded is built from them.
"""

import hashlib
import json
import re
import sys
import types

from ..core.fingerprint import fingerprint
from ..core.user_code import probe
from .dependencies import MISSING, Recorder

_IDENTITY = re.compile(r"@[0-9a-f]{6,}")


def portable(printed):
    """Whether a fingerprint names no object by its identity."""
    return not _IDENTITY.search(printed)


def portable_fingerprint(value):
    """A fingerprint another process computes the same, or None."""
    if isinstance(value, types.ModuleType):
        return f"module:{value.__name__}"
    if isinstance(value, (type, types.BuiltinFunctionType)):
        module = getattr(value, "__module__", None)
        if module is None or sys.modules.get(module) is None or "<locals>" in value.__qualname__:
            return None
        return f"named:{module}.{value.__qualname__}"
    printed = fingerprint(value)
    return printed if portable(printed) else None


def _where(binding):
    owner = binding.owner
    if isinstance(owner, type):
        if "<locals>" in owner.__qualname__:
            return None
        return ["class", owner.__module__, owner.__qualname__]
    module = sys.modules.get(binding.namespace.get("__name__"))
    if module is None or module.__dict__ is not binding.namespace:
        return None  # an object's instance dict: known only by identity
    return ["module", module.__name__]


def _namespace(where):
    """(owner to watch, namespace to read) for a manifest's `where`, or (None, None)."""
    module = sys.modules.get(where[1])
    if module is None:
        return None, None
    if where[0] == "module":
        return module.__dict__, module.__dict__
    owner = module
    for part in where[2].split("."):
        owner = probe(owner, part)
    return (owner, owner.__dict__) if isinstance(owner, type) else (None, None)


def describe(recorder, covered=()):
    """The manifest of one trace's dependencies, or None if one is not portable:
    [kind, where, name, fingerprint] for each binding read and function run
    (but the functions in `covered`, which the caller's key already names)."""
    if recorder.buffers or recorder.reads:
        return None  # buffers, slots and objects read whole are known only by identity
    specs = []
    for binding in recorder.bindings.values():
        specs.append(["binding", _where(binding), binding.name, portable_fingerprint(binding.value)])
    for function, _ in recorder.functions.values():
        if id(function) in covered:
            continue
        # Another process cannot look a nested function up by name: such an artifact is not written.
        where = None if "<locals>" in function.__qualname__ else ["module", function.__module__]
        specs.append(["function", where, function.__qualname__, portable_fingerprint(function)])
    if any(where is None or printed is None for _, where, _, printed in specs):
        return None
    return sorted(specs)


def readers(recorder):
    """[[dependency, what reached it]] of a trace (each as [kind, module or
    where, name]), so that a warm start draws the same picture."""
    pairs = []
    for binding in recorder.bindings.values():
        reader = recorder.readers.get(id(binding))
        if reader is not None and _where(binding) is not None:
            pairs.append([["binding", _where(binding), binding.name], [reader.__module__, reader.__qualname__]])
    for function, _ in recorder.functions.values():
        reader = recorder.readers.get(id(function))
        if reader is not None:
            pairs.append([["function", function.__module__, function.__qualname__],
                          [reader.__module__, reader.__qualname__]])
    return pairs


def restore_readers(recorder, pairs):
    """The readers `pairs` (as readers() wrote them) into a recorder built from a manifest."""
    functions = {(f.__module__, f.__qualname__): f for f, _ in recorder.functions.values()}
    found = {("function", f.__module__, f.__qualname__): f for f in functions.values()}
    found.update({("binding", json.dumps(_where(b)), b.name): b for b in recorder.bindings.values()})
    for dependency, reader in pairs if isinstance(pairs, list) else ():
        try:
            kind, where, name = dependency
            key = (kind, json.dumps(where) if kind == "binding" else where, name)
            target, function = found.get(key), functions.get(tuple(reader))
        except (TypeError, ValueError):
            continue  # not as readers() writes them: the picture is flatter, nothing else
        if target is not None and function is not None:
            recorder.readers[id(target)] = function


def _current(kind, where, name):
    _, namespace = _namespace(where)
    if namespace is None:
        return MISSING
    if kind == "binding":
        return namespace.get(name, MISSING)
    value = namespace.get(name.split(".")[0], MISSING)
    for part in name.split(".")[1:]:
        value = probe(value, part, MISSING)
    return probe(value, "__wrapped__", value)  # a factory: the function its lru_cache wraps


def defining_function(function):
    """The function (module-level, or a class's method) whose code defines
    the nested `function`, as its module holds it now; None when `function`
    is not nested or its definer was redefined since it ran."""
    outer_name, nested, _ = function.__qualname__.partition(".<locals>.")
    if not nested:
        return None
    outer = _current("function", ["module", function.__module__], outer_name)
    if not isinstance(outer, types.FunctionType):
        return None
    return outer if _defines(outer.__code__, function.__code__) else None


def _defines(code, nested):
    return any(const is nested or (isinstance(const, types.CodeType) and _defines(const, nested))
               for const in code.co_consts)


def _place(where):
    return f"module {where[1]}" if where[0] == "module" else f"class {where[2]} ({where[1]})"


def _changed(specs):
    for kind, where, name, printed in specs:
        value = _current(kind, where, name)
        if value is MISSING:
            yield f"'{name}' is gone from {_place(where)}"
        elif portable_fingerprint(value) != printed:
            yield (f"'{name}' in {_place(where)} changed" if kind == "binding"
                   else f"function {name} ({where[1]}) changed")


def holds(specs):
    """Every dependency in `specs` has, in this process, the fingerprint it had then."""
    return next(_changed(specs), None) is None


def changes(specs):
    """What changed of the dependencies in `specs` since they were written: empty when they hold."""
    return list(_changed(specs))


def recorder_from(specs):
    """The dependencies a manifest names, as they are in this process (they hold)."""
    recorder = Recorder()
    for kind, where, name, _ in specs:
        value = _current(kind, where, name)
        if kind == "binding":
            owner, namespace = _namespace(where)
            recorder.read(owner, namespace, name, value)
        else:
            recorder.function(value)
    return recorder


def digest(specs):
    return hashlib.sha256(json.dumps(specs).encode()).hexdigest()[:16]
