"""flyrt: a FlyDSL-style kernel DSL, traced to IR and compiled by LLVM for
this machine's CPU or NVIDIA GPUs.

    import flyrt.compiler as flyc
    import flyrt.expr as fx
"""

import os

from ._version import __version__
from .targets import set_target

try:
    set_target(os.environ.get("FLYDSL_TARGET", "auto"))
except ValueError as problem:
    raise ImportError(f"FLYDSL_TARGET={os.environ['FLYDSL_TARGET']!r}: {problem}") from None

__all__ = ["__version__", "set_target", "synchronize"]


def __getattr__(name):
    # flyrt.synchronize, without importing the CUDA driver module (and its
    # libdevice search) for programs that never wait on a GPU
    if name == "synchronize":
        from .drivers.cuda import synchronize

        return synchronize
    raise AttributeError(f"module 'flyrt' has no attribute {name!r}")
