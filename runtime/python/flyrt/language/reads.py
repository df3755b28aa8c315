"""How traced code reads Python state: the calls the rewrite (ast_rewrite)
puts wherever traced code touches a Python object, and what each makes a
dependency of (dependencies.Recorder).

Every attribute, element, call, operand and iteration passes through here,
and becomes one of two kinds of read:

- precise, at the value's source: ``obj.name``, ``getattr(obj, "name")``,
  ``hasattr``, ``operator.attrgetter``, ``vars(obj)[k]``, ``obj[k]``,
  ``operator.itemgetter``, ``d.get(k)``: the binding, slot, computed
  attribute or element the value came from;
- whole: an object handed to code the trace does not follow (a builtin or a
  library function: ``float(S0)``, ``S0.item()``, ``np.sum(S)``; an operator:
  ``S0 * 2.0``; iteration and unpacking; a DSL function or conversion:
  ``fx.Float32(S0)``, ``x * S0``, ``if cfg:``): everything it holds.

A conversion of an object of the user's class runs its method
(``__float__``, ``__index__``, ``__bool__``, ``__len__``, ``__getitem__``,
``__call__``) traced, so what that reads is precise too. Only state from
outside the trace counts (``Recorder.obtain``): what the trace made itself
(a list of traced values) is no dependency.
"""

import functools
import math
import operator
import types

from ..core.errors import EndlessRecursion
from ..core.user_code import is_user_class, is_user_function, user_line
from ..invalidation import state
from ..invalidation.attribute_lookup import GETTER, defining_class, lookup
from ..invalidation.dependencies import MISSING
from .tracing import active

_PLAIN = frozenset({int, float, bool, type(None), str})

# How a user's helper is made traceable (rewriting.traceable): handed in by
# rewriting, which binds the code it rewrites to this module.
_traceable = None


def trace_helpers_with(traceable):
    global _traceable
    _traceable = traceable


def attr(obj, name, text=None):
    """`obj.name` in traced code (`text`: the source of `obj`)."""
    trace = active()
    if trace is None:
        return getattr(obj, name)
    recorder = trace.recorder
    if isinstance(obj, types.ModuleType):
        namespace = obj.__dict__
        if name not in namespace and callable(namespace.get("__getattr__")):  # PEP 562
            recorder.attribute(obj, name, MISSING, text)
            value = _traced(namespace["__getattr__"], name)
            recorder.obtain(value, f"{obj.__name__}.{name}")
            return value
    elif not isinstance(obj, type) and not state.unchanging(obj):
        found = lookup(obj, name, state.instance_dict(obj))
        if found.how == GETTER:  # a property, descriptor or __getattr__ of the user's: traced
            recorder.attribute(obj, name, MISSING, text)
            value = _traced(found.function, *found.arguments)
            recorder.obtain(value, f"{text}.{name}" if text else name)
            return value
    value = getattr(obj, name)
    recorder.attribute(obj, name, value, text)
    return value


def item(obj, key, text=None):
    """`obj[key]` in traced code (`text`: the source of `obj`)."""
    trace = active()
    if trace is None:
        return obj[key]
    recorder = trace.recorder
    text = text or type(obj).__name__
    if type(key) not in _PLAIN and recorder.obtained(key):
        recorder.whole(key, None, f"{text}[...]")  # the key's own value chooses the element
    kind = state.kind_of(obj)
    if kind is state.OBJECT:
        method = _user_method(type(obj), ("__getitem__",))
        if method is not None:
            return _traced_method(recorder, method, obj, key)
        recorder.whole(obj, text, f"{text}[{key!r}]")
    value = obj[key]
    if kind is state.CONTAINER:
        if recorder.obtained(obj):
            if isinstance(obj, dict):
                recorder.read(obj, obj, key, value, f"{text}[{key!r}]")
            recorder.obtain(value, f"{text}[{key!r}]")
    elif kind is state.BUFFER or kind is state.DEVICE:
        recorder.buffer(obj, text, _plain_key(key))
    return value


