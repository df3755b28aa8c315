"""A block's GPU threads as Python threads, one at a time.

Every GPU thread of a block runs on a Python thread of its own (so a
breakpoint stops one GPU thread, with its own stack, and debuggers list each
by name: "block (0,0,0) thread (5,0,0)"), but only the holder of the baton
runs: the launching thread hands it to each GPU thread in turn, in order of
their block-linear index, and takes it back when that thread reaches a
rendezvous (fx.barrier, a shuffle, fx.mma) or ends. Runs are deterministic.
When every thread waits at the same rendezvous, each gets what all brought
and the next round begins. A rendezvous some threads miss, or reach at
another line, is an error, as is any exception: the parked threads are
unwound, and the error is raised in the launching thread. Worker threads are
kept for the next block and launch.
"""

import ctypes
import functools
import threading

import numpy as np

from .. import _core
from ..core.errors import source_line
from ..core.user_code import user_frame
from . import memory

_POLL = 0.05  # seconds between checks while a GPU thread holds the baton: Ctrl-C is seen that often


class Aborted(BaseException):
    """Unwinds a GPU thread whose launch failed or was interrupted (a
    BaseException, so a kernel's `except Exception` does not swallow it)."""


class DivergenceError(RuntimeError):
    """Part of a block reached a barrier, shuffle or fx.mma that all of it must reach together."""


_IDLE, _READY, _RUNNING, _WAITING, _DONE, _FAILED = range(6)


class GpuThread:
    """What a kernel's ops see of the GPU thread running them."""

    _SPECIAL = {_core.Special.thread_idx: "thread_idx", _core.Special.block_idx: "block_idx",
                _core.Special.block_dim: "block_dim", _core.Special.grid_dim: "grid_dim"}

    def __init__(self, block, thread_idx, worker):
        self.block = block
        self.thread_idx = thread_idx
        self.block_idx = block.block_idx
        self.block_dim = block.block_dim
        self.grid_dim = block.grid_dim
        x, y, z = thread_idx
        self.linear = x + self.block_dim[0] * (y + self.block_dim[1] * z)
        self.worker = worker
        self.name = f"block ({','.join(map(str, block.block_idx))}) thread ({','.join(map(str, thread_idx))})"

    def special(self, which, dim):
        return getattr(self, self._SPECIAL[which])[dim]

    def exchange(self, what, payload):
        """Waits until every thread of the block brought its `payload` to the
        rendezvous `what`; returns all of them, by block-linear index."""
        frame = user_frame()
        site = (what, frame.f_code.co_filename, frame.f_lineno) if frame else (what, None, 0)
        return self.worker.park(site, payload)  # the site is only put into words if threads diverge


