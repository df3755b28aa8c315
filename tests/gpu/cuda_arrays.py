"""numpy <-> torch CUDA tensors for the GPU tests, keeping flyrt's FP8 and
bfloat16 tags (uint8 / uint16 numpy arrays) as torch's own dtypes."""

import numpy as np
import torch

from flyrt import dtypes, fp8

_FP8 = {"e4m3fnuz": torch.float8_e4m3fnuz, "e4m3fn": torch.float8_e4m3fn}


def cuda(array):
    """A CUDA copy of `array` (a torch tensor of the same dtype and shape)."""
    array = np.asarray(array)
    fmt = fp8.format_of(array)
    if fmt is not None:
        return torch.from_numpy(np.ascontiguousarray(array.view(np.uint8))).cuda().view(_FP8[fmt.name])
    if (array.dtype.metadata or {}).get("flyrt_dtype") == "bfloat16":
        return torch.from_numpy(np.ascontiguousarray(array.view(np.int16))).cuda().view(torch.bfloat16)
    return torch.from_numpy(np.ascontiguousarray(array)).cuda()


def host(tensor):
    """A numpy copy of a CUDA tensor, tagged as flyrt tags FP8 and bfloat16."""
    tensor = tensor.detach().cpu()
    for name, dtype in _FP8.items():
        if tensor.dtype == dtype:
            return fp8.as_fp8(tensor.view(torch.uint8).numpy(), name)
    if tensor.dtype == torch.bfloat16:
        return tensor.view(torch.int16).numpy().view(dtypes.BFLOAT16_STORAGE)
    return tensor.numpy()


def on_gpu(launcher, *args, **kwargs):
    """Runs `launcher` with every numpy array argument copied to the GPU;
    returns the arguments as numpy arrays afterwards (outputs included)."""
    moved = [cuda(a) if isinstance(a, np.ndarray) else a for a in args]
    launcher(*moved, **kwargs)
    torch.cuda.synchronize()
    return [host(m) if isinstance(m, torch.Tensor) else m for m in moved]
