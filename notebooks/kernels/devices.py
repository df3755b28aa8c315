"""Arrays where a kernel should run: flyrt launches where its tensors live,
so a notebook picks the GPU as a user would, by putting torch tensors on
`cuda`. numpy <-> torch keeps flyrt's FP8 and bfloat16 tags (uint8 / uint16
numpy arrays) as torch's own dtypes."""

import numpy as np

from flyrt import fp8
from flyrt.core.host_arrays import host_view


def cuda(array):
    """A CUDA copy of `array` (a torch tensor of the same dtype and shape)."""
    import torch  # only where tensors go to a GPU: numpy alone runs on the CPU backend

    array = np.asarray(array)
    fmt = fp8.format_of(array)
    if fmt is not None:
        as_torch = {"e4m3fnuz": torch.float8_e4m3fnuz, "e4m3fn": torch.float8_e4m3fn}[fmt.name]
        return torch.from_numpy(np.ascontiguousarray(array.view(np.uint8))).cuda().view(as_torch)
    if (array.dtype.metadata or {}).get("flyrt_dtype") == "bfloat16":
        return torch.from_numpy(np.ascontiguousarray(array.view(np.int16))).cuda().view(torch.bfloat16)
    return torch.from_numpy(np.ascontiguousarray(array)).cuda()


def host(tensor):
    """A torch tensor's values as numpy (copied from a GPU), tagged as flyrt
    tags FP8 and bfloat16."""
    return host_view(tensor.detach().cpu())


def on(device, case):
    """`case` (a dict of numpy arrays and plain values) with its arrays on
    `device`: as it is for "cpu", torch CUDA tensors for "cuda"."""
    if device == "cpu":
        return case
    return {name: cuda(value) if isinstance(value, np.ndarray) else value for name, value in case.items()}
