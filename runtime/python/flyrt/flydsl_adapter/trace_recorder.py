"""What the user's code read while FlyDSL traced it.

FlyDSL runs the traced Python with the module's own globals dict (its AST
rewriter replaces ``__code__`` in place), so flyrt's recording globals cannot
be slipped in. Instead, for the duration of one trace, a ``sys.settrace``
hook turns on opcode events in frames of the user's code only (not FlyDSL,
not the standard library or site-packages) and records each ``LOAD_GLOBAL``
that executes, and module and class attributes read right after it
(``consts.BLOCK``, ``helpers.load_q``): what actually ran, branch by branch,
not a walk over ``co_names``. Tracing costs this once per compile, never per
launch. A debugger's or coverage tool's trace function keeps receiving its
events.
"""

import dis
import os
import sys
import types
import weakref

from ..dependencies import is_user_file

_LOADS = {"LOAD_GLOBAL", "LOAD_ATTR", "LOAD_METHOD"}
_code_loads = weakref.WeakKeyDictionary()  # code -> {offset: (opname, name)}
_user_files = {}  # co_filename -> is the user's code


def _loads(code):
    loads = _code_loads.get(code)
    if loads is None:
        loads = _code_loads[code] = {i.offset: (i.opname, i.argval)
                                     for i in dis.get_instructions(code) if i.opname in _LOADS}
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
        opname, name = load
        if opname == "LOAD_GLOBAL":
            namespace = frame.f_globals
            if name in namespace:
                value = namespace[name]
                self._recorder.read(namespace, namespace, name, value)
            else:
                value = frame.f_builtins.get(name)
        elif base is not None:
            try:
                value = getattr(base, name)
            except Exception:  # noqa: BLE001  the traced code's own read raises it, in its own frame
                return
            self._recorder.attribute(base, name, value)
        else:
            return
        if isinstance(value, types.FunctionType):
            self._recorder.function(value)  # a plain helper: its code may change in place
        elif isinstance(value, (types.ModuleType, type)):
            self._last_loaded[key] = value
