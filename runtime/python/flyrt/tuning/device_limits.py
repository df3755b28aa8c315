"""What this device can do, measured here: its copy bandwidth and its matrix
rate, the roofs a kernel's figures are read against.

Measured once per device and kept, in memory and in the disk cache (sealed,
as its other records): on a GPU by torch (a 1 GiB device-to-device copy, an
8192-cube f16 matmul), on the CPU by numpy (a 256 MB copy, a 2048-cube f32
matmul through its BLAS), each timed by do_bench. Bytes count what is read
and what is written.
"""

import hashlib
import os
import sys
from collections import namedtuple

import numpy as np

from ..runtime import disk_cache, sealed_json
from . import timing

DeviceLimits = namedtuple("DeviceLimits", "device copy_bytes_per_second matrix_flops_per_second matrix")
_measured = {}  # device name -> DeviceLimits


def _gpu_name():
    torch = sys.modules["torch"]
    return torch.cuda.get_device_name(torch.cuda.current_device())


def _cpu_name():
    model = "this CPU"
    try:
        with open("/proc/cpuinfo") as f:
            model = next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), model)
    except OSError:
        pass
    return f"{model}, {os.cpu_count()} threads"


def _measure_gpu(name):
    torch = sys.modules["torch"]
    source = torch.empty(1 << 30, dtype=torch.int8, device="cuda")
    target = torch.empty_like(source)
    copy_ms = timing.do_bench(lambda: target.copy_(source), device="gpu", return_mode="median")
    n = 8192
    a, b = (torch.randn(n, n, device="cuda", dtype=torch.float16) for _ in range(2))
    matmul_ms = timing.do_bench(lambda: torch.matmul(a, b), device="gpu", return_mode="median")
    return DeviceLimits(name, 2 * source.numel() / copy_ms * 1e3, 2 * n**3 / matmul_ms * 1e3, "f16 torch.matmul")


def _measure_cpu(name):
    source = np.ones(64 << 20, np.float32)
    target = np.empty_like(source)
    copy_ms = timing.do_bench(lambda: np.copyto(target, source), warmup=5, rep=50, device="cpu",
                              return_mode="median")
    n = 2048
    a, b = (np.ones((n, n), np.float32) for _ in range(2))
    matmul_ms = timing.do_bench(lambda: a @ b, warmup=5, rep=50, device="cpu", return_mode="median")
    return DeviceLimits(name, 2 * source.nbytes / copy_ms * 1e3, 2 * n**3 / matmul_ms * 1e3, "f32 numpy matmul")


def _path(name):
    digest = hashlib.sha256(name.encode()).hexdigest()
    return os.path.join(disk_cache.directory(), "limits", digest[:2], digest + ".json")


def _stored(name):
    if not disk_cache.enabled():
        return None
    for entry in sealed_json.read(_path(name), "device-limits file"):
        try:
            found = DeviceLimits(**entry)
        except TypeError:
            continue
        if found.device == name and all(isinstance(v, (int, float)) and v > 0 for v in found[1:3]):
            return found
    return None


def device_limits(device=None):
    """The DeviceLimits of the GPU torch's current device ("gpu") or of the
    CPU ("cpu"); None: do_bench's default device."""
    device = timing.default_device() if device is None else device
    if device in ("gpu", "cuda", "hip"):
        timing.torch_gpu()
        name, measure = _gpu_name(), _measure_gpu
    elif device == "cpu":
        name, measure = _cpu_name(), _measure_cpu
    else:
        raise ValueError(f"device_limits: device is 'gpu', 'cpu' or None, not {device!r}")
    found = _measured.get(name) or _stored(name)
    if found is None:
        found = measure(name)
        if disk_cache.enabled():
            sealed_json.write(_path(name), [found._asdict()], "device-limits file")
    _measured[name] = found
    return found
