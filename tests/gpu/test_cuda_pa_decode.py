"""Paged-attention decode on the GPU (torch CUDA tensors, FP8 caches as
torch float8), against the numpy reference with upstream's tolerance rule;
the seed bug's flow (a sentinel helper observed, the original restored and
its artifact reused, no cache_clear) on the GPU."""

import pytest
import torch

import flyrt
import kernels.pa_decode_fp8 as pa
from cuda_arrays import host
from kernels.devices import on
from kernels.pa_reference import check, make_case, pa_decode_reference, upstream_cases
from test_pa_decode import CASES
from test_pa_decode_matrix import case_id

SHAPES = {
    "16 seqs, 16/1 heads, ctx 4096": dict(num_seqs=16, num_q_heads=16, num_kv_heads=1, head_size=128,
                                          context_length=4096),
    "4 seqs, 32/8 heads, ctx 2048": dict(num_seqs=4, num_q_heads=32, num_kv_heads=8, head_size=128,
                                         context_length=2048),
    "1 seq, 16/1 heads, ctx 32768": dict(num_seqs=1, num_q_heads=16, num_kv_heads=1, head_size=128,
                                         context_length=32768),
}


def run(case, **options):
    out = pa.pa_decode_ps_launch(**on("cuda", case), **options)
    assert out.is_cuda and out.dtype == torch.from_numpy(case["query"][:1]).dtype
    return host(out.float())


@pytest.fixture(params=[False, True], ids=["unchecked", "bounds-checked"])
def checks(request):
    """Each case also with bounds checks (the notebook kernel's default): the
    MMA kernel's lanes once read each other's shared rows without a barrier,
    which only the checked code's scheduling exposed."""
    flyrt.set_bounds_checks(request.param)
    yield request.param
    flyrt.set_bounds_checks(None)


@pytest.mark.parametrize("name", sorted(CASES))
def test_every_option_matches_the_reference(name, checks):
    options = dict(CASES[name])
    variable = options.get("variable_lengths", False)
    case = make_case(seed=len(name), **options)
    ok, max_diff, max_relative = check(run(case, workers=3), pa_decode_reference(**case), variable)
    assert ok, f"max_diff {max_diff:.3e}, max |out - ref| / (1 + |ref|) {max_relative:.3e}"


@pytest.mark.parametrize("fmt", ["e4m3fnuz", "e4m3fn"])
@pytest.mark.parametrize("per_token", [False, True])
@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_the_benchmark_shapes(shape, fmt, per_token):
    case = make_case(seed=3, fmt=fmt, per_token=per_token, **SHAPES[shape])
    ok, max_diff, _ = check(run(case), pa_decode_reference(**case))
    assert ok, max_diff


def test_the_seed_flow_on_the_gpu():
    case = make_case(seed=11)
    reference = pa_decode_reference(**case)
    original = pa._load_q_fragments
    launcher = pa.compile_pa_decode_ps(None, False, True, 4, False, 1, "e4m3fnuz")["launch"]
    assert check(run(case), reference)[0]
    before = launcher.cache_info().compiles

    def sentinel(*args):
        raise RuntimeError("sentinel traced")

    pa._load_q_fragments = sentinel
    try:
        with pytest.raises(RuntimeError, match="sentinel traced"):
            run(case)
    finally:
        pa._load_q_fragments = original
    assert check(run(case), reference)[0]
    assert launcher.cache_info().compiles == before  # the restored helper's artifact, reused


@pytest.mark.parametrize("name", ["baseline", "per_token_scales", "e4m3fn", "variable_lengths"])
def test_the_portable_kernel_on_the_gpu(name, monkeypatch):
    """The kernel the CPU runs (no matrix units), on the GPU."""
    monkeypatch.setattr(pa, "USE_MMA_KERNEL", False)
    options = dict(CASES[name])
    case = make_case(seed=len(name), **options)
    ok, max_diff, _ = check(run(case, workers=5), pa_decode_reference(**case), options.get("variable_lengths", False))
    assert ok, max_diff


VARIANTS = [(stages, one_launch, 1, False) for stages in (1, 2, 3) for one_launch in (True, False)] + [
    (stages, one_launch, 4, False) for stages in (1, 3) for one_launch in (True, False)] + [
    (1, one_launch, warps, True) for warps in (1, 4) for one_launch in (True, False)] + [(1, False, 8, True)]


@pytest.mark.parametrize("stages, one_launch, warps, prefetch", VARIANTS,
                         ids=[f"{s} stages{' + prefetch' if ahead else ''}, "
                              f"{'one launch' if one else 'combine kernel'}, {w} warps"
                              for s, one, w, ahead in VARIANTS])
@pytest.mark.parametrize("name", ["baseline", "multi_token_decode", "per_token_scales", "variable_lengths",
                                  "e4m3fn", "gqa_two_kv_heads"])
def test_every_variant_of_the_matrix_unit_kernel(name, stages, one_launch, warps, prefetch):
    """What the tuner chooses between, each against the reference: pages in flight through shared memory or
    registers,
    the partials combined by the last block to arrive or by a kernel of their own, and blocks of 4 warps
    sharing an item's pages (6: two for warps 0 and 1, one for the others) or 8 (6: warps 6 and 7 idle, their
    half of the merge folded in all the same); run twice, the output poisoned
    between, so that the arrival counts a launch leaves at 0 are seen to be."""
    options = dict(CASES[name])
    case = make_case(seed=len(name) + stages, **options)
    device = on("cuda", case)
    out = torch.empty_like(device["query"])
    buffers = pa._decode_buffers(**device, softmax_scale=None, workers=40, out=out,
                                 pages_per_work=2 if warps == 1 else 6)
    run = pa._Step(buffers, stages, one_launch, warps, prefetch)
    reference = pa_decode_reference(**case)
    for _ in range(2):
        out.fill_(float("nan"))
        run()
        ok, max_diff, _ = check(host(out.float()), reference, options.get("variable_lengths", False))
        assert ok, max_diff


UPSTREAM = upstream_cases()


@pytest.mark.parametrize("options", UPSTREAM, ids=map(case_id, UPSTREAM))
def test_what_flydsls_own_pa_tests_vary(options):
    """Every pair of the values FlyDSL's PA tests vary (tests/runtime/
    test_pa_decode_matrix.py), each kernel where the GPU picks it: the matrix
    unit's where V is not transposed (pages of 16 and 64, query rows past 16
    in blocks of 16, heads of 128 and 256), the SIMT one (tiled to fit shared
    memory) else."""
    case = make_case(seed=options["context_length"] + options["num_seqs"], **options)
    ok, max_diff, max_relative = check(run(case), pa_decode_reference(**case))
    assert ok, f"max_diff {max_diff:.3e}, max |out - ref| / (1 + |ref|) {max_relative:.3e}"


def test_a_0_dim_cuda_scale_as_serving_engines_keep_one():
    case = make_case(seed=4)
    expected = run(case)
    scales = {name: torch.tensor(float(case[name][0]), device="cuda") for name in ("k_scale", "v_scale")}
    cuda_case = dict(on("cuda", case), **scales)
    got = host(pa.pa_decode_ps_launch(**cuda_case).float())
    assert (got == expected).all()
