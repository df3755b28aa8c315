"""Where launchers run. By default each call picks by its tensors: CUDA
tensors run on the cuda target (the NVIDIA GPU they are on), ROCm tensors on
the hip target (AMD), host arrays on the CPU. A choice for every launcher
(``FLYDSL_TARGET=auto|cpu|cuda|hip``, read when the first launcher is made,
or ``flyrt.set_target``)
or for one (``@flyc.jit(target=...)``, ``launcher.set_target(...)``)
overrides that. The target and the device's architecture are part of every
compiled artifact's key, in memory and on disk, so switching never runs code
compiled for another.

Compile-only mode (``FLYDSL_COMPILE_ONLY=1`` with ``FLYDSL_ARCH=gfx942`` or
``sm_90``, as FlyDSL's ``COMPILE_ONLY=1 ARCH=gfx942``, whose variables flyrt
leaves to FlyDSL but for a GPU-naming ``ARCH``; or
``flyrt.set_compile_only("gfx942")``) compiles every launcher call for that
GPU and runs nothing: host arrays stand for device tensors, and no GPU or
driver is needed.
"""

import functools

from .. import _core
from ..core import settings
from . import cuda, hip

_CODES = _core.codes.targets  # key codes, by name
AUTO, CPU, CUDA, HIP = (_CODES[name] for name in ("auto", "cpu", "cuda", "hip"))
NAMES = {code: name for name, code in _CODES.items()}
_compile_only_arch = None
_chosen = False  # whether set_target or set_compile_only has chosen (else the environment does)
_default = "auto"  # the name set_target was last given


def code_of(name):
    """The key code of a target name; ValueError for one flyrt lacks."""
    key = str(name).lower()
    if key not in _CODES:
        raise ValueError(f"unknown target {name!r}: expected one of auto, cpu, cuda, hip")
    return _CODES[key]


def set_target(name):
    """Chooses the target of every launcher that has no choice of its own:
    "auto" (by the tensors), "cpu", "cuda" or "hip"."""
    global _chosen, _default
    _core.set_default_target(code_of(name))
    _chosen, _default = True, str(name).lower()


def default_name():
    """The target of launchers with no choice of their own: "auto", "cpu", "cuda" or "hip"."""
    follow_environment()
    return _default


def follow_environment():
    """FLYDSL_TARGET and FLYDSL_COMPILE_ONLY, applied when the first launcher
    is made (not at import, so a bad value is an error at the line that made
    it) unless set_target or set_compile_only chose before."""
    if _chosen:
        return
    try:
        set_target(settings.target_name())
    except ValueError as problem:
        raise ValueError(f"FLYDSL_TARGET={settings.target_name()!r}: {problem}") from None
    if settings.compile_only_requested():
        try:
            set_compile_only(settings.gpu_arch() or "gfx942")
        except ValueError as problem:
            raise ValueError(f"FLYDSL_COMPILE_ONLY: {problem}") from None


def set_compile_only(arch):
    """Compile-only mode for GPU architecture `arch` ("gfx942", "sm_90"), or
    off (None). Launcher calls then compile for `arch` and run nothing.
    Every launcher's compiled artifacts are dropped on a change, so no
    artifact made for one mode or architecture serves another."""
    global _compile_only_arch
    if arch is not None:
        code = code_of_arch(arch)
        description(code, 0, 32, arch)  # an unknown architecture is an error now, not at the first call
        set_target(NAMES[code])
    elif _compile_only_arch is not None:
        set_target(settings.target_name())
    changes = arch != _compile_only_arch
    _compile_only_arch = arch
    _core.set_compile_only(arch is not None)
    if changes:
        settings.changed("compile_only")


def compile_only_arch():
    """The architecture compile-only mode compiles for, or None."""
    return _compile_only_arch


def code_of_arch(arch):
    """The target of a GPU architecture's name: gfx* is hip, sm_* cuda."""
    name = str(arch).lower()
    if name.startswith("gfx"):
        return HIP
    if name.startswith(("sm_", "compute_")):
        return CUDA
    raise ValueError(f"{arch!r} names no GPU architecture: expected one like 'gfx942' (AMD) or 'sm_90' (NVIDIA)")


arch_from_environment = settings.gpu_arch  # flyrt.arch_from_environment, public


@functools.lru_cache(maxsize=None)
def cpu(warp_size):
    return _core.cpu_target(warp_size)


def description(code, device, cpu_warp_size, arch=None):
    """The _core.Target a call's key names: for GPUs, architecture `arch`
    if given, else compile-only mode's, else device `device`'s."""
    if code == CPU:
        return cpu(cpu_warp_size)
    arch = arch or _compile_only_arch
    if code == HIP:
        return hip.arch_target(arch) if arch else hip.target(device)
    return cuda.arch_target(arch) if arch else cuda.target(device)


def where(code, device, target):
    """How messages name a GPU a call runs on, "cuda:0 (sm_90)"; None on the
    CPU (messages leave the CPU unnamed)."""
    if code == CPU:
        return None
    if _compile_only_arch is not None:
        return f"{NAMES[code]} ({target.cpu}, compile-only)"
    return f"{NAMES[code]}:{device} ({target.cpu})"
