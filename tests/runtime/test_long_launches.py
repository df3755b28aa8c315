"""A long CPU launch releases the GIL while its native code runs, and an
interrupt stops it within a fraction of a second, with everything intact."""

import _thread
import threading
import time

import numpy as np
import pytest

import flyrt.compiler as flyc
import flyrt.expr as fx


@flyc.kernel
def _spin(out: fx.Tensor, rounds: fx.Int32):
    i = fx.block_idx.x * fx.block_dim.x + fx.thread_idx.x
    acc = fx.Float32(0.0)
    for r in range(rounds):
        acc = acc * 0.999 + 1.0
    out[i] = acc


@flyc.jit
def spin(out: fx.Tensor, rounds: fx.Int32):
    _spin(out, rounds).launch(grid=(out.shape[0] // 64,), block=(64,))


def seconds_of(rounds, out):
    start = time.perf_counter()
    spin(out, rounds)
    return time.perf_counter() - start


def long_launch_rounds(out, seconds):
    """Rounds for a launch of about `seconds` here."""
    rounds = 1000
    while seconds_of(rounds, out) < 0.05:
        rounds *= 4
    return int(rounds * seconds / seconds_of(rounds, out))


def test_other_python_threads_run_during_a_launch():
    out = np.zeros(64 * 64, np.float32)
    rounds = long_launch_rounds(out, 1.0)
    ticks, stop = [], threading.Event()

    def ticker():
        while not stop.is_set():
            ticks.append(time.perf_counter())
            time.sleep(0.01)

    thread = threading.Thread(target=ticker)
    thread.start()
    begin = time.perf_counter()
    spin(out, rounds)
    end = time.perf_counter()
    stop.set()
    thread.join()
    during = [t for t in ticks if begin < t < end]
    # Holding the GIL, the launch would leave the ticker one tick at most; a loaded machine (two test
    # workers on two cores) gives it far fewer than the 100 a second of an idle one, not none.
    assert len(during) >= 10, f"{len(during)} ticks in {end - begin:.2f} s"


def test_an_interrupt_stops_a_long_launch_soon_and_the_launcher_still_works(ctrl_c):
    # A block is never cut short: many small ones, so one is short on many cores too.
    out = np.zeros(64 * 1024, np.float32)
    rounds = long_launch_rounds(out, 10.0)
    timer = threading.Timer(0.5, _thread.interrupt_main)
    start = time.perf_counter()
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        spin(out, rounds)
    stopped_after = time.perf_counter() - start - 0.5
    assert stopped_after < 0.5, f"the launch stopped {stopped_after:.2f} s after the interrupt"
    spin(out, 10)  # nothing lost: the same launcher runs again, right
    np.testing.assert_allclose(out, sum(0.999**k for k in range(10)), rtol=1e-5)
