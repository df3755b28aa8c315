"""Where `obj.name` comes from, found as Python's own lookup finds it, without
running the object's code.

The engine watches an attribute a trace read at its source, so it first has
to know which that is (``object.__getattribute__``'s order):

- SLOT: a ``__slots__`` member (a data descriptor of the class);
- GETTER: code of the user's computes it: a property's getter, a
  descriptor's ``__get__``, the class's ``__getattr__`` (traced, so what it
  reads is recorded in turn);
- COMPUTED: library code computes it (a C getter such as ``ndarray.shape``,
  a library property, descriptor or ``__getattr__``): compared by value;
- INSTANCE: the object's own dict;
- CLASS: a class attribute (a method, a constant) the object does not shadow;
- ABSENT: nowhere (reading it raises);
- OVERRIDDEN: the user's class overrides ``__getattribute__`` itself.
"""

import types

from ..core.user_code import is_user_function

SLOT, GETTER, COMPUTED, INSTANCE, CLASS, ABSENT, OVERRIDDEN = (
    "slot", "getter", "computed", "instance", "class", "absent", "overridden")

_METHODS = (types.FunctionType, staticmethod, classmethod, types.MethodDescriptorType, types.WrapperDescriptorType,
            types.BuiltinFunctionType, types.ClassMethodDescriptorType)


class Lookup:
    """How `name` resolves on an object: `how`, the class where it was found
    (`klass`, or None) and what that class holds (`found`); for GETTER, the
    user's `function` and the `arguments` that compute the value."""

    __slots__ = ("how", "klass", "found", "function", "arguments")

    def __init__(self, how, klass=None, found=None, function=None, arguments=()):
        self.how, self.klass, self.found, self.function, self.arguments = how, klass, found, function, arguments


def defining_class(kind, name):
    """The first class of `kind`'s MRO whose namespace holds `name`, or None."""
    for klass in kind.__mro__:
        if name in klass.__dict__:
            return klass
    return None


def lookup(obj, name, instance):
    """How `obj.name` resolves; `instance` is `obj`'s own dict (or None)."""
    kind = type(obj)
    owner = defining_class(kind, "__getattribute__")
    if owner is not object and owner is not None and is_user_function(owner.__dict__["__getattribute__"]):
        return Lookup(OVERRIDDEN, owner, owner.__dict__["__getattribute__"])
    klass = defining_class(kind, name)
    found = klass.__dict__[name] if klass is not None else None
    if klass is not None and is_data_descriptor(found):
        return _data_descriptor(obj, kind, klass, found)
    if instance is not None and name in instance:
        return Lookup(INSTANCE)
    if klass is not None:
        get = getattr(type(found), "__get__", None)
        if get is None or isinstance(found, _METHODS):
            return Lookup(CLASS, klass, found)
        if is_user_function(get):
            return Lookup(GETTER, klass, found, get, (found, obj, kind))
        return Lookup(COMPUTED, klass, found)
    owner = defining_class(kind, "__getattr__")
    if owner is not None:
        function = owner.__dict__["__getattr__"]
        if is_user_function(function):
            return Lookup(GETTER, owner, function, function, (obj, name))
        return Lookup(COMPUTED, owner, function)
    return Lookup(ABSENT)


def is_data_descriptor(found):
    return hasattr(type(found), "__set__") or hasattr(type(found), "__delete__")


def _data_descriptor(obj, kind, klass, found):
    if isinstance(found, types.MemberDescriptorType):
        return Lookup(SLOT, klass, found)
    if isinstance(found, property):
        if is_user_function(found.fget):
            return Lookup(GETTER, klass, found, found.fget, (obj,))
        return Lookup(COMPUTED, klass, found)
    get = getattr(type(found), "__get__", None)
    if is_user_function(get):
        return Lookup(GETTER, klass, found, get, (found, obj, kind))
    return Lookup(COMPUTED, klass, found)
