"""What the kernel does around each cell for flyrt (once the user imported it).

Before a cell: module files edited on disk are reloaded in place, then stale
artifacts are evicted. After a cell: functions and bindings the user changed
are diffed against what every artifact and compile factory was built from,
and exactly the stale ones are evicted; artifacts that a call in the cell
already found stale and recompiled are named too. One short notice says
what and why; nothing is printed when nothing changed. Nothing recompiles
here: the next call does.

FLYDSL_INTERPRET is read again before each cell (``%env`` changes it).

When the real FlyDSL is installed, flyrt's adapter guards its JitFunctions
too, from the moment the user's code imports it (the kernel itself does not
import it: that would cost start-up time for notebooks that never use it).
"""

import importlib.util
import sys

from . import import_hooks


def _registry():
    """flyrt's launcher registry, if the user's code has imported flyrt."""
    if "flyrt" not in sys.modules:
        return None
    from flyrt.invalidation import registry

    registry.collect_recompiles()
    return registry


def _report(registry, reloaded=(), recompiled=()):
    lines = [f"flyrt: reloaded edited module {name}; its functions and classes now run the new code"
             for name in reloaded]
    notices = registry.sweep()
    if notices or recompiled:
        lines.append(registry.format_notice(notices, recompiled))
    if lines:
        print("\n".join(lines))


def before_cell(code):
    registry = _registry()
    if registry is not None:
        from flyrt.interpret import follow_environment

        follow_environment()  # %env FLYDSL_INTERPRET=1 counts from this cell on
        registry.drain_recompiles()  # made outside any cell (a widget's callback): not this cell's
        _report(registry, registry.reload_edited_modules())


def after_cell(code, succeeded):
    registry = _registry()
    if registry is not None:
        _report(registry, recompiled=registry.drain_recompiles())


def install(hooks):
    hooks.register_before_cell(before_cell)
    hooks.register_after_cell(after_cell)
    if importlib.util.find_spec("flydsl") is not None:
        import_hooks.after_import("flydsl.compiler.jit_function", _guard_flydsl)


def _guard_flydsl(module):
    from flyrt import flydsl_adapter

    # A notebook is where globals change: recompile rather than FlyDSL's "restart the process".
    flydsl_adapter.install(global_drift="recompile")
