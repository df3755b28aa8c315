"""Paged-attention decode with an FP8 KV cache, persistent scheduling.

Structured as FlyDSL's: ``compile_pa_decode_ps(...)`` (a ``functools.lru_cache``
compile factory keyed by its static arguments) builds the ``pa_decode_ps_kernel``
and its ``launch_pa_decode_ps`` launcher, which call the module-level helpers
below (``_load_q_fragments`` is a ``@flyc.jit`` device helper). Head size and
page size are specialization constants taken from the cache shapes.

Work: a host-side builder splits each (sequence, kv head) context into page
ranges, which a fixed number of workers take in turn (worker w the items w,
w + workers, ..: its first item known at its start, with no load). On GPUs
(pages of 16 tokens or a multiple, V not transposed) a worker is a block of 1,
4 or 8 warps on the matrix units (fx.mma; on AMD a 64-lane wave in MFMA's own layout, fx.wave_mma), which take a page
16 tokens at a time (a tile) and 16 query rows of a kv head (more rows, more
blocks), a block's warps sharing a work item's tiles, with one tile in flight in registers or one or two through
shared memory when the tuner finds that pays.
Else a worker's threads are query rows of one kv head's group (group x query
length; up to 16 per block, more rows take more blocks); it stages K and V
dequantized in shared memory up to 16 tokens at a time (8 past head size
128), then each thread scores them and updates its online softmax (exp2)
once per tile, keeping its output row in shared memory. Each work item leaves a
partial output and its log-sum-exp, which are combined with LSE weights into
the query's dtype: by a kernel of their own (the matrix-unit kernel's
default), or in the same launch by the last block to finish its part of a
(sequence, kv head).

The softmax's exp2 is the GPU's one instruction (``approx=True``, within 2
ulp; the CPU computes it exactly, so the CPU checks stay exact).

Shapes: query [num_seqs * query_length, num_q_heads, head_size]; caches
[num_blocks, num_kv_heads, block_size, head_size] (V: [..., head_size,
block_size] with trans_v); block_tables [num_seqs, max_blocks];
context_lengths [num_seqs]; each scale per tensor (a Python float, a 0-dim
or 1-element array or tensor) or per token [num_blocks, num_kv_heads,
block_size]; a float32 tensor where the query is is read in place.
"""

import functools
import math
import numbers
import sys
import threading

import numpy as np

import flyrt
import flyrt.compiler as flyc
import flyrt.expr as fx
from flyrt import fp8

LOG2E = 1.4426950408889634
LANES = 8
REDUCE_STEP = 4  # partial results a combining thread weighs per step
# The matrix-unit kernel (fx.mma): None runs it on GPUs only, True everywhere
# (the CPU computes its matrix products exactly: slow, for checking it), False never.
USE_MMA_KERNEL = None
# its single-warp blocks a multiprocessor holds at once, per FP8 format and stages of shared memory (below),
# or a stage in registers ("prefetch"): on NVIDIA GPUs the most at which ptxas keeps it out of local memory
# (12: 168 registers; 8: 255), but for e4m3fnuz's single stage (24 bytes spilled at 12, as its rare special
# codes' branch had before) and e4m3fn's (16: bandwidth-bound batches want the warps; at 12 the largest
# benchmark shape took 454 us on the H200 where 16 had taken 390). (AMD's 64-lane waves run
# pa_decode_wave_kernel, whose hint is its own: see its launch.)
MMA_BLOCKS_PER_SM = {("e4m3fn", 1): {"nvptx": 16}, ("e4m3fn", 2): {"nvptx": 12}, ("e4m3fn", 3): {"nvptx": 12},
                     ("e4m3fn", "prefetch"): {"nvptx": 12}, ("e4m3fnuz", 1): {"nvptx": 12},
                     ("e4m3fnuz", 2): {"nvptx": 8}, ("e4m3fnuz", 3): {"nvptx": 8},
                     ("e4m3fnuz", "prefetch"): {"nvptx": 8}}


