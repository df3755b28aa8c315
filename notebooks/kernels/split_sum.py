"""A sum in one launch: each block sums its share, and the last block to
finish, found by an atomic ticket, adds the blocks' partial sums. The
release fence before the ticket and the acquire fence after it make each
block's partial visible to the last one."""

import flyrt.compiler as flyc
import flyrt.expr as fx

from kernels.reductions import block_reduce, scratch_for

BLOCK = 128


@flyc.kernel
def split_sum_kernel(x: fx.Tensor, partials: fx.Tensor, tickets: fx.Tensor, total: fx.Tensor, n: fx.Int32):
    t = fx.thread_idx.x
    b = fx.block_idx.x
    acc = fx.Float32(0.0)
    i = b * BLOCK + t
    while i < n:
        acc += x[i]
        i += fx.grid_dim.x * BLOCK
    block_total = block_reduce(acc, "add", scratch_for(BLOCK), BLOCK)
    if t == 0:
        partials[b] = block_total
        fx.memory_fence(scope="device", order="release")
        ticket = fx.atomic_add(tickets, 0, 1, scope="device", order="acq_rel")
        if ticket == fx.grid_dim.x - 1:  # the last block: every partial is written
            fx.memory_fence(scope="device", order="acquire")
            s = fx.Float32(0.0)
            for j in range(fx.grid_dim.x):
                s += partials[j]
            total[0] = s
            tickets[0] = 0  # ready for the next launch


@flyc.jit
def split_sum(x: fx.Tensor, partials: fx.Tensor, tickets: fx.Tensor, total: fx.Tensor, n: fx.Int32,
              blocks: fx.Int32):
    """total[0] = sum(x[:n]), in one launch of `blocks` blocks; `partials`
    holds `blocks` Float32, `tickets` one Int32 that starts (and ends) at 0."""
    split_sum_kernel(x, partials, tickets, total, n).launch(grid=(blocks,), block=(BLOCK,))
