"""What a compiled artifact depends on, recorded while it traces.

Recorded from what actually ran, not guessed from ``co_names``: every
function the trace executed (kernels, launchers, helpers, lambdas, wrapped
functions, partial targets, methods), and every piece of Python state whose
value it read, at the source of that value:

- a binding read out of a namespace (module globals, a class, an object's
  instance dict, a dict's key), with the constants it holds;
- an attribute a ``__slots__`` member holds, or library code computes
  (``ndarray.shape``, a library descriptor or ``__getattr__``), compared by value;
- an element of a host buffer, by its bytes;
- an object handed whole to code the trace does not follow (a builtin, a
  library function, an operator, a conversion): everything it holds.

The record builds the C++ guard checked on every call
(``_core.DependencyGuard``) and, when the guard sees a change, says whether
anything the artifact was built from really changed, and what.
"""

import builtins
import collections
import sys
import types

from .. import _core
from ..core import host_arrays
from ..core.errors import KernelError
from ..core.fingerprint import code_tree, fingerprint, names_in
from ..core.user_code import is_user_class, is_user_file, is_user_module, user_line
from . import state
from .attribute_lookup import (
    ABSENT, CLASS, COMPUTED, GETTER, INSTANCE, OVERRIDDEN, SLOT, defining_class, is_data_descriptor, lookup
)

MISSING = object()
WATCHED_BUFFER_BYTES = 4096
WHOLE = slice(None)  # the key of a buffer read whole
_DEPTH = 3  # how far into containers and attributes a read whole reaches


class Binding:
    """A name read from a namespace (module globals, a class, an object's
    instance dict, a dict) and its value; MISSING: the name was absent there
    (an attribute the object got from its class or its ``__getattr__``, which
    setting it would shadow)."""

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

    def describe(self):
        return self.label if self.label is not None else f"'{self.name}' in {self.where()}"

    def change(self):
        """What changed about this binding, or None."""
        current = self.namespace.get(self.name, MISSING)
        if self.value is MISSING:
            if current is MISSING:
                return None
            if isinstance(self.owner, type) or self.label is None:
                return f"'{self.name}' is now defined in {self.where()}"
            return f"{self.label} is now set on the object, over its class's"
        if current is MISSING:
            return f"{self.label} was deleted" if self.label is not None else f"'{self.name}' was deleted from {self.where()}"
        if current is self.value and not isinstance(current, (dict, list, tuple, set)):
            return None
        if fingerprint(current) == self.fingerprint:
            return None
        return _changed(self.describe(), self.value, current, current is self.value)

    def refresh(self):
        self.value = self.namespace.get(self.name, MISSING)
        self.fingerprint = fingerprint(self.value)

    def watch(self, guard, owners):
        owners.setdefault(id(self.owner), self.owner)
        _watch_containers(guard, self.value, owners)


def _changed(what, before, now, same_object=False):
    if same_object:
        return f"the contents of {what} changed"
    if _printable(now) and _printable(before):
        return f"{what} changed from {before!r} to {now!r}"
    return f"{what} now refers to a different {type(now).__name__}"


def _printable(value):
    """A value a notice can show as it is (a number, a short tuple of them)."""
    if isinstance(value, (bool, int, float, str)):
        return True
    return isinstance(value, tuple) and len(value) <= 8 and all(isinstance(v, (bool, int, float)) for v in value)


class SlotRead:
    """An attribute held in a ``__slots__`` member, compared on every call
    (in C++ a pointer compare at the member's offset)."""

    __slots__ = ("obj", "descriptor", "label", "value", "fingerprint")

    def __init__(self, obj, descriptor, label):
        self.obj, self.descriptor, self.label = obj, descriptor, label
        self.refresh()

    def _current(self):
        try:
            return self.descriptor.__get__(self.obj)
        except AttributeError:
            return MISSING

    def describe(self):
        return self.label

    def change(self):
        current = self._current()
        if current is self.value or fingerprint(current) == self.fingerprint:
            return None
        if current is MISSING:
            return f"{self.label} was deleted"
        return _changed(self.label, self.value, current)

    def refresh(self):
        self.value = self._current()
        self.fingerprint = fingerprint(self.value)

    def watch(self, guard, owners):
        guard.watch_slot(self.obj, self.descriptor)
        _watch_containers(guard, self.value, owners)


