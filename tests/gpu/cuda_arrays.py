"""numpy <-> torch CUDA tensors for the GPU tests (the notebooks' own
conversions, kernels.devices), and launching on copies."""

import numpy as np
import torch

from kernels.devices import cuda, host

__all__ = ["cuda", "host", "on_gpu"]


def on_gpu(launcher, *args, **kwargs):
    """Runs `launcher` with every numpy array argument copied to the GPU;
    returns the arguments as numpy arrays afterwards (outputs included)."""
    moved = [cuda(a) if isinstance(a, np.ndarray) else a for a in args]
    launcher(*moved, **kwargs)
    torch.cuda.synchronize()
    return [host(m) if isinstance(m, torch.Tensor) else m for m in moved]
