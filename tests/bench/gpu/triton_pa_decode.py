"""The peer of flyrt's PA decode on NVIDIA GPUs: a split-KV paged-attention
decode in Triton (written here, the usual design: a program per (sequence,
kv head, partition) multiplies a tile of tokens at a time on the tensor cores
with tl.dot, gathering its pages through the block table, online softmax in
the exp2 domain, then a second kernel combines the partitions by their
log-sum-exp). Query length 1, per-tensor scales.

Both FP8 formats: Triton 3.6 on sm_90 rejects float8_e4m3fnuz, so its codes
are decoded by hand as e4m3fn's bits (an e4m3fnuz value is the e4m3fn value
of its bits halved, except 0x7F/0xFF, ±240 there and NaN in e4m3fn, and
0x80, NaN there); the halving is folded into the scales.

`tune` picks the partition size, the tile of tokens, warps and pipeline
stages per shape by coordinate descent, each candidate timed by the caller's
timer (bench_gpu.py: CUDA graph replay with the cache cycling past the L2)."""

import torch
import triton
import triton.language as tl

LOG2E = 1.4426950408889634


@triton.jit
def _fp8_to_f16(bits, FNUZ: tl.constexpr):
    x = bits.to(tl.float8e4nv, bitcast=True).to(tl.float16)
    if FNUZ:  # in e4m3fn's units (the scales carry the halving)
        x = tl.where((bits & 0x7F) == 0x7F, tl.where(bits >= 0x80, -480.0, 480.0), x)
        x = tl.where(bits == 0x80, float("nan"), x).to(tl.float16)
    return x


