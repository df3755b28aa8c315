"""Compile-only FlyDSL on a machine without ROCm: the one tool it still needs.

With ``COMPILE_ONLY=1 ARCH=gfx942`` FlyDSL traces, lowers and compiles to
AMDGPU ISA in-process; only the last step, linking the code object, runs
``$ROCM_PATH/llvm/bin/ld.lld``. Debian's LLD 19 (package lld-19) links
gfx9 code objects, so a directory laid out like a ROCm install, holding a
link to it, is all ``ROCM_PATH`` needs to point at.
"""

import os
import shutil
from pathlib import Path

_LINKERS = ("ld.lld-19", "ld.lld")


def rocm_linker_dir():
    """A ROCm-shaped directory whose llvm/bin/ld.lld is the system LLD."""
    linker = next((path for path in map(shutil.which, _LINKERS) if path), None)
    if linker is None:
        raise RuntimeError("no LLD found (install Debian's lld-19): FlyDSL links AMDGPU code objects with ld.lld")
    root = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "flyrt" / "rocm-lld"
    link = root / "llvm" / "bin" / "ld.lld"
    link.parent.mkdir(parents=True, exist_ok=True)
    if not link.is_symlink() or os.readlink(link) != linker:
        temporary = link.with_name(f"ld.lld.{os.getpid()}")
        temporary.unlink(missing_ok=True)
        temporary.symlink_to(linker)
        temporary.replace(link)  # atomic: concurrent kernels never see a missing linker
    return str(root)


def use_compile_only(arch="gfx942"):
    """Compile FlyDSL kernels for `arch` without a GPU; their ISA can be dumped
    (``FLYDSL_DEBUG_DUMP_ASM=1``), nothing is launched. Call before the first compile."""
    os.environ["COMPILE_ONLY"] = "1"
    os.environ["ARCH"] = arch
    rocm = os.environ.get("ROCM_PATH", "/opt/rocm")
    if not os.path.exists(os.path.join(rocm, "llvm", "bin", "ld.lld")):
        os.environ["ROCM_PATH"] = rocm_linker_dir()