class ComputedRead:
    """An attribute library code computes each time it is read (a C getter
    such as ``ndarray.shape``, a library property, descriptor or
    ``__getattr__``): read again on every call and compared by value (plain
    values) or by identity (objects, whose own reads are recorded in turn)."""

    __slots__ = ("obj", "name", "label", "value", "by_value")

    def __init__(self, obj, name, value, label):
        self.obj, self.name, self.label, self.value = obj, name, label, value
        self.by_value = _comparable(value)

    def describe(self):
        return self.label

    def change(self):
        try:
            current = getattr(self.obj, self.name)
        except Exception as error:  # noqa: BLE001  whatever the library raises
            return f"{self.label} can no longer be read ({type(error).__name__}: {error})"
        if current is self.value or (self.by_value and _equal(current, self.value)):
            return None
        return _changed(self.label, self.value, current)

    def refresh(self):
        try:
            self.value = getattr(self.obj, self.name)
        except Exception:  # noqa: BLE001  the next change() says so
            return
        self.by_value = _comparable(self.value)

    def watch(self, guard, owners):
        guard.watch_attribute(self.obj, self.name, self.value, self.by_value)


def _comparable(value):
    """Whether two reads of a computed attribute mean the same when equal."""
    if isinstance(value, (bool, int, float, complex, str, bytes, type(None))):
        return True
    if isinstance(value, tuple):
        return all(_comparable(v) for v in value)
    return state.unchanging(value) and not isinstance(value, (types.FunctionType, type, types.ModuleType))


def _equal(a, b):
    try:
        return bool(a == b)
    except Exception:  # noqa: BLE001
        return False


class WholeRead:
    """An object handed whole to code the trace does not follow (`how`, as the
    user wrote it): what it holds is a dependency. Containers by their items,
    objects by their instance dict and slots (and, for the user's classes, the
    class's namespace: its methods run untraced there)."""

    __slots__ = ("obj", "label", "how", "fingerprint")

    def __init__(self, obj, label, how):
        self.obj, self.label, self.how = obj, label, how
        self.fingerprint = _state_fingerprint(obj)

    def describe(self):
        return f"{self.label} (read whole by {self.how})"

    def change(self):
        if _state_fingerprint(self.obj) == self.fingerprint:
            return None
        return f"{self.label} changed (read whole by {self.how})"

    def refresh(self):
        self.fingerprint = _state_fingerprint(self.obj)

    def watch(self, guard, owners):
        obj = self.obj
        if isinstance(obj, dict):
            owners.setdefault(id(obj), obj)
        elif isinstance(obj, list):
            guard.watch_list(obj)
        elif isinstance(obj, (set, collections.deque)):
            guard.watch_equal(obj, type(obj)(obj))
        elif state.kind_of(obj) is state.OBJECT:
            instance = state.instance_dict(obj)
            if instance is not None:
                owners.setdefault(id(instance), instance)
            for _, descriptor in state.slots(obj):
                guard.watch_slot(obj, descriptor)
            guard.watch_attribute(obj, "__class__", type(obj), False)
            for klass in _user_classes(obj):
                owners.setdefault(id(klass), klass)


def _user_classes(obj):
    return [klass for klass in type(obj).__mro__ if klass is not object and is_user_class(klass)]


