"""fx.a_fragment and fx.b_fragment: a lane's fx.mma fragments of a block of
a shared array. Everywhere they are the elements fx.a_position and
fx.b_position name (checked here on the CPU and in interpreter mode); on
NVIDIA GPUs, from rows at 16-byte boundaries, one ldmatrix of the warp, whose
PTX ptxas assembles (tests/gpu/test_cuda_matrix.py runs it on the H200)."""

import numpy as np
import pytest

import flyrt
import flyrt.compiler as flyc
import flyrt.expr as fx
import ptxas
from flyrt import fp8

RNG = np.random.default_rng(29)
ROWS, COLS = 32, 64  # the staged tile: 128-byte rows of Float16, 64-byte ones of FP8


@flyc.kernel(known_block_size=(32, 1, 1))
def _fragments(src: fx.Tensor, a: fx.Tensor, b: fx.Tensor, bt: fx.Tensor, row: fx.Int32,
               col: fx.Constexpr[int], b_row: fx.Constexpr[int]):
    t = fx.thread_idx.x
    tile = fx.shared((ROWS, COLS), src.dtype)
    for e in fx.range_constexpr(0, ROWS * COLS, 32):
        tile[(e + t) // COLS, (e + t) % COLS] = src[(e + t) // COLS, (e + t) % COLS]
    fx.barrier()
    for out, fragment in ((a, fx.a_fragment(tile, row, col)), (b, fx.b_fragment(tile, b_row, col)),
                          (bt, fx.b_fragment(tile, row, col, transposed=True))):
        for i in fx.range_constexpr(fragment.lanes):
            out[t, i] = fragment[i]


@flyc.jit
def fragments(src: fx.Tensor, a: fx.Tensor, b: fx.Tensor, bt: fx.Tensor, row: fx.Int32, col: fx.Constexpr[int],
              b_row: fx.Constexpr[int] = 0):
    """Each lane's a (16 x K at (row, col)), b (K x 8 at (b_row, col)) and b
    of the transposed tile (8 x K at (row, col)), one lane a row of each output."""
    _fragments(src, a, b, bt, row, col, b_row).launch(block=(32,))


def expected(tile, row, col, b_row, k):
    """The fragments fx.a_position and fx.b_position describe (matrix.py's
    layout), lane by lane."""
    a, b, bt = (np.zeros((32, 16), tile.dtype) for _ in range(3))
    for lane in range(32):
        g, t = lane // 4, lane % 4
        for i in range(k // 2):
            if k == 32:
                r, c = g + 8 * ((i // 4) % 2), 4 * t + i % 4 + 16 * (i // 8)
            else:
                r, c = g + 8 * ((i // 2) % 2), 2 * t + i % 2 + 8 * (i // 4)
            a[lane, i] = tile[row + r, col + c]
        for i in range(k // 4):
            r, c = (4 * t + i % 4 + 16 * (i // 4), g) if k == 32 else (2 * t + i % 2 + 8 * (i // 2), g)
            b[lane, i] = tile[b_row + r, col + c]
            bt[lane, i] = tile[row + c, col + r]
    return a, b, bt


def tile_of(kind):
    values = RNG.integers(-100, 100, (ROWS, COLS))
    if kind == "f16":
        return values.astype(np.float16), 16
    return fp8.quantize(values / 4, kind), 32


def run(tile, row, col):
    outputs = [np.zeros((32, 16), tile.dtype) for _ in range(3)]  # FP8 tiles' dtype carries the format
    fragments(tile, *outputs, row, col)
    return outputs


CASES = [("f16", 0, 0), ("f16", 16, 8), ("f16", 3, 4), ("e4m3fn", 16, 16), ("e4m3fnuz", 5, 32), ("e4m3fn", 0, 4)]


@pytest.mark.parametrize("interpret", [False, True])
@pytest.mark.parametrize("kind, row, col", CASES)
def test_fragments_are_the_positions_elements(kind, row, col, interpret):
    tile, k = tile_of(kind)
    flyrt.set_interpret(interpret)
    try:
        got = run(tile, row, col)
    finally:
        flyrt.set_interpret(None)
    for name, out, want in zip("a b bt".split(), got, expected(tile, row, col, 0, k)):
        np.testing.assert_array_equal(np.asarray(out).view(np.uint8), want.view(np.uint8), err_msg=name)


def ptx(tile, col, arch="sm_90"):
    outputs = [np.zeros((32, 16), tile.dtype) for _ in range(3)]
    return fragments.lower(tile, *outputs, 0, col, target="cuda", arch=arch).device_code["_fragments"]


@pytest.mark.compiled_for("nvptx")
@pytest.mark.parametrize("checks", [False, True])
def test_nvidia_reads_aligned_fragments_with_ldmatrix(checks):
    f16, _ = tile_of("f16")
    flyrt.set_bounds_checks(checks)
    try:
        text = ptx(f16, 8)
        assert "ldmatrix.sync.aligned.m8n8.x4.shared.b16" in text  # a
        assert "ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16" in text  # b
        assert "ldmatrix.sync.aligned.m8n8.x2.shared.b16" in text  # b of the transposed tile
        ptxas.assemble(text, "_fragments_f16")
        fp8_text = ptx(fp8.quantize(np.ones((ROWS, COLS)), "e4m3fn"), 16)
        assert "ldmatrix.sync.aligned.m8n8.x4.shared.b16" in fp8_text
        assert "ldmatrix.sync.aligned.m8n8.x2.shared.b16" in fp8_text
        assert ".trans" not in fp8_text  # B's bytes, not transposed, are gathered
        ptxas.assemble(fp8_text, "_fragments_fp8")
    finally:
        flyrt.set_bounds_checks(None)


@pytest.mark.compiled_for("nvptx")
def test_a_column_off_a_16_byte_boundary_is_gathered():
    f16, _ = tile_of("f16")
    assert "ldmatrix" not in ptx(f16, 4)  # 8 bytes in


@flyc.kernel(known_block_size=(32, 1, 1))
def _divergent(src: fx.Tensor, out: fx.Tensor):
    tile = fx.shared((16, 16), src.dtype)
    tile[fx.thread_idx.x % 16, fx.thread_idx.x // 16] = src[0, 0]
    fx.barrier()
    if fx.thread_idx.x < 16:
        out[fx.thread_idx.x] = fx.a_fragment(tile, 0, 0)[0]


@flyc.jit
def divergent(src: fx.Tensor, out: fx.Tensor):
    _divergent(src, out).launch(block=(32,))


@pytest.mark.compiled_for("nvptx")
def test_a_fragment_under_thread_dependent_control_flow_is_an_error_at_its_line():
    src, out = np.ones((16, 16), np.float16), np.zeros(32, np.float16)
    with pytest.raises(flyc.KernelError, match="a fragment load from shared memory .* sits under control flow "
                                               "that depends on the thread") as raised:
        divergent.lower(src, out, target="cuda", arch="sm_90")
    assert "test_fragments.py:" in str(raised.value)


@pytest.mark.compiled_for()
def test_a_fragment_of_another_type_is_an_error_at_its_line():
    with pytest.raises(flyc.KernelError, match="fx.a_fragment of a Float32 array") as raised:
        divergent(np.ones((16, 16), np.float32), np.zeros(32, np.float32))
    assert "test_fragments.py:" in str(raised.value)


@flyc.kernel(known_block_size=(32, 1, 1))
def _early(src: fx.Tensor, out: fx.Tensor):
    tile = fx.shared((16, 16), src.dtype)
    fx.async_copy(tile, (fx.thread_idx.x // 2, 8 * (fx.thread_idx.x % 2)), src, (fx.thread_idx.x // 2, 0), lanes=8)
    fx.async_commit()
    out[fx.thread_idx.x] = fx.a_fragment(tile, 0, 0)[0]


@flyc.jit
def early(src: fx.Tensor, out: fx.Tensor):
    _early(src, out).launch(block=(32,))


@pytest.mark.compiled_for("nvptx")
@pytest.mark.parametrize("target, arch", [("cpu", None), ("cuda", "sm_90")])
def test_a_fragment_before_the_async_copy_lands_is_an_error(target, arch):
    """The ldmatrix reads the array as the gathered loads do."""
    src, out = np.ones((16, 16), np.float16), np.zeros(32, np.float16)
    with pytest.raises(flyc.KernelError, match="reads a shared array before the async copy into it"):
        early.lower(src, out, target=target, arch=arch) if arch else early.lower(src, out, target=target)
