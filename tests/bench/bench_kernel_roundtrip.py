"""Kernel start-up and trivial-cell round trip: xflydsl next to its peers.

Starts each kernel with the same jupyter_client harness, in one run:
xflydsl, ipykernel (`python3`) and xeus-python's own kernel (`xpython`, from
the xeus-python wheel). Prints medians and the ratios to ipykernel. The
round trip is measured twice: in a fresh namespace, and after a session's
worth of work (flyrt imported, 20 launchers in 4 user modules compiled and
run; in xflydsl the per-cell check then looks at all of them, where the
peers do nothing). Never fails on time: it measures.

    .venv/bin/python tests/bench/bench_kernel_roundtrip.py [--starts N] [--cells N]
"""

import argparse
import os
import statistics
import time

from jupyter_client.manager import KernelManager
from timing import mode_line  # noqa: E402

os.environ.setdefault("FLYDSL_RUNTIME_ENABLE_CACHE", "0")  # cold compiles: no earlier run's code from disk

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


# A session's worth of work: 4 user modules of 5 launchers each, compiled and run.
LAUNCHER = """
@flyc.kernel
def k{n}(x: fx.Tensor, out: fx.Tensor):
    out[fx.thread_idx.x] = x[fx.thread_idx.x] * {n}.0

@flyc.jit
def l{n}(x: fx.Tensor, out: fx.Tensor):
    k{n}(x, out).launch(block=(4,))
"""
MODULE = "import flyrt.compiler as flyc\nimport flyrt.expr as fx\n" + "".join(LAUNCHER.format(n=n) for n in range(5))
SESSION = f"""
import pathlib, sys, tempfile
import numpy as np
folder = pathlib.Path(tempfile.mkdtemp())
sys.path.insert(0, str(folder))
x, out = np.ones(4, np.float32), np.zeros(4, np.float32)
for m in range(4):
    (folder / f"session_{{m}}.py").write_text({MODULE!r})
    module = __import__(f"session_{{m}}")
    for n in range(5):
        getattr(module, f"l{{n}}")(x, out)
"""


def measure(kernel_name, starts, cells):
    start_samples = []
    for i in range(starts):
        elapsed, km, kc = time_start(kernel_name)
        start_samples.append(elapsed)
        if i < starts - 1:
            kc.stop_channels()
            km.shutdown_kernel(now=True)
    fresh = time_round_trips(kc, cells)
    reply = kc.execute_interactive(SESSION, output_hook=lambda msg: None, timeout=120)
    assert reply["content"]["status"] == "ok", reply["content"]
    working = time_round_trips(kc, cells)
    kc.stop_channels()
    km.shutdown_kernel(now=True)
    return statistics.median(start_samples), statistics.median(fresh), statistics.median(working)


def main():
    print(mode_line())
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--starts", type=int, default=5, help="kernel starts per kernel")
    parser.add_argument("--cells", type=int, default=200, help="trivial cells per kernel")
    args = parser.parse_args()
    os.environ.setdefault("PYDEVD_DISABLE_FILE_VALIDATION", "1")

    results = {label: measure(name, args.starts, args.cells) for label, name in KERNELS.items()}
    base_start, base_trip, base_working = results["ipykernel"]
    print(f"median of {args.starts} starts and {args.cells} trivial cells per kernel\n")
    print(f"{'kernel':<12} {'start (s)':>10} {'vs ipykernel':>13} {'round trip (ms)':>16} {'vs ipykernel':>13} "
          f"{'after 20 launchers (ms)':>24} {'vs ipykernel':>13}")
    for label, (start, trip, working) in results.items():
        print(f"{label:<12} {start:>10.3f} {start / base_start:>12.2f}x {trip * 1e3:>16.2f} "
              f"{trip / base_trip:>12.2f}x {working * 1e3:>24.2f} {working / base_working:>12.2f}x")


if __name__ == "__main__":
    main()
