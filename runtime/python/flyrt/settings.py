"""What the environment chooses for flyrt, read where it is used (the
FLYDSL_* variables, and FlyDSL's own where flyrt honours them). One module,
so that a newcomer finds every knob here; it imports nothing of flyrt."""

import os


def gpu_arch():
    """FLYDSL_ARCH, or FlyDSL's own ARCH when it names a GPU (ARCH often
    names the host's, x86_64); None if neither does."""
    for variable in ("FLYDSL_ARCH", "ARCH"):
        value = os.environ.get(variable, "")
        if value.lower().startswith(("gfx", "sm_")):
            return value
    return None
