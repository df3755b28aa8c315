"""C = A @ B on FP8 tensor cores: Float8E4M3FN or E4M3FNUZ A and B, Float32 C;
M, N and K multiples of the tile (64, 32 and 32).

The layout is gemm_mma.py's with K steps of 32: a block of 4 warps computes
a 64 x 32 tile of C, staging A's 64 x 32 and B's 32 x 32 bytes in shared
memory per step (B transposed, so that its fragments are an ldmatrix each
too: ldmatrix transposes 16-bit words, not bytes), and each warp multiplies
its 16 rows by 4 column groups of 8 with ``fx.mma`` on FP8 fragments (one ``mma.sync...m16n8k32...e4m3`` each
on NVIDIA GPUs from sm_89 on for E4M3FN, two f16 ones on the exactly decoded
values for E4M3FNUZ; gfx94x's FP8 MFMA for E4M3FNUZ; exact on the CPU)."""

import flyrt.compiler as flyc
import flyrt.expr as fx

from .gemm_mma import store_tile, tile_products

WARPS = 4
BM, BN, BK = 16 * WARPS, 32, 32


@flyc.kernel(known_block_size=(32 * WARPS, 1, 1))
def gemm_fp8_kernel(a: fx.Tensor, b: fx.Tensor, c: fx.Tensor, gather: fx.Constexpr[bool]):
    k_total = a.shape[1]
    t = fx.thread_idx.x
    warp = t // 32
    row0 = fx.block_idx.y * BM
    col0 = fx.block_idx.x * BN
    a_tile = fx.shared((BM, BK), a.dtype)
    b_tile = fx.shared((BN, BK), b.dtype)  # B's transpose
    accs = [fx.Vector.zeros(4, fx.Float32)] * 4  # one accumulator per column group of 8
    for k0 in range(0, k_total, BK):
        for e in fx.range_constexpr(0, BM * BK, 32 * WARPS):  # each thread stages 16 bytes of A, 8 of B
            r, q = (e + t) // BK, (e + t) % BK
            a_tile[r, q] = a[row0 + r, k0 + q]
        for e in fx.range_constexpr(0, BK * BN, 32 * WARPS):
            r, q = (e + t) // BN, (e + t) % BN
            b_tile[q, r] = b[k0 + r, col0 + q]
        fx.barrier()
        accs = tile_products(a_tile, b_tile, warp, accs, gather, b_transposed=True)
        fx.barrier()
    store_tile(c, accs, row0 + warp * 16, col0)


@flyc.jit
def gemm_fp8(a: fx.Tensor, b: fx.Tensor, c: fx.Tensor, gather: fx.Constexpr[bool] = False):
    """C = A B; `gather`: the fragments read element by element (gemm_mma.py)."""
    m, n = c.shape
    gemm_fp8_kernel(a, b, c, gather).launch(grid=(n // BN, m // BM), block=(32 * WARPS,))
