"""Timing and tuning: do_bench, the autotuner and what it keeps."""
