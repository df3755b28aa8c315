"""Errors that point at the user's kernel source."""

import sys
import types

from . import settings
from .user_code import is_user_file


def source_line(filename, lineno):
    """Where a message points: "file.py:7", or for a notebook cell (whose file
    is the one IPython compiled it under) "Cell In[3], line 7", as IPython's
    tracebacks name it."""
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    number = getattr(getattr(shell, "compile", None), "_filename_map", {}).get(filename)
    if number is not None:
        return f"Cell In[{number}], line {lineno}"
    return f"{filename}:{lineno}"


class KernelError(Exception):
    """A kernel or launcher that cannot be compiled, with where it went wrong."""

    def __init__(self, message, filename=None, lineno=None):
        where = f"{source_line(filename, lineno)}: " if filename else ""
        super().__init__(where + message)
        self.filename = filename
        self.lineno = lineno


class EndlessRecursion(KernelError, RecursionError):
    """A helper that calls itself without end while tracing (a KernelError and a RecursionError)."""


def raise_at(error, filename, lineno):
    """Raises `error` from a frame at `filename:lineno`, so the traceback's
    last entry shows the user's line."""
    if not filename or not lineno or lineno < 1:
        raise error
    code = compile("\n" * (lineno - 1) + "raise __flyrt_error__", filename, "exec")
    exec(code, {"__flyrt_error__": error})


_full_tracebacks = None  # None: as FLYDSL_FULL_TRACEBACK says


def full_tracebacks():
    """FLYDSL_FULL_TRACEBACK=1 (or ``%flydsl traceback full``): errors raised
    while tracing keep flyrt's own frames."""
    if _full_tracebacks is not None:
        return _full_tracebacks
    return settings.full_traceback_requested()


def set_full_tracebacks(full):
    """This process's choice, over FLYDSL_FULL_TRACEBACK (which programs it
    starts keep reading as they were given it)."""
    global _full_tracebacks
    _full_tracebacks = bool(full)


def users_frames(traceback):
    """`traceback` without the frames of flyrt (tracing, control flow, launching)
    and of libraries: the user's call, kernel and helper lines remain. The
    whole one if none would remain."""
    kept = []
    while traceback is not None:
        if is_user_file(traceback.tb_frame.f_code.co_filename):
            kept.append(traceback)
        traceback = traceback.tb_next
    rebuilt = None
    for entry in reversed(kept):
        rebuilt = types.TracebackType(rebuilt, entry.tb_frame, entry.tb_lasti, entry.tb_lineno)
    return rebuilt