def _state_fingerprint(obj):
    if state.kind_of(obj) is not state.OBJECT or isinstance(obj, (dict, list, tuple, set)):
        return fingerprint(obj)
    parts = [f"{type(obj).__qualname__}@{id(type(obj)):x}", fingerprint(state.instance_dict(obj))]
    parts += [f"{suffix}={fingerprint(value)}" for suffix, value in state.children(obj) if suffix[1:] not in
              (state.instance_dict(obj) or {})]
    parts += [fingerprint(dict(klass.__dict__)) for klass in _user_classes(obj)]
    return "|".join(parts)


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
        self.buffers = {}  # id -> (buffer, its source text, {repr(key): (key, element bytes when read, label)})
        self.reads = {}  # key -> SlotRead, ComputedRead or WholeRead
        self.readers = {}  # id of a function, binding, read or buffer -> the recorded function that reached it
        self._proxies = {}  # id(real globals) -> RecordingGlobals
        self._codes = {}  # id(code running in this trace) -> the function it runs
        # State that existed before the trace and reached it (id -> object):
        # what the trace made itself (a list of traced values) is no dependency.
        self._obtained = {}

    @classmethod
    def of(cls, record):
        """A recorder holding what `record` (a DependencyRecord) depends on."""
        recorder = cls()
        recorder.functions = {id(f): (f, fp) for f, fp in zip(record.functions, record.function_fingerprints)}
        recorder.bindings = {(id(b.owner), b.name): b for b in record.bindings}
        recorder.buffers = {id(buffer): (buffer, text, dict(elements)) for buffer, text, elements in record.buffers}
        recorder.reads = {id(r): r for r in record.reads}
        recorder.readers = dict(record.readers)
        return recorder

    def merge(self, other):
        """Adds what `other` recorded (another trace of the same launcher)."""
        self.functions.update(other.functions)
        for key, binding in other.bindings.items():
            self.bindings.setdefault(key, binding)
        for key, (buffer, text, elements) in other.buffers.items():
            self.buffers.setdefault(key, (buffer, text, {}))[2].update(elements)
        for key, read in other.reads.items():
            self.reads.setdefault(key, read)
        for key, reader in other.readers.items():
            self.readers.setdefault(key, reader)

    # -- where state enters the trace ---------------------------------------

    def obtain(self, value, text=None):
        """`value` (the source `text`) reached the trace from outside it (a
        binding, an attribute, an element, a closure cell): it is the user's
        state. What it holds is marked as the trace reaches it (reads.item,
        reads.iterate)."""
        if id(value) not in self._obtained and state.stateful(value):
            self._obtained[id(value)] = (value, text)

    def obtained(self, value):
        """Whether `value` is state from outside the trace."""
        return id(value) in self._obtained

    def globals_for(self, fn):
        real = real_globals(fn.__globals__)
        proxy = self._proxies.get(id(real))
        if proxy is None:
            proxy = self._proxies[id(real)] = RecordingGlobals(real, self)
        return proxy

    def running(self, fn, code):
        """`code` (`fn`'s, or the rewrite of it) runs in this trace: what it
        reads, `fn` read (for the picture of who reached what)."""
        for inner in code_tree(code):
            self._codes[id(inner)] = fn

    def _reader(self):
        """The innermost recorded function running (None: the launcher's caller)."""
        frame = sys._getframe(2)
        while frame is not None:
            fn = self._codes.get(id(frame.f_code))
            if fn is not None:
                return fn
            frame = frame.f_back
        return None

    def function(self, fn):
        if isinstance(fn, types.FunctionType) and is_user_file(fn.__code__.co_filename):
            if id(fn) not in self.functions:
                self.functions[id(fn)] = (fn, fingerprint(fn))
                self.readers.setdefault(id(fn), self._reader())
                for name, cell in zip(fn.__code__.co_freevars, fn.__closure__ or ()):
                    try:
                        self.obtain(cell.cell_contents, name)
                    except ValueError:
                        pass  # an empty cell
                for default in (fn.__defaults__ or ()) + tuple((fn.__kwdefaults__ or {}).values()):
                    self.obtain(default, f"a default of {fn.__qualname__}")

    # -- precise reads ----------------------------------------------------------

    def read(self, owner, namespace, name, value, label=None):
        key = (id(owner), name)  # a class's namespace is a fresh mappingproxy each time
        if key not in self.bindings:
            binding = self.bindings[key] = Binding(owner, namespace, name, value, label)
            self.readers[id(binding)] = self._reader()
            self.obtain(value, label or name)

    def attribute(self, obj, name, value=MISSING, text=None):
        """`obj.name` was read while tracing (`text`: the source of `obj`;
        `value`: what it gave, MISSING if not known yet). Recorded where the
        value comes from: a user module's or class's binding, an object's
        instance dict, its class's binding (and the instance not shadowing
        it), a slot, a computed attribute; a getter of the user's is traced
        by the caller, which records what it reads."""
        if isinstance(obj, types.ModuleType):
            if is_user_module(obj):
                namespace = obj.__dict__
                self.read(namespace, namespace, name, namespace.get(name, MISSING))
                if name not in namespace:  # PEP 562: the module's __getattr__ computes it
                    self.read(namespace, namespace, "__getattr__", namespace.get("__getattr__", MISSING))
        elif isinstance(obj, type):
            klass = defining_class(obj, name)
            if klass is not None and is_user_class(klass):
                self.read(klass, klass.__dict__, name, klass.__dict__[name])
        elif not state.unchanging(obj):
            self._object_attribute(obj, name, value, text)
        if value is not MISSING:
            self.obtain(value, f"{text}.{name}" if text else name)

    def _object_attribute(self, obj, name, value, text):
        kind = type(obj)
        if not is_user_class(kind) and not self.obtained(obj):
            return  # a library's object the trace made (another DSL's values, arrays): no dependency
        label = f"{text}.{name}" if text else f"{kind.__qualname__}.{name}"
        if text == "self":  # inside a method: say whose
            label += f" of a {kind.__qualname__}"
        instance = state.instance_dict(obj)
        found = lookup(obj, name, instance)
        if found.how == OVERRIDDEN:
            _refuse(f"{label} is read through {found.klass.__qualname__}.__getattribute__, which computes every "
                    "attribute of the object: flyrt cannot tell what it reads")
        if found.how in (CLASS, GETTER, SLOT) and is_user_class(found.klass):
            key = "__getattr__" if found.how == GETTER and found.found is found.function else name
            self.read(found.klass, found.klass.__dict__, key, found.klass.__dict__[key],
                      f"{found.klass.__qualname__}.{key}")
        if found.how == GETTER and found.found is not found.function and is_user_class(type(found.found)):
            descriptor = type(found.found)  # its __get__ computes the value
            self.read(descriptor, descriptor.__dict__, "__get__", descriptor.__dict__.get("__get__", MISSING),
                      f"{descriptor.__qualname__}.__get__")
        shadowable = found.how in (CLASS, ABSENT) or (found.how == GETTER and not is_data_descriptor(found.found))
        if found.how == INSTANCE:
            self.read(instance, instance, name, instance[name], label)
        elif shadowable and instance is not None:
            self.read(instance, instance, name, MISSING, label)  # setting it on the object would shadow the class's
        if found.how == SLOT:
            self._add(("slot", id(obj), name), lambda: SlotRead(obj, found.found, label))
        elif found.how == COMPUTED and (self.obtained(obj) or is_user_class(kind)):
            if value is MISSING:
                try:
                    value = getattr(obj, name)
                except Exception:  # noqa: BLE001  the traced code's own read raises it
                    return
            self._add(("computed", id(obj), name), lambda: ComputedRead(obj, name, value, label))
        elif found.how == ABSENT:
            for klass in kind.__mro__:  # defining it on a class later would change what the code reads
                if is_user_class(klass):
                    self.read(klass, klass.__dict__, name, MISSING, f"{klass.__qualname__}.{name}")

    def _add(self, key, make):
        if key not in self.reads:
            read = self.reads[key] = make()
            self.readers[id(read)] = self._reader()
            self.obtain(read.value, read.label)

    def buffer(self, obj, text, key, how=None):
        """An element of `obj` (`key`; WHOLE: all of it, `how` said how) was
        read while tracing: if it is a host buffer (numpy array, torch CPU
        tensor, array.array, bytearray, memoryview), its contents are a
        dependency, compared on every call, up to WATCHED_BUFFER_BYTES; a
        larger one, or a device tensor, is an error naming the read."""
        kind = state.kind_of(obj)
        if kind is state.DEVICE:
            _refuse(f"{how or subscript_text(text, key)} reads the contents of {text}, a {type(obj).__name__} on "
                    f"{obj.device}, while tracing: the value would be compiled in, and flyrt cannot watch device "
                    f"memory; pass {text} as an fx.Tensor argument, or the value as an fx.Constexpr")
        known = self.buffers.get(id(obj))
        if known is None:
            view = _host_buffer(obj)
            if view is None:
                return
            if view.nbytes > WATCHED_BUFFER_BYTES:
                _refuse(f"{how or subscript_text(text, key)} reads a {type(obj).__name__} of {view.nbytes} bytes "
                        "while tracing: the value would be compiled in, and flyrt watches the contents of buffers "
                        f"up to {WATCHED_BUFFER_BYTES} bytes only; pass {text} as an fx.Tensor argument, or the "
                        "value as an fx.Constexpr")
            known = self.buffers.setdefault(id(obj), (obj, text, {}))
            self.readers[id(obj)] = self._reader()
        elements = known[2]
        if repr(key) not in elements:
            label = f"{text} (read whole by {how})" if _is_whole(key) and how else subscript_text(text, key)
            elements[repr(key)] = (key, _contents(obj, key), label)

    # -- reads of everything an object holds -----------------------------------

    def read_whole(self, value, text, how):
        """Records that `value` was read whole (one level: whole() follows
        what it holds); False if it was already."""
        key = ("whole", id(value))
        if key in self.reads:
            return False
        self.reads[key] = WholeRead(value, text, how)
        self.readers[id(self.reads[key])] = self._reader()
        return True

    def whole(self, value, text, how, deep=True, depth=0):
        """`value` (the source `text`, None: as it was obtained) was handed
        whole to code the trace does not follow (`how`, as written):
        everything it holds is a dependency, and (`deep`) what its items and
        attributes hold, a level at a time. Only state from outside the trace
        counts; a large buffer inside it is kept by identity."""
        if depth == 0:
            known = self._obtained.get(id(value))
            if known is None:
                return
            text = text or known[1] or type(value).__name__
        kind = state.kind_of(value)
        if kind is state.BUFFER or kind is state.DEVICE:
            view = _host_buffer(value) if kind is state.BUFFER else None
            if depth == 0 or (view is not None and view.nbytes <= WATCHED_BUFFER_BYTES):
                self.buffer(value, text, WHOLE, how)  # deeper, a large one is kept by identity
            return
        if kind not in (state.CONTAINER, state.OBJECT) or depth > _DEPTH:
            return
        if self.read_whole(value, text, how) and kind is state.OBJECT:
            self._untraced_methods(value)
        if not deep:
            return
        for suffix, item in state.children(value):
            if state.stateful(item):
                self.obtain(item, f"{text}{suffix}")
                self.whole(item, f"{text}{suffix}", how, True, depth + 1)

    def _untraced_methods(self, obj):
        """The methods of the user's class that code the trace does not follow
        may run on `obj` (``__eq__``, ``__array__``), and the globals they name."""
        for klass in _user_classes(obj):
            for name, member in list(klass.__dict__.items()):
                function = getattr(member, "__func__", getattr(member, "fget", member))
                if isinstance(function, types.FunctionType) and is_user_file(function.__code__.co_filename):
                    self.function(function)
                    namespace = function.__globals__
                    for global_name in names_in(function.__code__) & namespace.keys():
                        self.read(namespace, namespace, global_name, namespace[global_name])


