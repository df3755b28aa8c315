"""Bounds checks the compiler proves are dropped (ir::value_ranges); the rest
stay and still catch every out-of-bounds index, wrapped arithmetic included."""

import numpy as np
import pytest

import flyrt.compiler as flyc
import flyrt.expr as fx


@pytest.fixture(autouse=True)
def checked(monkeypatch):
    monkeypatch.setenv("FLYDSL_DEBUG_BOUNDS", "1")


def reports(lowered):
    """Tensors whose checks survive into the optimized code (a dropped check
    takes its message string with it)."""
    return {name for name in ("x", "out", "shared") if f"tensor '{name}'" in lowered.llvm_ir}


@flyc.kernel
def _tiles(x: fx.Tensor, out: fx.Tensor):
    t = fx.thread_idx.x
    tile = fx.shared((128,), fx.Float32)
    tile[t] = x[t]
    tile[t + 64] = x[t]
    fx.barrier()
    acc = fx.Vector.zeros(8, fx.Float32)
    for k in range(0, 128, 8):  # every vector of 8 inside the 128: proven
        acc = acc + fx.Vector.load(tile, (k,), 8)
    for e in range(t * 8, 2048, 512):  # e % 128 is a multiple of 8, so at most 120: proven
        acc = acc + fx.Vector.load(tile, (e % 128,), 8)
    out[t] = acc.reduce("add") + tile[63 - t]


@flyc.jit
def tiles(x: fx.Tensor, out: fx.Tensor):
    _tiles(x, out).launch(block=(64,))


def test_proven_checks_are_dropped_and_the_others_kept():
    x = np.arange(64, dtype=np.float32)
    out = np.zeros(64, np.float32)
    tiles(x, out)
    tile = np.concatenate([x, x])
    strided = [sum(tile[e % 128: e % 128 + 8].sum() for e in range(t * 8, 2048, 512)) for t in range(64)]
    np.testing.assert_allclose(out, tile.sum() + np.array(strided) + x[::-1])
    # x and out have launch-time shapes: their checks stay; every shared access is proven
    assert reports(tiles.lower(x, out, target="cpu")) == {"x", "out"}


@flyc.kernel
def _shifted(x: fx.Tensor, out: fx.Tensor, by: fx.Constexpr[int]):
    t = fx.thread_idx.x
    tile = fx.shared((64,), fx.Float32)
    tile[t] = x[t]
    fx.barrier()
    out[t] = tile[t + by]


@flyc.jit
def shifted(x: fx.Tensor, out: fx.Tensor, by: fx.Constexpr[int]):
    _shifted(x, out, by).launch(block=(64,))


@pytest.mark.parametrize("by, index", [(1, 64), (-1, -1)])
def test_a_check_that_can_fail_is_kept_and_reports(by, index):
    x, out = np.arange(64, dtype=np.float32), np.zeros(64, np.float32)
    assert "shared" in reports(shifted.lower(x, out, by, target="cpu"))
    with pytest.raises(IndexError, match=rf"index \({index}\) is out of bounds for tensor 'shared' of shape \(64\)"):
        shifted(x, out, by)


