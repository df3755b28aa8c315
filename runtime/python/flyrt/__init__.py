"""flyrt: a FlyDSL-style kernel DSL, traced to IR and compiled by LLVM.

    import flyrt.compiler as flyc
    import flyrt.expr as fx
"""

import os

from ._version import __version__

_TARGETS = ("auto", "cpu")
target = os.environ.get("FLYDSL_TARGET", "auto").lower()
if target not in _TARGETS + ("hip", "cuda"):
    raise ImportError(f"FLYDSL_TARGET={target!r}: expected one of auto, cpu, hip, cuda")
if target in ("hip", "cuda"):
    raise ImportError(f"FLYDSL_TARGET={target}: this build of flyrt has the CPU backend only")

__all__ = ["__version__", "target"]