def _mma_blocks_per_sm(fp8_format, stages, warps, prefetch=False, head_size=128, checked=False):
    """The matrix-unit kernel's occupancy hint per target: MMA_BLOCKS_PER_SM's single-warp blocks as blocks of
    `warps`, and for blocks of several at most 3 (ptxas on sm_90: e4m3fn's merge spilled 60 bytes at 4, none
    at 3), or 2 with a page in flight in shared memory (86 KB at head size 128, no more fit on an H200; a page
    in registers takes MMA_BLOCKS_PER_SM's prefetch row: ptxas on sm_90, 4 warps, e4m3fn 166 registers at 3
    blocks, e4m3fnuz 238 at 2; no spills); half as many at head size 256 (its output fragments alone are 128
    registers a lane), and half as many with bounds checks (`checked`: each check's report path holds values;
    on sm_90 e4m3fn's single warp spilled 448 bytes at 16 blocks, 356 with the prefetch at 12,
    none at 8 and 6, and the big benchmark shape checked took 468 us on an H100 where it had taken 653)."""
    most = (2 if stages > 1 else 3) if warps > 1 else None
    per_head = max(head_size, 128) // 128
    hints = MMA_BLOCKS_PER_SM[fp8_format, "prefetch" if prefetch else stages]
    return {target: max(1, min(blocks // per_head // warps, most or blocks) // (2 if checked else 1))
            for target, blocks in hints.items()}


# -- helpers the kernel calls (module level, as upstream) ------------------------


@flyc.jit
def _load_q_fragments(query, q_rows, row, q_token, q_head, first, width, scale):
    """Loads head dimensions first.. first + width of query row (q_token, q_head) into shared row `row`,
    times `scale`."""
    for d in range(first, first + width, LANES):
        (fx.Vector.load(query, (q_token, q_head, d), LANES).to(fx.Float32) * scale).store(q_rows, (row, d))


def _q_row_parts(threads, rows, head_size):
    """How many threads of a block of `threads` load each of its `rows` query rows (_load_q_fragments), each
    a slice of LANES-wide pieces: the most, a power of two, that the block's threads hold."""
    parts = 1
    while 2 * parts * rows <= threads and head_size % (2 * parts * LANES) == 0:
        parts *= 2
    return parts


def _kv_scale(scales, per_token, block, kv_head, token):
    """The dequantization scale of one cached token."""
    return scales[block, kv_head, token] if fx.const_expr(per_token) else scales[0]


def _visible(position, context_length, query_length, q_index):
    """Causal rule of multi-token decode: token < context_len + 1 - query_length + qi."""
    return position < context_length + 1 - query_length + q_index


def _q_fragment(q_rows, rows, gq, tq, step):
    """Step `step` of the (scaled) query rows as an A fragment, from shared memory: element i holds row
    gq + 8 ((i // 2) % 2) and head dimension 64 (step // 4) + 16 tq + 4 (step % 4) + (i % 2) + 2 (i // 4),
    the order in which this lane's key bytes arrive; rows past `rows` are zeros. A row's four elements are one
    vector read (one bounds check, where reading them one by one took four to trace)."""
    first = 64 * (step // 4) + 16 * tq + 4 * (step % 4)
    halves = [fx.Vector.load(q_rows, (gq + 8 * h, first), 4, align=8) for h in range(2)]  # rows gq, gq + 8
    return fx.Vector.from_elements([
        fx.select(gq + 8 * ((i // 2) % 2) < rows, halves[(i // 2) % 2][(i % 2) + 2 * (i // 4)], 0.0).to(fx.Float16)
        for i in range(8)])


def _lane_pieces(gq, tq, head_size):
    """What a lane of the matrix-unit kernel reads of one tile (16 tokens of a page), piece by piece: (from V,
    (token, head dimension), bytes, where the piece sits in the lane's row of a stage). Its keys first, 16 bytes at
    token 8 half + gq, head dimension 64 chunk + 16 tq; then its V rows, tokens 2 tq + r % 2 + 8 (r // 2)
    from head dimension (head_size / 8) gq on. A generator: each piece's index is traced next to the
    access its caller makes of it."""
    chunks = head_size // 64
    for half in range(2):
        for c in range(chunks):
            yield False, (8 * half + gq, 64 * c + 16 * tq), 16, 16 * (chunks * half + c)
    for r in range(4):
        for p in range(0, head_size // 8, 16):  # (16 bytes at a time: two pieces a row at head size 256)
            yield True, (2 * tq + r % 2 + 8 * (r // 2), (head_size // 8) * gq + p), min(head_size // 8, 16), \
                head_size // 2 + (head_size // 8) * r + p


def _as_page(pieces, head_size):
    """A tile's pieces (as _lane_pieces orders them) as the kernel uses them: keys[half][chunk], V rows."""
    chunks = head_size // 64
    return [pieces[:chunks], pieces[chunks:2 * chunks]], pieces[2 * chunks:]


def _work_item(work, context_lengths, item, tiles):
    """(sequence, kv head, its context length, first tile, one past its last tile) of work item `item`, its
    pages as tiles of 16 tokens (`tiles` a page), which the matrix units take at once."""
    seq = work[item, 0]
    return seq, work[item, 1], context_lengths[seq], work[item, 2] * tiles, work[item, 3] * tiles


def _tile(block_tables, seq, tile, end_tile, tiles):
    """(block, first token) of a work item's 16-token tile `tile` (one past its last: the last), a page being
    `tiles` tiles."""
    tile = fx.min(tile, end_tile - 1)
    if tiles == 1:
        return block_tables[seq, tile], 0
    return block_tables[seq, tile // tiles], 16 * (tile % tiles)


def _page_pieces(key_cache, value_cache, block, first, kv_head, gq, tq, head_size):
    """A lane's tile (16 tokens of page `block` from token `first`), loaded as stored (FP8 bytes, converted
    where used), piece by piece (_lane_pieces)."""
    return [fx.Vector.load(value_cache if from_v else key_cache, (block, kv_head, first + token, d), size,
                           align=size)
            for from_v, (token, d), size, _ in _lane_pieces(gq, tq, head_size)]


def _copy_page(stage, key_cache, value_cache, block, first, kv_head, lane, gq, tq, head_size, valid):
    """Starts copying a lane's tile (_page_pieces) into its row of shared array `stage`, one group of async
    copies; nothing is read where `valid` is false."""
    for from_v, (token, d), size, offset in _lane_pieces(gq, tq, head_size):
        fx.async_copy(stage, (lane, offset), value_cache if from_v else key_cache, (block, kv_head, first + token, d),
                      lanes=size, mask=valid)
    fx.async_commit()


def _staged_bytes(stage, lane, gq, tq, head_size):
    """A lane's tile from its row of `stage` (_copy_page)."""
    return _as_page([fx.Vector.load(stage, (lane, offset), size, align=size)
                     for _, _, size, offset in _lane_pieces(gq, tq, head_size)], head_size)


def _token_scales(k_scale, v_scale, block, first, kv_head, tq):
    """A lane's per-token scales of one tile: its scores' and weights' (tokens first + 8 (k // 4) + 2 tq + k % 2)."""
    tokens = [first + 8 * (k // 4) + 2 * tq + k % 2 for k in range(8)]
    return [k_scale[block, kv_head, t] for t in tokens], [v_scale[block, kv_head, t] for t in tokens]


def _matrix_unit_fits(rows, head_size, block_size, trans_v):
    """Whether the matrix-unit kernel takes a shape: heads of 64, 128 or 256, pages of 16 tokens or a multiple
    (it computes tiles of 16), V not transposed; a kv head's query rows (group x query length) past 16 in
    blocks of their own (_block_rows)."""
    return not trans_v and head_size in (64, 128, 256) and block_size % 16 == 0


def _mma_kernel_wanted():
    """Whether this trace launches the matrix-unit kernel (USE_MMA_KERNEL's rule)."""
    target = fx.target()
    wanted = target.is_gpu if USE_MMA_KERNEL is None else USE_MMA_KERNEL
    return wanted and target.matrix_multiply


def _group_max(value, running):
    """The running max with `value`'s max over the 4 lanes that hold one row of an MMA tile."""
    value = fx.max(value, value.shuffle_xor(1))
    return fx.max(running, fx.max(value, value.shuffle_xor(2)))


def _group_sum(value):
    """`value` summed over the 4 lanes that hold one row of an MMA tile."""
    value = value + value.shuffle_xor(1)
    return value + value.shuffle_xor(2)


def _block_rows(rows):
    """The query rows (of a kv head's `rows`) a block computes, either kernel: the most that divide `rows`
    up to 16 (the matrix units' tile; blockIdx.y picks which)."""
    return max(d for d in range(1, min(rows, 16) + 1) if rows % d == 0)


def _ps_tiles(rows, head_size, block_size):
    """(query rows per block, tokens per staged tile) of the SIMT kernel: _block_rows, and at most 16
    tokens (8 past head size 128), so that its shared memory stays under 48 KB (a CPU block has 64, most
    GPUs' 48 without opting in) at every page size and group."""
    return _block_rows(rows), math.gcd(block_size, 16 if head_size <= 128 else 8)


def _normalize(acc, row, head_size, total, out, slot, q_index, g):
    """Writes one partial output row: acc / total (zeros when no token was visible)."""
    inv = fx.select(total > 0.0, 1.0 / total, 0.0)
    for d in range(0, head_size, LANES):
        (fx.Vector.load(acc, (row, d), LANES) * inv).store(out, (slot, q_index, g, d))


def _share_rows(row_stats, parts, peaks, totals, out_frags, warps, warp, lane, gq, tq):
    """A block's warps (each over pages of its own) at an item's end: their row peaks and softmax totals
    (rows gq and gq + 8) meet in shared `row_stats` [2, warps, 16], each warp rescales its output rows to
    the block's peaks, and warps 1.. leave theirs in `parts` [_merge_slots(warps), 32 lanes, fragments x 4,
    and 4 more floats: a quarter warp's 16-byte stores in different banks]: past 4 warps, halves of the block
    first fold onto the other halves (warp w + n added into warp w), so that 8 warps' merge fits the CPU's
    64 KB a block. Returns (the block's peaks, their bases: 0 for a row with no visible token, the rescaled
    fragments)."""
    if tq == 0:
        for h in fx.range_constexpr(2):
            row_stats[0, warp, gq + 8 * h] = peaks[h]
            row_stats[1, warp, gq + 8 * h] = totals[h]
    fx.barrier()
    tops = []
    for h in fx.range_constexpr(2):
        top = row_stats[0, 0, gq + 8 * h]
        for w in fx.range_constexpr(1, warps):
            top = fx.max(top, row_stats[0, w, gq + 8 * h])
        tops.append(top)
    bases = [fx.select(top == float("-inf"), 0.0, top) for top in tops]
    factors = [fx.exp2(peaks[h] - bases[h], approx=True) for h in range(2)]
    rescale = fx.Vector.from_elements([factors[0], factors[0], factors[1], factors[1]])
    out_frags = [o * rescale for o in out_frags]
    holding = warps
    while holding > 4:
        holding //= 2
        if (warp >= holding) & (warp < 2 * holding):
            for j, o in enumerate(out_frags):
                o.store(parts, (warp - holding, lane, 4 * j), align=16)
        fx.barrier()
        if warp < holding:
            out_frags = [o + fx.Vector.load(parts, (warp, lane, 4 * j), 4, align=16) for j, o in enumerate(out_frags)]
        fx.barrier()  # (the slots read before the next round's stores)
    if (warp > 0) & (warp < holding):
        for j, o in enumerate(out_frags):
            o.store(parts, (warp - 1, lane, 4 * j), align=16)
    fx.barrier()
    return tops, bases, out_frags


def _merge_slots(warps):
    """The output fragments' slots of _share_rows' merge: one for each warp but the first, or past 4
    warps, one for each warp of the half that folds."""
    return warps // 2 if warps > 4 else warps - 1


def _gather_rows(row_stats, parts, bases, out_frags, warps, lane, gq):
    """Warp 0's half of _share_rows: (the block's softmax totals of rows gq and gq + 8, its output
    fragments: the sum of every warp's)."""
    totals = []
    for h in fx.range_constexpr(2):
        total = 0.0
        for w in fx.range_constexpr(warps):
            total = total + row_stats[1, w, gq + 8 * h] * fx.exp2(row_stats[0, w, gq + 8 * h] - bases[h], approx=True)
        totals.append(total)
    merged = []
    for j, o in enumerate(out_frags):
        for w in fx.range_constexpr(min(warps, 4) - 1):  # (past 4 warps, folded into 4 by _share_rows)
            o = o + fx.Vector.load(parts, (w, lane, 4 * j), 4, align=16)
        merged.append(o)
    return totals, merged


def _store_partial(partial_out, partial_lse, slot, peaks, totals, out_frags, v_factor, rows, first_row, group, gq,
                   tq, head_size):
    """A warp's rows gq and gq + 8 of the block's `rows` from `first_row` on (peaks, softmax totals, output
    fragments) as partial result `slot`: the output normalized (times the V scale `v_factor`), and its
    log-sum-exp."""
    for i in fx.range_constexpr(4):
        row = first_row + gq + 8 * (i // 2)
        total = totals[i // 2]
        factor = fx.select(total > 0.0, v_factor / total, 0.0)
        if gq + 8 * (i // 2) < rows:
            # the lane's head dimensions (head_size / 8) (2 tq + i % 2) on are consecutive: wide stores
            for p in fx.range_constexpr(0, head_size // 8, 16):
                (fx.Vector.from_elements([out_frags[j][i] for j in range(p, min(p + 16, head_size // 8))])
                 * factor).store(partial_out, (slot, row // group, row % group,
                                               (head_size // 8) * (2 * tq + i % 2) + p), align=16)
    if tq == 0:
        for h in fx.range_constexpr(2):
            if gq + 8 * h < rows:
                row = first_row + gq + 8 * h
                partial_lse[slot, row // group, row % group] = peaks[h] + fx.log2(totals[h])


def _last_to_arrive(arrivals, index, count, ticket, thread):
    """Whether this block is the last of the `count` that compute parts of
    arrivals[index]'s context: every thread's partial results fenced
    (release), then one ticket for the block; the last block's threads fence
    (acquire) before they read the others' results, and it leaves the count
    at 0 for the next launch. `ticket`: a shared Int32 of the block's."""
    fx.memory_fence(scope="device", order="release")
    fx.barrier()
    if thread == 0:
        taken = fx.atomic_add(arrivals, index, 1, scope="device", order="acq_rel")
        ticket[0] = taken
        if taken == count - 1:
            arrivals[index] = 0
    fx.barrier()
    last = ticket[0] == count - 1
    if last:
        fx.memory_fence(scope="device", order="acquire")
    return last


def _combine(partial_out, partial_lse, first, count, out, seq, kv_head, first_row, row_count, thread, threads,
             group, query_length, head_size):
    """Writes rows first_row.. first_row + row_count (q token x q head of the group) of (seq, kv_head)'s
    output: the LSE-weighted mean of its `count` partial rows from slot `first` on; `threads` threads
    share the rows, LANES head dimensions at a time."""
    for e in range(thread * LANES, row_count * head_size, threads * LANES):
        row = first_row + e // head_size
        d = e % head_size
        peak, weights, total = _weighed(partial_out, partial_lse, first, first + count, 1, row // group, row % group, d)
        (total / weights).store(out, (seq * query_length + row // group, kv_head * group + row % group, d))


def _weighed(partial_out, partial_lse, start, end, stride, q_index, g, d):
    """(peak, sum of weights, weighted sum) of partial slots start, start + stride, .. before `end` at row
    (q_index, g), head dimensions d.. d + LANES: the log-sum-exp weights, exp2(lse - peak). One pass,
    online, REDUCE_STEP partials at a time (their loads in flight together)."""
    peak = float("-inf")
    weights = 0.0
    total = fx.Vector.zeros(LANES, fx.Float32)
    for p in range(start, end, REDUCE_STEP * stride):
        slots = [fx.min(p + k * stride, end - 1) for k in range(REDUCE_STEP)]
        lse = [fx.select(p + k * stride < end, partial_lse[slots[k], q_index, g], float("-inf"))
               for k in range(REDUCE_STEP)]
        parts = [fx.Vector.load(partial_out, (slots[k], q_index, g, d), LANES, align=16) for k in range(REDUCE_STEP)]
        new_peak = peak
        for k in fx.range_constexpr(REDUCE_STEP):
            new_peak = fx.max(new_peak, lse[k])
        base = fx.select(new_peak == float("-inf"), 0.0, new_peak)  # no visible token yet
        rescale = fx.exp2(peak - base, approx=True)
        weights = weights * rescale
        total = total * rescale
        for k in fx.range_constexpr(REDUCE_STEP):
            weight = fx.exp2(lse[k] - base, approx=True)
            weights = weights + weight
            total = fx.fma(parts[k], weight, total)
        peak = new_peak
    return peak, weights, total


def _combine_threads(head_size, most_partials):
    """The combine kernel's threads: a column of LANES head dimensions each, in groups enough that a group
    weighs about REDUCE_STEP of a context's partials (`most_partials`: the most any context has), so that
    its loads are one round trip, 128 to 1024."""
    columns = head_size // LANES
    groups = 1 << ((max(1, most_partials) + REDUCE_STEP - 1) // REDUCE_STEP - 1).bit_length()
    return columns * min(max(groups, 128 // columns), 1024 // columns)


# -- the compile factory, as upstream: keyed by static arguments only ------------


@functools.lru_cache(maxsize=256)
def compile_pa_decode_ps(softmax_scale=None, trans_v=False, needs_mask=True, query_group_size=1,
                         per_token_kv=False, query_length=1, fp8_format="e4m3fnuz"):
    group = query_group_size
    rows = group * query_length

    @flyc.kernel
    def pa_decode_ps_kernel(query: fx.Tensor, key_cache: fx.Tensor, value_cache: fx.Tensor,
                            block_tables: fx.Tensor, context_lengths: fx.Tensor, k_scale: fx.Tensor,
                            v_scale: fx.Tensor, work: fx.Tensor, partial_out: fx.Tensor,
                            partial_lse: fx.Tensor, partial_ranges: fx.Tensor, arrivals: fx.Tensor,
                            out: fx.Tensor, head_size: fx.Constexpr[int], block_size: fx.Constexpr[int]):
        scale = softmax_scale if fx.const_expr(softmax_scale is not None) else 1.0 / math.sqrt(head_size)
        # a thread per query row (q token, q head of the group): `block_rows` of them per block
        # (blockIdx.y picks which), and a page staged `tile` tokens at a time
        block_rows, tile = _ps_tiles(rows, head_size, block_size)
        t = fx.thread_idx.x
        row = fx.block_idx.y * block_rows + t
        q_index = row // group
        g = row % group
        q_rows = fx.shared((block_rows, head_size), fx.Float32)
        acc = fx.shared((block_rows, head_size), fx.Float32)
        keys = fx.shared((tile, head_size), fx.Float32)
        values = fx.shared((tile, head_size), fx.Float32)
        scores = fx.shared((block_rows, tile), fx.Float32)  # a tile's scores, then its weights
        ticket = fx.shared((1,), fx.Int32)
        for item in range(fx.block_idx.x, work.shape[0], fx.grid_dim.x):
            seq = work[item, 0]
            kv_head = work[item, 1]
            context_length = context_lengths[seq]
            _load_q_fragments(query, q_rows, t, seq * query_length + q_index, kv_head * group + g, 0, head_size,
                              scale * LOG2E)
            for d in range(0, head_size, LANES):
                fx.Vector.zeros(LANES, fx.Float32).store(acc, (t, d))
            peak = float("-inf")
            total = 0.0
            fx.barrier()
            for page in range(work[item, 2], work[item, 3]):
                block = block_tables[seq, page]
                for start in range(0, block_size, tile):
                    # LANES consecutive elements of one token's row at a time
                    for e in range(t * LANES, tile * head_size, block_rows * LANES):
                        token = start + e // head_size
                        d = e % head_size
                        ks = _kv_scale(k_scale, per_token_kv, block, kv_head, token)
                        vs = _kv_scale(v_scale, per_token_kv, block, kv_head, token)
                        (fx.Vector.load(key_cache, (block, kv_head, token, d), LANES).to(fx.Float32) * ks).store(
                            keys, (e // head_size, d))
                        if fx.const_expr(trans_v):
                            for lane in fx.range_constexpr(LANES):
                                values[e // head_size, d + lane] = (
                                    value_cache[block, kv_head, d + lane, token].to(fx.Float32) * vs)
                        else:
                            (fx.Vector.load(value_cache, (block, kv_head, token, d), LANES).to(fx.Float32)
                             * vs).store(values, (e // head_size, d))
                    fx.barrier()
                    # Online softmax (exp2 domain) a tile at a time: the tile's scores and their peak,
                    # then one rescale of the row's terms and the tile's weighted values added in
                    # registers, so the accumulator row is read and written once per tile.
                    tile_peak = peak
                    for token in range(tile):
                        score = float("-inf")
                        position = page * block_size + start + token
                        if not fx.const_expr(needs_mask) or _visible(position, context_length, query_length, q_index):
                            dots = fx.Vector.zeros(LANES, fx.Float32)
                            for d in range(0, head_size, LANES):
                                dots = fx.fma(fx.Vector.load(q_rows, (t, d), LANES),
                                              fx.Vector.load(keys, (token, d), LANES), dots)
                            score = dots.reduce("add")
                        scores[t, token] = score
                        tile_peak = fx.max(tile_peak, score)
                    if tile_peak > float("-inf"):  # a visible token so far
                        rescale = fx.exp2(peak - tile_peak, approx=True)
                        total = total * rescale
                        for token in range(tile):
                            weight = fx.exp2(scores[t, token] - tile_peak, approx=True)  # 0 for a masked token
                            scores[t, token] = weight
                            total = total + weight
                        for d in range(0, head_size, LANES):
                            acc_row = fx.Vector.load(acc, (t, d), LANES) * rescale
                            for token in range(tile):
                                acc_row = fx.fma(fx.Vector.load(values, (token, d), LANES), scores[t, token], acc_row)
                            acc_row.store(acc, (t, d))
                        peak = tile_peak
                    fx.barrier()
            slot = work[item, 4]
            _normalize(acc, t, head_size, total, partial_out, slot, q_index, g)
            partial_lse[slot, q_index, g] = peak + fx.log2(total)
            count = partial_ranges[seq, kv_head, 1]
            if _last_to_arrive(arrivals, (seq, kv_head, fx.block_idx.y), count, ticket, t):
                _combine(partial_out, partial_lse, partial_ranges[seq, kv_head, 0], count, out, seq, kv_head,
                         fx.block_idx.y * block_rows, block_rows, t, block_rows, group, query_length, head_size)
            fx.barrier()

    @flyc.kernel
    def pa_decode_mma_kernel(query: fx.Tensor, key_cache: fx.Tensor, value_cache: fx.Tensor,
                             block_tables: fx.Tensor, context_lengths: fx.Tensor, k_scale: fx.Tensor,
                             v_scale: fx.Tensor, work: fx.Tensor, partial_out: fx.Tensor,
                             partial_lse: fx.Tensor, partial_ranges: fx.Tensor, arrivals: fx.Tensor,
                             out: fx.Tensor, head_size: fx.Constexpr[int],
                             block_size: fx.Constexpr[int], stages: fx.Constexpr[int],
                             one_launch: fx.Constexpr[bool], warps: fx.Constexpr[int],
                             prefetch: fx.Constexpr[bool]):
        # A block of `warps` warps per work item: warp w computes the item's pages w, w + warps, .., and
        # the warps' results are merged in shared memory (_share_rows). A warp's lanes as the matrix units
        # see them: gq = lane // 4, tq = lane % 4.
        if fx.const_expr(not one_launch):
            fx.launch_dependents()  # the combine kernel's blocks resident, waiting for this one's end
        scale = softmax_scale if fx.const_expr(softmax_scale is not None) else 1.0 / math.sqrt(head_size)
        thread = fx.thread_idx.x
        lane = thread % 32
        warp = thread // 32 if fx.const_expr(warps > 1) else 0  # (a Python 0: the block's control flow is uniform)
        gq = lane // 4
        tq = lane % 4
        steps = head_size // 16  # along the head dimension, 16 at a time
        tiles = block_size // 16  # of 16 tokens, a page
        # the block's query rows of the kv head: all of them, or (past 16) blockIdx.y's share
        block_rows = _block_rows(rows)
        row_block = fx.block_idx.y if fx.const_expr(block_rows < rows) else 0
        first_row = row_block * block_rows
        q_rows = fx.shared((16, head_size), fx.Float16)  # as the matrix units take them, read every page
        q_parts = _q_row_parts(32 * warps, block_rows, head_size)
        q_width = head_size // q_parts
        ticket = fx.shared((1,), fx.Int32)
        # a thread's row of each stage: head_size bytes and 16 more, so that the lanes' 16-byte reads of a
        # quarter warp fall in different banks
        staged = [fx.shared((32 * warps, head_size + 16), key_cache.dtype)
                  for _ in range(stages if stages > 1 else 0)]
        if fx.const_expr(warps > 1):  # what the warps hand each other at an item's end (_share_rows)
            row_stats = fx.shared((2, warps, 16), fx.Float32)
            parts = fx.shared((_merge_slots(warps), 32, head_size // 2 + 4), fx.Float32)
        for item in range(fx.block_idx.x, work.shape[0], fx.grid_dim.x):
            # Warp w computes tiles first_tile + w, first_tile + w + warps, ..: the warps step through the item
            # together (the loop's bounds the block's), a warp's tile past the item's masked.
            seq, kv_head, context_length, first_tile, end_tile = _work_item(work, context_lengths, item, tiles)
            # With stages > 1 a lane keeps stages - 1 tiles' bytes in flight (async copies into shared memory,
            # each stage an array of its own) and computes on the oldest; with 1 it loads each tile as it
            # computes it. Either way the block-table entries are read a tile ahead. The first of them (and
            # with the prefetch its tile's bytes) is asked for before the query prologue, so that the chain
            # work list -> block table -> page runs beside the prologue's loads and barrier, not after them.
            ahead = stages - 1
            upcoming, upcoming_first = _tile(block_tables, seq, first_tile + warp, end_tile, tiles)
            held = [upcoming] * stages  # the tile each stage holds: its block, and its first token in the block
            held_first = [upcoming_first] * stages
            if fx.const_expr(prefetch):  # (one stage) the next tile's bytes in registers while one is computed
                fetched = _page_pieces(key_cache, value_cache, upcoming, upcoming_first, kv_head, gq, tq, head_size)
                fetched_block, fetched_first = upcoming, upcoming_first
                upcoming, upcoming_first = _tile(block_tables, seq, first_tile + warp + warps, end_tile, tiles)
            row_scale = scale * LOG2E * (1.0 if fx.const_expr(per_token_kv) else k_scale[0])
            if thread < block_rows * q_parts:  # q_parts threads a row, a slice each: a short prologue
                r = thread // q_parts
                _load_q_fragments(query, q_rows, r, seq * query_length + (first_row + r) // group,
                                  kv_head * group + (first_row + r) % group, (thread % q_parts) * q_width, q_width,
                                  row_scale)
            fx.barrier()  # lanes read each other's rows: the stores first (GPUs do not run a warp in lockstep)
            peak_a = peak_b = float("-inf")  # rows gq and gq + 8
            sum_a = sum_b = 0.0  # this lane's share of their softmax denominators
            out_frags = [fx.Vector.zeros(4, fx.Float32) for _ in range(head_size // 8)]
            for a in fx.range_constexpr(ahead):
                tile = first_tile + a * warps + warp
                _copy_page(staged[a], key_cache, value_cache, upcoming, upcoming_first, kv_head, thread, gq, tq,
                           head_size, tile < end_tile)
                held = [upcoming if i == a else b for i, b in enumerate(held)]
                held_first = [upcoming_first if i == a else f for i, f in enumerate(held_first)]
                upcoming, upcoming_first = _tile(block_tables, seq, tile + warps, end_tile, tiles)
            for base in range(first_tile, end_tile, stages * warps):
                for at in fx.range_constexpr(stages):
                    tile = base + at * warps + warp
                    if fx.const_expr(prefetch):
                        block, first = fetched_block, fetched_first
                        key_bytes, v_bytes = _as_page(fetched, head_size)
                        fetched = _page_pieces(key_cache, value_cache, upcoming, upcoming_first, kv_head, gq, tq,
                                               head_size)
                        fetched_block, fetched_first = upcoming, upcoming_first
                        upcoming, upcoming_first = _tile(block_tables, seq, tile + 2 * warps, end_tile, tiles)
                    elif fx.const_expr(stages == 1):
                        block, first = upcoming, upcoming_first
                        upcoming, upcoming_first = _tile(block_tables, seq, tile + warps, end_tile, tiles)
                        key_bytes, v_bytes = _as_page(_page_pieces(key_cache, value_cache, block, first, kv_head, gq,
                                                                   tq, head_size), head_size)
                    else:
                        into = (at + ahead) % stages  # the stage computed on a tile ago
                        _copy_page(staged[into], key_cache, value_cache, upcoming, upcoming_first, kv_head, thread,
                                   gq, tq, head_size, tile + ahead * warps < end_tile)
                        held = [upcoming if i == into else b for i, b in enumerate(held)]
                        held_first = [upcoming_first if i == into else f for i, f in enumerate(held_first)]
                        upcoming, upcoming_first = _tile(block_tables, seq, tile + (ahead + 1) * warps, end_tile,
                                                         tiles)
                        fx.async_wait(ahead)  # the oldest group, this tile's, has landed
                        block, first = held[at], held_first[at]
                        key_bytes, v_bytes = _staged_bytes(staged[at], thread, gq, tq, head_size)
                    # a step's tiles past the item's: skipped by a block's one warp, masked where the warps of
                    # a block must reach each mma together
                    live = tile < end_tile if fx.const_expr(stages > 1 or warps > 1) else True
                    if fx.const_expr(warps > 1) or live:
                        if fx.const_expr(per_token_kv):
                            k_scales, v_scales = _token_scales(k_scale, v_scale, block, first, kv_head, tq)
                        scores = []
                        for half in fx.range_constexpr(2):  # tokens 8 half + gq of the tile, as B fragments
                            keys = [chunk.to(fx.Float16) for chunk in key_bytes[half]]
                            acc = fx.Vector.zeros(4, fx.Float32)
                            for st in fx.range_constexpr(steps):
                                b = fx.Vector.from_elements([keys[st // 4][4 * (st % 4) + i] for i in range(4)])
                                acc = fx.mma(_q_fragment(q_rows, block_rows, gq, tq, st), b, acc)
                            scores.append(acc)
                        # this lane's scores: rows gq (i < 2) and gq + 8, tokens 8 half + 2 tq + i % 2
                        values = []
                        for half in fx.range_constexpr(2):
                            for i in fx.range_constexpr(4):
                                token = 8 * half + 2 * tq + i % 2
                                score = scores[half][i]
                                if fx.const_expr(per_token_kv):
                                    score = score * k_scales[4 * half + i]
                                if fx.const_expr(needs_mask):
                                    row = first_row + gq + 8 * (i // 2)
                                    visible = _visible(16 * tile + token, context_length, query_length,
                                                       row // group)
                                    score = fx.select(visible, score, float("-inf"))
                                if fx.const_expr(warps > 1):
                                    score = fx.select(live, score, float("-inf"))
                                values.append(score)
                        new_a = _group_max(fx.max(fx.max(values[0], values[1]), fx.max(values[4], values[5])), peak_a)
                        new_b = _group_max(fx.max(fx.max(values[2], values[3]), fx.max(values[6], values[7])), peak_b)
                        base_a = fx.select(new_a == float("-inf"), 0.0, new_a)
                        base_b = fx.select(new_b == float("-inf"), 0.0, new_b)
                        rescale_a = fx.exp2(peak_a - base_a, approx=True)
                        rescale_b = fx.exp2(peak_b - base_b, approx=True)
                        weights = [fx.exp2(v - (base_a if (k % 4) < 2 else base_b), approx=True)
                                   for k, v in enumerate(values)]
                        sum_a = sum_a * rescale_a + weights[0] + weights[1] + weights[4] + weights[5]
                        sum_b = sum_b * rescale_b + weights[2] + weights[3] + weights[6] + weights[7]
                        peak_a, peak_b = new_a, new_b
                        if fx.const_expr(per_token_kv):
                            weights = [w * v_scales[k] for k, w in enumerate(weights)]
                        # the weights as an A fragment (16 rows x 16 tokens)
                        p_frag = fx.Vector.from_elements([weights[4 * (i // 4) + (i % 2) + 2 * ((i // 2) % 2)]
                                                          .to(fx.Float16) for i in range(8)])
                        v_pieces = [piece.to(fx.Float16) for piece in v_bytes]  # V row r's, 16 a piece
                        rescale = fx.Vector.from_elements([rescale_a, rescale_a, rescale_b, rescale_b])
                        out_frags = [fx.mma(p_frag, fx.Vector.from_elements(
                            [v_pieces[r * len(v_pieces) // 4 + c // 16][c % 16] for r in range(4)]), o * rescale)
                            for c, o in enumerate(out_frags)]
            if fx.const_expr(stages > 1):
                fx.async_wait(0)  # the copies past the item's pages (masked: zeros) land before the next item's
            totals = [_group_sum(sum_a), _group_sum(sum_b)]  # rows gq and gq + 8
            peaks = [peak_a, peak_b]
            if fx.const_expr(warps > 1):
                peaks, bases, out_frags = _share_rows(row_stats, parts, peaks, totals, out_frags, warps, warp, lane,
                                                      gq, tq)
            if warp == 0:  # the block's only warp, or the one that merges the others' rows into its own
                if fx.const_expr(warps > 1):
                    merged_totals, merged = _gather_rows(row_stats, parts, bases, out_frags, warps, lane, gq)
                else:
                    merged_totals, merged = totals, out_frags
                _store_partial(partial_out, partial_lse, work[item, 4], peaks, merged_totals, merged,
                               1.0 if fx.const_expr(per_token_kv) else v_scale[0], block_rows, first_row, group,
                               gq, tq, head_size)
            if fx.const_expr(one_launch):
                # (its barriers: every thread done with q_rows before the next item overwrites them)
                count = partial_ranges[seq, kv_head, 1]
                if _last_to_arrive(arrivals, (seq, kv_head, row_block), count, ticket, thread):
                    _combine(partial_out, partial_lse, partial_ranges[seq, kv_head, 0], count, out, seq, kv_head,
                             first_row, block_rows, thread, 32 * warps, group, query_length, head_size)
            else:
                fx.barrier()  # every thread done with q_rows before the next item overwrites them

    @flyc.kernel
    def pa_decode_wave_kernel(query: fx.Tensor, key_cache: fx.Tensor, value_cache: fx.Tensor,
                              block_tables: fx.Tensor, context_lengths: fx.Tensor, k_scale: fx.Tensor,
                              v_scale: fx.Tensor, work: fx.Tensor, partial_out: fx.Tensor,
                              partial_lse: fx.Tensor, partial_ranges: fx.Tensor, arrivals: fx.Tensor,
                              out: fx.Tensor, head_size: fx.Constexpr[int], block_size: fx.Constexpr[int],
                              one_launch: fx.Constexpr[bool]):
        # The matrix-unit kernel for 64-lane waves (AMD), a wave a block, in MFMA's own layout (fx.wave_mma):
        # lane l holds query row r = l % 16 of the block's and quarter q = l // 16. A tile's scores come as
        # S^T = K Q^T, tokens on MFMA's rows: the lane reads key row r's head dimensions from (H/4) q on and
        # is left the scores of tokens 4q..4q+3 for its own row r, whose weights are the B fragment of
        # O^T = V^T P^T as they are (V's A fragment: tokens 4q..4q+3 at head dimensions (H/16) r on); its
        # output is row r's head dimensions (H/4) q on. No value crosses lanes but a row's softmax statistics
        # (two shuffles).
        if fx.const_expr(not one_launch):
            fx.launch_dependents()  # (where the target has programmatic dependent launch)
        scale = softmax_scale if fx.const_expr(softmax_scale is not None) else 1.0 / math.sqrt(head_size)
        thread = fx.thread_idx.x
        r = thread % 16
        q = thread // 16
        quarter = head_size // 4
        steps = head_size // 16
        tiles = block_size // 16
        block_rows = _block_rows(rows)
        row_block = fx.block_idx.y if fx.const_expr(block_rows < rows) else 0
        first_row = row_block * block_rows
        row = first_row + r
        # a lane past the block's rows computes a copy of one of them, never stored
        q_source = r % block_rows if fx.const_expr(block_rows < 16) else r
        q_rows = fx.shared((block_rows, head_size), fx.Float16)
        q_parts = _q_row_parts(64, block_rows, head_size)
        q_width = head_size // q_parts
        ticket = fx.shared((1,), fx.Int32)
        for item in range(fx.block_idx.x, work.shape[0], fx.grid_dim.x):
            seq, kv_head, context_length, first_tile, end_tile = _work_item(work, context_lengths, item, tiles)
            row_scale = scale * LOG2E * (1.0 if fx.const_expr(per_token_kv) else k_scale[0])
            if thread < block_rows * q_parts:
                part_row = thread // q_parts
                _load_q_fragments(query, q_rows, part_row, seq * query_length + (first_row + part_row) // group,
                                  kv_head * group + (first_row + part_row) % group, (thread % q_parts) * q_width,
                                  q_width, row_scale)
            fx.barrier()
            q_frags = [fx.Vector.load(q_rows, (q_source, quarter * q + 4 * s), 4, align=8) for s in range(steps)]
            peak = float("-inf")
            total = 0.0  # this lane's share of row r's softmax denominator: its tokens'
            out_frags = [fx.Vector.zeros(4, fx.Float32) for _ in range(steps)]
            for tile in range(first_tile, end_tile):
                block, first = _tile(block_tables, seq, tile, end_tile, tiles)
                keys = [fx.Vector.load(key_cache, (block, kv_head, first + r, quarter * q + p), 16, align=16)
                        .to(fx.Float16) for p in range(0, quarter, 16)]
                v_rows = [fx.Vector.load(value_cache, (block, kv_head, first + 4 * q + i, steps * r), steps,
                                         align=steps).to(fx.Float16) for i in range(4)]
                scores = fx.Vector.zeros(4, fx.Float32)
                for st in fx.range_constexpr(steps):
                    key = fx.Vector.from_elements([keys[4 * st // 16][4 * st % 16 + i] for i in range(4)])
                    scores = fx.wave_mma(key, q_frags[st], scores)
                values = []
                for i in fx.range_constexpr(4):  # tokens 4q + i of the tile, row r
                    score = scores[i]
                    if fx.const_expr(per_token_kv):
                        score = score * k_scale[block, kv_head, first + 4 * q + i]
                    if fx.const_expr(needs_mask):
                        visible = _visible(16 * tile + 4 * q + i, context_length, query_length, row // group)
                        score = fx.select(visible, score, float("-inf"))
                    values.append(score)
                top = fx.max(fx.max(values[0], values[1]), fx.max(values[2], values[3]))
                top = fx.max(top, top.shuffle_xor(16))
                new_peak = fx.max(peak, fx.max(top, top.shuffle_xor(32)))
                base = fx.select(new_peak == float("-inf"), 0.0, new_peak)  # no visible token yet
                rescale = fx.exp2(peak - base, approx=True)
                weights = [fx.exp2(v - base, approx=True) for v in values]
                total = total * rescale + weights[0] + weights[1] + weights[2] + weights[3]
                peak = new_peak
                if fx.const_expr(per_token_kv):
                    weights = [w * v_scale[block, kv_head, first + 4 * q + i] for i, w in enumerate(weights)]
                p_frag = fx.Vector.from_elements([w.to(fx.Float16) for w in weights])
                out_frags = [fx.wave_mma(fx.Vector.from_elements([v_rows[i][c] for i in range(4)]), p_frag,
                                         o * rescale) for c, o in enumerate(out_frags)]
            total = total + total.shuffle_xor(16)
            total = total + total.shuffle_xor(32)
            slot = work[item, 4]
            if r < block_rows:
                factor = fx.select(total > 0.0, (1.0 if fx.const_expr(per_token_kv) else v_scale[0]) / total, 0.0)
                # head dimension quarter q + steps i + c of row r is element i of out_frags[c]
                mine = [out_frags[c][i] for i in range(4) for c in range(steps)]
                for d in fx.range_constexpr(0, quarter, LANES):
                    (fx.Vector.from_elements(mine[d:d + LANES]) * factor).store(
                        partial_out, (slot, row // group, row % group, quarter * q + d), align=16)
                if q == 0:
                    partial_lse[slot, row // group, row % group] = peak + fx.log2(total)
            if fx.const_expr(one_launch):
                count = partial_ranges[seq, kv_head, 1]
                if _last_to_arrive(arrivals, (seq, kv_head, row_block), count, ticket, thread):
                    _combine(partial_out, partial_lse, partial_ranges[seq, kv_head, 0], count, out, seq, kv_head,
                             first_row, block_rows, thread, 64, group, query_length, head_size)
            else:
                fx.barrier()  # every lane done with q_rows before the next item overwrites them

    @flyc.kernel
    def pa_combine_kernel(partial_out: fx.Tensor, partial_lse: fx.Tensor, partial_ranges: fx.Tensor,
                          out: fx.Tensor, head_size: fx.Constexpr[int], threads: fx.Constexpr[int]):
        # A block per (sequence, kv head, row): each group of its threads weighs every `groups`-th partial
        # slot over a column of LANES head dimensions, and the first group merges the groups' sums, so
        # that one long context's many partials are read by many threads at once.
        columns = head_size // LANES
        groups = threads // columns
        seq = fx.block_idx.x
        kv_head = fx.block_idx.y
        q_index = fx.block_idx.z // group
        g = fx.block_idx.z % group
        column = fx.thread_idx.x % columns
        part = fx.thread_idx.x // columns
        peaks = fx.shared((groups, columns), fx.Float32)
        weights = fx.shared((groups, columns), fx.Float32)
        totals = fx.shared((groups, columns * LANES), fx.Float32)
        first = partial_ranges[seq, kv_head, 0]  # (the host's: read before the main kernel ends)
        end = first + partial_ranges[seq, kv_head, 1]
        fx.wait_for_prior_grids()  # the main kernel's partial results
        peak, weight, total = _weighed(partial_out, partial_lse, first + part, end, groups, q_index, g,
                                       LANES * column)
        peaks[part, column] = peak
        weights[part, column] = weight
        total.store(totals, (part, LANES * column))
        fx.barrier()
        if part == 0:
            top = peak
            for other in fx.range_constexpr(1, groups):
                top = fx.max(top, peaks[other, column])
            base = fx.select(top == float("-inf"), 0.0, top)
            merged_weight = 0.0
            merged = fx.Vector.zeros(LANES, fx.Float32)
            for other in fx.range_constexpr(groups):
                scale = fx.exp2(peaks[other, column] - base, approx=True)
                merged_weight = merged_weight + weights[other, column] * scale
                merged = fx.fma(fx.Vector.load(totals, (other, LANES * column), LANES), scale, merged)
            (merged / merged_weight).store(out, (seq * query_length + q_index, kv_head * group + g, LANES * column))

    @flyc.jit
    def launch_pa_decode_ps(query: fx.Tensor, key_cache: fx.Tensor, value_cache: fx.Tensor,
                            block_tables: fx.Tensor, context_lengths: fx.Tensor, k_scale: fx.Tensor,
                            v_scale: fx.Tensor, work: fx.Tensor, workers: fx.Int32, partial_out: fx.Tensor,
                            partial_lse: fx.Tensor, partial_ranges: fx.Tensor, arrivals: fx.Tensor,
                            out: fx.Tensor, head_size: fx.Constexpr[int], block_size: fx.Constexpr[int],
                            combine_threads: fx.Constexpr[int] = 128,
                            stages: fx.Constexpr[int] = 1, one_launch: fx.Constexpr[bool] = False,
                            warps: fx.Constexpr[int] = 1, prefetch: fx.Constexpr[bool] = False):
        # (the matrix-unit kernel's: combine_threads, when a combine kernel of its own combines, stages,
        # warps per block, and prefetch: the next page's bytes loaded into registers while one is computed)
        if fx.const_expr(prefetch and stages > 1):
            raise ValueError(f"prefetch=True is a stage in registers, for stages=1 (not {stages})")
        if fx.const_expr(_mma_kernel_wanted() and _matrix_unit_fits(rows, head_size, block_size, trans_v)):
            if fx.const_expr(fx.target().warp_size == 64):
                # a wave a block in MFMA's layout (warps, stages and prefetch are the 32-lane kernel's); two
                # waves a SIMD at least, which caps a wave at 256 VGPRs: LLVM then keeps the MFMAs' results in
                # VGPRs, not the accumulator registers (gfx942, head 128: 736 -> 660 instructions; 3 and 4
                # waves spill)
                pa_decode_wave_kernel(query, key_cache, value_cache, block_tables, context_lengths, k_scale,
                                      v_scale, work, partial_out, partial_lse, partial_ranges, arrivals, out,
                                      head_size, block_size, one_launch).launch(
                    grid=(workers, rows // _block_rows(rows)), block=(64,), min_blocks_per_sm={"amdgpu": 8})
            else:
                pa_decode_mma_kernel(query, key_cache, value_cache, block_tables, context_lengths, k_scale,
                                     v_scale, work, partial_out, partial_lse, partial_ranges, arrivals, out,
                                     head_size, block_size, stages, one_launch, warps, prefetch).launch(
                    grid=(workers, rows // _block_rows(rows)), block=(32 * warps,),
                    min_blocks_per_sm=_mma_blocks_per_sm(fp8_format, stages, warps, prefetch, head_size,
                                                         flyrt.bounds_checks()))
            if fx.const_expr(not one_launch):
                pa_combine_kernel(partial_out, partial_lse, partial_ranges, out, head_size, combine_threads).launch(
                    grid=(partial_ranges.shape[0], partial_ranges.shape[1], rows), block=(combine_threads,))
        else:
            block_rows = _block_rows(rows)
            pa_decode_ps_kernel(query, key_cache, value_cache, block_tables, context_lengths, k_scale, v_scale,
                                work, partial_out, partial_lse, partial_ranges, arrivals, out, head_size,
                                block_size).launch(grid=(workers, rows // block_rows), block=(block_rows,))

    return {"launch": launch_pa_decode_ps, "kernel": pa_decode_ps_kernel}


# -- host side ---------------------------------------------------------------------


def build_work_list(context_lengths, num_kv_heads, block_size, workers, pages_per_work=None):
    """Splits every (sequence, kv head) context into page ranges of
    `pages_per_work` pages (None: about two ranges per worker of `workers`).
    Returns work [items, 5] = (seq, kv_head, first page, end page, partial
    slot) and partial_ranges [num_seqs, num_kv_heads, 2] = (first slot, count).
    The kernels' workers take the items in turn: worker w items w, w + workers, .."""
    context_lengths = np.asarray(context_lengths)
    pages = (context_lengths + block_size - 1) // block_size
    if pages_per_work is None:
        total = int(pages.sum()) * num_kv_heads
        pages_per_work = max(1, -(-total // (2 * workers)))
    items = []
    ranges = np.zeros((len(context_lengths), num_kv_heads, 2), np.int32)
    for seq, count in enumerate(pages):
        for kv_head in range(num_kv_heads):
            ranges[seq, kv_head] = (len(items), 0)
            for first in range(0, int(count), pages_per_work):
                items.append((seq, kv_head, first, min(first + pages_per_work, int(count)), len(items)))
                ranges[seq, kv_head, 1] += 1
    return np.array(items, np.int32).reshape(-1, 5), ranges


def pa_decode_ps_launch(query, key_cache, value_cache, block_tables, context_lengths, k_scale, v_scale,
                        softmax_scale=None, trans_v=False, query_length=1, workers=None, pages_per_work=None,
                        out=None):
    """Decode attention over a paged FP8 KV cache; returns the output (query's
    dtype). numpy arrays run on the CPU; torch CUDA tensors on their GPU."""
    run, out = pa_decode_ps_prepare(query, key_cache, value_cache, block_tables, context_lengths, k_scale, v_scale,
                                    softmax_scale, trans_v, query_length, workers, pages_per_work, out)
    run()
    return out


# What the tuner picks pages per work item from (a GPU's default): from 2 (many small items, for a few
# long contexts: the combine kernel spreads their partials) to 32 (one item per worker on the
# benchmark's largest shape).
PAGES_PER_WORK = (2, 4, 8, 16, 32)
# And the split: how many workers (blocks) per multiprocessor share the work (on a GPU, when the caller
# leaves `workers` to it); DEFAULT_BLOCKS_PER_SM where it does not.
BLOCKS_PER_SM = (2, 4, 8, 16)
DEFAULT_BLOCKS_PER_SM = 16
# And on a GPU, how the matrix-unit kernel goes, (warps, stages, one_launch, prefetch): a block's warps (4
# share each work item's pages, a quarter of its dependent page steps each), its stages of shared memory (1:
# no async copies; 3: two pages in flight; it takes 2 too), whether its last block to arrive combines the
# partials (one launch) or a kernel of its own does, and whether a warp loads its next page into registers
# while it computes one. On the H200 (2026-12-04) shared-memory stages and one launch lost every layout
# they were timed on (one warp's last block: 32 threads weighing a long context's partials, 10x the combine
# kernel's time on a context of 32k), the prefetch won e4m3fnuz's big shape (457 -> 380 us) and the small
# ones (up to 15 %) and lost e4m3fn's big one (363 -> 387 us: its hint drops from 16 blocks to 12). Blocks of
# 8 warps with the prefetch (one a multiprocessor) won the single long context on an H100 (2026-12-06: 17.5 ->
# 16.5 us e4m3fn, 18.4 -> 17.0 e4m3fnuz) and lost the 16-sequence one (18.8 -> 21.4 e4m3fn).
VARIANTS = ((1, 1, False, False), (1, 1, False, True), (4, 1, False, False), (4, 1, False, True),
            (8, 1, False, True))


class _DecodeInputs:
    """One decode step's arguments, and what was built for each choice (the
    tuner times each choice's run, not the building of it)."""

    def __init__(self, arguments):
        self.arguments, self.buffers, self.plans = arguments, {}, {}
        self.planning = threading.Lock()  # the tuner compiles its choices on threads at once
        self.warmed = set()  # what the precompiles compiled: (combine threads, variant)


def _plan_for(inputs, pages_per_work, blocks_per_sm, stages, one_launch, warps, prefetch):
    choice = (pages_per_work, blocks_per_sm, stages, one_launch, warps, prefetch)
    with inputs.planning:  # one plan a choice, one launcher from the factory, whichever thread asks first
        plan = inputs.plans.get(choice)
        if plan is None:
            buffers = inputs.buffers.get(choice[:2])
            if buffers is None:  # the work list and partial results, shared by the kernel's variants
                arguments = dict(inputs.arguments)
                if arguments["workers"] is None and getattr(arguments["query"], "is_cuda", False):
                    arguments["workers"] = blocks_per_sm * _multiprocessors(arguments["query"])
                buffers = inputs.buffers[choice[:2]] = _decode_buffers(**arguments, pages_per_work=pages_per_work)
            plan = inputs.plans[choice] = _Step(buffers, stages, one_launch, warps, prefetch)
    return plan


def _split_choices(configs, named):
    """The split is a GPU's choice, and only when the caller left `workers` to it; the matrix-unit
    kernel's variants an NVIDIA GPU's, where that kernel takes the shape (the other kernels, and AMD's
    wave kernel, ignore them)."""
    q_shape, kv_shape, *_, query_length, trans_v, _, gpu_lanes, workers = named["layout"]
    open_split = gpu_lanes and workers is None
    rows = q_shape[1] // kv_shape[0] * query_length
    variants = gpu_lanes == 32 and _matrix_unit_fits(rows, q_shape[2], kv_shape[1], trans_v)
    return [c for c in configs if (open_split or c.kwargs["blocks_per_sm"] == DEFAULT_BLOCKS_PER_SM)
            and (variants or _variant(c) == VARIANTS[0])
            and c.kwargs["pages_per_work"] * kv_shape[1] // 16 >= c.kwargs["warps"]  # (no warp without a tile)
            and _merge_bytes(c.kwargs["warps"], q_shape[2]) <= MERGE_BYTES]


# The most shared memory the warps' merge takes (_share_rows): the CPU's 64 KB a block, less
# the query rows and row statistics beside it (8 warps at head size 256 would take 68 KB).
MERGE_BYTES = 56 * 1024


def _merge_bytes(warps, head_size):
    return _merge_slots(warps) * 32 * (head_size // 2 + 4) * 4 if warps > 1 else 0


def _variant(config):
    """A tuner config's matrix-unit kernel variant, (warps, stages, one_launch, prefetch) as VARIANTS lists
    them."""
    return tuple(config.kwargs[k] for k in ("warps", "stages", "one_launch", "prefetch"))


def _precompile_decode_step(inputs, layout, pages_per_work, blocks_per_sm, stages, one_launch, warps, prefetch):
    """A choice's kernels compiled (not run): what the tuner does for every choice, on threads at once, before
    it times any (the kernel's variants, five on a GPU, compile side by side). Choices that differ in their
    split alone share a specialization: one thread compiles it, not one per choice (all at once on the H100,
    72 choices took 11.4 s where 3 had taken one at a time)."""
    step = _plan_for(inputs, pages_per_work, blocks_per_sm, stages, one_launch, warps, prefetch)
    specialized = step.args[-5:]  # the combine's threads and the variant: the launcher's constexprs
    with inputs.planning:
        if specialized in inputs.warmed:
            return
        inputs.warmed.add(specialized)
    step.warmup()


# 100 configs on a GPU (20 where the matrix-unit kernel does not take the shape): about 12 ms of timing
# each keeps a layout's tuning near a second.
@flyc.autotune(configs=[flyc.Config({"pages_per_work": p, "blocks_per_sm": b, "stages": s, "one_launch": one,
                                     "warps": w, "prefetch": ahead})
                        for p in PAGES_PER_WORK for b in BLOCKS_PER_SM for w, s, one, ahead in VARIANTS],
               key=["layout"], prune_configs_by={"early_config_prune": _split_choices}, warmup=2, rep=10,
               precompile=_precompile_decode_step, on_edit="keep")
def _tuned_decode_step(inputs, layout, pages_per_work, blocks_per_sm, stages, one_launch, warps, prefetch):
    """One decode step with this choice: flyc.autotune keeps the fastest per batch layout. An edit to the
    kernels or this module's host code recompiles the choice made before it, untimed (a sweep is seconds on a
    GPU, the edit loop's next result one compile); _tuned_decode_step.retune() times the edited code."""
    _plan_for(inputs, pages_per_work, blocks_per_sm, stages, one_launch, warps, prefetch)()


def pa_decode_ps_prepare(query, key_cache, value_cache, block_tables, context_lengths, k_scale, v_scale,
                         softmax_scale=None, trans_v=False, query_length=1, workers=None, pages_per_work=None,
                         out=None):
    """What a decode step needs besides its inputs' contents (the work list,
    the partial buffers, the launcher), built once for a batch's layout:
    returns (run, out), run() computing into out. Pages per work item: on a
    GPU, or given as "tuned", the fastest of PAGES_PER_WORK for the batch's
    layout, and on a GPU with `workers` left to it, the fastest split too
    (BLOCKS_PER_SM workers per multiprocessor), and on a GPU the matrix-unit
    kernel's VARIANTS; flyc.autotune: the first prepare of a layout times
    them, running steps into `out`. Else about two work items per worker, and
    8 workers on the CPU, 16 per multiprocessor on a GPU, the first variant
    (one warp a block, one stage, the partials combined by a kernel of their
    own)."""
    _count(workers, "workers")
    if pages_per_work != "tuned":
        _count(pages_per_work, "pages_per_work")
    lengths = _to_numpy(context_lengths)  # read once (from a GPU: a copy and a wait); the work list is built from it
    _check_batch(query, key_cache, value_cache, block_tables, lengths, trans_v, query_length)
    if out is None:
        on = _placement(query)
        out = np.empty_like(query) if on is np.asarray else on(np.empty(query.shape, np.float32)).to(query.dtype)
    k_scale, v_scale, per_token = _scales(k_scale, v_scale, key_cache.shape[:3], query)  # bad ones: before tuning
    arguments = dict(query=query, key_cache=key_cache, value_cache=value_cache, block_tables=block_tables,
                     context_lengths=lengths, k_scale=k_scale, v_scale=v_scale, softmax_scale=softmax_scale,
                     trans_v=trans_v, query_length=query_length, workers=workers, out=out)
    if pages_per_work == "tuned" or (pages_per_work is None and getattr(query, "is_cuda", False)):
        inputs = _DecodeInputs(arguments)
        pages = (lengths + key_cache.shape[2] - 1) // key_cache.shape[2]
        layout = (tuple(query.shape), tuple(key_cache.shape[1:]), _fp8_format(key_cache), len(pages),
                  int(pages.sum()), int(pages.max()), query_length, trans_v, per_token, _gpu_lanes(query), workers)
        _tuned_decode_step(inputs, layout)
        return _plan_for(inputs, **_tuned_decode_step.best_config.kwargs), out
    return _Step(_decode_buffers(**arguments, pages_per_work=pages_per_work)), out


def _gpu_lanes(query):
    """The lanes of a warp on the GPU `query` is on (an AMD GPU's waves under ROCm's torch: 64), 0 off one."""
    if not getattr(query, "is_cuda", False):
        return 0
    return 64 if getattr(sys.modules["torch"].version, "hip", None) else 32


def _decode_buffers(query, key_cache, value_cache, block_tables, context_lengths, k_scale, v_scale, softmax_scale,
                    trans_v, query_length, workers, pages_per_work, out):
    """(launcher, its arguments, the arrival counts) of a decode step with `pages_per_work` (None: about two
    work items per worker)."""
    _, num_q_heads, head_size = query.shape
    _, num_kv_heads, block_size = key_cache.shape[:3]
    if num_q_heads % num_kv_heads:
        raise ValueError(f"{num_q_heads} query heads do not group over {num_kv_heads} kv heads")
    if head_size % LANES:
        raise ValueError(f"head size {head_size} must be a multiple of {LANES}")
    fmt = _fp8_format(key_cache)
    if fmt is None or _fp8_format(value_cache) != fmt:
        raise TypeError("key and value caches must be FP8 tensors of one format (flyrt.fp8.quantize / as_fp8)")
    group = num_q_heads // num_kv_heads
    on = _placement(query)
    k_scale, v_scale, per_token_kv = _scales(k_scale, v_scale, key_cache.shape[:3], query)
    lengths = _to_numpy(context_lengths)
    if not workers:
        workers = DEFAULT_BLOCKS_PER_SM * _multiprocessors(query) if getattr(query, "is_cuda", False) else 8
    work, ranges = build_work_list(lengths, num_kv_heads, block_size, workers, pages_per_work)
    partial_out = on(np.zeros((len(work), query_length, group, head_size), np.float32))
    partial_lse = on(np.zeros((len(work), query_length, group), np.float32))
    # blocks arrived per (sequence, kv head, block of query rows); each launch leaves them at 0
    arrivals = on(np.zeros((len(lengths), num_kv_heads, group * query_length), np.int32))
    launch = compile_pa_decode_ps(softmax_scale, trans_v, True, group, per_token_kv, query_length, fmt)["launch"]
    blocks = max(1, min(workers, len(work)))  # no worker without an item
    args = (query, key_cache, value_cache, block_tables, on(lengths.astype(np.int32)), k_scale, v_scale, on(work),
            blocks, partial_out, partial_lse, on(ranges), arrivals, out, head_size, block_size,
            _combine_threads(head_size, int(ranges[..., 1].max(initial=1))))
    return launch, args, arrivals


class _Step:
    """One decode step on `buffers` (_decode_buffers), the matrix-unit kernel as chosen: call it to run it;
    `launcher` and `args` are what it launches (to lower it without running it)."""

    def __init__(self, buffers, stages=1, one_launch=False, warps=1, prefetch=False):
        self.buffers = buffers
        self.launcher, args, _ = buffers
        self.args = (*args, stages, one_launch, warps, prefetch)

    def warmup(self):
        """Compiles what a call runs, without running it."""
        self.launcher.warmup(*self.args)

    def __call__(self):
        try:
            self.launcher(*self.args)
        except BaseException:
            # A launch that stopped part way (an interrupt) leaves counts behind, which would make the
            # next run's last block another one.
            arrivals = self.buffers[2]
            arrivals[...] = 0
            raise


def _multiprocessors(query):
    import torch

    return torch.cuda.get_device_properties(query.device).multi_processor_count


def _fp8_format(cache):
    """"e4m3fnuz" or "e4m3fn" of an FP8 cache (numpy tagged, or torch float8)."""
    fmt = fp8.format_of(cache)
    if fmt is not None:
        return fmt.name
    return {"torch.float8_e4m3fnuz": "e4m3fnuz", "torch.float8_e4m3fn": "e4m3fn"}.get(str(getattr(cache, "dtype", "")))


def _to_numpy(values):
    return np.asarray(values.cpu() if hasattr(values, "cpu") else values)


def _placement(like):
    """How host arrays reach where `like` lives: numpy stays; torch tensors go to its device."""
    if isinstance(like, np.ndarray):
        return np.asarray
    import torch

    return lambda array: torch.from_numpy(np.ascontiguousarray(array)).to(like.device)


def _scales(k_scale, v_scale, pages, query):
    """(k, v, per_token) as the kernel reads them: float32, [1] per tensor or
    [blocks, kv heads, page] per token, where the query lives. A scale comes
    as users keep one: a Python float, a 0-dim or 1-element tensor (what
    serving engines keep per layer), or one per cached token."""
    shaped = [_scale(k_scale, "k_scale", pages, query), _scale(v_scale, "v_scale", pages, query)]
    per_token = [len(scale.shape) == 3 for scale in shaped]
    if per_token[0] != per_token[1]:
        raise ValueError("k_scale and v_scale must both be per tensor or both per token "
                         f"(got shapes {tuple(shaped[0].shape)} and {tuple(shaped[1].shape)})")
    return (*shaped, per_token[0])


def _check_batch(query, key_cache, value_cache, block_tables, lengths, trans_v, query_length):
    """What the kernels take of a batch's shapes and context lengths, checked on the host (the lengths are
    there already): a batch that breaks one would read past a block table, or leave query rows unwritten."""
    shapes = {name: tuple(array.shape) for name, array in (("query", query), ("key_cache", key_cache),
                                                            ("value_cache", value_cache),
                                                            ("block_tables", block_tables))}
    if [len(shape) for shape in shapes.values()] != [3, 4, 4, 2] or lengths.ndim != 1:
        raise ValueError(f"shapes {shapes}, context_lengths {lengths.shape}: query is [num_seqs * query_length, "
                         "num_q_heads, head_size], each cache [num_blocks, num_kv_heads, block_size, head_size], "
                         "block_tables [num_seqs, max_blocks], context_lengths [num_seqs]")
    v_shape = shapes["value_cache"]
    if trans_v:
        v_shape = (*v_shape[:2], v_shape[3], v_shape[2])  # [..., head_size, block_size]
    if shapes["key_cache"] != v_shape or shapes["key_cache"][3] != shapes["query"][2]:
        raise ValueError(f"the query's head size and the caches' shapes differ: {shapes}"
                         + (" (trans_v: V is [..., head_size, block_size])" if trans_v else ""))
    seqs = len(lengths)
    if isinstance(query_length, bool) or not isinstance(query_length, numbers.Integral) or query_length < 1 \
            or shapes["query"][0] != seqs * query_length:
        raise ValueError(f"query has {shapes['query'][0]} rows, not {seqs} sequences (context_lengths) x "
                         f"query_length {query_length!r}")
    if seqs and lengths.min() < 0:
        raise ValueError(f"sequence {int(np.argmin(lengths))}'s context length is {int(lengths.min())}")
    pages = (lengths + shapes["key_cache"][2] - 1) // shapes["key_cache"][2]
    if shapes["block_tables"][0] < seqs or (seqs and pages.max() > shapes["block_tables"][1]):
        longest = int(np.argmax(pages)) if seqs else 0
        raise ValueError(f"block_tables of shape {shapes['block_tables']} for {seqs} sequences; sequence "
                         f"{longest}'s {int(lengths[longest])} tokens take {int(pages[longest])} pages of "
                         f"{shapes['key_cache'][2]}")


def _count(value, name):
    """A split's count as given: None (left to the split's choice) or a positive whole number."""
    if value is not None and (isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1):
        raise ValueError(f"{name} is {value!r}: a positive whole number, or None to leave it to the split")


def _scale(scale, name, pages, query):
    """One scale as the kernel reads it. A float32 tensor already where the
    query is is used as it is, so that scales updated in place are seen."""
    if isinstance(scale, (int, float, np.number)):
        scale = np.array([scale], np.float32)
    shape = tuple(getattr(scale, "shape", (None,)))
    if shape != tuple(pages):
        if None in shape or int(np.prod(shape)) != 1:
            raise ValueError(f"{name} has shape {shape}: a scale is one number (a float, or a tensor of one "
                             f"element) or one per cached token, of shape {tuple(pages)} [blocks, kv heads, page]")
        scale = scale.reshape(1)
    if isinstance(scale, np.ndarray) or isinstance(query, np.ndarray):
        return _placement(query)(np.asarray(_to_numpy(scale), np.float32))
    import torch

    return scale.to(device=query.device, dtype=torch.float32)
