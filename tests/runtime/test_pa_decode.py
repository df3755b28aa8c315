"""Paged-attention decode (FP8 KV cache) against the numpy reference, with
upstream's tolerance rule, across its options."""

import _thread
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "notebooks"))

import kernels.pa_decode_fp8 as pa  # noqa: E402
from kernels.pa_decode_fp8 import build_work_list, compile_pa_decode_ps, pa_decode_ps_launch  # noqa: E402
from kernels.pa_reference import check, make_case, pa_decode_reference  # noqa: E402

CASES = {
    "baseline": {},
    "gqa_two_kv_heads": dict(num_q_heads=8, num_kv_heads=2),
    "multi_token_decode": dict(query_length=3),
    "four_query_tokens_gqa": dict(query_length=4, num_q_heads=4, num_kv_heads=2),
    "per_token_scales": dict(per_token=True),
    "trans_v": dict(trans_v=True),
    "e4m3fn": dict(fmt="e4m3fn"),
    "float16_query": dict(dtype=np.float16),
    "variable_lengths": dict(num_seqs=4, variable_lengths=True, context_length=150, query_length=2),
    "head_128_page_32": dict(head_size=128, block_size=32, context_length=70),
    "page_64_variable_lengths": dict(block_size=64, num_seqs=4, variable_lengths=True, context_length=300,
                                     query_length=2),
    "rows_24_in_blocks_of_12": dict(num_q_heads=8, query_length=3, num_seqs=3, variable_lengths=True,
                                    context_length=120),
    "rows_48_in_blocks_of_16": dict(num_q_heads=16, query_length=3, context_length=40),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_pa_decode_matches_the_reference(name):
    options = dict(CASES[name])
    variable = options.get("variable_lengths", False)
    case = make_case(seed=len(name), **options)
    out = pa_decode_ps_launch(**case, workers=3)
    assert out.dtype == case["query"].dtype
    ok, max_diff, max_relative = check(out, pa_decode_reference(**case), variable)
    assert ok, f"max_diff {max_diff:.3e}, max |out - ref| / (1 + |ref|) {max_relative:.3e}"


def test_a_plan_run_again_writes_every_output_each_time():
    """One launch: the last block of a context to arrive combines its partials, found by counts that each
    launch leaves at 0, so the same plan runs again right (every output rewritten)."""
    case = make_case(seed=4, num_seqs=3, context_length=200)
    run, out = pa.pa_decode_ps_prepare(**case, workers=5)
    for _ in range(3):
        out[...] = np.nan
        run()
        ok, max_diff, _ = check(out, pa_decode_reference(**case))
        assert ok, max_diff


def test_a_step_an_interrupt_stopped_part_way_leaves_the_next_one_right(ctrl_c):
    """The blocks that finished before the interrupt leave their counts behind: the step clears them, or the
    next run's last block would be another one, and some of its outputs never written."""
    case = make_case(seed=6, num_seqs=4, context_length=64)
    pages = 320_000  # the same four pages over and over: a launch of about two seconds here
    case["block_tables"] = np.tile(case["block_tables"][:, :4], (1, pages // 4))
    case["context_lengths"] = np.full(4, 16 * pages, np.int32)
    run, out = pa.pa_decode_ps_prepare(**case, workers=16)
    timer = threading.Timer(0.5, _thread.interrupt_main)
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        run()
    out[...] = np.nan
    run()
    fresh, expected = pa.pa_decode_ps_prepare(**case, workers=16)
    fresh()
    np.testing.assert_array_equal(out, expected)


def test_bfloat16_query_through_torch():
    torch = pytest.importorskip("torch")
    case = make_case(seed=5)
    case["query"] = torch.from_numpy(case["query"]).to(torch.bfloat16)
    out = torch.empty_like(case["query"])
    pa_decode_ps_launch(**case, out=out)
    case["query"] = case["query"].float().numpy()
    ok, max_diff, _ = check(out.float().numpy(), pa_decode_reference(**case))
    assert ok, max_diff


def test_work_list_covers_every_page_once():
    lengths = np.array([1, 16, 17, 100, 0 + 33])
    work, ranges = build_work_list(lengths, 2, 16, workers=4, pages_per_work=2)
    np.testing.assert_array_equal(work[:, 4], np.arange(len(work)))  # each item its own partial slot
    for seq, length in enumerate(lengths):
        for kv in range(2):
            first, count = ranges[seq, kv]
            items = work[first : first + count]
            assert (items[:, 0] == seq).all() and (items[:, 1] == kv).all()
            covered = np.concatenate([np.arange(a, b) for a, b in items[:, 2:4]])
            np.testing.assert_array_equal(covered, np.arange(-(-length // 16)))


def test_the_factory_is_keyed_by_static_arguments_only():
    compile_pa_decode_ps.cache_clear()
    case = make_case(seed=1)
    pa_decode_ps_launch(**case)
    pa_decode_ps_launch(**make_case(seed=2))  # same static arguments: same launcher, no compile
    info = compile_pa_decode_ps.cache_info()
    assert (info.hits, info.misses) == (1, 1)
    launcher = compile_pa_decode_ps(None, False, True, 4, False, 1, "e4m3fnuz")["launch"]
    assert launcher.cache_info().compiles == 1


@pytest.mark.parametrize("name", ["baseline", "gqa_two_kv_heads", "multi_token_decode", "per_token_scales", "e4m3fn",
                                  "float16_query", "variable_lengths", "head_128_page_32", "page_64_variable_lengths",
                                  "rows_24_in_blocks_of_12", "rows_48_in_blocks_of_16"])
def test_the_matrix_unit_kernel_matches_the_reference(name, monkeypatch):
    """The GPU's kernel (fx.mma), run on the CPU, which computes its matrix products exactly; a page of 32
    or 64 tokens is 2 or 4 of its tiles of 16, a kv head's query rows past 16 blocks of up to 16."""
    monkeypatch.setattr(pa, "USE_MMA_KERNEL", True)
    options = dict(CASES[name])
    case = make_case(seed=len(name), **options)
    step, out = pa.pa_decode_ps_prepare(**case, workers=3)
    step()
    ok, max_diff, _ = check(out, pa_decode_reference(**case), options.get("variable_lengths", False))
    assert ok, max_diff
    ir = step.launcher.lower(*step.args, target="cpu").ir  # what the step runs
    kernels = "\n".join(line for line in ir.splitlines() if line.startswith("kernel @"))
    assert "pa_decode_mma_kernel" in kernels


@pytest.mark.parametrize("stages, one_launch, warps, prefetch", [
    (2, True, 1, False), (3, True, 1, False), (1, True, 1, False), (3, False, 1, False), (1, False, 4, False),
    (3, True, 4, False), (2, False, 4, False), (1, False, 1, True), (1, True, 4, True), (1, False, 8, True)])
@pytest.mark.parametrize("name", ["multi_token_decode", "per_token_scales", "variable_lengths",
                                  "page_64_variable_lengths", "rows_24_in_blocks_of_12"])
def test_the_matrix_unit_kernels_variants_match_the_reference(name, stages, one_launch, warps, prefetch,
                                                              monkeypatch):
    """Pages in flight through shared memory (stages past an item's last page masked out) or through
    registers (prefetch: the last page's next load is its own again), the partials combined by a kernel of
    their own instead of the last block to arrive, and blocks of 4 warps sharing an item's pages (6: two pages
    for warps 0 and 1, one for the others; with stages, most of a step masked), or 8 (warps 6 and 7 without a
    page of 16 tokens, their half of the merge folded in all the same): the choices the tuner has on a GPU."""
    monkeypatch.setattr(pa, "USE_MMA_KERNEL", True)
    options = dict(CASES[name])
    case = make_case(seed=len(name) + 7, **options)
    out = np.full_like(case["query"], np.nan)
    buffers = pa._decode_buffers(**case, softmax_scale=None, workers=3, out=out, pages_per_work=3 if warps == 1 else 6)
    pa._Step(buffers, stages, one_launch, warps, prefetch)()
    ok, max_diff, _ = check(out, pa_decode_reference(**case), options.get("variable_lengths", False))
    assert ok, max_diff


@pytest.mark.parametrize("warps, stages, one_launch, prefetch",
                         [v for v in pa.VARIANTS if pa._merge_bytes(v[0], 256) <= pa.MERGE_BYTES])
def test_head_size_256_through_each_variant_the_tuner_tries(warps, stages, one_launch, prefetch, monkeypatch):
    """Head size 256: each V row a lane reads is two 16-byte pieces, each output row two stores, and the
    warps' merge (4 warps) 50 KB of shared memory."""
    monkeypatch.setattr(pa, "USE_MMA_KERNEL", True)
    case = make_case(seed=11, head_size=256, num_q_heads=8, query_length=2, num_seqs=3, variable_lengths=True,
                     context_length=90, fmt="e4m3fn")
    out = np.full_like(case["query"], np.nan)
    buffers = pa._decode_buffers(**case, softmax_scale=None, workers=3, out=out, pages_per_work=4)
    pa._Step(buffers, stages, one_launch, warps, prefetch)()
    ok, max_diff, _ = check(out, pa_decode_reference(**case), True)
    assert ok, max_diff


def test_a_prefetch_with_stages_of_shared_memory_is_a_clear_error(monkeypatch):
    monkeypatch.setattr(pa, "USE_MMA_KERNEL", True)
    case = make_case(seed=5, **CASES["multi_token_decode"])
    buffers = pa._decode_buffers(**case, softmax_scale=None, workers=3, out=np.empty_like(case["query"]),
                                 pages_per_work=3)
    with pytest.raises(ValueError, match=r"prefetch=True is a stage in registers, for stages=1 \(not 3\)"):
        pa._Step(buffers, 3, False, 1, True)()


@pytest.mark.parametrize("head_size, context, threads", [(64, 1000, 128), (128, 1000, 256), (128, 3000, 1024)])
def test_the_combine_kernel_spreads_a_long_contexts_many_partials_over_its_threads(head_size, context, threads,
                                                                                  monkeypatch):
    """A page per work item: 63 (188) partial results per context, more than the combine kernel's groups
    of threads, 16 of which weigh every 16th of them (about REDUCE_STEP each: one round of loads), or
    with 188 a block of 64 groups, the most (1024 threads)."""
    monkeypatch.setattr(pa, "USE_MMA_KERNEL", True)
    case = make_case(seed=head_size, num_seqs=2, num_q_heads=8, num_kv_heads=2, head_size=head_size,
                     context_length=context)
    out = np.full_like(case["query"], np.nan)
    buffers = pa._decode_buffers(**case, softmax_scale=None, workers=5, out=out, pages_per_work=1)
    assert buffers[1][-1] == threads  # the launcher's combine_threads
    pa._Step(buffers, 1, False)()
    ok, max_diff, _ = check(out, pa_decode_reference(**case))
    assert ok, max_diff


@pytest.mark.parametrize("q_heads, head, page, trans_v, gpu_lanes, workers, splits, configs", [
    # the matrix-unit kernel's shape on a GPU: every choice, 4 warps with 4 pages a work item or more, 8 with 8
    (16, 128, 16, False, 32, None, 20, 2 * 20 + 2 * 16 + 12),
    (16, 256, 16, False, 32, None, 20, 2 * 20 + 2 * 16),  # head 256: no 8 warps (their merge: 68 KB)
    (16, 128, 16, True, 32, None, 20, 20),  # V transposed: the other kernel's, whose variants would time it 5 times
    (32, 128, 16, False, 32, None, 20, 2 * 20 + 2 * 16 + 12),  # 32 query rows a kv head: two blocks of 16 each
    (16, 128, 64, False, 32, None, 20, 5 * 20),  # pages of 64: 4 tiles of 16 each, so 8 warps at 2 pages an item
    (16, 128, 16, False, 32, 40, 5, 2 * 5 + 2 * 4 + 3),  # workers given: no split to choose
    (16, 128, 16, False, 64, None, 20, 20),  # an AMD GPU: its wave kernel has no variants
    (16, 128, 16, False, 0, None, 5, 5),  # the CPU: pages per work item alone
])
def test_the_tuner_tries_what_can_differ(q_heads, head, page, trans_v, gpu_lanes, workers, splits, configs):
    layout = ((4, q_heads, head), (1, page, head), "e4m3fnuz", 4, 64, 16, 1, trans_v, False, gpu_lanes, workers)
    kept = pa._split_choices(pa._tuned_decode_step.configs, {"layout": layout})
    assert len({(c.kwargs["pages_per_work"], c.kwargs["blocks_per_sm"]) for c in kept}) == splits
    assert len(kept) == configs
    variants = {pa._variant(c) for c in kept}
    fitting = {v for v in pa.VARIANTS if pa._merge_bytes(v[0], head) <= pa.MERGE_BYTES}
    assert variants == (fitting if configs > splits else {pa.VARIANTS[0]})  # else the defaults


def test_tuned_pages_per_work_match_the_reference_and_an_edit_keeps_the_choice_until_retune(monkeypatch):
    """pages_per_work="tuned" (a GPU's default): each choice runs, the best is
    kept per batch layout; an edit of a helper the kernels call recompiles
    that choice untimed, and retune() times the edited code."""
    tuner = pa._tuned_decode_step
    tuner.cache_clear()
    case = make_case(seed=9, num_seqs=3, variable_lengths=True, context_length=300)
    out = pa_decode_ps_launch(**case, pages_per_work="tuned")
    ok, max_diff, _ = check(out, pa_decode_reference(**case), True)
    assert ok, max_diff
    assert tuner.best_config.kwargs["pages_per_work"] in pa.PAGES_PER_WORK
    # on the CPU the split is not the tuner's: pages per work alone
    assert sorted(c.kwargs["pages_per_work"] for c in tuner.configs_timings) == list(pa.PAGES_PER_WORK)
    assert {c.kwargs["blocks_per_sm"] for c in tuner.configs_timings} == {pa.DEFAULT_BLOCKS_PER_SM}
    assert all(ms is not None for ms in tuner.configs_timings.values())
    pa_decode_ps_launch(**make_case(seed=9, num_seqs=3, variable_lengths=True, context_length=300),
                        pages_per_work="tuned")
    assert tuner.cache_info().compiles == 1  # the same layout: nothing timed
    original = pa._kv_scale
    monkeypatch.setattr(pa, "_kv_scale", lambda *arguments: original(*arguments))
    best = tuner.best_config
    out = pa_decode_ps_launch(**case, pages_per_work="tuned")
    assert check(out, pa_decode_reference(**case), True)[0]
    assert tuner.cache_info().compiles == 1 and tuner.cache_info().evictions == 1
    assert tuner.best_config == best and tuner.configs_timings == {best: None}
    assert tuner.retune() == 1
    out = pa_decode_ps_launch(**case, pages_per_work="tuned")
    assert check(out, pa_decode_reference(**case), True)[0]
    assert tuner.cache_info().compiles == 2 and all(ms is not None for ms in tuner.configs_timings.values())
