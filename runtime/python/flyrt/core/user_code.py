"""What is the user's code, and how to look at the user's objects safely.

The user's code is what they may edit: notebook cells and files outside
flyrt, the standard library and site-packages. Only its functions, modules
and classes are dependencies; library code is taken as it is.

`probe` is how the engine reads an attribute of an object it did not make
(a decorator's search for a compile factory, a fingerprint): whatever the
object's ``__getattr__`` raises, the engine carries on without it.
"""

import functools
import os
import sys
import sysconfig
import types
import weakref

_FLYRT_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep  # the flyrt package


def _library_dirs():
    """Where installed code lives: the standard library, site-packages, and
    any folder on sys.path that pip installed distributions into
    (``pip install --target``: it holds their ``*.dist-info``)."""
    paths = sysconfig.get_paths()
    dirs = {paths["stdlib"], paths["purelib"], paths["platlib"]}
    for entry in sys.path:
        try:
            if entry and any(name.endswith(".dist-info") for name in os.listdir(entry)):
                dirs.add(entry)
        except OSError:
            pass  # a zip, a folder gone
    return tuple(os.path.realpath(d) + os.sep for d in dirs)


_LIBRARY_DIRS = _library_dirs()


@functools.lru_cache(maxsize=4096)
def is_user_file(filename):
    """Code the user may edit: not flyrt, not the standard library or installed packages."""
    if not filename or filename.startswith(_FLYRT_DIR):
        return False
    if filename.startswith("<"):
        return True  # notebook cells and other interactive code
    return not os.path.realpath(filename).startswith(_LIBRARY_DIRS)


def is_user_module(module):
    if probe(module, "__name__") == "__main__":
        return True
    filename = probe(module, "__file__")
    return isinstance(filename, str) and is_user_file(filename)


_user_classes = weakref.WeakKeyDictionary()


def is_user_class(klass):
    try:
        return _user_classes[klass]
    except KeyError:
        pass
    except TypeError:  # a class without weak references: not memoized
        return _is_user_class(klass)
    user = _user_classes[klass] = _is_user_class(klass)
    return user


def _is_user_class(klass):
    module = sys.modules.get(klass.__dict__.get("__module__", klass.__module__))
    return module is not None and is_user_module(module)


def is_user_function(fn):
    code = probe(fn, "__code__")
    return isinstance(code, types.CodeType) and is_user_file(code.co_filename)


def user_frame():
    """The innermost frame of the user's code (outside flyrt), or None."""
    frame = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename.startswith(_FLYRT_DIR):
        frame = frame.f_back
    return frame


def user_line():
    """(file, line) of the innermost frame of the user's code, or (None, None)."""
    frame = user_frame()
    return (frame.f_code.co_filename, frame.f_lineno) if frame is not None else (None, None)


def probe(obj, name, default=None):
    """`getattr(obj, name, default)` that no exception of the object's gets through."""
    try:
        return getattr(obj, name, default)
    except Exception:  # noqa: BLE001  a user's __getattr__ may raise anything
        return default
