"""Reference paged-attention decode in numpy: gather pages through the block
table, dequantize FP8 x scale, float32 attention (the upstream tolerance rule
with it)."""

import numpy as np

from flyrt import fp8


def _gather(cache, scale, block_table, context_length, block_size, trans):
    pages = block_table[: -(-context_length // block_size)]
    values = fp8.dequantize(cache[pages])  # [pages, kv_heads, block, head] (or [.., head, block])
    if trans:
        values = values.swapaxes(2, 3)
    if np.ndim(scale) == 3:
        values = values * scale[pages][..., None]
    else:
        values = values * np.float32(np.asarray(scale).reshape(-1)[0])
    values = values.transpose(1, 0, 2, 3).reshape(values.shape[1], -1, values.shape[3])
    return values[:, :context_length].astype(np.float32)  # [kv_heads, tokens, head]


def pa_decode_reference(query, key_cache, value_cache, block_tables, context_lengths, k_scale, v_scale,
                        softmax_scale=None, trans_v=False, query_length=1):
    _, num_q_heads, head_size = query.shape
    num_kv_heads, block_size = key_cache.shape[1], key_cache.shape[2]
    group = num_q_heads // num_kv_heads
    scale = softmax_scale if softmax_scale is not None else 1.0 / np.sqrt(head_size)
    out = np.zeros(query.shape, np.float32)
    for seq, context_length in enumerate(np.asarray(context_lengths)):
        keys = _gather(key_cache, k_scale, block_tables[seq], int(context_length), block_size, False)
        values = _gather(value_cache, v_scale, block_tables[seq], int(context_length), block_size, trans_v)
        for qi in range(query_length):
            q = query[seq * query_length + qi].astype(np.float32)  # [q_heads, head]
            visible = np.arange(context_length) < context_length + 1 - query_length + qi
            for head in range(num_q_heads):
                kv = head // group
                scores = (keys[kv] @ q[head]) * np.float32(scale)
                scores = np.where(visible, scores, -np.inf)
                weights = np.exp(scores - scores.max())
                out[seq * query_length + qi, head] = (weights / weights.sum()) @ values[kv]
    return out


def check(out, reference, variable_lengths=False):
    """Upstream's rule: every element within atol = rtol = 5e-3 (5e-2 with
    variable context lengths). Returns (ok, max_diff, max relative diff)."""
    tolerance = 5e-2 if variable_lengths else 5e-3
    if hasattr(out, "detach"):  # a torch tensor, on the GPU or not
        out = out.detach().float().cpu().numpy()
    got = np.asarray(out, np.float32)
    diff = np.abs(got - reference)
    ok = bool(np.all(diff <= tolerance + tolerance * np.abs(reference)))
    return ok, float(diff.max()), float((diff / (1 + np.abs(reference))).max())


def make_case(num_seqs=2, num_q_heads=4, num_kv_heads=1, head_size=64, block_size=16, context_length=100,
              query_length=1, fmt="e4m3fnuz", per_token=False, trans_v=False, dtype=np.float32,
              variable_lengths=False, seed=0):
    """Random inputs of one case (numpy; FP8 caches tagged with `fmt`)."""
    rng = np.random.default_rng(seed)
    lengths = (rng.integers(query_length, context_length + 1, num_seqs) if variable_lengths
               else np.full(num_seqs, context_length))
    max_blocks = -(-int(lengths.max()) // block_size)
    num_blocks = num_seqs * max_blocks + 3
    block_tables = rng.permutation(num_blocks)[: num_seqs * max_blocks].reshape(num_seqs, max_blocks).astype(np.int32)
    top = 240.0 if fmt == "e4m3fnuz" else 448.0
    k = fp8.quantize(rng.uniform(-top / 4, top / 4, (num_blocks, num_kv_heads, block_size, head_size)), fmt)
    v_shape = (num_blocks, num_kv_heads, head_size, block_size) if trans_v else k.shape
    v = fp8.quantize(rng.uniform(-top / 4, top / 4, v_shape), fmt)
    if per_token:
        k_scale = rng.uniform(0.001, 0.01, (num_blocks, num_kv_heads, block_size)).astype(np.float32)
        v_scale = rng.uniform(0.001, 0.01, (num_blocks, num_kv_heads, block_size)).astype(np.float32)
    else:
        k_scale = np.array([0.005], np.float32)
        v_scale = np.array([0.01], np.float32)
    query = rng.standard_normal((num_seqs * query_length, num_q_heads, head_size)).astype(dtype)
    return dict(query=query, key_cache=k, value_cache=v, block_tables=block_tables, context_lengths=lengths,
                k_scale=k_scale, v_scale=v_scale, trans_v=trans_v, query_length=query_length)


# What FlyDSL's own PA decode tests vary, and over which values.
UPSTREAM_AXES = {
    "head_size": (128, 256),
    "heads": ((8, 1), (16, 1), (4, 1), (32, 8)),
    "query_length": (1, 2, 3, 4),
    "block_size": (16, 64),
    "context_length": (1, 17, 1027, 8192),
    "num_seqs": (3, 81, 128),
    "per_token": (False, True),
    "fmt": ("e4m3fnuz", "e4m3fn"),
}
# A case's cached elements per cache at most (the numpy reference holds them in float32).
MATRIX_ELEMENTS = 1 << 24


def _feasible(case):
    _, kv_heads = case["heads"]
    elements = case["num_seqs"] * case["context_length"] * kv_heads * case["head_size"]
    return case["query_length"] <= case["context_length"] and elements <= MATRIX_ELEMENTS


def upstream_cases():
    """Cases covering every pair of UPSTREAM_AXES values that some case of at
    most MATRIX_ELEMENTS can hold (all-pairs, found greedily over the whole
    product, so the same list every run), as make_case keywords."""
    import itertools

    names = list(UPSTREAM_AXES)
    product = [dict(zip(names, values)) for values in itertools.product(*UPSTREAM_AXES.values())]
    product = [case for case in product if _feasible(case)]

    def pairs(case):
        return {((a, case[a]), (b, case[b])) for a, b in itertools.combinations(names, 2)}

    uncovered, chosen = set().union(*map(pairs, product)), []
    while uncovered:
        best = max(product, key=lambda case: len(pairs(case) & uncovered))
        uncovered -= pairs(best)
        chosen.append(best)
    return [dict(num_seqs=c["num_seqs"], num_q_heads=c["heads"][0], num_kv_heads=c["heads"][1],
                 head_size=c["head_size"], block_size=c["block_size"], context_length=c["context_length"],
                 query_length=c["query_length"], fmt=c["fmt"], per_token=c["per_token"]) for c in chosen]
