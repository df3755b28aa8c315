"""Dependency manifests: what a trace read, written so another process can
check it. A manifest names each binding read and function run by where it
lives (module, class in a module, or a dict reached from a module's binding
by its keys: TABLE[k]), its name and a fingerprint another process computes
the same; a trace that read something known only by identity (an object's
instance dict, a nested function, a buffer) has no manifest. Disk entries
keyed by such manifests (flyrt's warm start, the FlyDSL adapter's disk keys)
are served only while every dependency still has its fingerprint, and the
guard of what is loaded is built from them.
"""

import ast
import hashlib
import json
import re
import sys
import types

from ..core.fingerprint import fingerprint
from ..core.user_code import probe
from .dependencies import MISSING, Recorder, WholeRead

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


def _key_text(key):
    """A dict key as a manifest writes it (its Python literal), or None when
    that literal does not give the key back."""
    text = repr(key)
    back = _key(text)
    return text if back == key and type(back) is type(key) else None


def _key(text):
    try:
        return ast.literal_eval(text)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return MISSING


def _item_places(recorder):
    """{id(binding): (where, key text)} for the recorded reads of dict items
    that start at a module's binding (TABLE[k], TABLE[k][j]): where is
    ["item", module, name, key text, ...], the path to the dict read. (A
    trace may record an item before the module's binding that reached it:
    paths grow a level a round.)"""
    bindings = list(recorder.bindings.values())
    paths = {}  # id(dict) -> the path to it
    for binding in bindings:
        where = _where(binding)
        if where is not None and where[0] == "module" and isinstance(binding.value, dict):
            paths.setdefault(id(binding.value), ["item", where[1], binding.name])
    places, grown = {}, True
    while grown:
        grown = False
        for binding in bindings:
            text = _key_text(binding.name) if id(binding.owner) in paths and id(binding) not in places else None
            if text is None:
                continue
            places[id(binding)] = (paths[id(binding.owner)], text)
            if isinstance(binding.value, dict):
                paths.setdefault(id(binding.value), paths[id(binding.owner)] + [text])
            grown = True
    return places


def _namespace(where):
    """(owner to watch, namespace to read) for a manifest's `where`, or (None, None)."""
    module = sys.modules.get(where[1])
    if module is None:
        return None, None
    if where[0] == "module":
        return module.__dict__, module.__dict__
    if where[0] == "item":
        value = module.__dict__.get(where[2], MISSING)
        for text in where[3:]:
            value = value.get(_key(text), MISSING) if isinstance(value, dict) else MISSING
        return (value, value) if isinstance(value, dict) else (None, None)
    owner = module
    for part in where[2].split("."):
        owner = probe(owner, part)
    return (owner, owner.__dict__) if isinstance(owner, type) else (None, None)


def describe(recorder, covered=()):
    """The manifest of one trace's dependencies, or None if one is not portable:
    [kind, where, name, fingerprint] for each binding read (a module's, a
    class's, an item of a module's dict), container read whole through one,
    and function run (but the functions in `covered`, which the caller's key
    already names)."""
    if recorder.buffers:
        return None  # buffers are known only by identity
    items = _item_places(recorder)
    specs, held = [], {}  # held: id(value) -> (where, name) of a binding that gave it
    for binding in recorder.bindings.values():
        where, name = items.get(id(binding)) or (_where(binding), binding.name)
        specs.append(["binding", where, name, portable_fingerprint(binding.value)])
        if where is not None:
            held.setdefault(id(binding.value), (where, name))
    for read in recorder.reads.values():
        if not isinstance(read, WholeRead) or id(read.obj) not in held:
            return None  # slots, computed attributes, objects reached otherwise: known only by identity
        where, name = held[id(read.obj)]
        specs.append(["whole", where, name, portable_fingerprint(read.obj)])
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
    if where[0] == "item":
        return namespace.get(_key(name), MISSING)
    if kind != "function":
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


def _label(where, name):
    """How messages name a binding: `TABLE[key]` (module m), or `name` (module m)."""
    if where[0] == "item":
        return _place(where + [name])
    return f"{name} ({_place(where)})"


def _place(where):
    if where[0] == "item":
        return "".join([where[2], *(f"[{text}]" for text in where[3:])]) + f" (module {where[1]})"
    return f"module {where[1]}" if where[0] == "module" else f"class {where[2]} ({where[1]})"


def _changed(specs):
    for kind, where, name, printed in specs:
        value = _current(kind, where, name)
        shown = f"[{name}]" if where[0] == "item" else f"'{name}'"
        if value is MISSING:
            yield f"{shown} is gone from {_place(where)}"
        elif portable_fingerprint(value) != printed:
            read = " (read whole)" if kind == "whole" else ""
            yield (f"function {name} ({where[1]}) changed" if kind == "function"
                   else f"{shown} in {_place(where)} changed{read}")


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
            recorder.read(owner, namespace, _key(name) if where[0] == "item" else name, value)
        elif kind == "whole":
            recorder.read_whole(value, _label(where, name), "an earlier process's trace")
        else:
            recorder.function(value)
    return recorder


def digest(specs):
    return hashlib.sha256(json.dumps(specs).encode()).hexdigest()[:16]