def _refuse(message):
    filename, lineno = user_line()
    raise KernelError(message, filename, lineno)


def subscript_text(text, key):
    """`text[key]` as written (the whole buffer: `text[:]`)."""
    return f"{text}[{':' if _is_whole(key) else repr(key)}]"


def _is_whole(key):
    return isinstance(key, slice) and key == WHOLE


def _contents(buffer, key):
    """What `buffer[key]` holds, comparably; all of it (its shape and element
    type too) for WHOLE."""
    if not _is_whole(key):
        return _element_bytes(buffer[key])
    array = _host_array(buffer)
    layout = f"{getattr(array, 'shape', None)}{getattr(array, 'dtype', None)}".encode()
    return layout + _element_bytes(array)


def _host_array(obj):
    """A torch CPU tensor as the numpy view launches read (bfloat16 and FP8
    too; None on a GPU); anything else as it is."""
    torch = sys.modules.get("torch")
    return host_arrays.host_view(obj) if torch is not None and isinstance(obj, torch.Tensor) else obj


def _host_buffer(obj):
    """A memoryview of a host buffer's bytes, or None for anything else."""
    obj = _host_array(obj)
    if state.kind_of(obj) is not state.BUFFER:
        return None
    try:
        return memoryview(obj).cast("B") if memoryview(obj).contiguous else memoryview(obj.tobytes())
    except (TypeError, ValueError, AttributeError):
        return None


