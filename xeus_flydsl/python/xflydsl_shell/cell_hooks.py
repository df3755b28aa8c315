"""The seam around every cell: hooks the interpreter runs before and after.

The invalidation engine registers here to snapshot the user's functions
before a cell and to diff and evict after it.  A failing hook is reported on
stderr and never costs the user their cell.
"""

import sys
import traceback


class CellHooks:
    """Ordered before-cell and after-cell callbacks."""

    def __init__(self):
        self._before = []
        self._after = []

    def register_before_cell(self, hook):
        """Call ``hook(code)`` before each cell runs."""
        self._before.append(hook)
        return hook

    def register_after_cell(self, hook):
        """Call ``hook(code, succeeded)`` after each cell ran."""
        self._after.append(hook)
        return hook

    def unregister(self, hook):
        for hooks in (self._before, self._after):
            if hook in hooks:
                hooks.remove(hook)

    def run_before(self, code):
        for hook in list(self._before):
            self._call(hook, code)

    def run_after(self, code, succeeded):
        for hook in list(self._after):
            self._call(hook, code, succeeded)

    @staticmethod
    def _call(hook, *args):
        try:
            hook(*args)
        except Exception:  # a broken hook must not break the user's cell
            name = getattr(hook, "__qualname__", repr(hook))
            print(f"xflydsl: cell hook {name} failed:", file=sys.stderr)
            traceback.print_exc(file=sys.stderr)


hooks = CellHooks()