def _plain_key(key):
    """An index as it was when read (a 0-d array's value, not the array)."""
    if type(key) is tuple:
        return tuple(_plain_key(k) for k in key)
    return key if type(key) in _PLAIN or isinstance(key, slice) else operator.index(key)


def used(value, texts):
    """`value` consumed by Python itself in traced code (an operand of an
    operator, an f-string, an augmented assignment; `texts`: its source and
    the expression's)."""
    if type(value) not in _PLAIN:
        trace = active()
        if trace is not None and trace.recorder.obtained(value):
            trace.recorder.whole(value, texts[0], texts[1])
    return value


def iterate(value, texts):
    """What traced code iterates or unpacks (`texts`: its source and the
    statement's): a container's items are state too, as the code reaches them."""
    trace = active()
    if trace is None or not trace.recorder.obtained(value):
        return value
    recorder = trace.recorder
    if state.kind_of(value) is state.CONTAINER:
        recorder.whole(value, texts[0], texts[1], deep=False)
        return _obtaining(recorder, value, texts[0])
    recorder.whole(value, texts[0], texts[1])  # a buffer's elements, or an object's own __iter__
    return value


def _obtaining(recorder, container, text):
    for i, element in enumerate(container):
        recorder.obtain(element, f"{text}[{i}]")
        yield element


def call(texts, fn, *args, **kwargs):
    """A call in traced code (`texts`: its source, then its arguments'): the
    user's helpers are recorded and traced with their control flow rewritten;
    a builtin, library or DSL function reads what it is handed."""
    while isinstance(fn, functools.partial):
        args = fn.args + args
        kwargs = {**fn.keywords, **kwargs}
        fn = fn.func
    if isinstance(fn, (staticmethod, classmethod)):
        fn = fn.__func__
    kind = type(fn)
    if kind is types.MethodType and type(fn.__func__) is types.FunctionType and is_user_function(fn.__func__):
        args = (fn.__self__,) + args  # a method of the user's: traced like any helper
        fn, kind = fn.__func__, types.FunctionType
    trace = active()
    if kind is types.FunctionType and is_user_function(fn):
        return _helper(trace, fn, args, kwargs) if trace is not None else _traceable(fn)(*args, **kwargs)
    if trace is None:
        return fn(*args, **kwargs)
    recorder = trace.recorder
    reader = _READERS.get(id(fn)) if kind in (types.BuiltinFunctionType, type) else _INSTANCE_READERS.get(kind)
    if reader is not None:
        return reader(recorder, texts, fn, args, kwargs)
    if kind is types.BuiltinMethodType and type(fn.__self__) is dict and fn.__name__ == "get":
        return _dict_get(recorder, texts, fn, args, kwargs)
    if kind is type and fn.__new__ is object.__new__ and is_user_class(fn):
        init = _user_method(fn, ("__init__",))  # a new object of the user's class: its __init__ traced
        if init is not None:
            obj = object.__new__(fn)
            _traced_method(recorder, init, obj, *args, **kwargs)
            return obj
    elif kind not in _PLAIN_CALLABLES and is_user_class(kind):
        method = _user_method(kind, ("__call__",))  # a callable object of the user's
        if method is not None:
            return _traced_method(recorder, method, fn, *args, **kwargs)
    return _opaque(recorder, texts, fn, args, kwargs)


_PLAIN_CALLABLES = frozenset({types.FunctionType, types.MethodType, types.BuiltinFunctionType, type})


def _helper(trace, fn, args, kwargs):
    """A helper of the user's traced: inlined, so a call that never stops
    nesting is the user's error, named at the outermost of its calls."""
    depth = trace.nesting.get(fn, 0)
    trace.nesting[fn] = depth + 1
    try:
        return _traceable(fn)(*args, **kwargs)
    except RecursionError as error:
        if depth > 0 or isinstance(error, EndlessRecursion):
            raise
        raise EndlessRecursion(
            f"{fn.__qualname__} calls itself without end while tracing: flyrt inlines every call it traces, so "
            "a recursion must stop on Python values (a depth, a size), not on traced ones", *user_line()) from None
    finally:
        trace.nesting[fn] = depth


