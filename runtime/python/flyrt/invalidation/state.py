"""What a Python value is to the invalidation engine.

Compiled code may have baked in anything a trace read; what can change
afterwards decides how it is watched:

- unchanging: numbers, strings, enums, functions, modules, classes (read
  through their namespaces), numpy scalars and dtypes, torch dtypes and
  devices, the DSL's own objects: never watched, never warned about;
- a host buffer (numpy array, torch CPU tensor, array.array, bytearray,
  memoryview): its bytes, its shape and its element type;
- a device tensor: its contents cannot be read cheaply, so a trace that
  would compile them in is refused;
- a container (list, tuple, dict, set, deque): its items;
- an object with attributes (an instance dict, ``__slots__``): their values;
- anything else (an object of a C library with no visible state) is taken
  as the library's own and left alone.
"""

import array
import collections
import enum
import sys
import types

UNCHANGING, BUFFER, DEVICE, CONTAINER, OBJECT = "unchanging", "buffer", "device", "container", "object"

_UNCHANGING = (bool, int, float, complex, str, bytes, range, slice, type(None), type(Ellipsis), type(NotImplemented),
               types.FunctionType, types.BuiltinFunctionType, types.MethodType, types.BuiltinMethodType,
               types.MethodWrapperType, types.WrapperDescriptorType, types.MethodDescriptorType,
               types.ClassMethodDescriptorType, types.GetSetDescriptorType, types.MemberDescriptorType,
               types.CodeType, types.ModuleType, type, enum.Enum, property, staticmethod, classmethod)
_CONTAINERS = (list, tuple, dict, set, frozenset, collections.deque)
_BUFFERS = (bytearray, memoryview, array.array)
# Library types whose instances never change, known by name (importing their
# libraries to name them would cost every process that never uses them).
_UNCHANGING_NAMES = {("torch", "dtype"), ("torch", "device"), ("torch", "layout"), ("torch", "memory_format"),
                     ("torch", "finfo"), ("torch", "iinfo"), ("numpy", "finfo"), ("numpy", "iinfo")}
_kinds = {}  # type -> kind, or None: decided per object (torch tensors)


def kind_of(value):
    """UNCHANGING, BUFFER, DEVICE, CONTAINER, OBJECT, or None (library state flyrt leaves alone)."""
    cls = type(value)
    try:
        kind = _kinds[cls]
    except KeyError:
        kind = _kinds[cls] = _kind_of_type(cls)
    if kind == "tensor":
        return BUFFER if value.device.type == "cpu" else DEVICE
    return kind


def unchanging(value):
    return kind_of(value) is UNCHANGING


def stateful(value):
    """Whether compiled code that read `value` can go stale when it changes."""
    kind = kind_of(value)
    return kind is not UNCHANGING and kind is not None


def _kind_of_type(cls):
    module = cls.__module__.split(".")[0]
    if issubclass(cls, _UNCHANGING) or module == "flyrt" or (module, cls.__name__) in _UNCHANGING_NAMES:
        return UNCHANGING
    if module == "numpy" and _is_numpy_value(cls):
        return UNCHANGING
    if issubclass(cls, _CONTAINERS):
        return CONTAINER
    if cls.__name__ == "ndarray" or issubclass(cls, _BUFFERS):
        return BUFFER
    torch = sys.modules.get("torch")
    if torch is not None and issubclass(cls, torch.Tensor):
        return "tensor"
    if cls.__dictoffset__ or _slot_names(cls):
        return OBJECT
    return None


def _is_numpy_value(cls):
    """numpy scalars and dtypes: immutable."""
    numpy = sys.modules.get("numpy")
    return numpy is not None and issubclass(cls, (numpy.generic, numpy.dtype))


def _slot_names(cls):
    names = []
    for klass in cls.__mro__:
        slots = klass.__dict__.get("__slots__", ())
        names.extend([slots] if isinstance(slots, str) else slots)
    return [n for n in names if n not in ("__dict__", "__weakref__")]


def slots(obj):
    """[(name, member descriptor)] of `obj`'s ``__slots__``."""
    found = []
    for name in _slot_names(type(obj)):
        for klass in type(obj).__mro__:
            descriptor = klass.__dict__.get(name)
            if isinstance(descriptor, types.MemberDescriptorType):
                found.append((name, descriptor))
                break
    return found


def instance_dict(obj):
    """`obj`'s own attribute dict, or None."""
    try:
        found = object.__getattribute__(obj, "__dict__")
    except (AttributeError, TypeError):
        return None
    return found if type(found) is dict else None


def children(value):
    """[(text suffix, value)] a container holds or an object's attributes hold."""
    if isinstance(value, dict):
        return [(f"[{key!r}]", item) for key, item in list(value.items())]
    if isinstance(value, (list, tuple, collections.deque)):
        return [(f"[{i}]", item) for i, item in enumerate(list(value))]
    if isinstance(value, (set, frozenset)):
        return [("[...]", item) for item in list(value)]
    found = [(f".{name}", item) for name, item in (instance_dict(value) or {}).items()]
    for name, descriptor in slots(value):
        try:
            found.append((f".{name}", descriptor.__get__(value)))
        except AttributeError:
            pass  # not set
    return found
