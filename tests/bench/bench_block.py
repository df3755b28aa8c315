"""Block-level kernels next to numpy and numba, in one run; prints ratios.

Softmax and rmsnorm (rows x 4096 f32) in GB/s, against numpy, numba and the
machine's copy bandwidth (numpy, measured here); GEMM in GFLOP/s against
numpy's BLAS and numba. numba runs flyrt's algorithms in f32 (softmax: a max
pass, a pass summing exp2((x - max) * log2 e), a pass writing it scaled);
what still differs is said under the table.

    .venv/bin/python tests/bench/bench_block.py
"""

import sys
from pathlib import Path

import numba
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "notebooks"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from kernels.gemm import gemm  # noqa: E402
from kernels.rmsnorm import rmsnorm  # noqa: E402
from kernels.softmax import softmax  # noqa: E402
from timing import best_of, mode_line  # noqa: E402


LOG2E = np.float32(1.4426950408889634)


@numba.njit(parallel=True, fastmath=False)
def numba_softmax(x, out):
    for r in numba.prange(x.shape[0]):
        peak = np.float32(-np.inf)
        for c in range(x.shape[1]):
            peak = max(peak, x[r, c])
        total = np.float32(0.0)
        for c in range(x.shape[1]):
            total += np.exp2((x[r, c] - peak) * LOG2E)
        scale = np.float32(1.0) / total
        for c in range(x.shape[1]):
            out[r, c] = np.exp2((x[r, c] - peak) * LOG2E) * scale


@numba.njit(parallel=True)
def numba_rmsnorm(x, w, out, eps):
    for r in numba.prange(x.shape[0]):
        squares = np.float32(0.0)
        for c in range(x.shape[1]):
            squares += x[r, c] * x[r, c]
        scale = np.float32(1.0) / np.sqrt(squares / np.float32(x.shape[1]) + eps)
        for c in range(x.shape[1]):
            out[r, c] = x[r, c] * scale * w[c]


@numba.njit(parallel=True)
def numba_gemm(a, b, c):
    for i in numba.prange(a.shape[0]):
        for j in range(b.shape[1]):
            c[i, j] = 0.0
        for k in range(a.shape[1]):
            aik = a[i, k]
            for j in range(b.shape[1]):
                c[i, j] += aik * b[k, j]


def numpy_softmax(x, out):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    np.divide(e, e.sum(axis=1, keepdims=True), out=out)


def numpy_rmsnorm(x, w, out, eps):
    np.multiply(x / np.sqrt(np.mean(x * x, axis=1, keepdims=True) + eps), w, out=out)


def main():
    print(mode_line())
    rng = np.random.default_rng(0)
    rows, cols = 4096, 4096
    x = rng.standard_normal((rows, cols)).astype(np.float32)
    w = rng.standard_normal(cols).astype(np.float32)
    out = np.zeros_like(x)
    moved = 2 * x.nbytes  # read x once, write out once
    copy = best_of(np.copyto, out, x)
    bandwidth = moved / copy
    print(f"numpy copy bandwidth here: {bandwidth / 1e9:.1f} GB/s (read + write of {x.nbytes >> 20} MiB)\n")
    print(f"{'measure':<34} {'flyrt':>9} {'numpy':>9} {'numba':>9}  flyrt/numpy flyrt/numba  % of copy bw")
    for label, ours, theirs_np, theirs_nb in [
        ("softmax 4096x4096 f32 (GB/s)", best_of(softmax, x, out), best_of(numpy_softmax, x, out),
         best_of(numba_softmax, x, out)),
        ("rmsnorm 4096x4096 f32 (GB/s)", best_of(rmsnorm, x, w, out, 1e-6), best_of(numpy_rmsnorm, x, w, out, 1e-6),
         best_of(numba_rmsnorm, x, w, out, np.float32(1e-6))),
    ]:
        g = [moved / t / 1e9 for t in (ours, theirs_np, theirs_nb)]
        print(f"{label:<34} {g[0]:>9.2f} {g[1]:>9.2f} {g[2]:>9.2f}  {g[0] / g[1]:>10.2f}x {g[0] / g[2]:>10.2f}x"
              f"  {100 * g[0] / (bandwidth / 1e9):>9.0f}%")
    n = 1024
    a, b = (rng.standard_normal((n, n)).astype(np.float32) for _ in range(2))
    c = np.zeros((n, n), np.float32)
    flops = 2 * n ** 3
    g = [flops / t / 1e9 for t in (best_of(gemm, a, b, c, repeats=3), best_of(np.matmul, a, b, c, repeats=3),
                                   best_of(numba_gemm, a, b, c, repeats=3))]
    print(f"{'GEMM 1024^3 f32 (GFLOP/s)':<34} {g[0]:>9.2f} {g[1]:>9.2f} {g[2]:>9.2f}  {g[0] / g[1]:>10.2f}x "
          f"{g[0] / g[2]:>10.2f}x")
    print("\nwhat differs: flyrt's exp2 is an inline polynomial (within 1 ulp), numba's calls libm's exp2f;"
          " numpy computes exp(x - max) in passes with temporaries; GEMM: numpy is BLAS")


if __name__ == "__main__":
    main()
