"""C = A @ B on the matrix units: Float16 (or BFloat16) A and B, Float32 C;
FP8 A and B are converted to Float16 (exactly) as they are staged.

A block of 4 warps computes a 64 x 32 tile of C: per step of 16 along K it
stages A's 64 x 16 and B's 16 x 32 tiles in shared memory, then each warp
reads its fragments (``fx.a_fragment`` / ``fx.b_fragment``: one ``ldmatrix``
each on NVIDIA GPUs) and multiplies its 16 rows by the 4 column groups of 8
with ``fx.mma`` (one ``mma.sync`` each on NVIDIA GPUs; exact on the CPU).
``gather=True`` reads the fragments element by element instead (what
ldmatrix saves: tests/bench/bench_gpu_fp8_mma.py measures both)."""

import flyrt.compiler as flyc
import flyrt.expr as fx

WARPS = 4
BM, BN, BK = 16 * WARPS, 32, 16  # BN: 4 column groups of 8


@flyc.kernel(known_block_size=(32 * WARPS, 1, 1))
def gemm_mma_kernel(a: fx.Tensor, b: fx.Tensor, c: fx.Tensor, gather: fx.Constexpr[bool]):
    m, k_total = a.shape
    n = b.shape[1]
    t = fx.thread_idx.x
    warp = t // 32
    row0 = fx.block_idx.y * BM
    col0 = fx.block_idx.x * BN
    tile_type = fx.Float16 if a.dtype.is_fp8 else a.dtype
    a_tile = fx.shared((BM, BK), tile_type)
    b_tile = fx.shared((BK, BN), tile_type)
    accs = [fx.Vector.zeros(4, fx.Float32)] * 4  # one accumulator per column group of 8
    for k0 in range(0, k_total, BK):
        for e in fx.range_constexpr(0, BM * BK, 32 * WARPS):  # each thread stages 8 of A, 4 of B
            r, q = (e + t) // BK, (e + t) % BK
            a_tile[r, q] = a[row0 + r, k0 + q].to(tile_type) if row0 + r < m and k0 + q < k_total else 0.0
        for e in fx.range_constexpr(0, BK * BN, 32 * WARPS):
            r, q = (e + t) // BN, (e + t) % BN
            b_tile[r, q] = b[k0 + r, col0 + q].to(tile_type) if k0 + r < k_total and col0 + q < n else 0.0
        fx.barrier()
        accs = tile_products(a_tile, b_tile, warp, accs, gather)
        fx.barrier()
    store_tile(c, accs, row0 + warp * 16, col0)


def tile_products(a_tile, b_tile, warp, accs, gather, b_transposed=False):
    """accs plus warp `warp`'s 16 rows of the A tile times the B tile's 4
    column groups of 8 (`b_transposed`: the tile holds B's transpose, N x K):
    one fx.mma each (K 16, or 32 on FP8 fragments). `gather`: the fragments
    element by element."""
    if gather:
        k = 32 if a_tile.dtype.is_fp8 else 16
        fa = fx.Vector.from_elements([a_tile[warp * 16 + r, q] for r, q in (fx.a_position(i, k=k)
                                                                             for i in range(k // 2))])
        b_at = (lambda r, q: b_tile[q, r]) if b_transposed else (lambda r, q: b_tile[r, q])
        fbs = [fx.Vector.from_elements([b_at(r, j * 8 + q) for r, q in (fx.b_position(i, k=k) for i in range(k // 4))])
               for j in range(len(accs))]
    else:
        fa = fx.a_fragment(a_tile, warp * 16, 0)
        fbs = [fx.b_fragment(b_tile, j * 8, 0, transposed=True) if b_transposed else fx.b_fragment(b_tile, 0, j * 8)
               for j in range(len(accs))]
    return [fx.mma(fa, fb, acc) for fb, acc in zip(fbs, accs)]


def store_tile(c, accs, row0, col0):
    """The 16 x 32 block of C at (row0, col0) from a warp's accumulators, as far as C reaches."""
    m, n = c.shape
    for j, acc in enumerate(accs):
        for i in fx.range_constexpr(4):
            row, col = fx.c_position(i)
            if row0 + row < m and col0 + j * 8 + col < n:
                c[row0 + row, col0 + j * 8 + col] = acc[i]


@flyc.jit
def gemm_mma(a: fx.Tensor, b: fx.Tensor, c: fx.Tensor, gather: fx.Constexpr[bool] = False):
    m, n = c.shape
    gemm_mma_kernel(a, b, c, gather).launch(grid=((n + BN - 1) // BN, (m + BM - 1) // BM), block=(32 * WARPS,))
