"""C = A @ B on the matrix units: Float16 (or BFloat16) A and B, Float32 C.

A block of 4 warps computes a 64 x 32 tile of C: per step of 16 along K it
stages A's 64 x 16 and B's 16 x 32 tiles in shared memory, then each warp
multiplies its 16 rows by the 4 column groups of 8 with ``fx.mma`` (one
``mma.sync`` each on NVIDIA GPUs; exact on the CPU)."""

import flyrt.compiler as flyc
import flyrt.expr as fx

WARPS = 4
BM, BN, BK = 16 * WARPS, 32, 16  # BN: 4 column groups of 8


@flyc.kernel(known_block_size=(32 * WARPS, 1, 1))
def gemm_mma_kernel(a: fx.Tensor, b: fx.Tensor, c: fx.Tensor):
    m, k_total = a.shape
    n = b.shape[1]
    t = fx.thread_idx.x
    warp = t // 32
    row0 = fx.block_idx.y * BM
    col0 = fx.block_idx.x * BN
    a_tile = fx.shared((BM, BK), a.dtype)
    b_tile = fx.shared((BK, BN), b.dtype)
    # one accumulator per column group of 8 (named: loop-carried values are variables)
    acc0 = acc1 = acc2 = acc3 = fx.Vector.zeros(4, fx.Float32)
    for k0 in range(0, k_total, BK):
        for e in fx.range_constexpr(0, BM * BK, 32 * WARPS):  # each thread stages 8 of A, 4 of B
            r, q = (e + t) // BK, (e + t) % BK
            a_tile[r, q] = a[row0 + r, k0 + q] if row0 + r < m and k0 + q < k_total else 0.0
        for e in fx.range_constexpr(0, BK * BN, 32 * WARPS):
            r, q = (e + t) // BN, (e + t) % BN
            b_tile[r, q] = b[k0 + r, col0 + q] if k0 + r < k_total and col0 + q < n else 0.0
        fx.barrier()
        fa = fx.Vector.from_elements([a_tile[(warp * 16 + fx.a_position(i)[0], fx.a_position(i)[1])]
                                      for i in range(8)])
        acc0 = fx.mma(fa, _b_fragment(b_tile, 0), acc0)
        acc1 = fx.mma(fa, _b_fragment(b_tile, 1), acc1)
        acc2 = fx.mma(fa, _b_fragment(b_tile, 2), acc2)
        acc3 = fx.mma(fa, _b_fragment(b_tile, 3), acc3)
        fx.barrier()
    for j, acc in enumerate([acc0, acc1, acc2, acc3]):
        for i in fx.range_constexpr(4):
            row, col = fx.c_position(i)
            if row0 + warp * 16 + row < m and col0 + j * 8 + col < n:
                c[row0 + warp * 16 + row, col0 + j * 8 + col] = acc[i]


def _b_fragment(b_tile, group):
    """This lane's b fragment of the tile's column group `group` (8 columns)."""
    return fx.Vector.from_elements([b_tile[(fx.b_position(i)[0], group * 8 + fx.b_position(i)[1])] for i in range(4)])


@flyc.jit
def gemm_mma(a: fx.Tensor, b: fx.Tensor, c: fx.Tensor):
    m, n = c.shape
    gemm_mma_kernel(a, b, c).launch(grid=((n + BN - 1) // BN, (m + BM - 1) // BM), block=(32 * WARPS,))
