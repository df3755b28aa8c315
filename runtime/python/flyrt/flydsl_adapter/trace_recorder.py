"""What the user's code read while FlyDSL traced it.

FlyDSL runs the traced Python with the module's own globals dict (its AST
rewriter replaces ``__code__`` in place), so flyrt's recording globals cannot
be slipped in. Instead, for the duration of one trace, a ``sys.settrace``
hook turns on opcode events in frames of the user's code only (not FlyDSL,
not the standard library or site-packages) and records each ``LOAD_GLOBAL``
that executes, and the attribute reads chained on what it loaded or on a
local (``consts.BLOCK``, ``helpers.load_q``, ``cfg.fn``, ``self.scale``) the
way flyrt's own front end records them (``Recorder.attribute``, one rule
for both), and elements of host buffers those loads are subscripted for
(``W[0]``: ``Recorder.buffer``, the same rule again): what actually ran,
branch by branch, not a walk over ``co_names``. Tracing costs this once per compile, never per
launch. A debugger's or coverage tool's trace function keeps receiving its
events.
"""

import dis
import inspect
import os
import sys
import types
import weakref

from ..dependencies import MISSING
from ..state import unchanging
from ..user_code import is_user_class, is_user_file, is_user_module
from .subscripts import subscript_key

_ATTRIBUTE_LOADS = {"LOAD_ATTR", "LOAD_METHOD"}
_LOCAL_LOADS = {"LOAD_FAST", "LOAD_DEREF", "LOAD_CLOSURE"}
_code_loads = weakref.WeakKeyDictionary()  # code -> {offset: (opname, name, how it is subscripted)}
_user_files = {}  # co_filename -> is the user's code


def _loads(code):
    """The instructions to follow: global loads, attribute loads, and local
    loads whose value an attribute load or a subscript takes next."""
    loads = _code_loads.get(code)
    if loads is None:
        instructions = [i for i in dis.get_instructions(code) if i.opname not in ("CACHE", "EXTENDED_ARG")]
        loads = _code_loads[code] = {}
        for index, (i, after) in enumerate(zip(instructions, instructions[1:] + [None])):
            if i.opname == "LOAD_GLOBAL" or i.opname in _ATTRIBUTE_LOADS or i.opname in _LOCAL_LOADS:
                subscript = subscript_key(instructions, index)
                attribute_next = after is not None and after.opname in _ATTRIBUTE_LOADS
                if i.opname not in _LOCAL_LOADS or attribute_next or subscript is not None:
                    loads[i.offset] = (i.opname, i.argval, subscript)
    return loads


def _is_user_code(code):
    """Notebook cells and the user's own files; not code generated at run
    time (namedtuple, dataclass methods), which has no file."""
    filename = code.co_filename
    user = _user_files.get(filename)
    if user is None:
        if filename.startswith("<"):
            user = not filename.startswith(("<frozen", "<string>"))
        else:
            user = is_user_file(filename) and os.path.isfile(filename)
        _user_files[filename] = user
    return user


class TraceRecorder:
    """Context manager: records into a flyrt ``Recorder`` while active."""

    def __init__(self, recorder):
        self._recorder = recorder
        self._previous = None
        self._last_loaded = {}  # id(frame) -> the module or class its previous instruction loaded

    def __enter__(self):
        self._previous = sys.gettrace()
        sys.settrace(self._on_call)
        return self

    def __exit__(self, *exc):
        sys.settrace(self._previous)
        self._last_loaded.clear()

    def _on_call(self, frame, event, arg):
        outer = self._previous(frame, event, arg) if self._previous is not None else None
        if not _is_user_code(frame.f_code):
            return outer
        frame.f_trace_opcodes = True
        loads = _loads(frame.f_code)

        def local(frame, event, arg):
            nonlocal outer
            if event == "opcode":
                self._on_opcode(frame, loads)
                return local
            if outer is not None:
                outer = outer(frame, event, arg)
            if event == "return":
                self._last_loaded.pop(id(frame), None)
            return local

        return local

    def _on_opcode(self, frame, loads):
        key = id(frame)
        load = loads.get(frame.f_lasti)
        base = self._last_loaded.pop(key, None)
        if load is None:
            return
        opname, name, subscript = load
        text = name
        if opname == "LOAD_GLOBAL":
            namespace = frame.f_globals
            if name in namespace:
                value = namespace[name]
                self._recorder.read(namespace, namespace, name, value)
            else:
                value = frame.f_builtins.get(name)
            self._follow(key, value, name, from_user=True)
        elif opname in _LOCAL_LOADS:
            value = frame.f_locals.get(name, MISSING)
            if value is not MISSING:
                self._follow(key, value, name, from_user=is_user_class(type(value)))
        elif base is not None:
            obj, text, from_user = base
            value = self._attribute(obj, name, text)
            text = f"{text}.{name}"
            library_module = isinstance(obj, types.ModuleType) and not is_user_module(obj)
            if value is not MISSING:
                self._follow(key, value, text, from_user=from_user and not library_module)
        else:
            return
        if subscript is not None and value is not MISSING:
            self._element(frame, value, text, subscript)

    def _element(self, frame, buffer, text, subscript):
        """`text[key]` is read next: an element of a host buffer is a
        dependency; a key only known once computed stands for the whole buffer."""
        kind, key = subscript
        if kind == "local":
            key = frame.f_locals.get(key, MISSING)
        if kind == "computed" or not isinstance(key, (int, slice, tuple)):
            key = slice(None)
        self._recorder.buffer(buffer, text, key)

    def _attribute(self, obj, name, text):
        """Records `obj.name` and returns its value (MISSING when a getter
        computes it: that getter runs in a user frame and is traced itself)."""
        if isinstance(obj, (types.ModuleType, type)):
            try:
                value = getattr(obj, name)
            except Exception:  # noqa: BLE001  the traced code's own read raises it, in its own frame
                return MISSING
            self._recorder.attribute(obj, name, value)
            return value
        self._recorder.attribute(obj, name, text=text)
        instance = getattr(obj, "__dict__", None)
        if type(instance) is dict and name in instance:
            return instance[name]
        static = inspect.getattr_static(type(obj), name, MISSING)
        if isinstance(static, types.FunctionType):  # a method: traced as a helper
            return static
        if hasattr(type(static), "__get__"):
            return MISSING  # descriptors run their own code; the recorder decided what it watches
        return static

    def _follow(self, key, value, text, from_user):
        """Notes what the next attribute load of this frame reads from."""
        if isinstance(value, types.FunctionType):
            self._recorder.function(value)  # a plain helper: its code may change in place
        elif isinstance(value, (types.ModuleType, type)) or (from_user and not unchanging(value)):
            self._last_loaded[key] = (value, text, from_user)
