"""flyrt: a FlyDSL-style kernel DSL, traced to IR and compiled by LLVM for
this machine's CPU, NVIDIA GPUs (PTX, CUDA driver) or AMD GPUs (code
objects, HIP; compile-only where no AMD GPU is).

    import flyrt.compiler as flyc
    import flyrt.expr as fx
"""

from . import _core
from ._version import __version__
from .drivers.cuda import synchronize
from .drivers.targets import arch_from_environment, set_compile_only, set_target
from .interpret import set_interpret
from .frontend import ast_rewrite
from .runtime import disk_cache

ast_rewrite.keep_rewrites_in(disk_cache.load_rewritten_code, disk_cache.store_rewritten_code)

__all__ = ["__version__", "bounds_checks", "clear_disk_cache", "disk_cache_info", "set_bounds_checks",
           "set_compile_only", "set_interpret", "set_target", "synchronize"]


def set_bounds_checks(on):
    """Check every tensor access of kernels compiled from now on (True, the
    default), or not (False: fast mode), over FLYDSL_DEBUG_BOUNDS (unset: on;
    0, off, false, no: off), which programs this one starts keep reading as
    they were given it; None: as it says again. Returns the setting before
    (True, False or None), which set back restores it: ``bounds_checks()``'s
    value would pin the variable's say."""
    before = _core.set_bounds_checks(-1 if on is None else int(bool(on)))
    return None if before < 0 else bool(before)


def disk_cache_info():
    """The disk cache: directory, whether on, entries, bytes, the cap, and this
    process's hits and misses (``%flydsl cache`` shows it)."""
    return disk_cache.stats()


def clear_disk_cache():
    """Removes every compiled object and warm-start manifest from the disk cache."""
    disk_cache.clear()


def bounds_checks():
    """Whether kernels compiled now check their tensor accesses."""
    return _core.bounds_checks()

