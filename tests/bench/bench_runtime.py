"""flyrt next to numba (and numpy) on the CPU, in one run; prints ratios.

(1) cache-hit launch overhead: a 3-tensor + scalar kernel on 16 and 256
    elements (one block either way), and the same call through
    @flyc.autotune (its key and guard checked);
(2) first compile of vector add, from trace to callable;
(3) throughput of axpy and row norms on large arrays.

flyrt runs each in both modes, bounds checks on (the default) and the fast
mode, side by side; the ratio is the default's.

    .venv/bin/python tests/bench/bench_runtime.py
"""

import importlib
import itertools
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numba
import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "notebooks"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import flyrt  # noqa: E402
import flyrt.compiler as flyc  # noqa: E402
from kernels.axpy import axpy  # noqa: E402
from kernels.row_norms import row_norms  # noqa: E402
import kernels.vector_add  # noqa: E402
from kernels.vector_add import vector_add  # noqa: E402
from timing import best_of, bounds_checks, mode_line, per_call, per_call_interleaved  # noqa: E402


@numba.njit
def numba_vector_add(a, b, c, n):
    for i in range(n):
        c[i] = a[i] + b[i]


def both_modes(measure):
    """(checked, fast) of `measure()`, each with kernels compiled in that mode."""
    results = []
    for on in (True, False):
        with bounds_checks(on):
            results.append(measure())
    return tuple(results)


def launch_overhead():
    rows = []
    # 16 elements: the block's 240 threads past `if i < n` are not run; 256
    # fill the block, whose checks are proven.
    for n in (16, 256):
        a, b, c = (np.ones(n, np.float32) for _ in range(3))
        best = per_call_interleaved({"checked": vector_add, "fast": vector_add, "numba": numba_vector_add},
                                    a, b, c, n, before={"checked": lambda: flyrt.set_bounds_checks(True),
                                                        "fast": lambda: flyrt.set_bounds_checks(False)})
        flyrt.set_bounds_checks(None)
        rows.append((f"launch overhead, {n} elements (us)", best["checked"] * 1e6, best["fast"] * 1e6,
                     best["numba"] * 1e6, "numba njit"))
    # torch CPU tensors: the dispatcher reads each through torch's DLPack exchange table, as it does CUDA ones
    a, b, c = (torch.ones(16) for _ in range(3))
    best = per_call_interleaved({"checked": vector_add, "fast": vector_add,
                                 "torch.add": lambda a, b, c, n: torch.add(a, b, out=c)},
                                a, b, c, 16, before={"checked": lambda: flyrt.set_bounds_checks(True),
                                                     "fast": lambda: flyrt.set_bounds_checks(False)})
    flyrt.set_bounds_checks(None)
    rows.append(("launch overhead, 16 elements, torch CPU tensors (us)", best["checked"] * 1e6,
                 best["fast"] * 1e6, best["torch.add"] * 1e6, "torch.add(out=)"))
    a, b, c = (np.ones(16, np.float32) for _ in range(3))
    tuned = flyc.autotune(configs=[flyc.Config({})], key=["n"])(vector_add)
    through_tuner = both_modes(lambda: per_call(tuned, a, b, c, 16, calls=50_000))
    alone = rows[0][1]
    return rows + [("the same through flyc.autotune (us)", *(t * 1e6 for t in through_tuner), alone,
                    "flyrt's launcher alone")]


_fresh = itertools.count()


def fresh_flyrt_vector_add():
    """A launcher never called yet, whose code this process never compiled:
    the example's source under new function names (the same IR otherwise;
    an unchanged kernel's object would be reused, as after a reload)."""
    index = next(_fresh)
    source = Path(kernels.vector_add.__file__).read_text()
    source = source.replace("vector_add_kernel", f"vector_add_kernel_{index}").replace(
        "def vector_add(", f"def vector_add_{index}(")
    folder = Path(tempfile.mkdtemp(prefix="bench-runtime-"))
    (folder / f"fresh_vector_add_{index}.py").write_text(source)
    sys.path.insert(0, str(folder))
    return getattr(importlib.import_module(f"fresh_vector_add_{index}"), f"vector_add_{index}")


