"""Timing helpers the benchmarks share (they print; nothing here asserts on time)."""

import os
import statistics
import time

os.environ.setdefault("FLYDSL_RUNTIME_ENABLE_CACHE", "0")  # cold compiles: no earlier run's code from disk


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


def per_call_interleaved(calls_by_name, calls=100_000, rounds=9):
    """Fastest seconds per call of each zero-argument callable, timed in
    alternation (round after round) so that machine noise hits them alike."""
    for fn in calls_by_name.values():
        fn()
    best = {name: float("inf") for name in calls_by_name}
    for _ in range(rounds):
        for name, fn in calls_by_name.items():
            begin = time.perf_counter()
            for _ in range(calls):
                fn()
            best[name] = min(best[name], (time.perf_counter() - begin) / calls)
    return best


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
