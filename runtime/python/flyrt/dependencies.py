"""What a compiled artifact depends on, recorded while it traces.

Recorded from what actually ran, not guessed from ``co_names``: every
function the trace executed (kernels, launchers, helpers, lambdas, wrapped
functions, partial targets, methods), every global, module-attribute and
class-attribute binding it read, every attribute it read through an object
(its instance dict, or its class's binding and the instance not shadowing
it), and the constants those bindings hold.
The record builds the C++ guard checked on every call
(``_core.DependencyGuard``) and, when the guard sees a change, says whether
anything the artifact was built from really changed, and what.
"""

import array
import builtins
import enum
import os
import sys
import sysconfig
import types
import warnings

from . import _core
from .drivers import cpu as cpu_driver
from .fingerprint import fingerprint

MISSING = object()
_LIBRARY_DIRS = tuple(
    os.path.realpath(p) + os.sep
    for p in {sysconfig.get_paths()["stdlib"], sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
)
_FLYRT_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep


def is_user_file(filename):
    """Code the user may edit: not flyrt, not the standard library or site-packages."""
    if not filename or filename.startswith(_FLYRT_DIR):
        return False
    if filename.startswith("<"):
        return True  # notebook cells and other interactive code
    return not os.path.realpath(filename).startswith(_LIBRARY_DIRS)


def is_user_module(module):
    if module.__name__ == "__main__":
        return True
    filename = getattr(module, "__file__", None)
    return filename is not None and is_user_file(filename)


class Binding:
    """A name read from a namespace (module globals, a class, an object's
    instance dict) and its value; MISSING: the name was absent there (an
    attribute the object got from its class, which setting it would shadow)."""

    __slots__ = ("owner", "namespace", "name", "value", "fingerprint", "label")

    def __init__(self, owner, namespace, name, value, label=None):
        self.owner = owner  # what to watch: the globals dict, the class, the instance dict
        self.namespace = namespace  # where to look the name up: a dict or a mappingproxy
        self.name = name
        self.value = value
        self.fingerprint = fingerprint(value)
        self.label = label  # how messages name it, e.g. "cfg.scale"; None: by namespace

    def where(self):
        if isinstance(self.owner, type):
            return f"class {self.owner.__qualname__}"
        return f"module {self.namespace.get('__name__', '?')}"

    def _named(self):
        return self.label if self.label is not None else f"'{self.name}' in {self.where()}"

    def change(self):
        """What changed about this binding, or None."""
        current = self.namespace.get(self.name, MISSING)
        if self.value is MISSING:
            return None if current is MISSING else f"{self._named()} is now set on the object, over its class's"
        if current is MISSING:
            if self.label is not None:
                return f"{self.label} was deleted"
            return f"'{self.name}' was deleted from {self.where()}"
        if current is self.value and not _is_container(current):
            return None
        if fingerprint(current) == self.fingerprint:
            return None
        if current is self.value:
            return f"the contents of {self._named()} changed"
        if isinstance(current, (bool, int, float, str)) and isinstance(self.value, (bool, int, float, str)):
            return f"{self._named()} changed from {self.value!r} to {current!r}"
        return f"{self._named()} now refers to a different {type(current).__name__}"


def _is_container(value):
    return isinstance(value, (dict, list, tuple, set))


class RecordingGlobals(dict):
    """A function's globals as a trace sees them: reads are recorded.

    CPython 3.11 looks globals up through ``__getitem__`` when they are not an
    exact dict, so every global the traced code reads passes through here."""

    def __init__(self, real, recorder):
        super().__init__()
        self._real = real
        self._recorder = recorder
        dict.__setitem__(self, "__builtins__", real.get("__builtins__", builtins))
        dict.__setitem__(self, "__name__", real.get("__name__"))

    def __getitem__(self, name):
        value = self._real[name]
        if not name.startswith("__flyrt"):
            self._recorder.read(self._real, self._real, name, value)
        return value

    def __setitem__(self, name, value):
        self._real[name] = value

    def get(self, name, default=None):
        return self._real.get(name, default)

    def setdefault(self, name, default=None):
        return self._real.setdefault(name, default)


def real_globals(namespace):
    return namespace._real if isinstance(namespace, RecordingGlobals) else namespace


class Recorder:
    """Collects one trace's dependencies."""

    def __init__(self):
        self.functions = {}  # id -> (function, its fingerprint when the trace ran it)
        self.bindings = {}  # (id(namespace), name) -> Binding
        self.buffers = {}  # id -> (buffer, its source text, {repr(key): (key, element bytes when read)})
        self._proxies = {}  # id(real globals) -> RecordingGlobals

    def globals_for(self, fn):
        real = real_globals(fn.__globals__)
        proxy = self._proxies.get(id(real))
        if proxy is None:
            proxy = self._proxies[id(real)] = RecordingGlobals(real, self)
        return proxy

    def function(self, fn):
        if isinstance(fn, types.FunctionType) and is_user_file(fn.__code__.co_filename):
            if id(fn) not in self.functions:
                self.functions[id(fn)] = (fn, fingerprint(fn))

    def read(self, owner, namespace, name, value, label=None):
        key = (id(owner), name)  # a class's namespace is a fresh mappingproxy each time
        if key not in self.bindings:
            self.bindings[key] = Binding(owner, namespace, name, value, label)

    def attribute(self, obj, name, value, text=None):
        """`obj.name` was read while tracing (`text`: the source of `obj`):
        modules and classes of the user's code are namespaces whose bindings
        the artifact depends on; so are objects' instance dicts, and the class
        binding an object's attribute comes from."""
        if isinstance(obj, types.ModuleType):
            if is_user_module(obj):
                self.read(obj.__dict__, obj.__dict__, name, value)
        elif isinstance(obj, type):
            klass = _defining_class(obj, name)
            if klass is not None and is_user_class(klass):
                self.read(klass, klass.__dict__, name, klass.__dict__[name])
        elif not unchanging(obj):
            self._object_attribute(obj, name, text)

    def _object_attribute(self, obj, name, text):
        kind = type(obj)
        label = f"{text}.{name}" if text else f"{kind.__qualname__}.{name}"
        if text == "self":  # inside a method: say whose
            label += f" of a {kind.__qualname__}"
        klass = _defining_class(kind, name)
        found = klass.__dict__[name] if klass is not None else MISSING
        instance = getattr(obj, "__dict__", None)
        instance = instance if type(instance) is dict else None
        if found is not MISSING and hasattr(type(found), "__set__"):  # a data descriptor: it decides
            if is_user_class(klass) and isinstance(found, property):
                self.read(klass, klass.__dict__, name, found, f"{klass.__qualname__}.{name}")  # its getter is traced
            else:
                self.unwatchable(obj, name, label, "its value comes from a descriptor flyrt cannot watch"
                                 if not isinstance(found, types.MemberDescriptorType) else "a __slots__ attribute")
            return
        if instance is not None:
            if name in instance:
                self.read(instance, instance, name, instance[name], label)
                return
            self.read(instance, instance, name, MISSING, label)  # setting it on the object would shadow the class's
        if found is not MISSING:
            if is_user_class(klass):
                self.read(klass, klass.__dict__, name, found, f"{klass.__qualname__}.{name}")
        elif instance is None:
            self.unwatchable(obj, name, label, "it is computed by the object (__getattr__)")

    def buffer(self, obj, text, key):
        """An element of `obj` was read while tracing: if it is a host buffer
        (numpy array, torch CPU tensor, array.array, bytearray, memoryview),
        its contents are a dependency, compared on every call, up to
        WATCHED_BUFFER_BYTES; a larger one is an error naming it."""
        known = self.buffers.get(id(obj))
        if known is None:
            known = self._new_buffer(obj, text, key)
            if known is None:
                return
        elements = known[2]
        if repr(key) not in elements:
            elements[repr(key)] = (key, _element_bytes(obj[key]))

    def _new_buffer(self, obj, text, key):
        """Starts the account of a buffer first read while tracing (None: not a host buffer)."""
        view = _host_buffer(obj)
        if view is None:
            return None
        if view.nbytes > WATCHED_BUFFER_BYTES:
            from .errors import KernelError
            from .tracing import user_frame

            frame = user_frame()
            filename, lineno = (frame.f_code.co_filename, frame.f_lineno) if frame else ("?", 0)
            raise KernelError(
                f"{subscript_text(text, key)} reads a {type(obj).__name__} of {view.nbytes} bytes while tracing: the "
                f"value would be compiled in, and flyrt watches the contents of buffers up to {WATCHED_BUFFER_BYTES} "
                f"bytes only; pass {text} as an fx.Tensor argument, or the value as an fx.Constexpr", filename, lineno)
        return self.buffers.setdefault(id(obj), (obj, text, {}))

    def unwatchable(self, obj, name, label, why):
        """A read the guard cannot watch: said once per kind of object and attribute, never silent."""
        key = (type(obj), name)
        if key not in _warned:
            _warned.add(key)
            warnings.warn(f"flyrt cannot watch {label} ({why}; an attribute of a {type(obj).__qualname__}): the "
                          "value read while tracing is compiled in, and changing it will not recompile; pass it "
                          "as an fx.Tensor or an fx.Constexpr argument instead", UnwatchedReadWarning, stacklevel=4)


WATCHED_BUFFER_BYTES = 4096


def subscript_text(text, key):
    """`text[key]` as written (the whole buffer: `text[:]`)."""
    return f"{text}[{':' if key == slice(None) else repr(key)}]"


def _host_array(obj):
    """A torch CPU tensor as the numpy view launches read (bfloat16 and FP8
    too; None on a GPU); anything else as it is."""
    torch = sys.modules.get("torch")
    return cpu_driver.host_view(obj) if torch is not None and isinstance(obj, torch.Tensor) else obj


def _host_buffer(obj):
    """A memoryview of a host buffer's bytes, or None for anything else."""
    obj = _host_array(obj)
    if not isinstance(obj, (bytearray, memoryview, array.array)) and type(obj).__name__ != "ndarray":
        return None
    try:
        return memoryview(obj).cast("B") if memoryview(obj).contiguous else memoryview(obj.tobytes())
    except (TypeError, ValueError, AttributeError):
        return None


class UnwatchedReadWarning(UserWarning):
    """A trace read something whose later changes flyrt cannot see."""


_warned = set()  # (type, attribute) already warned about
# Objects whose attributes never change: no need to watch them.
_UNCHANGING = (bool, int, float, complex, str, bytes, tuple, frozenset, range, slice, type(None), types.FunctionType,
               types.BuiltinFunctionType, types.MethodType, types.CodeType, enum.Enum)


def unchanging(obj):
    return isinstance(obj, _UNCHANGING) or type(obj).__module__.split(".")[0] == "flyrt"


def _defining_class(kind, name):
    for klass in kind.__mro__:
        if name in klass.__dict__:
            return klass
    return None


def is_user_class(klass):
    module = sys.modules.get(klass.__module__)
    return module is not None and is_user_module(module)


class DependencyRecord:
    """One artifact's dependencies, their fingerprints, and its C++ guard."""

    def __init__(self, recorder, launcher_name):
        self.launcher_name = launcher_name
        self.functions = [fn for fn, _ in recorder.functions.values()]
        self.function_fingerprints = [recorded for _, recorded in recorder.functions.values()]
        self.bindings = list(recorder.bindings.values())
        self.buffers = list(recorder.buffers.values())
        self.artifact = None
        self.last_reason = None
        self.guard = self._build_guard()
        # What the guard snapshots now must be what the trace saw: a rebinding
        # while this compiled (another thread) would otherwise pass it forever.
        if self.changes():
            self.guard.invalidate()

    def _build_guard(self):
        guard = _core.DependencyGuard()
        owners = {}
        for binding in self.bindings:
            owners.setdefault(id(binding.owner), binding.owner)
            _watch_containers(guard, binding.value, owners)
        for owner in owners.values():
            guard.watch_namespace(owner)
        for buffer, _, _ in self.buffers:
            view = _host_buffer(buffer)
            if view is not None:
                guard.watch_buffer(_watched(buffer), view.tobytes())
        for fn in self.functions:
            guard.watch_function(fn)
            for cell in fn.__closure__ or ():
                try:
                    _watch_containers(guard, cell.cell_contents, owners, watch_dicts=True)
                except ValueError:
                    pass  # an empty cell
        return guard

    def changes(self):
        """Why this artifact is stale: empty when nothing it was built from changed."""
        reasons = []
        for binding in self.bindings:
            reason = binding.change()
            if reason:
                reasons.append(reason)
        for fn, recorded in zip(self.functions, self.function_fingerprints):
            if fingerprint(fn) != recorded:
                reasons.append(f"function {fn.__qualname__} ({fn.__module__}) changed")
        for buffer, text, elements in self.buffers:
            for key, recorded in elements.values():
                try:
                    same = _element_bytes(buffer[key]) == recorded
                except (IndexError, TypeError, ValueError):
                    same = False
                if not same:
                    reasons.append(f"{subscript_text(text, key)} changed")
        return reasons

    def refresh(self):
        """After a change that changed nothing that matters (e.g. another
        global of the module was assigned): watch the objects as they are now."""
        for binding in self.bindings:
            binding.value = binding.namespace.get(binding.name, MISSING)
        self.guard = self._build_guard()
        if self.artifact is not None:
            self.artifact.guard = self.guard

    def names(self):
        """Readable dependencies, for explanations."""
        functions = [f"{f.__module__}.{f.__qualname__}" for f in self.functions]
        bindings = [b.label if b.label is not None else f"{b.where()}: {b.name}" for b in self.bindings]
        return functions, bindings


def _element_bytes(value):
    """What an element (or slice) of a buffer holds, comparably."""
    value = _host_array(value)
    tobytes = getattr(value, "tobytes", None)
    return tobytes() if callable(tobytes) else repr(value).encode()


def _watched(buffer):
    """What the C++ guard reads a buffer's bytes from (torch tensors through their numpy view)."""
    return _host_array(buffer)


def _watch_containers(guard, value, owners, watch_dicts=True, depth=0):
    """Containers whose contents compiled code may have baked in."""
    if depth > 3:
        return
    if isinstance(value, dict) and watch_dicts:
        owners.setdefault(id(value), value)
        for item in value.values():
            _watch_containers(guard, item, owners, watch_dicts, depth + 1)
    elif isinstance(value, list):
        guard.watch_list(value)
        for item in value:
            _watch_containers(guard, item, owners, watch_dicts, depth + 1)
    elif isinstance(value, tuple):
        for item in value:
            _watch_containers(guard, item, owners, watch_dicts, depth + 1)
