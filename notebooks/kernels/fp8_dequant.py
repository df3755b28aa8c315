"""out = fp8 codes dequantized and scaled (per tensor, or per row)."""

import flyrt.compiler as flyc
import flyrt.expr as fx

BLOCK = 256


@flyc.kernel(known_block_size=(BLOCK, 1, 1))
def dequant_kernel(codes: fx.Tensor, scales: fx.Tensor, out: fx.Tensor, per_row: fx.Constexpr[bool]):
    row = fx.block_idx.y
    col = fx.block_idx.x * BLOCK + fx.thread_idx.x
    if col < codes.shape[1]:
        scale = scales[row] if fx.const_expr(per_row) else scales[0]
        out[row, col] = codes[row, col].to(fx.Float32) * scale


@flyc.jit
def dequantize_scale(codes: fx.Tensor, scales: fx.Tensor, out: fx.Tensor, per_row: fx.Constexpr[bool] = False):
    rows, cols = codes.shape
    dequant_kernel(codes, scales, out, per_row).launch(grid=((cols + BLOCK - 1) // BLOCK, rows), block=(BLOCK,))
