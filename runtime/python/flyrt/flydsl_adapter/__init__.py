"""flyrt's invalidation engine guarding the real FlyDSL (``pip install flydsl``).

    import flyrt.flydsl_adapter as adapter
    adapter.install()          # patches FlyDSL's JitFunction in this process

After ``install()``, every ``@flyc.jit`` function records what its traces
read, is validated before every call, and has all its caches evicted
together when that changed (and restored when it changes back); a
``CompiledFunction`` from ``flyc.compile`` is validated the same way on every
call and rebound to a fresh artifact when stale; the
``functools.lru_cache`` factory that built it is cleared when the factory's
code changes; its disk-cache entries are keyed by those dependencies too.
The xflydsl kernel installs it when the user's code imports ``flydsl``.

``global_drift``: FlyDSL 0.4.2 raises when a global its first compile
captured changes ("restart the process"). ``"raise"`` (the default) keeps
that contract; ``"recompile"`` (the kernel's choice: a notebook is where
globals change) evicts and recompiles instead. FlyDSL 0.5.0 has no such
contract: it recompiles.
"""

import warnings

from ..core import fingerprint
from . import compat, jit_caches
from .compiled_function import StaleCompiledFunctionError
from .guarded_jit import handle_of as lookup, set_global_drift
from .patches import Patches
from .toolchain import use_compile_only

__all__ = ["install", "uninstall", "installed", "handle_of", "use_compile_only", "UnsupportedFlyDSL",
           "StaleCompiledFunctionError"]
UnsupportedFlyDSL = compat.UnsupportedFlyDSL
_patches = None
release = None  # compat.Release of the FlyDSL guarded, once installed


def install(global_drift="raise"):
    """Guards FlyDSL's caches in this process (again: sets `global_drift`).
    Returns True when installed; False (with a warning saying why) for a
    FlyDSL release the adapter cannot guard. A release it was not tested
    with, or one lacking an optional hook, is guarded with a warning saying
    what is and is not."""
    global _patches, release
    set_global_drift(global_drift)
    if _patches is not None:
        return True
    import flydsl
    from flydsl.compiler import jit_function, kernel_function

    try:
        release = compat.probe(flydsl, jit_function)
    except compat.UnsupportedFlyDSL as problem:
        warnings.warn(str(problem), RuntimeWarning, stacklevel=2)
        return False
    if release.notice():
        warnings.warn(release.notice(), RuntimeWarning, stacklevel=2)
    jit_caches.use(release)
    _register_fingerprints(jit_function.JitFunction, kernel_function.KernelFunction)
    _patches = Patches(jit_function, release)
    _patches.apply()
    return True


def uninstall():
    """Puts FlyDSL's own methods back (functions guarded so far keep their handles, unused)."""
    global _patches
    if _patches is not None:
        _patches.remove()
        _patches = None


def installed():
    return _patches is not None


def handle_of(jit_function):
    """The engine's view of a FlyDSL JitFunction (dependencies, cache_info, last_reasons), or None."""
    return lookup(jit_function)


_registered = set()


def _register_fingerprints(*classes):
    # A FlyDSL function stands for the code it was written with, not for its identity.
    for cls in classes:
        if cls not in _registered:
            _registered.add(cls)
            fingerprint.register(cls, lambda value, inner: f"flydsl({inner(compat.source_function(value))})")
