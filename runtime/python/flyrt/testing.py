"""Measuring kernels, with Triton's names: ``flyrt.testing.do_bench``."""

from .tuning.timing import do_bench

__all__ = ["do_bench"]
