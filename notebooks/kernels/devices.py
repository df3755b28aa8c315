"""Arrays where a kernel should run: flyrt launches where its tensors live,
so a notebook picks the GPU as a user would, by putting torch tensors on
`cuda`. numpy <-> torch keeps flyrt's FP8 and bfloat16 tags (uint8 / uint16
numpy arrays) as torch's own dtypes."""

import numpy as np

from flyrt import dtypes, fp8


def _torch():
    import torch  # only where tensors go to a GPU: numpy alone runs on the CPU backend

    return torch


def _fp8_dtypes():
    torch = _torch()
    return {"e4m3fnuz": torch.float8_e4m3fnuz, "e4m3fn": torch.float8_e4m3fn}


def cuda(array):
    """A CUDA copy of `array` (a torch tensor of the same dtype and shape)."""
    torch = _torch()
    array = np.asarray(array)
    fmt = fp8.format_of(array)
    if fmt is not None:
        return torch.from_numpy(np.ascontiguousarray(array.view(np.uint8))).cuda().view(_fp8_dtypes()[fmt.name])
    if (array.dtype.metadata or {}).get("flyrt_dtype") == "bfloat16":
        return torch.from_numpy(np.ascontiguousarray(array.view(np.int16))).cuda().view(torch.bfloat16)
    return torch.from_numpy(np.ascontiguousarray(array)).cuda()


def host(tensor):
    """A numpy copy of a torch tensor, tagged as flyrt tags FP8 and bfloat16."""
    torch = _torch()
    tensor = tensor.detach().cpu()
    for name, dtype in _fp8_dtypes().items():
        if tensor.dtype == dtype:
            return fp8.as_fp8(tensor.view(torch.uint8).numpy(), name)
    if tensor.dtype == torch.bfloat16:
        return tensor.view(torch.int16).numpy().view(dtypes.BFLOAT16_STORAGE)
    return tensor.numpy()


def on(device, case):
    """`case` (a dict of numpy arrays and plain values) with its arrays on
    `device`: as it is for "cpu", torch CUDA tensors for "cuda"."""
    if device == "cpu":
        return case
    return {name: cuda(value) if isinstance(value, np.ndarray) else value for name, value in case.items()}
