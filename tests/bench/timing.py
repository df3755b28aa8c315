"""Timing helpers the benchmarks share (they print; nothing here asserts on time)."""

import statistics
import time


def per_call(fn, *args, calls=200_000, repeats=5):
    """Median seconds per call of fn(*args) in a tight loop (after one warm call)."""
    fn(*args)
    samples = []
    for _ in range(repeats):
        begin = time.perf_counter()
        for _ in range(calls):
            fn(*args)
        samples.append((time.perf_counter() - begin) / calls)
    return statistics.median(samples)


def best_of(fn, *args, repeats=7):
    """Fastest of `repeats` timed calls of fn(*args) (after one warm call)."""
    fn(*args)
    samples = []
    for _ in range(repeats):
        begin = time.perf_counter()
        fn(*args)
        samples.append(time.perf_counter() - begin)
    return min(samples)


def median_time(fn, repeats=200):
    """Median seconds of fn() over `repeats` calls."""
    samples = []
    for _ in range(repeats):
        begin = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - begin)
    return statistics.median(samples)
