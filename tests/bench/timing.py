"""Timing helpers the benchmarks share (they print; nothing here asserts on time)."""

import contextlib
import os
import statistics
import time

os.environ.setdefault("FLYDSL_RUNTIME_ENABLE_CACHE", "0")  # cold compiles: no earlier run's code from disk


def mode_line():
    """Which bounds-check mode this run's kernels compile in: every benchmark prints it first."""
    import flyrt

    if flyrt.bounds_checks():
        return "mode: bounds checks on (the default; FLYDSL_DEBUG_BOUNDS=0 is the fast mode)"
    return "mode: fast (bounds checks off)"


@contextlib.contextmanager
def bounds_checks(on):
    """Kernels compiled inside check bounds (True) or run in fast mode (False)."""
    import flyrt

    flyrt.set_bounds_checks(on)
    try:
        yield
    finally:
        flyrt.set_bounds_checks(None)


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


def per_call_interleaved(calls_by_name, *args, calls=100_000, rounds=9, before=None):
    """Fastest seconds per call of each fn(*args), in blocks of `calls` taken
    in turn, round after round, so that machine noise hits them alike;
    before[name]() runs ahead of each of that one's blocks (a mode switch),
    then one untimed call."""
    before = before or {}
    best = dict.fromkeys(calls_by_name, float("inf"))
    for _ in range(rounds):
        for name, fn in calls_by_name.items():
            before.get(name, lambda: None)()
            fn(*args)
            begin = time.perf_counter()
            for _ in range(calls):
                fn(*args)
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
