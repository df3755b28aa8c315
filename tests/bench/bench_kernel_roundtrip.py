"""Kernel start-up and trivial-cell round trip: xflydsl next to its peers.

Starts each kernel with the same jupyter_client harness, in one run:
xflydsl, ipykernel (`python3`) and xeus-python's own kernel (`xpython`, from
the xeus-python wheel). Prints medians and the ratios to ipykernel. Never
fails on time: it measures.

    .venv/bin/python tests/bench/bench_kernel_roundtrip.py [--starts N] [--cells N]
"""

import argparse
import os
import statistics
import time

from jupyter_client.manager import KernelManager

KERNELS = {"xflydsl": "xflydsl", "ipykernel": "python3", "xeus-python": "xpython"}


def time_start(kernel_name):
    """Seconds from launching the process to the kernel answering kernel_info."""
    km = KernelManager(kernel_name=kernel_name)
    begin = time.perf_counter()
    km.start_kernel()
    kc = km.client()
    kc.start_channels()
    kc.wait_for_ready(timeout=60)
    elapsed = time.perf_counter() - begin
    return elapsed, km, kc


def time_round_trips(kc, cells):
    """Seconds per trivial cell: execute_request sent to reply and idle seen."""
    kc.execute_interactive("x = 0", output_hook=lambda msg: None, timeout=60)  # warm
    samples = []
    for _ in range(cells):
        begin = time.perf_counter()
        kc.execute_interactive("x += 1", output_hook=lambda msg: None, timeout=60)
        samples.append(time.perf_counter() - begin)
    return samples


def measure(kernel_name, starts, cells):
    start_samples = []
    for i in range(starts):
        elapsed, km, kc = time_start(kernel_name)
        start_samples.append(elapsed)
        if i < starts - 1:
            kc.stop_channels()
            km.shutdown_kernel(now=True)
    round_trips = time_round_trips(kc, cells)
    kc.stop_channels()
    km.shutdown_kernel(now=True)
    return statistics.median(start_samples), statistics.median(round_trips)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--starts", type=int, default=5, help="kernel starts per kernel")
    parser.add_argument("--cells", type=int, default=200, help="trivial cells per kernel")
    args = parser.parse_args()
    os.environ.setdefault("PYDEVD_DISABLE_FILE_VALIDATION", "1")

    results = {label: measure(name, args.starts, args.cells) for label, name in KERNELS.items()}
    base_start, base_trip = results["ipykernel"]
    print(f"median of {args.starts} starts and {args.cells} trivial cells per kernel\n")
    print(f"{'kernel':<12} {'start (s)':>10} {'vs ipykernel':>13} {'round trip (ms)':>16} {'vs ipykernel':>13}")
    for label, (start, trip) in results.items():
        print(f"{label:<12} {start:>10.3f} {start / base_start:>12.2f}x "
              f"{trip * 1e3:>16.2f} {trip / base_trip:>12.2f}x")


if __name__ == "__main__":
    main()
