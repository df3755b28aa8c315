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
import linecache
import os
import sys
import types
import weakref

from ..core.user_code import is_user_class, is_user_file, is_user_module
from ..invalidation.dependencies import MISSING
from ..invalidation.state import unchanging
from .subscripts import subscript_key

# Instructions are known by name, so one table serves CPython 3.10 to 3.13.
# Attribute loads take the object on top of the stack (3.12+'s LOAD_ATTR loads methods too, by a flag in its arg);
# 3.12's LOAD_SUPER_ATTR is none: it takes super's arguments, not an object the recorder followed.
_ATTRIBUTE_LOADS = {"LOAD_ATTR", "LOAD_METHOD"}
# 3.12+: LOAD_FAST_CHECK reads a local that may be unbound, LOAD_FAST_AND_CLEAR one an inlined comprehension hides.
_LOCAL_LOADS = {"LOAD_FAST", "LOAD_FAST_CHECK", "LOAD_FAST_AND_CLEAR", "LOAD_DEREF", "LOAD_CLOSURE"}
_STORED = object()  # what _last_loaded holds for a local STORE_FAST_LOAD_FAST loads: read once the store has run
_code_loads = weakref.WeakKeyDictionary()  # code -> {offset: ((kind, name, how it is subscripted), ...) or None}
_user_files = {}  # co_filename -> is the user's code


def _loads(code):
    """The instructions to follow, by the offset of their opcode event: global
    loads, attribute loads, and local loads whose value an attribute load or
    a subscript takes next. None: an instruction whose event came already."""
    loads = _code_loads.get(code)
    if loads is None:
        loads = _code_loads[code] = {}
        instructions, prefixes = _instructions(code)
        for index, instruction in enumerate(instructions):
            steps = _steps(instructions, index)
            if steps:
                events = prefixes[index] + [instruction.offset]
                loads[events[0]] = steps
                loads.update(dict.fromkeys(events[1:]))  # 3.12+ send them again after the prefix's
    return loads


def _instructions(code):
    """The code's instructions and the offsets of each one's EXTENDED_ARG
    prefixes: its opcode event comes at the first of them."""
    instructions, prefixes, prefix = [], [], []
    for instruction in dis.get_instructions(code):
        if instruction.opname == "EXTENDED_ARG":
            prefix.append(instruction.offset)
        elif instruction.opname != "CACHE":
            instructions.append(instruction)
            prefixes.append(prefix)
            prefix = []
    return instructions, prefixes


def _steps(instructions, index):
    """What the recorder does at instructions[index]: (kind, name, how it is
    subscripted) for each value it loads that is followed, in push order."""
    instruction = instructions[index]
    opname, name = instruction.opname, instruction.argval
    if opname == "LOAD_GLOBAL" or opname in _ATTRIBUTE_LOADS:
        return (("global" if opname == "LOAD_GLOBAL" else "attribute", name, subscript_key(instructions, index)),)
    steps = []
    if opname == "LOAD_FAST_LOAD_FAST":  # 3.13: two locals; the first can only be subscripted, by the second
        first, name = name
        subscript = subscript_key(instructions, index, first=True)
        if subscript is not None:
            steps.append(("element", first, subscript))
        kind = "local"
    elif opname == "STORE_FAST_LOAD_FAST":  # 3.13: stores a local, then loads one
        kind, name = "stored", name[1]
    elif opname in _LOCAL_LOADS:
        kind = "local"
    else:
        return ()
    after = instructions[index + 1] if index + 1 < len(instructions) else None
    subscript = subscript_key(instructions, index)
    if (after is not None and after.opname in _ATTRIBUTE_LOADS) or subscript is not None:
        steps.append((kind, name, subscript))
    return tuple(steps)


def _is_user_code(code):
    """Notebook cells and the user's own files; not code generated at run
    time (namedtuple, dataclass methods), which has no file. A cell's file
    name may look like a path (xeus names cells after the file its debugger
    would write): its source is in linecache, where IPython's compiler put it."""
    filename = code.co_filename
    user = _user_files.get(filename)
    if user is None:
        if filename.startswith("<"):
            user = not filename.startswith(("<frozen", "<string>"))
        else:
            user = is_user_file(filename) and (os.path.isfile(filename) or filename in linecache.cache)
        _user_files[filename] = user
    return user


class TraceRecorder:
    """Context manager: records into a flyrt ``Recorder`` while active."""

    def __init__(self, recorder):
        self._recorder = recorder
        self._previous = None
        self._last_loaded = {}  # id(frame) -> what its previous instruction loaded (value, text, from_user), or _STORED

    def __enter__(self):
        self._previous = sys.gettrace()
        # 3.12 sends opcode events only if a frame asked for them before sys.settrace (CPython gh-103615)
        here = sys._getframe()
        asked, here.f_trace_opcodes = here.f_trace_opcodes, True
        here.f_trace_opcodes = asked
        sys.settrace(self._on_call)
        return self

    def __exit__(self, *exc):
        sys.settrace(self._previous)
        self._last_loaded.clear()

    def _on_call(self, frame, event, arg):
        outer = self._previous(frame, event, arg) if self._previous is not None else None
        if not _is_user_code(frame.f_code):
            return outer
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

        frame.f_trace = local  # 3.13 turns a frame's opcode events on only once it has its trace function
        frame.f_trace_opcodes = True
        return local

    def _on_opcode(self, frame, loads):
        steps = loads.get(frame.f_lasti, ())
        if steps is None:  # an instruction again, after its EXTENDED_ARG prefix's event
            return
        key = id(frame)
        base = self._last_loaded.pop(key, None)
        if base is not None and base[0] is _STORED:  # the store has run: the local holds what was loaded
            self._local(frame, base[1], base[2])
            base = self._last_loaded.pop(key, None)
        for kind, name, subscript in steps:
            if kind == "global":
                self._global(frame, name, subscript)
            elif kind == "local" or kind == "element":  # an element: a local under another, only subscripted
                self._local(frame, name, subscript, follow=kind == "local")
            elif kind == "stored":
                self._last_loaded[key] = (_STORED, name, subscript)
            elif base is not None:
                self._attribute_load(frame, base, name, subscript)

    def _global(self, frame, name, subscript):
        namespace = frame.f_globals
        if name in namespace:
            value = namespace[name]
            self._recorder.read(namespace, namespace, name, value)
        else:
            value = frame.f_builtins.get(name)
        self._follow(id(frame), value, name, from_user=True)
        self._element(frame, value, name, subscript)

    def _local(self, frame, name, subscript, follow=True):
        value = frame.f_locals.get(name, MISSING)
        if value is not MISSING:
            if follow:
                self._follow(id(frame), value, name, from_user=is_user_class(type(value)))
            self._element(frame, value, name, subscript)

    def _attribute_load(self, frame, base, name, subscript):
        obj, text, from_user = base
        value = self._attribute(obj, name, text)
        text = f"{text}.{name}"
        library_module = isinstance(obj, types.ModuleType) and not is_user_module(obj)
        if value is not MISSING:
            self._follow(id(frame), value, text, from_user=from_user and not library_module)
            self._element(frame, value, text, subscript)

    def _element(self, frame, buffer, text, subscript):
        """`text[key]` is read next: an element of a host buffer is a
        dependency; a key only known once computed stands for the whole buffer."""
        if subscript is None:
            return
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