def _traced(function, *args, **kwargs):
    """`function(*args)` traced (rewritten, recorded) as a helper."""
    return call(("",), function, *args, **kwargs)


def _text(texts, i):
    return texts[i + 1] if i + 1 < len(texts) else None


def _opaque(recorder, texts, fn, args, kwargs):
    """`fn` is code the trace does not follow: each argument of the user's
    state (and the object a bound method belongs to) is read whole, and what
    it returns is computed from that state."""
    receiver = getattr(fn, "__self__", None) if isinstance(fn, _BOUND) else None
    if isinstance(receiver, types.ModuleType):
        receiver = None  # a module's builtin function, not a method
    if _is_numpy(fn, receiver):  # numpy makes arrays of the user's objects through their __array__
        args = tuple(_as_array(recorder, value) for value in args)
    handed = [(i, value) for i, value in enumerate(args) if type(value) not in _PLAIN and recorder.obtained(value)]
    handed += [(name, value) for name, value in kwargs.items() if recorder.obtained(value)]
    if receiver is not None and recorder.obtained(receiver):
        handed.append((-1, receiver))
    for where, value in handed:
        if where == -1:
            text = texts[0].rsplit(".", 1)[0] if "." in texts[0] else None
        else:
            text = _text(texts, where) if isinstance(where, int) else f"{where}="
        recorder.whole(value, text, texts[0])
    result = fn(*args, **kwargs)
    if handed:
        recorder.obtain(result, texts[0])
    return result


_BOUND = (types.BuiltinMethodType, types.MethodType, types.MethodWrapperType)


def _is_numpy(fn, receiver):
    owner = receiver if receiver is not None else fn
    module = owner.__module__ if isinstance(owner, (type, types.BuiltinFunctionType, types.FunctionType)) else (
        type(owner).__module__)
    return isinstance(module, str) and module.split(".")[0] == "numpy"


def _as_array(recorder, value):
    """`value`, or for an object of the user's class with an ``__array__``,
    that method's result, traced."""
    method = _user_method(type(value), ("__array__",)) if is_user_class(type(value)) else None
    return _traced_method(recorder, method, value) if method is not None else value


# -- builtins that read one thing precisely -------------------------------------


def _getattr(recorder, texts, fn, args, kwargs):
    if kwargs or not 2 <= len(args) <= 3 or type(args[1]) is not str:
        return _opaque(recorder, texts, fn, args, kwargs)
    obj, name = args[:2]
    if len(args) == 2:
        return attr(obj, name, _text(texts, 0))
    try:
        return attr(obj, name, _text(texts, 0))
    except AttributeError:
        recorder.attribute(obj, name, MISSING, _text(texts, 0))  # its absence is what the code saw
        return args[2]


def _hasattr(recorder, texts, fn, args, kwargs):
    if kwargs or len(args) != 2 or type(args[1]) is not str:
        return _opaque(recorder, texts, fn, args, kwargs)
    return _getattr(recorder, texts, getattr, (args[0], args[1], MISSING), {}) is not MISSING


def _vars(recorder, texts, fn, args, kwargs):
    if kwargs or len(args) != 1:
        return _opaque(recorder, texts, fn, args, kwargs)
    return attr(args[0], "__dict__", _text(texts, 0))


def _attrgetter(recorder, texts, fn, args, kwargs):
    if kwargs or len(args) != 1:
        return _opaque(recorder, texts, fn, args, kwargs)
    values = []
    for path in fn.__reduce__()[1]:
        value, text = args[0], _text(texts, 0)
        for part in path.split("."):
            value, text = attr(value, part, text), f"{text}.{part}"
        values.append(value)
    return values[0] if len(values) == 1 else tuple(values)