@triton.jit
def _partition(q, k_cache, v_cache, block_tables, context_lengths, out_part, lse_part, qk_scale, v_scale,
               stride_q_token, stride_q_head, stride_k_block, stride_k_head, stride_k_token, stride_table,
               stride_o_seq, stride_o_head, stride_o_part, stride_l_seq, stride_l_head,
               GROUP: tl.constexpr, ROWS: tl.constexpr, HEAD: tl.constexpr, PAGE: tl.constexpr,
               PART_TOKENS: tl.constexpr, TOKENS: tl.constexpr, STAGES: tl.constexpr, FNUZ: tl.constexpr):
    seq = tl.program_id(0)
    kv_head = tl.program_id(1)
    part = tl.program_id(2)
    context = tl.load(context_lengths + seq)
    rows = tl.arange(0, ROWS)
    dims = tl.arange(0, HEAD)
    tokens = tl.arange(0, TOKENS)
    first_token = part * PART_TOKENS
    query = tl.load(q + seq * stride_q_token + (kv_head * GROUP + rows)[:, None] * stride_q_head + dims[None, :],
                    mask=rows[:, None] < GROUP, other=0.0)
    query = (query.to(tl.float32) * qk_scale).to(tl.float16)
    peak = tl.full([ROWS], float("-inf"), tl.float32)
    total = tl.zeros([ROWS], tl.float32)
    acc = tl.zeros([ROWS, HEAD], tl.float32)
    for step in tl.range(0, PART_TOKENS // TOKENS, num_stages=STAGES):
        position = first_token + step * TOKENS + tokens
        valid = position < context
        block = tl.load(block_tables + seq * stride_table + position // PAGE, mask=valid, other=0)
        base = (block * stride_k_block + kv_head * stride_k_head + (position % PAGE) * stride_k_token)[:, None] \
            + dims[None, :]
        keys = _fp8_to_f16(tl.load(k_cache + base), FNUZ)
        scores = tl.dot(query, tl.trans(keys))
        scores = tl.where(valid[None, :], scores, float("-inf"))
        new_peak = tl.maximum(peak, tl.max(scores, 1))
        safe = tl.where(new_peak == float("-inf"), 0.0, new_peak)
        weights = tl.exp2(scores - safe[:, None])
        rescale = tl.exp2(peak - safe)
        total = total * rescale + tl.sum(weights, 1)
        values = _fp8_to_f16(tl.load(v_cache + base), FNUZ)
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


DEFAULT = dict(pages_per_part=16, tokens=64, warps=4, stages=2)
CHOICES = dict(pages_per_part=(4, 8, 16, 32, 64), tokens=(16, 32, 64, 128), warps=(4, 8), stages=(1, 2, 3, 4))
# What `tune` found on the lent H200 on 2026-12-03 (docs/performance.md), per bench_gpu.py shape and format:
# the peer `bench_gpu.py pa-quick` runs without tuning it again.
TUNED = {
    ((64, 32, 8, 128, 16, 8192), "e4m3fn"): dict(pages_per_part=64, tokens=128, warps=4, stages=4),
    ((64, 32, 8, 128, 16, 8192), "e4m3fnuz"): dict(pages_per_part=32, tokens=64, warps=4, stages=2),
    ((16, 16, 1, 128, 16, 4096), "e4m3fn"): dict(pages_per_part=16, tokens=128, warps=4, stages=2),
    ((16, 16, 1, 128, 16, 4096), "e4m3fnuz"): dict(pages_per_part=4, tokens=64, warps=4, stages=2),
    ((1, 16, 1, 128, 16, 32768), "e4m3fn"): dict(pages_per_part=4, tokens=128, warps=8, stages=3),
    ((1, 16, 1, 128, 16, 32768), "e4m3fnuz"): dict(pages_per_part=8, tokens=128, warps=8, stages=3),
}


class TritonPADecode:
    """Buffers and grids for one batch layout and config; __call__ runs one decode step."""

    def __init__(self, query, key_cache, value_cache, block_tables, context_lengths, k_scale, v_scale,
                 pages_per_part=16, tokens=64, warps=4, stages=2):
        seqs, q_heads, head = query.shape
        _, kv_heads, page = key_cache.shape[:3]
        self.fnuz = key_cache.dtype == torch.float8_e4m3fnuz
        self.args = (query, key_cache.view(torch.uint8), value_cache.view(torch.uint8), block_tables,
                     context_lengths)
        self.group = q_heads // kv_heads
        self.config = dict(pages_per_part=pages_per_part, tokens=max(tokens, 16), warps=warps, stages=stages)
        self.part_tokens = max(page * pages_per_part, self.config["tokens"])
        max_context = int(context_lengths.max())
        self.parts = triton.next_power_of_2(-(-max_context // self.part_tokens))
        self.out_part = torch.empty(seqs, q_heads, self.parts, head, device=query.device)
        self.lse_part = torch.empty(seqs, q_heads, self.parts, device=query.device)
        self.out = torch.empty(seqs, q_heads, head, device=query.device, dtype=query.dtype)
        halve = 0.5 if self.fnuz else 1.0
        self.qk_scale = float(k_scale) * halve * head ** -0.5 * LOG2E
        self.v_scale = float(v_scale) * halve
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
            PART_TOKENS=self.part_tokens, TOKENS=self.config["tokens"], STAGES=self.config["stages"],
            FNUZ=self.fnuz, num_warps=self.config["warps"])
        _combine[(seqs, q_heads)](
            self.out_part, self.lse_part, self.out, context_lengths, self.out_part.stride(0), self.out_part.stride(1),
            self.out_part.stride(2), self.lse_part.stride(0), self.lse_part.stride(1), self.out.stride(0),
            self.out.stride(1), HEAD=head, PARTS=self.parts, PART_TOKENS=self.part_tokens, num_warps=4)
        return self.out


def tune(cases, timer, rounds=2):
    """The fastest config for `cases` (kwargs of TritonPADecode without the
    config, the same shape in each) by coordinate descent over CHOICES from
    DEFAULT, `rounds` passes; timer(runs) gives seconds per call. Returns
    (config, seconds, {config as a tuple: seconds} of every one timed)."""
    timed = {}

    def seconds(config):
        key = tuple(sorted(config.items()))
        if key not in timed:
            try:
                timed[key] = timer([TritonPADecode(**c, **config) for c in cases])
            except Exception as error:  # a config Triton cannot build or launch (shared memory, registers)
                timed[key] = float("inf")
                print(f"      (Triton config {config} failed: {str(error).splitlines()[0][:120]})")
        return timed[key]

    best = dict(DEFAULT)
    for _ in range(rounds):
        for name, values in CHOICES.items():
            best[name] = min(values, key=lambda v: seconds({**best, name: v}))
    return best, seconds(best), timed
