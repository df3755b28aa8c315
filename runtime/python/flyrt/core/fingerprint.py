"""Fingerprints of live objects: what a compiled artifact was built from.

A function's fingerprint covers its code object (bytecode, constants, nested
code, names), defaults, keyword defaults and closure cell contents; a
constant's covers its value. Never source files or modification times.
Code fingerprints are memoized per code object.
"""

import functools
import hashlib
import sys
import types

_code_fingerprints = {}  # id(code) -> (code, fingerprint); the code is kept alive, so its id stays its own
_CODE_FINGERPRINTS_KEPT = 4096
_extensions = []  # (class, fingerprinter): objects of other DSLs that wrap a function


def register(cls, fingerprinter):
    """Fingerprint instances of `cls` with `fingerprinter(value, fingerprint)`:
    for wrappers (another DSL's decorated functions) that stand for the code
    they wrap rather than for their identity."""
    _extensions.append((cls, fingerprinter))


def _code(code):
    cached = _code_fingerprints.get(id(code))
    if cached is not None and cached[0] is code:
        return cached[1]
    parts = [code.co_code, repr(code.co_names), repr(code.co_varnames), repr(code.co_freevars),
             repr(code.co_cellvars), code.co_name, str(code.co_flags), str(code.co_argcount),
             str(code.co_kwonlyargcount)]
    for const in code.co_consts:
        parts.append(_code(const) if isinstance(const, types.CodeType) else f"{type(const).__name__}:{const!r}")
    digest = hashlib.sha256("\x00".join(p if isinstance(p, str) else p.hex() for p in parts).encode()).hexdigest()
    if len(_code_fingerprints) >= _CODE_FINGERPRINTS_KEPT:
        del _code_fingerprints[next(iter(_code_fingerprints))]  # the oldest: a session's edits stay bounded
    _code_fingerprints[id(code)] = (code, digest)
    return digest


def fingerprint(value, _seen=None):
    """A string that changes when `value` changes in a way compiled code could see."""
    seen = _seen if _seen is not None else set()
    if id(value) in seen:
        return "<cycle>"
    if isinstance(value, (bool, int, float, complex, str, bytes, type(None))):
        return f"{type(value).__name__}:{value!r}"
    if isinstance(value, types.FunctionType):
        seen.add(id(value))
        cells = [fingerprint(c.cell_contents, seen) if filled(c) else "<empty>" for c in value.__closure__ or ()]
        return "fn(" + "|".join([
            _code(value.__code__),
            fingerprint(value.__defaults__, seen),
            fingerprint(value.__kwdefaults__, seen),
            ",".join(cells),
        ]) + ")"
    if isinstance(value, (staticmethod, classmethod)):
        return f"{type(value).__name__}({fingerprint(value.__func__, seen)})"
    if isinstance(value, functools._lru_cache_wrapper):  # a compile factory stands for its code
        return f"lru_cache({fingerprint(value.__wrapped__, seen)})"
    if isinstance(value, functools.partial):
        seen.add(id(value))
        return (f"partial({fingerprint(value.func, seen)},{fingerprint(value.args, seen)},"
                f"{fingerprint(value.keywords, seen)})")
    if isinstance(value, types.ModuleType):
        return f"module:{value.__name__}"
    if isinstance(value, (tuple, list)):
        seen.add(id(value))
        return f"{type(value).__name__}[" + ",".join(fingerprint(v, seen) for v in value) + "]"
    if isinstance(value, dict):
        seen.add(id(value))
        items = sorted((_key(k), fingerprint(v, seen)) for k, v in list(value.items()))
        return "dict{" + ",".join(f"{k}:{v}" for k, v in items) + "}"
    if isinstance(value, (set, frozenset)):
        seen.add(id(value))
        return f"{type(value).__name__}{{" + ",".join(sorted(fingerprint(v, seen) for v in list(value))) + "}"
    for cls, fingerprinter in _extensions:
        if isinstance(value, cls):
            seen.add(id(value))
            return fingerprinter(value, lambda inner: fingerprint(inner, seen))
    if isinstance(value, type):
        return f"class:{value.__module__}.{value.__qualname__}@{id(value):x}"
    module = type(value).__module__
    if module.startswith("flyrt"):
        wrapped = getattr(value, "__wrapped__", None)
        if isinstance(wrapped, types.FunctionType) and hasattr(value, "_inline"):
            return f"launcher({fingerprint(wrapped, seen)})"  # a @flyc.jit device helper
        kernel = getattr(value, "fn", None)
        if isinstance(kernel, types.FunctionType) and type(value).__name__ == "KernelFunction":
            return f"kernel({fingerprint(kernel, seen)})"
    if _by_value(value):
        return f"{module}.{type(value).__name__}:{value}"
    return f"{type(value).__qualname__}@{id(value):x}"


def _by_value(value):
    """Library values that equal ones print the same (a dtype is rebuilt by many calls)."""
    numpy, torch = sys.modules.get("numpy"), sys.modules.get("torch")
    return (numpy is not None and isinstance(value, numpy.dtype)) or (
        torch is not None and isinstance(value, (torch.dtype, torch.device)))


def _key(key):
    """A dict key, comparably (a key of the user's class whose __repr__ fails by identity)."""
    try:
        return repr(key)
    except Exception:  # noqa: BLE001
        return f"{type(key).__qualname__}@{id(key):x}"


def code_tree(code):
    """`code` and the code objects nested in it (its functions, lambdas, comprehensions)."""
    yield code
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from code_tree(const)


def names_in(code):
    """Every global or attribute name `code` (or code nested in it) names."""
    return {name for inner in code_tree(code) for name in inner.co_names}


def filled(cell):
    """Whether a closure cell holds a value yet."""
    try:
        cell.cell_contents
        return True
    except ValueError:
        return False