def _itemgetter(recorder, texts, fn, args, kwargs):
    if kwargs or len(args) != 1:
        return _opaque(recorder, texts, fn, args, kwargs)
    values = [item(args[0], key, _text(texts, 0)) for key in fn.__reduce__()[1]]
    return values[0] if len(values) == 1 else tuple(values)


def _getitem(recorder, texts, fn, args, kwargs):
    if kwargs or len(args) != 2:
        return _opaque(recorder, texts, fn, args, kwargs)
    return item(args[0], args[1], _text(texts, 0))


def _dict_get(recorder, texts, fn, args, kwargs):
    mapping = fn.__self__
    if kwargs or not 1 <= len(args) <= 2 or not recorder.obtained(mapping):
        return _opaque(recorder, texts, fn, args, kwargs)
    key = args[0]
    text = texts[0].rsplit(".", 1)[0] if "." in texts[0] else "dict"
    value = mapping.get(key, MISSING)
    recorder.read(mapping, mapping, key, value, f"{text}[{key!r}]")
    return value if value is not MISSING else (args[1] if len(args) == 2 else None)


# -- conversions: the protocol method of the user's class, traced ---------------

# builtin -> (the methods it tries, in Python's order; what it makes of their result)
_CONVERSIONS = {
    float: (("__float__", "__index__"), float),
    int: (("__int__", "__index__", "__trunc__"), int),
    bool: (("__bool__", "__len__"), bool),
    complex: (("__complex__", "__float__", "__index__"), complex),
    operator.index: (("__index__",), operator.index),
    len: (("__len__",), operator.index),
    abs: (("__abs__",), None),
    round: (("__round__",), None),
    math.floor: (("__floor__",), None),
    math.ceil: (("__ceil__",), None),
    math.trunc: (("__trunc__",), None),
}


def _convert(recorder, texts, fn, args, kwargs):
    if not args or kwargs or state.unchanging(args[0]):
        return fn(*args, **kwargs)
    value = args[0]
    method = _user_method(type(value), _CONVERSIONS[fn][0])
    if method is not None:
        result = _traced_method(recorder, method, value, *args[1:])
        finish = _CONVERSIONS[fn][1]
        return finish(result) if finish is not None else result
    if fn is len and state.kind_of(value) is state.BUFFER:
        recorder.attribute(value, "shape", MISSING, _text(texts, 0))  # a length is the shape's, not the contents'
        return len(value)
    return _opaque(recorder, texts, fn, args, kwargs)


def number(value, kind):
    """`kind(value)` (float, int, bool, operator.index) where the DSL turns a
    Python value into a compiled-in constant or a decision of the trace."""
    if type(value) in _PLAIN:
        return kind(value)
    trace = active()
    if trace is None or trace.eager:
        return kind(value)
    return _convert(trace.recorder, (f"{kind.__name__}(...)",), kind, (value,), {})


def truth(value):
    """Whether a Python condition in traced code holds."""
    return bool(value) if type(value) in _PLAIN else number(value, bool)


def _user_method(cls, names):
    """(class, name, function) of the first of `names` `cls` has, when it is
    the user's code; None when it is not there or is a library's."""
    for name in names:
        klass = defining_class(cls, name)
        if klass is not None:
            function = klass.__dict__[name]
            return (klass, name, function) if is_user_function(function) else None
    return None


def _traced_method(recorder, method, obj, *args, **kwargs):
    klass, name, function = method
    recorder.read(klass, klass.__dict__, name, function, f"{klass.__qualname__}.{name}")  # patching it recompiles
    return _traced(function, obj, *args, **kwargs)


_READERS = {id(getattr): _getattr, id(hasattr): _hasattr, id(vars): _vars, id(operator.getitem): _getitem}
_READERS.update({id(fn): _convert for fn in _CONVERSIONS})
_INSTANCE_READERS = {operator.attrgetter: _attrgetter, operator.itemgetter: _itemgetter}
