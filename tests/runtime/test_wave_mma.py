"""fx.wave_mma, MFMA's own layout over a 64-lane wave: on the CPU with waves of
64 (compiled and interpreted) the exact result from the fragments each lane
holds, for every wave of a block; on gfx942 one v_mfma a product with no
value moved between lanes (where fx.mma moves each operand); refused where
waves are not 64 lanes, at the kernel's line."""

import numpy as np
import pytest

import code_objects
import flyrt
import flyrt.compiler as flyc
import flyrt.expr as fx
from test_matrix import as_float32, bfloat16, reference  # (reference: C + A B, k in order)

RNG = np.random.default_rng(64)
pytestmark = pytest.mark.compiled_for("amdgpu")  # (NVIDIA's warps have no wave_mma: refused below)


@flyc.kernel
def _wave_mma(a: fx.Tensor, b: fx.Tensor, c: fx.Tensor, d: fx.Tensor):
    wave = fx.thread_idx.x // 64  # each wave multiplies its own matrices
    fa = fx.Vector.from_elements([a[(wave, *fx.wave_a_position(i))] for i in range(4)])
    fb = fx.Vector.from_elements([b[(wave, *fx.wave_b_position(i))] for i in range(4)])
    fc = fx.Vector.from_elements([c[(wave, *fx.wave_c_position(i))] for i in range(4)])
    fd = fx.wave_mma(fa, fb, fc)
    for i in fx.range_constexpr(4):
        d[(wave, *fx.wave_c_position(i))] = fd[i]


@flyc.jit
def wave_mma(a: fx.Tensor, b: fx.Tensor, c: fx.Tensor, d: fx.Tensor, THREADS: fx.Constexpr[int]):
    """Each wave's d = a b + c, in a block of THREADS (a wave a matrix)."""
    _wave_mma(a, b, c, d).launch(block=(THREADS,))


def inputs(waves):
    a = RNG.standard_normal((waves, 16, 16)).astype(np.float16)
    b = RNG.standard_normal((waves, 16, 16)).astype(np.float16)
    c = RNG.standard_normal((waves, 16, 16)).astype(np.float32)
    return a, b, c


@pytest.fixture
def waves_of_64():
    fx.set_warp_size(64)
    yield
    fx.set_warp_size(32)
    flyrt.set_interpret(None)


@pytest.mark.parametrize("interpret", [False, True])
@pytest.mark.parametrize("waves", [1, 3])
def test_float16_fragments_multiply_exactly_on_the_cpu(waves_of_64, interpret, waves):
    flyrt.set_interpret(interpret)
    a, b, c = inputs(waves)
    d = np.zeros_like(c)
    wave_mma(a, b, c, d, 64 * waves)
    np.testing.assert_array_equal(d, reference(a, b, c))
    np.testing.assert_allclose(d, c + a.astype(np.float64) @ b, rtol=1e-5, atol=1e-5)


def test_bfloat16_fragments(waves_of_64):
    a, b, c = inputs(2)
    a16, b16 = bfloat16(a), bfloat16(b)
    d = np.zeros_like(c)
    wave_mma(a16, b16, c, d, 128)
    np.testing.assert_array_equal(d, reference(as_float32(a16), as_float32(b16), c))


@pytest.mark.parametrize("half", [False, True])
def test_gfx942_takes_the_fragments_as_they_are(half):
    a, b, c = inputs(2)
    if not half:
        a, b = bfloat16(a), bfloat16(b)
    code = wave_mma.lower(a, b, c, c.copy(), 128, target="hip", arch="gfx942").device_code["_wave_mma"]
    text = code_objects.disassembly(code)
    assert text.count("v_mfma_f32_16x16x16" + ("_f16" if half else "_bf16")) == 1
    assert "ds_bpermute" not in text  # no value crosses lanes


def test_where_waves_are_not_64_lanes_it_is_an_error_at_its_line():
    a, b, c = inputs(1)
    with pytest.raises(flyc.KernelError, match=r"fx.wave_mma is AMD's MFMA layout.*fx.set_warp_size\(64\)") as info:
        wave_mma(a, b, c, c.copy(), 64)
    assert "test_wave_mma.py" in str(info.value)
    with pytest.raises(flyc.KernelError, match="the nvptx target's warps are 32 .*NVIDIA: fx.mma"):
        wave_mma.lower(a, b, c, c.copy(), 64, target="cuda", arch="sm_90")
    with pytest.raises(flyc.KernelError, match="fx.wave_mma needs blocks of whole 64-lane waves.*is 32 threads"):
        wave_mma.lower(a, b, c, c.copy(), 32, target="hip", arch="gfx942")


def test_fragments_of_the_wrong_shape_are_a_type_error(waves_of_64):
    @flyc.kernel
    def _eight_lanes(a: fx.Tensor, d: fx.Tensor):
        f = fx.Vector.load(a, 0, 8)
        d[fx.thread_idx.x] = fx.wave_mma(f, f, fx.Vector.zeros(4))[0]

    @flyc.jit
    def eight_lanes(a: fx.Tensor, d: fx.Tensor):
        _eight_lanes(a, d).launch(block=(64,))

    with pytest.raises(TypeError, match="fx.wave_mma: a must be a 4-lane Float16"):
        eight_lanes(np.zeros(8, np.float16), np.zeros(64, np.float32))
