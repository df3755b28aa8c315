"""PA decode on the CPU backend (FP8 e4m3fnuz KV cache), in one run:
microseconds per call, KV bytes read per second against numpy's copy
bandwidth measured here, the speed-up over a vectorized peer (torch on the
CPU: gather the pages, dequantize, scaled_dot_product_attention) and over
the numpy reference (a loop over sequences and heads), and the time from a
helper change to the recompiled artifact's first result.

    .venv/bin/python tests/bench/bench_pa_decode.py
"""

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "notebooks"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import kernels.pa_decode_fp8 as pa  # noqa: E402
from kernels.pa_reference import check, make_case, pa_decode_reference  # noqa: E402

CONFIGS = [  # (num_seqs, q heads, kv heads, head_size, block_size, context)
    (16, 16, 1, 128, 16, 4096),
    (4, 8, 1, 128, 16, 8192),
]
from timing import best_of, bounds_checks, mode_line  # noqa: E402
from torch_paged_kv import paged_kv  # noqa: E402


def torch_peer(case):
    """The same decode, vectorized in torch on the CPU (its threads on every core)."""
    import torch
    import torch.nn.functional as F

    q = torch.from_numpy(case["query"])
    k, v = (torch.from_numpy(case[name].view(np.uint8)).view(torch.float8_e4m3fnuz)
            for name in ("key_cache", "value_cache"))
    seqs, q_heads, head = q.shape
    page = k.shape[2]
    context = int(np.max(case["context_lengths"]))
    pages = torch.from_numpy(case["block_tables"][:, : context // page]).long()
    scales = [torch.from_numpy(case[name]) for name in ("k_scale", "v_scale")]

    def run():
        out = F.scaled_dot_product_attention(q.view(seqs, q_heads, 1, head), paged_kv(k, scales[0], pages),
                                             paged_kv(v, scales[1], pages), enable_gqa=True)
        return out.view(seqs, q_heads, head).numpy()
    return run


def main():
    probe = np.ones(64 << 20, np.uint8)
    sink = np.empty_like(probe)
    copy = 2 * probe.nbytes / best_of(lambda: np.copyto(sink, probe))
    print(mode_line() + "; the fast mode's time beside each row")
    print(f"numpy copy bandwidth here: {copy / 1e9:.1f} GB/s\n")
    print(f"{'config (seqs, heads q/kv, head, block, ctx), scales':<52} {'us/call':>10} {'(fast)':>8} {'KV GB/s':>8} "
          f"{'% copy bw':>9} {'torch us':>9} {'vs torch':>9} {'vs numpy ref':>12}")
    for seqs, q_heads, kv_heads, head, block, context in CONFIGS:
        for per_token in (False, True):
            case = make_case(num_seqs=seqs, num_q_heads=q_heads, num_kv_heads=kv_heads, head_size=head,
                             block_size=block, context_length=context, per_token=per_token)
            out = pa.pa_decode_ps_launch(**case)
            reference = pa_decode_reference(**case)
            assert check(out, reference)[0]
            ours = best_of(lambda: pa.pa_decode_ps_launch(**case))
            with bounds_checks(False):
                fast = best_of(lambda: pa.pa_decode_ps_launch(**case))
            theirs = best_of(lambda: pa_decode_reference(**case), repeats=1)
            peer = torch_peer(case)
            assert check(peer(), reference)[0]
            vectorized = best_of(peer)
            kv_bytes = 2 * seqs * kv_heads * context * head  # one byte per FP8 element, K and V
            scales = "per-token" if per_token else "per-tensor"
            label = f"({seqs}, {q_heads}/{kv_heads}, {head}, {block}, {context}), {scales}"
            print(f"{label:<52} {ours * 1e6:>10.0f} {fast * 1e6:>8.0f} {kv_bytes / ours / 1e9:>8.2f} "
                  f"{100 * kv_bytes / ours / copy:>8.1f}% {vectorized * 1e6:>9.0f} {vectorized / ours:>8.1f}x "
                  f"{theirs / ours:>11.1f}x")

    # from a helper change to the recompiled artifact's first result
    case = make_case(num_seqs=2, num_q_heads=8, num_kv_heads=1, head_size=128, context_length=512)
    pa.pa_decode_ps_launch(**case)
    original = pa._normalize
    recompiles = []
    for factor in (2.0, 3.0, 4.0):  # three versions never seen before
        def changed(acc, row, head_size, total, out, slot, q_index, g, factor=factor):
            return original(acc, row, head_size, total / factor, out, slot, q_index, g)

        begin = time.perf_counter()
        pa._normalize = changed
        pa.pa_decode_ps_launch(**case)
        recompiles.append(time.perf_counter() - begin)
    begin = time.perf_counter()
    pa._normalize = original  # back to a version seen before: its artifact is reused
    pa.pa_decode_ps_launch(**case)
    reuse = time.perf_counter() - begin
    print(f"\nhelper change -> recompiled artifact's first result: median {sorted(recompiles)[1] * 1e3:.0f} ms "
          f"(of {', '.join(f'{t * 1e3:.0f}' for t in recompiles)} ms); change back -> first result: "
          f"{reuse * 1e3:.1f} ms (reused)")


if __name__ == "__main__":
    main()
