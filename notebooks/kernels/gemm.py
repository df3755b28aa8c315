"""C = A @ B, tiled: each block stages TILE x TILE tiles of A and B in shared
memory, with barriers around every step along K."""

import flyrt.compiler as flyc
import flyrt.expr as fx

TILE = 16


@flyc.kernel(known_block_size=(TILE, TILE, 1))
def gemm_kernel(a: fx.Tensor, b: fx.Tensor, c: fx.Tensor):
    m, k_total = a.shape
    n = b.shape[1]
    tx = fx.thread_idx.x
    ty = fx.thread_idx.y
    row = fx.block_idx.y * TILE + ty
    col = fx.block_idx.x * TILE + tx
    a_tile = fx.shared((TILE, TILE), fx.Float32)
    b_tile = fx.shared((TILE, TILE), fx.Float32)
    acc = 0.0
    for k0 in range(0, k_total, TILE):
        a_tile[ty, tx] = a[row, k0 + tx] if row < m and k0 + tx < k_total else 0.0
        b_tile[ty, tx] = b[k0 + ty, col] if k0 + ty < k_total and col < n else 0.0
        fx.barrier()
        for kk in fx.range_constexpr(TILE):
            acc = fx.fma(a_tile[ty, kk], b_tile[kk, tx], acc)
        fx.barrier()
    if row < m and col < n:
        c[row, col] = acc


@flyc.jit
def gemm(a: fx.Tensor, b: fx.Tensor, c: fx.Tensor):
    m, n = c.shape
    gemm_kernel(a, b, c).launch(grid=((n + TILE - 1) // TILE, (m + TILE - 1) // TILE), block=(TILE, TILE))