class DependencyRecord:
    """One artifact's dependencies, their fingerprints, and its C++ guard."""

    def __init__(self, recorder, launcher_name):
        self.launcher_name = launcher_name
        self.functions = [fn for fn, _ in recorder.functions.values()]
        self.function_fingerprints = [recorded for _, recorded in recorder.functions.values()]
        self.bindings = list(recorder.bindings.values())
        self.buffers = list(recorder.buffers.values())
        self.reads = list(recorder.reads.values())
        self.readers = dict(recorder.readers)  # what reached what, for pictures
        self.artifact = None
        self.last_reason = None
        self.guard = self._build_guard()
        # What the guard snapshots now must be what the trace saw: a rebinding
        # while this compiled (another thread) would otherwise pass it forever.
        if self.changes():
            self.guard.invalidate()

    def _build_guard(self):
        guard = _core.DependencyGuard()
        owners = {}  # namespaces (dicts, classes) to watch, by identity
        for read in self.bindings + self.reads:
            read.watch(guard, owners)
        for buffer, _, _ in self.buffers:
            view = _host_buffer(buffer)
            if view is not None:
                guard.watch_buffer(_host_array(buffer), view.tobytes())
        for fn in self.functions:
            guard.watch_function(fn)
            for cell in fn.__closure__ or ():
                try:
                    _watch_containers(guard, cell.cell_contents, owners, watch_dicts=True)
                except ValueError:
                    pass  # an empty cell
        for owner in owners.values():
            guard.watch_namespace(owner)
        return guard

    def changes(self):
        """Why this artifact is stale: empty when nothing it was built from changed."""
        reasons = [reason for read in self.bindings + self.reads if (reason := read.change())]
        for fn, recorded in zip(self.functions, self.function_fingerprints):
            if fingerprint(fn) != recorded:
                reasons.append(f"function {fn.__qualname__} ({fn.__module__}) changed")
        for buffer, text, elements in self.buffers:
            for key, recorded, label in elements.values():
                try:
                    same = _contents(buffer, key) == recorded
                except (IndexError, TypeError, ValueError):
                    same = False
                if not same:
                    reasons.append(f"{label} changed")
        return reasons

    def refresh(self):
        """After a change that changed nothing that matters (e.g. another
        global of the module was assigned): watch the objects as they are now."""
        for read in self.bindings + self.reads:
            read.refresh()
        self.guard = self._build_guard()
        if self.artifact is not None:
            self.artifact.guard = self.guard

    def watched(self):
        """Every read with its change (None: unchanged), for explanations."""
        return [(read, read.change()) for read in self.bindings + self.reads]

    def names(self):
        """Readable dependencies, for explanations."""
        functions = [f"{f.__module__}.{f.__qualname__}" for f in self.functions]
        reads = [read.describe() if not isinstance(read, Binding) or read.label is not None
                 else f"{read.where()}: {read.name}" for read in self.bindings + self.reads]
        reads += [label for _, _, elements in self.buffers for _, _, label in elements.values()]
        return functions, reads


def _element_bytes(value):
    """What an element (or slice) of a buffer holds, comparably."""
    value = _host_array(value)
    tobytes = getattr(value, "tobytes", None)
    if callable(tobytes):
        return tobytes()
    try:
        return bytes(memoryview(value))
    except TypeError:
        return repr(value).encode()


def _watch_containers(guard, value, owners, watch_dicts=True, depth=0):
    """Containers whose contents compiled code may have baked in."""
    if depth > _DEPTH:
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
