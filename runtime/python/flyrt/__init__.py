"""flyrt: a FlyDSL-style kernel DSL, traced to IR and compiled by LLVM for
this machine's CPU, NVIDIA GPUs (PTX, CUDA driver) or AMD GPUs (code
objects, HIP; compile-only where no AMD GPU is).

    import flyrt.compiler as flyc
    import flyrt.expr as fx
"""

import os

from . import _core
from ._version import __version__
from .interpret import set_interpret
from .targets import arch_from_environment, set_compile_only, set_target

try:
    set_target(os.environ.get("FLYDSL_TARGET", "auto"))
except ValueError as problem:
    raise ImportError(f"FLYDSL_TARGET={os.environ['FLYDSL_TARGET']!r}: {problem}") from None
# Not FlyDSL's own COMPILE_ONLY: it is set for FlyDSL's kernels (flydsl_adapter.toolchain) while
# flyrt's run on this machine.
if os.environ.get("FLYDSL_COMPILE_ONLY", "0") not in ("", "0"):
    try:
        set_compile_only(arch_from_environment() or "gfx942")
    except ValueError as problem:
        raise ImportError(f"FLYDSL_COMPILE_ONLY: {problem}") from None

__all__ = ["__version__", "bounds_checks", "clear_disk_cache", "disk_cache_info", "set_bounds_checks",
           "set_compile_only", "set_interpret", "set_target", "synchronize"]


def set_bounds_checks(on):
    """Check every tensor access of kernels compiled from now on (True, the
    default), or not (False: fast mode), over FLYDSL_DEBUG_BOUNDS (unset: on;
    0, off, false, no: off), which programs this one starts keep reading as
    they were given it; None: as it says again."""
    _core.set_bounds_checks(-1 if on is None else int(bool(on)))


def disk_cache_info():
    """The disk cache: directory, whether on, entries, bytes, the cap, and this
    process's hits and misses (``%flydsl cache`` shows it)."""
    from . import disk_cache

    return disk_cache.stats()


def clear_disk_cache():
    """Removes every compiled object and warm-start manifest from the disk cache."""
    from . import disk_cache

    disk_cache.clear()


def bounds_checks():
    """Whether kernels compiled now check their tensor accesses."""
    return _core.bounds_checks()


def __getattr__(name):
    # flyrt.synchronize, without importing the CUDA driver module (and its
    # libdevice search) for programs that never wait on a GPU
    if name == "synchronize":
        from .drivers.cuda import synchronize

        return synchronize
    raise AttributeError(f"module 'flyrt' has no attribute {name!r}")
