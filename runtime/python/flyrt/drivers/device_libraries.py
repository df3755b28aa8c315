"""The GPU vendors' bitcode math libraries flyrt links into kernels that
call them: CUDA's libdevice (NVIDIA: Float64 exp and log; sin, cos, tanh,
erf, pow) and ROCm's ocml (AMD: sin, cos, tanh, erf, pow). Each is looked for
when the first target of its vendor is made (not at import: programs that
never compile for that GPU skip the search) and handed to the compiler."""

import functools
import hashlib
import importlib.util
import os

from .. import _core
from ..core import settings


def _find_spec(name):
    try:
        return importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None


def _first_file(candidates):
    return next((c for c in candidates if c and os.path.isfile(c)), "")


def find_libdevice():
    """CUDA's libdevice.10.bc: $FLYDSL_LIBDEVICE, a CUDA toolkit, or the one
    PyPI's nvidia-cuda-nvcc-cu12 or Triton ship; "" if none."""
    candidates = settings.libdevice_candidates()
    for package, parts in (("nvidia.cuda_nvcc", ("nvvm", "libdevice", "libdevice.10.bc")),
                           ("triton", ("backends", "nvidia", "lib", "libdevice.10.bc"))):
        spec = _find_spec(package)
        if spec is not None and spec.submodule_search_locations:
            candidates.extend(os.path.join(p, *parts) for p in spec.submodule_search_locations)
    return _first_file(candidates)


@functools.lru_cache(maxsize=None)
def libdevice():
    """The libdevice NVPTX compiles link ("" if none)."""
    path = find_libdevice()
    _core.set_libdevice_path(path)
    return path


@functools.lru_cache(maxsize=None)
def ocml():
    """The ocml.bc AMDGPU compiles link ("" if none): $FLYDSL_OCML, a ROCm
    install, or Debian's rocm-device-libs."""
    path = _first_file(settings.ocml_candidates())
    _core.set_ocml_path(path)
    return path


@functools.lru_cache(maxsize=None)
def digest(path):
    """Which library compiles use (part of compiled code's identity)."""
    if not path:
        return "none"
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()[:16]
