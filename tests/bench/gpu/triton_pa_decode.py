"""The peer of flyrt's PA decode on NVIDIA GPUs: a split-KV paged-attention
decode in Triton (written here, the usual design: a program per (sequence,
kv head, partition) multiplies a page at a time on the tensor cores with
tl.dot, online softmax in the exp2 domain, then a second kernel combines the
partitions by their log-sum-exp). FP8 e4m3fn caches only: Triton 3.6 on
sm_90 rejects float8_e4m3fnuz. Query length 1, per-tensor scales."""

import torch
import triton
import triton.language as tl

LOG2E = 1.4426950408889634


@triton.jit
def _partition(q, k_cache, v_cache, block_tables, context_lengths, out_part, lse_part, qk_scale, v_scale,
               stride_q_token, stride_q_head, stride_k_block, stride_k_head, stride_k_token, stride_table,
               stride_o_seq, stride_o_head, stride_o_part, stride_l_seq, stride_l_head,
               GROUP: tl.constexpr, ROWS: tl.constexpr, HEAD: tl.constexpr, PAGE: tl.constexpr,
               PAGES_PER_PART: tl.constexpr):
    seq = tl.program_id(0)
    kv_head = tl.program_id(1)
    part = tl.program_id(2)
    context = tl.load(context_lengths + seq)
    rows = tl.arange(0, ROWS)
    dims = tl.arange(0, HEAD)
    tokens = tl.arange(0, PAGE)
    first_page = part * PAGES_PER_PART
    query = tl.load(q + seq * stride_q_token + (kv_head * GROUP + rows)[:, None] * stride_q_head + dims[None, :],
                    mask=rows[:, None] < GROUP, other=0.0)
    query = (query.to(tl.float32) * qk_scale).to(tl.float16)
    peak = tl.full([ROWS], float("-inf"), tl.float32)
    total = tl.zeros([ROWS], tl.float32)
    acc = tl.zeros([ROWS, HEAD], tl.float32)
    for p in range(PAGES_PER_PART):
        page = first_page + p
        position = page * PAGE + tokens
        block = tl.load(block_tables + seq * stride_table + page, mask=page * PAGE < context, other=0)
        base = block * stride_k_block + kv_head * stride_k_head + tokens[:, None] * stride_k_token + dims[None, :]
        keys = tl.load(k_cache + base).to(tl.float16)
        scores = tl.dot(query, tl.trans(keys))
        scores = tl.where(position[None, :] < context, scores, float("-inf"))
        new_peak = tl.maximum(peak, tl.max(scores, 1))
        safe = tl.where(new_peak == float("-inf"), 0.0, new_peak)
        weights = tl.exp2(scores - safe[:, None])
        rescale = tl.exp2(peak - safe)
        total = total * rescale + tl.sum(weights, 1)
        values = tl.load(v_cache + base).to(tl.float16)
        acc = acc * rescale[:, None] + tl.dot(weights.to(tl.float16), values)
        peak = new_peak
    out = acc / tl.where(total > 0, total, 1.0)[:, None] * v_scale
    tl.store(out_part + seq * stride_o_seq + part * stride_o_part + (kv_head * GROUP + rows)[:, None] * stride_o_head
             + dims[None, :], out, mask=rows[:, None] < GROUP)
    tl.store(lse_part + seq * stride_l_seq + (kv_head * GROUP + rows) * stride_l_head + part,
             peak + tl.log2(total), mask=rows < GROUP)


@triton.jit
def _combine(out_part, lse_part, out, context_lengths, stride_o_seq, stride_o_head, stride_o_part,
             stride_l_seq, stride_l_head, stride_out_token, stride_out_head,
             HEAD: tl.constexpr, PARTS: tl.constexpr, PART_TOKENS: tl.constexpr):
    seq = tl.program_id(0)
    head = tl.program_id(1)
    parts = tl.arange(0, PARTS)
    used = parts * PART_TOKENS < tl.load(context_lengths + seq)
    lse = tl.load(lse_part + seq * stride_l_seq + head * stride_l_head + parts, mask=used, other=float("-inf"))
    weights = tl.exp2(lse - tl.max(lse, 0))
    weights = weights / tl.sum(weights, 0)
    dims = tl.arange(0, HEAD)
    partial = tl.load(out_part + seq * stride_o_seq + head * stride_o_head + parts[:, None] * stride_o_part
                      + dims[None, :], mask=used[:, None], other=0.0)
    tl.store(out + seq * stride_out_token + head * stride_out_head + dims, tl.sum(partial * weights[:, None], 0))


class TritonPADecode:
    """Buffers and grids for one batch layout; __call__ runs one decode step."""

    def __init__(self, query, key_cache, value_cache, block_tables, context_lengths, k_scale, v_scale,
                 pages_per_part=16):
        self.args = (query, key_cache, value_cache, block_tables, context_lengths)
        seqs, q_heads, head = query.shape
        _, kv_heads, page = key_cache.shape[:3]
        self.group = q_heads // kv_heads
        self.pages_per_part = pages_per_part
        max_context = int(context_lengths.max())
        self.parts = triton.next_power_of_2(-(-max_context // (page * pages_per_part)))
        self.out_part = torch.empty(seqs, q_heads, self.parts, head, device=query.device)
        self.lse_part = torch.empty(seqs, q_heads, self.parts, device=query.device)
        self.out = torch.empty(seqs, q_heads, head, device=query.device, dtype=query.dtype)
        self.qk_scale = float(k_scale) * head ** -0.5 * LOG2E
        self.v_scale = float(v_scale)
        self.shape = (seqs, q_heads, kv_heads, head, page)

    def __call__(self):
        query, key_cache, value_cache, block_tables, context_lengths = self.args
        seqs, q_heads, kv_heads, head, page = self.shape
        _partition[(seqs, kv_heads, self.parts)](
            query, key_cache, value_cache, block_tables, context_lengths, self.out_part, self.lse_part,
            self.qk_scale, self.v_scale, query.stride(0), query.stride(1), key_cache.stride(0), key_cache.stride(1),
            key_cache.stride(2), block_tables.stride(0), self.out_part.stride(0), self.out_part.stride(1),
            self.out_part.stride(2), self.lse_part.stride(0), self.lse_part.stride(1),
            GROUP=self.group, ROWS=max(16, triton.next_power_of_2(self.group)), HEAD=head, PAGE=page,
            PAGES_PER_PART=self.pages_per_part, num_warps=4)
        _combine[(seqs, q_heads)](
            self.out_part, self.lse_part, self.out, context_lengths, self.out_part.stride(0), self.out_part.stride(1),
            self.out_part.stride(2), self.lse_part.stride(0), self.lse_part.stride(1), self.out.stride(0),
            self.out.stride(1), HEAD=head, PARTS=self.parts, PART_TOKENS=page * self.pages_per_part, num_warps=4)
        return self.out