def first_compile():
    a, b, c = (np.ones(1024, np.float32) for _ in range(3))
    ours, theirs = {True: [], False: []}, []
    for _ in range(5):
        for on in (True, False):
            launcher = fresh_flyrt_vector_add()
            with bounds_checks(on):
                begin = time.perf_counter()
                launcher(a, b, c, 1024)
                ours[on].append(time.perf_counter() - begin)
        jitted = numba.njit(numba_vector_add.py_func)
        begin = time.perf_counter()
        jitted(a, b, c, 1024)
        theirs.append(time.perf_counter() - begin)
    return [("first compile of vector add (ms)", statistics.median(ours[True]) * 1e3,
             statistics.median(ours[False]) * 1e3, statistics.median(theirs) * 1e3, "numba njit")]


@numba.njit(fastmath=False)
def numba_axpy(alpha, x, y):
    for i in range(x.shape[0]):
        y[i] = alpha * x[i] + y[i]


@numba.njit(parallel=True)
def numba_axpy_parallel(alpha, x, y):
    for i in numba.prange(x.shape[0]):
        y[i] = alpha * x[i] + y[i]


@numba.njit
def numba_row_norms(m, out):
    for r in range(m.shape[0]):
        total = np.float32(0.0)  # an f32 sum, as flyrt's
        for c in range(m.shape[1]):
            total += m[r, c] * m[r, c]
        out[r] = np.sqrt(total)


@numba.njit(parallel=True)
def numba_row_norms_parallel(m, out):
    for r in numba.prange(m.shape[0]):
        total = np.float32(0.0)
        for c in range(m.shape[1]):
            total += m[r, c] * m[r, c]
        out[r] = np.sqrt(total)


def throughput():
    rows = []
    n = 1 << 24
    x = np.random.default_rng(0).standard_normal(n).astype(np.float32)
    y = np.ones(n, np.float32)
    moved = 3 * 4 * n  # read x and y, write y
    checked, fast = both_modes(lambda: best_of(axpy, 2.0, x, y, n))
    numpy_time = best_of(lambda: np.add(np.float32(2.0) * x, y, out=y))
    numba_time = best_of(numba_axpy, np.float32(2.0), x, y)
    parallel_time = best_of(numba_axpy_parallel, np.float32(2.0), x, y)
    ours = (moved / checked / 1e9, moved / fast / 1e9)
    rows.append(("axpy 16M f32 (GB/s)", *ours, moved / numpy_time / 1e9,
                 "numpy (2*x is a temporary: 5 array passes, not 3; GB/s counts 3 for all)"))
    rows.append(("axpy 16M f32 (GB/s)", *ours, moved / numba_time / 1e9, "numba njit"))
    rows.append(("axpy 16M f32 (GB/s)", *ours, moved / parallel_time / 1e9, "numba parallel"))

    m = np.random.default_rng(1).standard_normal((4096, 4096)).astype(np.float32)
    out = np.zeros(4096, np.float32)
    for label, matrix in (("row norms 4096x4096", m), ("row norms strided 2048x2048", m[::2, ::2])):
        out = np.zeros(matrix.shape[0], np.float32)
        moved = matrix.size * 4
        checked, fast = both_modes(lambda: best_of(row_norms, matrix, out))
        numpy_time = best_of(lambda: np.sqrt(np.einsum("ij,ij->i", matrix, matrix)))
        numba_time = best_of(numba_row_norms, matrix, out)
        parallel_time = best_of(numba_row_norms_parallel, matrix, out)
        ours = (moved / checked / 1e9, moved / fast / 1e9)
        rows.append((f"{label} (GB/s)", *ours, moved / numpy_time / 1e9, "numpy einsum"))
        rows.append((f"{label} (GB/s)", *ours, moved / numba_time / 1e9, "numba njit"))
        rows.append((f"{label} (GB/s)", *ours, moved / parallel_time / 1e9, "numba parallel"))
    return rows


def main():
    print(mode_line())
    print(f"flyrt vs numba {numba.__version__} / numpy {np.__version__}; "
          f"{flyc.__name__.split('.')[0]} uses {__import__('flyrt._core', fromlist=['x']).worker_count()} threads\n")
    print(f"{'measure':<38} {'flyrt':>10} {'(fast)':>10} {'peer':>10}  {'flyrt/peer':>10}  peer")
    for label, ours, fast, theirs, peer in launch_overhead() + first_compile() + throughput():
        print(f"{label:<38} {ours:>10.3f} {fast:>10.3f} {theirs:>10.3f}  {ours / theirs:>9.2f}x  {peer}")


if __name__ == "__main__":
    main()
