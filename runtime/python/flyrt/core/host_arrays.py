"""Host memory: numpy arrays directly, torch CPU tensors and other DLPack
exporters as numpy views (no copies)."""

import sys

import numpy as np

from .. import _core
from . import dtypes, fp8


def host_view(value):
    """A numpy view of a host tensor numpy cannot see directly, or None if
    `value` is not one."""
    torch = _torch()
    if torch is not None and isinstance(value, torch.Tensor):
        if value.device.type != "cpu":
            return None
        formats = {torch.float8_e4m3fnuz: "e4m3fnuz", torch.float8_e4m3fn: "e4m3fn"}
        if value.dtype in formats:
            return fp8.as_fp8(value.detach().view(torch.uint8).numpy(), formats[value.dtype])
        if value.dtype == torch.bfloat16:
            return value.detach().view(torch.int16).numpy().view(dtypes.BFLOAT16_STORAGE)
        return value.detach().numpy()
    if hasattr(value, "__dlpack_device__") and value.__dlpack_device__()[0] == _core.codes.device_types["host"]:
        return np.from_dlpack(value)
    return None


def _torch():
    return sys.modules.get("torch")  # only one the program imported
