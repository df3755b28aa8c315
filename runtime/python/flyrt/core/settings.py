"""What the environment and the ``set_*`` calls choose for flyrt: every
FLYDSL_* variable (and FlyDSL's own where flyrt honours them) is read here,
when it is first needed, never at import, so a bad value is an error at the
line that first depends on it. One module, so that a newcomer finds every
knob in one place; it imports nothing of flyrt.

Changing a setting that changes what compiles (the CPU's warp size,
compile-only mode) tells the listeners (``on_change``): the launcher registry
drops compiled artifacts then, without this module knowing launchers.
"""

import glob
import os

_listeners = []


def on_change(listener):
    """Calls ``listener(name)`` after a setting that changes what compiles
    changed."""
    _listeners.append(listener)


def changed(name):
    """Tells the listeners that setting `name` changed; the module that owns
    the setting's effect calls it."""
    for listener in _listeners:
        listener(name)


# -- targets ------------------------------------------------------------------------


def target_name():
    """FLYDSL_TARGET: auto (default), cpu, cuda or hip."""
    return os.environ.get("FLYDSL_TARGET", "auto")


def compile_only_requested():
    """FLYDSL_COMPILE_ONLY=1 (not FlyDSL's own COMPILE_ONLY: flydsl_adapter
    sets that for FlyDSL's kernels while flyrt's run on this machine)."""
    return os.environ.get("FLYDSL_COMPILE_ONLY", "0") not in ("", "0")


def gpu_arch():
    """FLYDSL_ARCH, or FlyDSL's own ARCH when it names a GPU (ARCH often
    names the host's, x86_64); None if neither does."""
    for variable in ("FLYDSL_ARCH", "ARCH"):
        value = os.environ.get(variable, "")
        if value.lower().startswith(("gfx", "sm_")):
            return value
    return None


_cpu_warp_size = None  # None: as FLYDSL_CPU_WARP_SIZE says, read on first use


def cpu_warp_size():
    """The CPU target's warp size: set_cpu_warp_size's, else
    FLYDSL_CPU_WARP_SIZE (32 or 64; default 32)."""
    global _cpu_warp_size
    if _cpu_warp_size is None:
        text = os.environ.get("FLYDSL_CPU_WARP_SIZE", "32").strip()
        if text not in ("32", "64"):
            raise ValueError(f"FLYDSL_CPU_WARP_SIZE={text!r}: the CPU target's warp size is 32 or 64")
        _cpu_warp_size = int(text)
    return _cpu_warp_size


def set_cpu_warp_size(size):
    """Chooses the CPU target's warp size (32 or 64); compiled artifacts are
    dropped on a change."""
    global _cpu_warp_size
    if size not in (32, 64):
        raise ValueError("the CPU target's warp size is 32 or 64")
    if size != cpu_warp_size():
        _cpu_warp_size = size
        changed("cpu_warp_size")


def interpret_requested():
    """FLYDSL_INTERPRET=1: launchers run interpreted."""
    return os.environ.get("FLYDSL_INTERPRET", "")[:1] not in ("", "0")


def libdevice_candidates():
    """Where CUDA's libdevice may be, as the environment names it:
    FLYDSL_LIBDEVICE first, then the CUDA toolkits of CUDA_HOME, CUDA_PATH
    and /usr/local/cuda."""
    found = [os.environ.get("FLYDSL_LIBDEVICE", "")]
    for root in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"):
        if root:
            found.append(os.path.join(root, "nvvm", "libdevice", "libdevice.10.bc"))
    return found


def nvjitlink_candidates():
    """Where NVIDIA's nvJitLink may be, when FLYDSL_NVJITLINK asks for it
    ("1": found in the CUDA toolkits of CUDA_HOME, CUDA_PATH and
    /usr/local/cuda, or a package; else the library's path). None when it is
    unset, "", "0" or "none": PTX goes to the driver to compile, which was as
    fast on the H200 (docs/nvidia.md)."""
    chosen = os.environ.get("FLYDSL_NVJITLINK", "")
    if chosen.lower() in ("", "none", "0"):
        return None
    found = [] if chosen == "1" else [chosen]
    for root in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"):
        if root:
            found.extend(sorted(glob.glob(os.path.join(root, "lib64", "libnvJitLink.so.*")), reverse=True))
    return found


def ocml_candidates():
    """Where ROCm's ocml.bc may be: FLYDSL_OCML first, then the ROCm of
    ROCM_PATH and /opt/rocm, then Debian's and Ubuntu's rocm-device-libs."""
    found = [os.environ.get("FLYDSL_OCML", "")]
    for root in (os.environ.get("ROCM_PATH"), "/opt/rocm"):
        if root:
            found.append(os.path.join(root, "amdgcn", "bitcode", "ocml.bc"))
    found.extend(sorted(glob.glob("/usr/lib/*/amdgcn/bitcode/ocml.bc")))
    return found


# -- errors -------------------------------------------------------------------------


def full_traceback_requested():
    """FLYDSL_FULL_TRACEBACK=1: errors keep flyrt's own frames."""
    return os.environ.get("FLYDSL_FULL_TRACEBACK", "")[:1] not in ("", "0")


# -- the disk cache -----------------------------------------------------------------


def disk_cache_enabled():
    """FLYDSL_RUNTIME_ENABLE_CACHE (FlyDSL's): on unless 0, false, no, off."""
    return os.environ.get("FLYDSL_RUNTIME_ENABLE_CACHE", "1").lower() not in ("0", "false", "no", "off")


def disk_cache_directory():
    """FLYDSL_RUNTIME_CACHE_DIR (FlyDSL's), else ~/.cache/flyrt."""
    return os.environ.get("FLYDSL_RUNTIME_CACHE_DIR") or os.path.join(os.path.expanduser("~"), ".cache", "flyrt")


def disk_cache_max_bytes_text():
    """FLYDSL_RUNTIME_CACHE_MAX_BYTES as given ("" if unset): disk_cache
    parses it, and warns about a value that is no size."""
    return os.environ.get("FLYDSL_RUNTIME_CACHE_MAX_BYTES", "")


def disk_cache_shared():
    """FLYDSL_RUNTIME_CACHE_SHARED=1: a cache directory others may write is used."""
    return os.environ.get("FLYDSL_RUNTIME_CACHE_SHARED", "0").lower() in ("1", "true", "yes", "on")


def disk_cache_key():
    """FLYDSL_RUNTIME_CACHE_KEY: the signing key itself, or None."""
    return os.environ.get("FLYDSL_RUNTIME_CACHE_KEY") or None


def disk_cache_key_file():
    """FLYDSL_RUNTIME_CACHE_KEY_FILE: a file holding the signing key, or None."""
    return os.environ.get("FLYDSL_RUNTIME_CACHE_KEY_FILE") or None
