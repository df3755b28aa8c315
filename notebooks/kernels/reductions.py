"""Block-wide reductions built from warp shuffles, shared memory and barriers."""

import flyrt.expr as fx

_COMBINE = {"add": lambda a, b: a + b, "max": fx.max, "min": fx.min}


def block_reduce(value, op, scratch, block_size):
    """`op` over every thread of a block of `block_size` threads; every
    thread gets the result. `scratch`: fx.shared((block_size // warp,), dtype)."""
    combine = _COMBINE[op]
    warp = fx.warp_size()
    value = fx.warp_reduce(value, op, min(warp, block_size))
    t = fx.thread_idx.x
    if t % warp == 0:
        scratch[t // warp] = value
    fx.barrier()
    total = scratch[0]
    for w in fx.range_constexpr(1, max(1, block_size // warp)):
        total = combine(total, scratch[w])
    fx.barrier()  # scratch may be reused after this
    return total


def scratch_for(block_size, dtype=fx.Float32):
    return fx.shared(max(1, block_size // fx.warp_size()), dtype)
