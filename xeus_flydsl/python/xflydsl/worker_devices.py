"""Which GPU a pytest-xdist worker's kernels see: worker gwN gets the Nth
device, through CUDA_VISIBLE_DEVICES and HIP_VISIBLE_DEVICES, which the
kernels it starts inherit.

The policy for more workers than GPUs: an error before any worker starts (two
workers on one GPU would time each other's kernels and share its memory
unasked). Sharing is asked for by naming a GPU more than once
(--xflydsl-gpus 0,0: two workers on GPU 0). With no GPU every worker runs on
the CPU target.
"""

import os
import shutil
import subprocess


class TooManyWorkers(ValueError):
    pass


def visible_devices():
    """The GPUs this process may use, as names its children can be given:
    what CUDA_VISIBLE_DEVICES (or HIP_VISIBLE_DEVICES) lists, else one per
    GPU `nvidia-smi -L` lists, else none (an AMD host names its GPUs in
    HIP_VISIBLE_DEVICES, or passes --xflydsl-gpus)."""
    for variable in ("CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES"):
        listed = os.environ.get(variable)
        if listed is not None:
            return [d.strip() for d in listed.split(",") if d.strip() and d.strip() != "-1"]
    if shutil.which("nvidia-smi"):
        try:
            done = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=60)
        except (OSError, subprocess.TimeoutExpired):
            return []  # a driver that does not answer: no GPU to give out
        if done.returncode == 0:
            return [str(i) for i, _ in enumerate(l for l in done.stdout.splitlines() if l.startswith("GPU "))]
    return []


def check_workers(workers, devices):
    """Raises TooManyWorkers when `workers` would not each get a GPU of `devices`."""
    if devices and workers > len(devices):
        raise TooManyWorkers(f"{workers} workers for {len(devices)} GPUs ({', '.join(devices)}): each worker takes "
                             f"one GPU; run with -n {len(devices)} or fewer, or name a GPU once per worker that "
                             f"shares it (--xflydsl-gpus {','.join([devices[0]] * workers)})")


def pin(worker_index, devices):
    """Sets this process's visible GPU to the worker's own; returns it (None: no GPU)."""
    if not devices:
        return None
    device = devices[worker_index]
    os.environ["CUDA_VISIBLE_DEVICES"] = os.environ["HIP_VISIBLE_DEVICES"] = device
    return device