@flyc.kernel
def _wrapped(x: fx.Tensor, out: fx.Tensor):
    t = fx.thread_idx.x
    tile = fx.shared((64,), fx.Float32)
    tile[t] = x[t]
    fx.barrier()
    big = t * 67108864  # Int32: wraps negative from t = 32 on
    out[t] = tile[big // 67108864]


@flyc.jit
def wrapped(x: fx.Tensor, out: fx.Tensor):
    _wrapped(x, out).launch(block=(64,))


def test_arithmetic_that_may_wrap_proves_nothing():
    x, out = np.arange(64, dtype=np.float32), np.zeros(64, np.float32)
    with pytest.raises(IndexError, match=r"index \(-32\) is out of bounds for tensor 'shared'"):
        wrapped(x, out)


@flyc.kernel
def _rows(x: fx.Tensor, out: fx.Tensor):
    t = fx.thread_idx.x
    out[t] = x[t] * 2.0


@flyc.jit
def two_blocks(x: fx.Tensor, out: fx.Tensor, n: fx.Int32):
    _rows(x, out).launch(grid=(1,), block=(32,))  # a constant block: compiled for it
    _rows(x, out).launch(grid=(1,), block=(n,))  # a traced one: any size


def test_a_kernel_launched_with_constant_and_traced_blocks():
    x = np.arange(48, dtype=np.float32)
    out = np.zeros(48, np.float32)
    two_blocks(x, out, 48)
    np.testing.assert_array_equal(out, 2 * x)
    ir = two_blocks.lower(x, out, 48, target="cpu").ir
    assert "block(32,1,1)" in ir and ir.count("kernel @") == 2


@flyc.kernel
def _merge_warps(x: fx.Tensor, out: fx.Tensor, guard: fx.Constexpr[str]):
    # four warps of 32; warps 1-3 leave their row in slots 0-2, warp 0 sums them
    t = fx.thread_idx.x
    warp, lane = t // 32, t % 32
    slots = fx.shared((3, 32), fx.Float32)
    # every guard but "upper" keeps warp 0 from slot -1, and says so in a way the ranges can read
    if fx.const_expr(guard == "and"):
        if (warp > 0) & (warp < 4):
            slots[warp - 1, lane] = x[t]
    elif fx.const_expr(guard == "not"):
        if ~(warp == 0):
            slots[warp - 1, lane] = x[t]
    elif fx.const_expr(guard in ("else of ==", "else of <", "else of or")):
        if fx.const_expr(guard == "else of =="):
            first = warp == 0
        elif fx.const_expr(guard == "else of <"):
            first = warp < 1
        else:
            first = (warp < 1) | (warp > 3)
        if first:
            out[lane] = 0.0
        else:
            slots[warp - 1, lane] = x[t]
    else:
        if warp < 4:  # says nothing of warp 0's slot -1: checked, and it reports
            slots[warp - 1, lane] = x[t]
    fx.barrier()
    if warp == 0:
        out[lane] = slots[0, lane] + slots[1, lane] + slots[2, lane]


@flyc.jit
def merge_warps(x: fx.Tensor, out: fx.Tensor, guard: fx.Constexpr[str]):
    _merge_warps(x, out, guard).launch(block=(128,))


@pytest.mark.parametrize("guard", ["and", "not", "else of ==", "else of <", "else of or"])
def test_a_branch_condition_narrows_what_its_region_indexes(guard):
    x, out = np.arange(128, dtype=np.float32), np.zeros(32, np.float32)
    assert reports(merge_warps.lower(x, out, guard, target="cpu")) == {"x", "out"}
    merge_warps(x, out, guard)
    np.testing.assert_array_equal(out, x[32:64] + x[64:96] + x[96:])


def test_a_branch_condition_that_leaves_an_index_open_keeps_its_check():
    x, out = np.arange(128, dtype=np.float32), np.zeros(32, np.float32)
    assert "shared" in reports(merge_warps.lower(x, out, "upper", target="cpu"))
    with pytest.raises(IndexError, match=r"index \(-1, \d+\) is out of bounds for tensor 'shared' of shape \(3, 32\)"):
        merge_warps(x, out, "upper")


# -- the block-level inference (codegen/cpu/bounds_inference): a block whose
# checks all hold runs unchecked; any block that may go out of bounds runs checked


@flyc.kernel
def _shifted_copy(x: fx.Tensor, out: fx.Tensor, shift: fx.Int32):
    i = fx.block_idx.x * fx.block_dim.x + fx.thread_idx.x
    if i < out.shape[0]:
        out[i] = x[i + shift]


@flyc.jit
def shifted_copy(x: fx.Tensor, out: fx.Tensor, shift: fx.Int32):
    _shifted_copy(x, out, shift).launch(grid=((out.shape[0] + 63) // 64,), block=(64,))


@pytest.mark.parametrize("shift, index", [(0, None), (1, 4096), (-1, -1)])
def test_only_the_block_that_leaves_the_tensor_reports(shift, index):
    x = np.arange(4096, dtype=np.float32)
    out = np.full(4096, -7.0, np.float32)
    if index is None:
        shifted_copy(x, out, shift)
        np.testing.assert_array_equal(out, x)
        return
    with pytest.raises(IndexError, match=rf"index \({index}\) is out of bounds for tensor 'x' of shape \(4096\)"):
        shifted_copy(x, out, shift)
    if shift > 0:  # every element but the one out of bounds was copied
        np.testing.assert_array_equal(out[:4095], x[1:])
    else:
        np.testing.assert_array_equal(out[1:], x[:4095])


@flyc.kernel
def _wide_blocks(x: fx.Tensor, out: fx.Tensor):
    # Int32: block 1 gives 24; block 2's product wraps to -2**30, so -16 (without the wrap: 48, inside)
    out[fx.thread_idx.x] = x[(fx.block_idx.x * 1610612736) // 67108864]


@flyc.jit
def wide_blocks(x: fx.Tensor, out: fx.Tensor):
    _wide_blocks(x, out).launch(grid=(3,), block=(64,))


def test_a_block_whose_index_may_wrap_runs_checked():
    x, out = np.arange(64, dtype=np.float32), np.zeros(64, np.float32)
    with pytest.raises(IndexError, match=r"index \(-16\) is out of bounds for tensor 'x' of shape \(64\)"):
        wide_blocks(x, out)


@flyc.kernel
def _row_sums(m: fx.Tensor, out: fx.Tensor, cols: fx.Int32):
    row = fx.block_idx.x * fx.block_dim.x + fx.thread_idx.x
    total = 0.0
    for c in range(0, cols):  # a loop variable: its interval is the loop's range
        total = total + m[row, c]
    out[row] = total


@flyc.jit
def row_sums(m: fx.Tensor, out: fx.Tensor, cols: fx.Int32):
    _row_sums(m, out, cols).launch(grid=(m.shape[0] // 32,), block=(32,))


def test_a_loop_that_runs_past_the_row_reports():
    m = np.arange(64 * 16, dtype=np.float32).reshape(64, 16)
    out = np.zeros(64, np.float32)
    row_sums(m, out, 16)
    np.testing.assert_array_equal(out, m.sum(axis=1))
    # the grid's two blocks run at once: the first out-of-bounds read reported is either one's first row
    with pytest.raises(IndexError, match=r"index \((0|32), 16\) is out of bounds for tensor 'm' of shape \(64, 16\)"):
        row_sums(m, out, 17)


@flyc.kernel
def _quads(x: fx.Tensor, out: fx.Tensor, n: fx.Int32):
    total = 0.0
    for c in range(0, n, 4):  # the last c is n - 4 only when 4 divides n
        total = total + x[c] + x[c + 1] + x[c + 2] + x[c + 3]
    out[fx.thread_idx.x] = total


@flyc.jit
def quads(x: fx.Tensor, out: fx.Tensor, n: fx.Int32):
    _quads(x, out, n).launch(grid=(4,), block=(32,))


def test_a_strided_loop_is_proven_only_when_its_last_step_fits():
    out = np.zeros(32, np.float32)
    x = np.arange(16, dtype=np.float32)
    quads(x, out, 16)
    np.testing.assert_array_equal(out, np.full(32, x.sum()))
    x = np.arange(18, dtype=np.float32)
    with pytest.raises(IndexError, match=r"index \(18\) is out of bounds for tensor 'x' of shape \(18\)"):
        quads(x, out, 18)  # c = 16: x[18] and x[19] are past the end


@flyc.kernel
def _gather_rows(x: fx.Tensor, picks: fx.Tensor, out: fx.Tensor):
    t = fx.thread_idx.x
    column = 4 * (t % 16)
    row = fx.Vector.load(x, (picks[t, 0], picks[t, 1], column), 4, align=16)  # indices the range analysis cannot bound
    out[t] = row.reduce("add")


@flyc.jit
def gather_rows(x: fx.Tensor, picks: fx.Tensor, out: fx.Tensor):
    _gather_rows(x, picks, out).launch(block=(64,))


def test_strides_specialized_on_their_multiple_prove_vector_alignment():
    """The launcher is specialized on the power of two dividing a tensor's strides (up to 16), so a vector
    access whose last index is aligned is proven aligned however large the data-dependent indices (their
    sum may wrap in Int64: its residue does not); strides of 66 floats leave the check, which reports."""
    picks = np.array([[i % 3, 0] for i in range(64)], np.int32)  # (rows 66 floats apart: even ones aligned)
    out = np.zeros(64, np.float32)
    for width, multiple in ((64, 16), (66, 2)):
        x = np.arange(3 * 2 * width, dtype=np.float32).reshape(3, 2, width)
        gather_rows(x, picks, out)
        expected = [x[i % 3, 0, 4 * (i % 16):4 * (i % 16) + 4].sum() for i in range(64)]
        np.testing.assert_array_equal(out, expected)
        assert f"strides multiples of {multiple}" in flyc.compile_log()[-1].specialization
        ir = gather_rows.lower(x, picks, out, target="cpu").llvm_ir
        assert ("not 16-byte aligned" in ir) == (multiple < 4)  # 16 bytes: 4 floats
        assert "out of bounds for tensor 'x'" in ir  # the picks' indices stay checked
    x = np.zeros((3, 2, 66), np.float32)
    odd = picks.copy()
    odd[5] = (0, 1)  # element 66: 264 bytes, not a multiple of 16
    with pytest.raises(IndexError, match=r"index \(0, 1, 20\) of tensor 'x' is not 16-byte aligned, as align=16"):
        gather_rows(x, odd, out)
