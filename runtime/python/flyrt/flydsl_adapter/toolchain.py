"""Compile-only FlyDSL on a machine without ROCm: the two pieces it still needs.

With ``COMPILE_ONLY=1 ARCH=gfx942`` FlyDSL traces, lowers and compiles to
AMDGPU ISA in-process; linking the code object runs
``$ROCM_PATH/llvm/bin/ld.lld``, and a kernel that calls ROCm's device
library (``exp2``, ``sin``, ``rcp``: ocml/ockl) links its bitcode from
``$ROCM_PATH/amdgcn/bitcode``. Debian's LLD 19 (package lld-19) links gfx9
code objects and Debian's rocm-device-libs holds that bitcode, so a
directory laid out like a ROCm install, holding links to both, is all
``ROCM_PATH`` needs to point at.
"""

import os
import shutil
from pathlib import Path

_LINKERS = ("ld.lld-19", "ld.lld")
# Debian's rocm-device-libs (ocml.bc, ockl.bc, oclc_*.bc), the amdgcn tree ROCm has.
_DEVICE_LIBS = ("/usr/lib/x86_64-linux-gnu/amdgcn",)


def rocm_linker_dir():
    """A ROCm-shaped directory whose llvm/bin/ld.lld is the system LLD and,
    when Debian's rocm-device-libs is installed, whose amdgcn/ is its bitcode."""
    linker = next((path for path in map(shutil.which, _LINKERS) if path), None)
    if linker is None:
        raise RuntimeError("no LLD found (install Debian's lld-19): FlyDSL links AMDGPU code objects with ld.lld")
    root = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "flyrt" / "rocm-lld"
    _link(root / "llvm" / "bin" / "ld.lld", linker)
    device_libs = next((path for path in _DEVICE_LIBS if os.path.isdir(os.path.join(path, "bitcode"))), None)
    if device_libs is not None:
        _link(root / "amdgcn", device_libs)
    return str(root)


def _link(link, target):
    """`link` -> `target`, replaced atomically: concurrent kernels never see it missing."""
    link.parent.mkdir(parents=True, exist_ok=True)
    if not link.is_symlink() or os.readlink(link) != target:
        temporary = link.with_name(f"{link.name}.{os.getpid()}")
        temporary.unlink(missing_ok=True)
        temporary.symlink_to(target)
        temporary.replace(link)


def use_compile_only(arch="gfx942"):
    """Compile FlyDSL kernels for `arch` without a GPU; their ISA can be dumped
    (``FLYDSL_DEBUG_DUMP_ASM=1``), nothing is launched. Call before the first compile."""
    os.environ["COMPILE_ONLY"] = "1"
    os.environ["ARCH"] = arch
    rocm = os.environ.get("ROCM_PATH", "/opt/rocm")
    if not os.path.exists(os.path.join(rocm, "llvm", "bin", "ld.lld")):
        os.environ["ROCM_PATH"] = rocm_linker_dir()
