"""Measuring kernels, with Triton's names: ``do_bench``, ``perf_report`` and
``Benchmark``; and this device's measured limits, ``device_limits`` and
``roofline``."""

from .tuning.device_limits import DeviceLimits, device_limits
from .tuning.reports import Benchmark, Mark, perf_report, roofline
from .tuning.timing import do_bench

__all__ = ["Benchmark", "DeviceLimits", "Mark", "device_limits", "do_bench", "perf_report", "roofline"]
