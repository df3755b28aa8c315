"""Run a function right after a module is first imported, without importing it.

The kernel must not import flydsl (and with it torch, a second or more), nor
flyrt, at start-up: it installs flyrt's FlyDSL adapter when the user's code
imports flydsl. A meta-path finder sees the import, lets the real finder find the module, and
wraps its loader so the callback runs after the module body, before the
importing code gets the module (so decorators in the same cell are guarded).
"""

import importlib.abc
import sys


class _AfterImport(importlib.abc.MetaPathFinder):
    def __init__(self, name, callback):
        self._name = name
        self._callback = callback

    def find_spec(self, fullname, path, target=None):
        if fullname != self._name:
            return None
        sys.meta_path.remove(self)  # once; and lets the real finders answer below
        for finder in sys.meta_path:
            spec = finder.find_spec(fullname, path, target) if hasattr(finder, "find_spec") else None
            if spec is not None and spec.loader is not None:
                spec.loader = _Loader(spec.loader, self._callback)
                return spec
        return None


class _Loader(importlib.abc.Loader):
    def __init__(self, loader, callback):
        self._loader = loader
        self._callback = callback

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module):
        self._loader.exec_module(module)
        self._callback(module)

    def __getattr__(self, name):  # get_source, get_code, ...: the real loader's
        return getattr(self._loader, name)


def after_import(name, callback):
    sys.meta_path.insert(0, _AfterImport(name, callback))
