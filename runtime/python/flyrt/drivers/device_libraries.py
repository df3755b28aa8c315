"""The GPU vendors' libraries flyrt compiles with: the bitcode math
libraries it links into kernels that call them, CUDA's libdevice (NVIDIA:
Float64 exp and log; sin, cos, tanh, erf, pow) and ROCm's ocml (AMD: sin,
cos, tanh, erf, pow), and NVIDIA's nvJitLink, which assembles PTX into
cubins. Each is looked for when the first target of its vendor is made (not
at import: programs that never compile for that GPU skip the search) and
handed to the compiler."""

import functools
import hashlib
import importlib.util
import os
import warnings

from .. import _core
from ..core import settings


def _find_spec(name):
    try:
        return importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None


def _first_file(candidates, packaged=()):
    """The first of `candidates` that is a file, else of `packaged`'s
    (package, path parts inside it) in each installed package's folders."""
    for package, parts in packaged:
        spec = _find_spec(package)
        if spec is not None and spec.submodule_search_locations:
            candidates.extend(os.path.join(p, *parts) for p in spec.submodule_search_locations)
    return next((c for c in candidates if c and os.path.isfile(c)), "")


def find_libdevice():
    """CUDA's libdevice.10.bc: $FLYDSL_LIBDEVICE, a CUDA toolkit, or the one
    PyPI's nvidia-cuda-nvcc-cu12 or Triton ship; "" if none."""
    return _first_file(settings.libdevice_candidates(),
                       (("nvidia.cuda_nvcc", ("nvvm", "libdevice", "libdevice.10.bc")),
                        ("triton", ("backends", "nvidia", "lib", "libdevice.10.bc"))))


@functools.lru_cache(maxsize=None)
def libdevice():
    """The libdevice NVPTX compiles link ("" if none)."""
    path = find_libdevice()
    _core.set_libdevice_path(path)
    return path


def find_ptx_assembler():
    """NVIDIA's nvJitLink (CUDA 12 or 13), where FLYDSL_NVJITLINK asks for
    it: the path it names, or with "1" a CUDA toolkit's or the one PyPI's
    nvidia-nvjitlink (CUDA 13, torch's) or nvidia-nvjitlink-cu12 ship; ""
    if none or not asked for."""
    candidates = settings.nvjitlink_candidates()
    if candidates is None:
        return ""
    return _first_file(candidates, (("nvidia.cu13", ("lib", "libnvJitLink.so.13")),
                                    ("nvidia.nvjitlink", ("lib", "libnvJitLink.so.12"))))


@functools.lru_cache(maxsize=None)
def ptx_assembler():
    """Turns on assembling NVPTX compiles' PTX with the nvJitLink found (the
    first CUDA device target does); returns it ("" if none: the driver
    compiles the PTX when a kernel loads). One that cannot be opened is a
    warning, once, and PTX goes to the driver."""
    path = find_ptx_assembler()
    _core.set_ptx_assembler_path(path)
    problem = _core.ptx_assembler_problem()
    if problem:
        warnings.warn(f"flyrt: {problem}; kernels' PTX goes to the CUDA driver to compile", RuntimeWarning,
                      stacklevel=2)
        _core.set_ptx_assembler_path("")
        return ""
    return path


@functools.lru_cache(maxsize=None)
def ocml():
    """The ocml.bc AMDGPU compiles link ("" if none): $FLYDSL_OCML, a ROCm
    install, or Debian's rocm-device-libs."""
    path = _first_file(settings.ocml_candidates())
    _core.set_ocml_path(path)
    return path


@functools.lru_cache(maxsize=None)
def file_identity(path):
    """A large library's identity for cache keys, without reading it: its
    resolved path, size and modification time ("none" without one)."""
    if not path:
        return "none"
    real = os.path.realpath(path)
    info = os.stat(real) if os.path.exists(real) else None
    return f"{real} {info.st_size} {info.st_mtime_ns}" if info else real


@functools.lru_cache(maxsize=None)
def digest(path):
    """Which library compiles use (part of compiled code's identity)."""
    if not path:
        return "none"
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()[:16]
