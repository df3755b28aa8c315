"""PA decode over what FlyDSL's own PA tests vary (head sizes 128 and 256;
query/KV heads 8/1, 16/1, 4/1, 32/8; 1 to 4 query tokens; pages of 16 and
64; contexts 1, 17, 1027, 8192; batches 3, 81, 128; per-tensor and per-token
scales; both FP8 formats), every pair of values in some case, against the
numpy reference; and the forms a scale comes in."""

import sys
from pathlib import Path

import numpy as np
import pytest

import flyrt.expr as fx

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "notebooks"))

import kernels.pa_decode_fp8 as pa  # noqa: E402
from kernels.pa_reference import check, make_case, pa_decode_reference, upstream_cases  # noqa: E402

MATRIX = upstream_cases()


def case_id(case):
    return (f"b{case['num_seqs']}-h{case['num_q_heads']}/{case['num_kv_heads']}x{case['head_size']}"
            f"-q{case['query_length']}-p{case['block_size']}-c{case['context_length']}-{case['fmt']}"
            f"{'-per-token' if case['per_token'] else ''}")


@pytest.mark.parametrize("options", MATRIX, ids=map(case_id, MATRIX))
def test_upstream_matrix_matches_the_reference(options):
    case = make_case(seed=options["context_length"] + options["num_seqs"], **options)
    out = pa.pa_decode_ps_launch(**case)
    ok, max_diff, max_relative = check(out, pa_decode_reference(**case))
    assert ok, f"max_diff {max_diff:.3e}, max |out - ref| / (1 + |ref|) {max_relative:.3e}"


