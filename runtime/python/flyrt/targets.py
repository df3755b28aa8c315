"""Where launchers run. By default each call picks by its tensors: CUDA
tensors run on the cuda target (the GPU they are on), host arrays on the
CPU. A choice for every launcher (``FLYDSL_TARGET=auto|cpu|cuda|hip``, read
at import, or ``flyrt.set_target``) or for one (``@flyc.jit(target=...)``,
``launcher.set_target(...)``) overrides that. The target and the device's
architecture are part of every compiled artifact's key, in memory and on
disk, so switching never runs code compiled for another.
"""

import functools

from . import _core

AUTO, CPU, CUDA = -1, 0, 1  # key codes: dispatcher.hpp's target_choice
_CODES = {"auto": AUTO, "cpu": CPU, "cuda": CUDA}
NAMES = {code: name for name, code in _CODES.items()}


def code_of(name):
    """The key code of a target name; ValueError for one flyrt lacks."""
    key = str(name).lower()
    if key == "hip":
        raise ValueError("the hip target (AMD GPUs) is not in this build of flyrt yet; use auto, cpu or cuda")
    if key not in _CODES:
        raise ValueError(f"unknown target {name!r}: expected one of auto, cpu, cuda, hip")
    return _CODES[key]


def set_target(name):
    """Chooses the target of every launcher that has no choice of its own:
    "auto" (by the tensors), "cpu" or "cuda"."""
    _core.set_default_target(code_of(name))


@functools.lru_cache(maxsize=None)
def cpu(warp_size):
    return _core.cpu_target(warp_size)


def description(code, device, cpu_warp_size):
    """The _core.Target a call's key names."""
    if code == CPU:
        return cpu(cpu_warp_size)
    from .drivers import cuda

    return cuda.target(device)


def where(code, device, target):
    """How messages name a GPU a call runs on, "cuda:0 (sm_90)"; None on the
    CPU (messages leave the CPU unnamed)."""
    return None if code == CPU else f"{NAMES[code]}:{device} ({target.cpu})"
