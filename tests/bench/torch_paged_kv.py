"""A paged FP8 KV cache as dense torch tensors: what the torch peers of PA
decode do before their attention (bench_pa_decode.py on the CPU,
bench_gpu.py on the GPU)."""


def paged_kv(cache, scale, pages):
    """[seqs, kv heads, pages * page, head] float32 of `cache`'s `pages`
    ([seqs, pages] indices), times their scales (per tensor, or [blocks, kv
    heads, page] per token)."""
    seqs, count = pages.shape
    kv_heads, page, head = cache.shape[1], cache.shape[2], cache.shape[3]
    context = count * page
    values = cache[pages].float().permute(0, 2, 1, 3, 4).reshape(seqs, kv_heads, context, head)
    if scale.dim() == 3:
        return values * scale[pages].permute(0, 2, 1, 3).reshape(seqs, kv_heads, context, 1)
    return values * scale.reshape(())