MMA_CASES = [case for case in MATRIX if pa._matrix_unit_fits(
    case["query_length"] * case["num_q_heads"] // case["num_kv_heads"], case["head_size"], case["block_size"], False)]


@pytest.mark.parametrize("options", MMA_CASES, ids=map(case_id, MMA_CASES))
def test_upstream_matrix_through_the_matrix_unit_kernel(options, monkeypatch):
    """The GPU's kernel (fx.mma), which takes every case here (pages of 16 and
    64, heads of 128 and 256, a KV head's query rows past 16 in blocks of up
    to 16), run on the CPU, which computes its matrix products exactly."""
    monkeypatch.setattr(pa, "USE_MMA_KERNEL", True)
    case = make_case(seed=options["context_length"] + options["num_seqs"], **options)
    step, out = pa.pa_decode_ps_prepare(**case)
    step()
    # what the step runs (an earlier test may have compiled it: no trace of this call to read)
    assert "pa_decode_mma_kernel" in step.launcher.lower(*step.args, target="cpu").ir
    ok, max_diff, max_relative = check(out, pa_decode_reference(**case))
    assert ok, f"max_diff {max_diff:.3e}, max |out - ref| / (1 + |ref|) {max_relative:.3e}"


@pytest.fixture
def waves_of_64():
    fx.set_warp_size(64)
    yield
    fx.set_warp_size(32)


@pytest.mark.compiled_for("amdgpu")  # (waves of 64: NVIDIA's warps have no fx.wave_mma)
@pytest.mark.parametrize("options", MMA_CASES, ids=map(case_id, MMA_CASES))
def test_upstream_matrix_through_the_wave_kernel(options, monkeypatch, waves_of_64):
    """AMD's kernel (fx.wave_mma, MFMA's own layout over a 64-lane wave), run on the CPU with waves of 64,
    which computes its matrix products exactly: what gfx942 compiles, checked here without an AMD GPU."""
    monkeypatch.setattr(pa, "USE_MMA_KERNEL", True)
    case = make_case(seed=options["context_length"] + options["num_seqs"], **options)
    step, out = pa.pa_decode_ps_prepare(**case)
    step()
    assert "pa_decode_wave_kernel" in step.launcher.lower(*step.args, target="cpu").ir
    ok, max_diff, max_relative = check(out, pa_decode_reference(**case))
    assert ok, f"max_diff {max_diff:.3e}, max |out - ref| / (1 + |ref|) {max_relative:.3e}"


@pytest.mark.compiled_for("amdgpu")
def test_the_wave_kernel_combines_in_its_last_block_too(monkeypatch, waves_of_64):
    """One launch: the last wave to finish a (sequence, KV head)'s partial results combines them."""
    monkeypatch.setattr(pa, "USE_MMA_KERNEL", True)
    case = make_case(seed=9, num_seqs=3, num_q_heads=8, num_kv_heads=1, head_size=128, context_length=300,
                     query_length=2)
    out = np.full_like(case["query"], np.nan)
    step = pa._Step(pa._decode_buffers(**case, softmax_scale=None, workers=4, out=out, pages_per_work=2), 1, True)
    step()
    ir = step.launcher.lower(*step.args, target="cpu").ir
    assert "pa_decode_wave_kernel" in ir and "pa_combine_kernel" not in ir
    ok, max_diff, max_relative = check(out, pa_decode_reference(**case))
    assert ok, f"max_diff {max_diff:.3e}, max |out - ref| / (1 + |ref|) {max_relative:.3e}"


def test_every_pair_of_upstream_values_is_covered():
    from itertools import combinations

    from kernels.pa_reference import UPSTREAM_AXES

    def values(case, axis):
        if axis == "heads":
            return case["num_q_heads"], case["num_kv_heads"]
        return case[axis]

    covered = {((a, values(c, a)), (b, values(c, b))) for c in MATRIX for a, b in combinations(UPSTREAM_AXES, 2)}
    for axis, choices in UPSTREAM_AXES.items():
        assert {values(c, axis) for c in MATRIX} == set(choices), axis
    # the pairs left out are the ones no case of the size bound holds
    assert (("context_length", 8192), ("num_seqs", 128)) not in covered
    assert (("context_length", 1027), ("num_seqs", 81)) in covered
    assert (("head_size", 256), ("context_length", 8192)) in covered  # with one kv head


SCALE_FORMS = {
    "python float": lambda value: float(value[0]),
    "numpy 0-dim": lambda value: np.float32(value[0]).reshape(()),
    "numpy [1, 1]": lambda value: value.reshape(1, 1),
    "float64 [1]": lambda value: value.astype(np.float64),
}


@pytest.mark.parametrize("form", sorted(SCALE_FORMS))
def test_a_scale_comes_in_any_form_users_keep(form):
    case = make_case(seed=4, num_q_heads=8, num_kv_heads=2)
    expected = pa.pa_decode_ps_launch(**case)
    given = dict(case, k_scale=SCALE_FORMS[form](case["k_scale"]), v_scale=SCALE_FORMS[form](case["v_scale"]))
    np.testing.assert_array_equal(pa.pa_decode_ps_launch(**given), expected)


def test_a_0_dim_torch_scale_as_serving_engines_keep_one():
    torch = pytest.importorskip("torch")
    case = make_case(seed=4)
    expected = pa.pa_decode_ps_launch(**case)
    given = dict(case, k_scale=torch.tensor(float(case["k_scale"][0])), v_scale=torch.tensor(float(case["v_scale"][0])))
    np.testing.assert_array_equal(pa.pa_decode_ps_launch(**given), expected)


def test_per_token_scales_updated_in_place_are_seen():
    """A serving engine writes new tokens' scales into the same tensor: a
    prepared step reads them, not a copy."""
    case = make_case(seed=6, per_token=True)
    run, out = pa.pa_decode_ps_prepare(**case)
    run()
    before = out.copy()
    case["v_scale"] *= 2  # in place
    run()
    assert check(out, pa_decode_reference(**case))[0]
    np.testing.assert_allclose(out, 2 * before, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("k_scale, v_scale, message", [
    (np.ones(2, np.float32), 1.0, r"k_scale has shape \(2,\): a scale is one number"),
    (1.0, np.ones((3, 1, 16), np.float32), r"v_scale has shape \(3, 1, 16\).*\(\d+, 1, 16\) \[blocks, kv heads, page\]"),
    ("0.5", 1.0, r"k_scale has shape \(None,\)"),
])
def test_a_scale_of_another_shape_is_a_clear_error(k_scale, v_scale, message):
    case = dict(make_case(seed=1), k_scale=k_scale, v_scale=v_scale)
    with pytest.raises(ValueError, match=message):
        pa.pa_decode_ps_launch(**case)


@pytest.mark.parametrize("split, message", [
    ({"pages_per_work": 0}, r"pages_per_work is 0: a positive whole number"),
    ({"pages_per_work": 2.5}, r"pages_per_work is 2\.5"),
    ({"workers": -2}, r"workers is -2"),
    ({"workers": True}, r"workers is True"),
])
def test_a_split_that_is_not_a_count_is_a_clear_error(split, message):
    with pytest.raises(ValueError, match=message):
        pa.pa_decode_ps_launch(**make_case(seed=1), **split)


@pytest.mark.parametrize("change, message", [
    # each would have read past a block table (a fault or garbage in fast mode) or left rows unwritten
    ({"context_lengths": lambda c: c["context_lengths"][:1]}, r"query has 2 rows, not 1 sequences"),
    ({"query_length": lambda c: 2}, r"not 2 sequences \(context_lengths\) x query_length 2"),
    ({"block_tables": lambda c: c["block_tables"][:1]}, r"block_tables of shape \(1, 7\) for 2 sequences"),
    ({"context_lengths": lambda c: c["context_lengths"] + 20}, r"sequence \d's 1\d\d tokens take 8 pages of 16"),
    ({"context_lengths": lambda c: c["context_lengths"] - 101}, r"sequence 0's context length is -1"),
    ({"query": lambda c: c["query"][..., :32].copy()}, r"the query's head size and the caches' shapes differ"),
])
def test_a_batch_its_shapes_do_not_describe_is_a_clear_error(change, message):
    case = make_case(seed=1)  # 2 sequences of 100 tokens, 7 pages of 16 each in block_tables
    case.update({name: make(case) for name, make in change.items()})
    with pytest.raises(ValueError, match=message):
        pa.pa_decode_ps_launch(**case)


def test_per_tensor_and_per_token_scales_do_not_mix():
    case = make_case(seed=1, per_token=True)
    with pytest.raises(ValueError, match="must both be per tensor or both per token"):
        pa.pa_decode_ps_launch(**dict(case, v_scale=0.01))
