"""``do_bench``: how long a callable takes, measured as Triton's
``triton.testing.do_bench`` measures it, on the GPU or on the CPU.

On a GPU each call sits between two events on torch's current stream, and
before it a buffer larger than the L2 is overwritten, so every call reads its
inputs from device memory as a model's layer would (not from a cache the
previous call warmed). On the CPU each call is timed by the wall clock: the
launch runs the grid and returns when it is done. Either way the first call
(a compile) is not timed, the number of calls comes from an estimate (enough
for `warmup` and `rep` milliseconds), and the figures are milliseconds.

Which of the two, when the caller does not say: where the first call's
launches ran. A function whose tensors hide in an object of its own still
launches on the GPU, and timing its asynchronous launches by the wall clock
would measure their host cost, not the kernels.
"""

import sys
import time

import numpy as np

from ..drivers import cuda as cuda_driver
from ..drivers import targets
from ..invalidation import registry

_MODES = ("min", "max", "mean", "median", "all")
_FLUSH_BYTES = 256 << 20  # what Triton flushes with; 4x the H200's 60 MB L2


def summarize(times, quantiles=None, return_mode="mean"):
    """The figure(s) do_bench returns for `times` (milliseconds): the
    `quantiles` (linear interpolation, as torch.quantile; one quantile gives
    a number), else the `return_mode` statistic ("all": every time)."""
    times = np.asarray(times, dtype=np.float64)
    if quantiles is not None:
        found = np.quantile(times, list(quantiles)).tolist()
        return found[0] if len(found) == 1 else found
    if return_mode == "all":
        return times.tolist()
    return float(getattr(np, return_mode)(times))


def _check(quantiles, return_mode):
    if return_mode not in _MODES:
        raise ValueError(f"do_bench: return_mode must be one of {', '.join(_MODES)}, not {return_mode!r}")
    if quantiles is not None and not all(0 <= q <= 1 for q in quantiles):
        raise ValueError(f"do_bench: quantiles lie between 0 and 1, not {list(quantiles)}")


def default_device():
    """"gpu" when launchers run on a GPU by default (the target is cuda or
    hip, or auto with a GPU torch can reach), else "cpu"."""
    name = targets.default_name()
    if name in ("cuda", "hip"):
        return "gpu"
    torch = sys.modules.get("torch")
    return "gpu" if name == "auto" and torch is not None and torch.cuda.is_available() else "cpu"


def launched_device(ran):
    """"gpu" when any of the launcher artifacts in `ran` ([(key, artifact)],
    registry.ran_since) runs on a GPU, "cpu" when they all run on the CPU,
    None when no flyrt launcher ran (a torch or Triton call, say)."""
    if not ran:
        return None
    return "gpu" if any(key[1] != targets.CPU for key, _ in ran) else "cpu"


def do_bench(fn, warmup=25, rep=100, grad_to_none=None, quantiles=None, return_mode="mean", device=None):
    """Milliseconds per call of `fn()`: `warmup` ms of calls untimed, then
    `rep` ms of timed calls, summarized as `quantiles` or `return_mode`
    ("min", "max", "mean", "median", "all"). `device`: "gpu" (events on
    torch's current stream, the L2 flushed before each call), "cpu" (the
    wall clock), or None: where the first call's flyrt launches ran, and
    without any, default_device(). `grad_to_none`: tensors whose .grad is
    cleared before each call."""
    _check(quantiles, return_mode)
    if device not in (None, "gpu", "cuda", "hip", "cpu"):
        raise ValueError(f"do_bench: device is 'gpu', 'cpu' or None, not {device!r}")
    if device not in (None, "cpu"):
        torch_gpu()  # says what a GPU timing needs before anything runs
    before = registry.artifact_calls() if device is None else None
    fn()  # compiles; not timed
    if device is None:
        device = launched_device(registry.ran_since(before)) or default_device()
    if device == "cpu":
        times = _cpu_times(fn, warmup, rep, grad_to_none)
    else:
        times = _gpu_times(fn, warmup, rep, grad_to_none)
    return summarize(times, quantiles, return_mode)


def _clear_grads(tensors):
    for tensor in tensors or ():
        tensor.grad = None


def _counts(estimate_ms, warmup, rep):
    estimate_ms = max(estimate_ms, 1e-6)
    return max(1, int(warmup / estimate_ms)), max(1, int(rep / estimate_ms))


def _cpu_times(fn, warmup, rep, grad_to_none):
    begin = time.perf_counter()
    for _ in range(5):
        fn()
    warm_calls, timed_calls = _counts((time.perf_counter() - begin) * 200, warmup, rep)
    for _ in range(warm_calls):
        fn()
    times = []
    for _ in range(timed_calls):
        _clear_grads(grad_to_none)
        begin = time.perf_counter()
        fn()
        times.append((time.perf_counter() - begin) * 1e3)
    return times


def torch_gpu():
    torch = sys.modules.get("torch")
    if torch is None or not torch.cuda.is_available():
        raise RuntimeError("do_bench(device='gpu') times by torch's CUDA/HIP events: torch with a GPU is needed "
                           "(device='cpu' times host work)")
    return torch


def _wait(torch):
    """Waits for the current device's work; an interrupt ends the wait."""
    cuda_driver.synchronize(device=torch.cuda.current_device())


def _gpu_times(fn, warmup, rep, grad_to_none):
    torch = torch_gpu()
    properties = torch.cuda.get_device_properties(torch.cuda.current_device())
    flush = torch.empty(max(_FLUSH_BYTES, 4 * getattr(properties, "L2_cache_size", 0)) // 4, dtype=torch.int32,
                        device="cuda")  # as Triton's: its zero_() is the same fill kernel
    _wait(torch)  # the first, untimed call (do_bench's)
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(5):
        flush.zero_()
        fn()
    end.record()
    _wait(torch)
    warm_calls, timed_calls = _counts(start.elapsed_time(end) / 5, warmup, rep)
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(timed_calls)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(timed_calls)]
    for _ in range(warm_calls):
        fn()
    for begin, finish in zip(starts, ends):
        _clear_grads(grad_to_none)
        flush.zero_()
        begin.record()
        fn()
        finish.record()
    _wait(torch)
    return [begin.elapsed_time(finish) for begin, finish in zip(starts, ends)]
