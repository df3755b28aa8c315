"""Which launchers run interpreted: per launcher (``launcher.interpret =
True / False``; None follows the rest), else for all of them
(``flyrt.set_interpret(True / False)``; None follows the environment), else
as ``FLYDSL_INTERPRET`` says (1: interpret).

The compiled call path is the C++ dispatcher's, with no Python in it, so the
choice is not asked on every call: a launcher to interpret gets a subclass
whose ``__call__`` interprets, and loses it when the choice changes.
FLYDSL_INTERPRET is read when first asked and again by
``follow_environment`` (``set_interpret(None)`` calls it; the xflydsl kernel
does before every cell, so ``%env FLYDSL_INTERPRET=1`` works in a notebook).
"""

import functools

from .. import _core
from ..core import settings
from ..core.errors import full_tracebacks, users_frames
from ..invalidation import registry
from .launch import run_launcher

_chosen = None  # set_interpret's choice; None: the environment's
_environment = None  # FLYDSL_INTERPRET as last read; None: not read yet


def set_interpret(on):
    """Interprets every launcher without a choice of its own (True), compiles
    them (False), or follows FLYDSL_INTERPRET again (None, read now)."""
    global _chosen, _environment
    _chosen = None if on is None else bool(on)
    _environment = settings.interpret_requested()
    _apply_all()


def follow_environment():
    """Reads FLYDSL_INTERPRET again; launchers follow it if it changed."""
    global _environment
    now = settings.interpret_requested()
    if _environment is not None and now != _environment:
        _environment = now
        _apply_all()


def interpreting_by_default():
    """Whether a launcher with no choice of its own runs interpreted now."""
    global _environment
    if _chosen is not None:
        return _chosen
    if _environment is None:
        _environment = settings.interpret_requested()
    return _environment


def wants_interpretation(launcher):
    choice = launcher.__dict__.get("_interpret")
    return interpreting_by_default() if choice is None else choice


def apply(launcher):
    """Gives `launcher` the call path its choice asks for."""
    plain = getattr(type(launcher), "_plain_class", type(launcher))
    wanted = _interpreting_class(plain) if wants_interpretation(launcher) else plain
    if type(launcher) is not wanted:
        launcher.__class__ = wanted


def _apply_all():
    for launcher in registry.launchers():
        apply(launcher)


@functools.lru_cache(maxsize=None)
def _interpreting_class(plain):
    return type(plain.__name__, (plain,), {"__call__": _interpreted_call, "_plain_class": plain,
                                           "__module__": plain.__module__, "__qualname__": plain.__qualname__})


def _interpreted_call(self, *args, **kwargs):
    __tracebackhide__ = True  # IPython and pytest leave out this frame
    if _core.tracing():  # called inside a trace or an interpretation: the dispatcher inlines it
        return _core.Dispatcher.__call__(self, *args, **kwargs)
    try:
        return run_launcher(self, args, kwargs)
    except Exception as error:
        if full_tracebacks():
            raise
        mine = users_frames(error.__traceback__)
        raise error.with_traceback(mine) if mine is not None else error
