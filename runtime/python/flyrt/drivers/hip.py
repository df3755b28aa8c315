"""AMD GPUs through ROCm's HIP runtime (flyrt._core opens libamdhip64.so at
run time): device architectures, ROCm tensors from torch (a ROCm build of
torch calls them "cuda" tensors; DLPack says kDLROCM) and any DLPack
exporter of ROCm memory.

A device's architecture comes from torch (``gcnArchName``) when a ROCm
torch is loaded, else from ``FLYDSL_ARCH`` (or FlyDSL's ``ARCH``)."""

import functools
import sys

from .. import _core
from ..core import settings
from . import device_libraries

DEVICE_TYPE = _core.codes.device_types["rocm"]  # DLPack's kDLROCM


def runtime_problem():
    """Why launches cannot run on an AMD GPU here ("" when they can)."""
    return _core.hip_problem()


def arch_target(arch):
    """The amdgpu target of an architecture named like ``gfx942`` (a target
    ID's feature suffixes, ``gfx942:sramecc+:xnack-``, are accepted)."""
    device_libraries.ocml()
    return _core.amdgpu_target(str(arch))


@functools.lru_cache(maxsize=None)
def target(ordinal):
    """The amdgpu target for AMD GPU `ordinal`."""
    return arch_target(device_arch(ordinal))


def device_arch(ordinal):
    torch = sys.modules.get("torch")
    if torch is not None and getattr(torch.version, "hip", None) and torch.cuda.is_available():
        return torch.cuda.get_device_properties(ordinal).gcnArchName
    arch = settings.gpu_arch()
    if arch is None:
        raise RuntimeError(f"the architecture of AMD GPU {ordinal} is unknown: load a ROCm build of torch, or set "
                           "FLYDSL_ARCH (e.g. gfx942)")
    return arch


def is_rocm_torch(torch):
    """Whether `torch` is a ROCm build (its "cuda" tensors are on AMD GPUs)."""
    return bool(getattr(torch.version, "hip", None))
