"""out = x * y + bias[column], over a 2-D grid of 2-D blocks."""

import flyrt.compiler as flyc
import flyrt.expr as fx

TILE_X, TILE_Y = 32, 8


@flyc.kernel
def scaled_sum_kernel(x: fx.Tensor, y: fx.Tensor, bias: fx.Tensor, out: fx.Tensor):
    col = fx.block_idx.x * fx.block_dim.x + fx.thread_idx.x
    row = fx.block_idx.y * fx.block_dim.y + fx.thread_idx.y
    if row < out.shape[0] and col < out.shape[1]:
        out[row, col] = x[row, col] * y[row, col] + bias[col]


@flyc.jit
def scaled_sum(x: fx.Tensor, y: fx.Tensor, bias: fx.Tensor, out: fx.Tensor):
    rows, cols = out.shape
    grid = ((cols + TILE_X - 1) // TILE_X, (rows + TILE_Y - 1) // TILE_Y)
    scaled_sum_kernel(x, y, bias, out).launch(grid=grid, block=(TILE_X, TILE_Y))