class BlockMemory:
    """A block's shared memory: the static arrays in order of allocation
    (each thread's k-th fx.shared is the block's k-th array), and `smem=` bytes."""

    def __init__(self, block_idx, block_dim, grid_dim, smem):
        self.block_idx, self.block_dim, self.grid_dim = block_idx, block_dim, grid_dim
        self.arrays = []
        self.arena = np.zeros(smem, np.uint8)
        self.allocated = {}  # GPU thread -> how many fx.shared it called

    def shared_array(self, thread, dtype, size_bytes):
        k = self.allocated.get(thread.linear, 0)
        self.allocated[thread.linear] = k + 1
        count = size_bytes // max(1, dtype.bits // 8)
        if k == len(self.arrays):
            self.arrays.append((dtype, count, memory.shared_array(dtype, count, "shared")))
        made_dtype, made_count, buffer = self.arrays[k]
        if (made_dtype, made_count) != (dtype, count):
            raise DivergenceError(f"thread {thread.name}'s shared array #{k + 1} is {count} x {dtype.name}, but "
                                  f"thread 0 made it {made_count} x {made_dtype.name}: threads allocate shared "
                                  "memory in different orders")
        return buffer

    def dynamic_shared(self, dtype):
        itemsize = max(1, dtype.bits // 8)
        usable = len(self.arena) - len(self.arena) % itemsize
        return memory.Buffer(self.arena[:usable].view(dtype.numpy_dtype), 0, "dynamic_shared")


class Worker(threading.Thread):
    """A Python thread that runs GPU threads, one job at a time, when given the baton."""

    def __init__(self, pool, index):
        super().__init__(name=f"flyrt interpreter {index} (idle)", daemon=True)
        self.pool = pool
        self.resume = threading.Event()
        self.job = None
        self.gpu_thread = None
        self.state = _IDLE
        self.parked = False  # inside park(): resumable only with results or an abort
        self.abort = False
        self.error = None

    def run(self):
        while True:
            try:
                if not self._serve():
                    return
            except Aborted:
                pass  # an interrupt that came as its job ended: nothing left to unwind

    def _serve(self):
        while True:
            self.resume.wait()
            self.resume.clear()
            job = self.job
            if job is _STOP:
                return False
            try:
                job()
                self.state = _DONE
            except Aborted:
                self.state = _DONE
            except BaseException as error:  # the kernel's: raised again in the launching thread
                self.error = error
                self.state = _FAILED
            finally:
                self.job = None
                self.pool.baton.set()

    def park(self, site, payload):
        """Called on this worker's thread by a GPU thread at a rendezvous."""
        self.site, self.payload, self.parked = site, payload, True
        self.state = _WAITING
        self.pool.baton.set()
        self.resume.wait()
        self.resume.clear()
        self.parked = False
        if self.abort:
            raise Aborted()
        return self.results


_STOP = object()


class BlockRunner:
    """The workers, and running one block on them."""

    def __init__(self):
        self.workers = []
        self.baton = threading.Event()

    def _hand_baton(self, worker):
        """Lets `worker` run until it parks or ends (Ctrl-C here interrupts it)."""
        worker.state = _RUNNING
        self.baton.clear()
        worker.resume.set()
        while worker.state == _RUNNING:
            if not self.baton.wait(_POLL) and not worker.is_alive():
                raise RuntimeError(f"the interpreter's thread for {worker.gpu_thread.name} ended unexpectedly")
            self.baton.clear()

    def run_block(self, body, block_idx, block_dim, grid_dim, smem):
        """Runs `body(gpu_thread)` for every thread of one block."""
        block = BlockMemory(block_idx, block_dim, grid_dim, smem)
        count = block_dim[0] * block_dim[1] * block_dim[2]
        while len(self.workers) < count:
            worker = Worker(self, len(self.workers))
            worker.start()
            self.workers.append(worker)
        workers = []
        for z in range(block_dim[2]):
            for y in range(block_dim[1]):
                for x in range(block_dim[0]):
                    worker = self.workers[len(workers)]
                    gpu_thread = GpuThread(block, (x, y, z), worker)
                    worker.gpu_thread, worker.abort, worker.state = gpu_thread, False, _READY
                    worker.name = gpu_thread.name
                    worker.job = functools.partial(body, gpu_thread)
                    workers.append(worker)
        try:
            self._rounds(workers)
        except BaseException:
            self._unwind(workers)
            raise
        finally:
            for i, worker in enumerate(workers):
                worker.name = f"flyrt interpreter {i} (idle)"
                worker.state = _IDLE

    def _rounds(self, workers):
        while True:
            for worker in workers:
                if worker.state == _READY:
                    self._hand_baton(worker)
                    if worker.state == _FAILED:
                        error, worker.error = worker.error, None
                        raise error
            waiting = [w for w in workers if w.state == _WAITING]
            if not waiting:
                return
            if len(waiting) != len(workers) or len({w.site for w in waiting}) > 1:
                raise DivergenceError(_divergence(workers))
            payloads = [w.payload for w in workers]
            for worker in workers:
                worker.results, worker.payload, worker.state = payloads, None, _READY

    def _unwind(self, workers):
        """After an error or Ctrl-C: ends every GPU thread of the block, so
        its workers are idle for the next launch."""
        for worker in workers:
            if worker.parked:
                worker.abort = True
                self._wait_quietly(worker, resume=True)
            elif worker.state == _RUNNING:
                # it held the baton when Ctrl-C came: stop it where it is
                ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(worker.ident), ctypes.py_object(Aborted))
                self._wait_quietly(worker, resume=False)
            elif worker.state == _READY:
                worker.job = None  # never started
        self.workers = [w for w in self.workers if w.is_alive() and w.job is None and not w.parked]

    def _wait_quietly(self, worker, resume):
        worker.state = _RUNNING
        self.baton.clear()
        if resume:
            worker.resume.set()
        for _ in range(200):  # 10 s at most: a thread stuck in C code (a debugger's prompt) is left behind
            try:
                if self.baton.wait(_POLL) and worker.state != _RUNNING:
                    return
            except KeyboardInterrupt:
                pass


def _divergence(workers):
    by_site = {}
    for worker in workers:
        key = _site_text(*worker.site) if worker.state == _WAITING else "returned from the kernel"
        by_site.setdefault(key, []).append(worker.gpu_thread.name.split(" thread ")[1])
    parts = [f"{_threads(names)}: {site}" for site, names in by_site.items()]
    block = workers[0].gpu_thread.name.split(" thread ")[0]
    return (f"{block}: not every thread reached the same barrier, shuffle or fx.mma (the whole block reaches "
            f"each together; compiled, one under control flow that depends on the thread is an error): "
            + "; ".join(parts))


def _site_text(what, filename, lineno):
    return f"{what} at {source_line(filename, lineno)}" if filename else what


def _threads(names):
    shown = ", ".join(names[:4])
    return f"threads {shown}" + (f" and {len(names) - 4} more" if len(names) > 4 else "")
