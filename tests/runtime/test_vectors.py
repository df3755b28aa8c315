"""fx.Vector: vector loads and stores (tensors and shared memory),
elementwise ops, reductions, lanes in and out, broadcast."""

import numpy as np
import pytest

import flyrt.compiler as flyc
import flyrt.expr as fx


@flyc.kernel
def _vector_ops(x: fx.Tensor, y: fx.Tensor, out: fx.Tensor, sums: fx.Tensor, lanes: fx.Constexpr[int]):
    row = fx.thread_idx.x
    buf = fx.shared((4, lanes), fx.Float32)
    a = fx.Vector.load(x, (row, 0), lanes)
    b = y.load_vector((row, 0), lanes)
    c = a * b + 1.0  # scalars broadcast
    c = fx.select(c > 0.0, c, -c)
    c.store(buf, (row, 0))
    fx.barrier()
    d = fx.Vector.load(buf, (row, 0), lanes)
    d = d.insert(0, d[lanes - 1] * 2.0)
    d.store(out, (row, 0))
    sums[row, 0] = a.reduce("add")
    sums[row, 1] = a.reduce("max")
    sums[row, 2] = a.reduce("min")
    sums[row, 3] = fx.Vector.broadcast(3.0, lanes).reduce() + fx.Vector.from_elements([1.0, 2.0]).reduce()
    sums[row, 4] = (a.to(fx.Int32) // 2).to(fx.Float32)[1]


@flyc.jit
def vector_ops(x: fx.Tensor, y: fx.Tensor, out: fx.Tensor, sums: fx.Tensor, lanes: fx.Constexpr[int]):
    _vector_ops(x, y, out, sums, lanes).launch(block=(4,))


@pytest.mark.parametrize("lanes", [2, 4, 8, 16])
def test_vector_ops_for_every_width(lanes):
    rng = np.random.default_rng(lanes)
    x = (rng.standard_normal((4, lanes)) * 10).astype(np.float32)
    y = rng.standard_normal((4, lanes)).astype(np.float32)
    out = np.zeros_like(x)
    sums = np.zeros((4, 5), np.float32)
    vector_ops(x, y, out, sums, lanes)
    expected = np.abs(x * y + 1)
    expected[:, 0] = expected[:, -1] * 2
    np.testing.assert_allclose(out, expected, rtol=1e-6)
    np.testing.assert_allclose(sums[:, 0], x.sum(axis=1), rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(sums[:, 1], x.max(axis=1))
    np.testing.assert_array_equal(sums[:, 2], x.min(axis=1))
    np.testing.assert_array_equal(sums[:, 3], 3.0 * lanes + 3.0)
    np.testing.assert_array_equal(sums[:, 4], np.floor_divide(np.trunc(x[:, 1]).astype(np.int32), 2))


def test_vector_misuse_is_a_clear_error():
    @flyc.kernel
    def strided(x: fx.Tensor, out: fx.Tensor):
        fx.Vector.load(x, (0, 0), 4).store(out, (0, 0))

    @flyc.jit
    def run(x: fx.Tensor, out: fx.Tensor):
        strided(x, out).launch()

    base = np.zeros((8, 8), np.float32)
    with pytest.raises(TypeError, match="needs a contiguous last dimension"):
        run(base[:, ::2], np.zeros((8, 4), np.float32))

    @flyc.kernel
    def too_wide(x: fx.Tensor):
        fx.Vector.load(x, (0,), 32)

    @flyc.jit
    def run_wide(x: fx.Tensor):
        too_wide(x).launch()

    with pytest.raises(ValueError, match="2 to 16 lanes"):
        run_wide(np.zeros(64, np.float32))


@flyc.kernel
def _copy_vectors(x: fx.Tensor, out: fx.Tensor, start: fx.Int32):
    fx.Vector.load(x, (start,), 4).store(out, (0,))


@flyc.jit
def copy_vectors(x: fx.Tensor, out: fx.Tensor, start: fx.Int32):
    _copy_vectors(x, out, start).launch()


def test_vector_past_the_end_is_reported_with_debug_bounds(monkeypatch):
    monkeypatch.setenv("FLYDSL_DEBUG_BOUNDS", "1")
    x = np.arange(8, dtype=np.float32)
    out = np.zeros(4, np.float32)
    copy_vectors(x, out, 4)
    np.testing.assert_array_equal(out, [4, 5, 6, 7])
    with pytest.raises(IndexError, match="out of bounds for tensor 'x' of shape \\(8\\)"):
        copy_vectors(x, out, 6)  # lanes 6..9: the last two fall outside


@flyc.kernel
def _copy_aligned(x: fx.Tensor, out: fx.Tensor, start: fx.Int32):
    i = fx.thread_idx.x * 4
    fx.Vector.load(x, (start + i,), 4, align=16).store(out, (i,), align=16)


@flyc.jit
def copy_aligned(x: fx.Tensor, out: fx.Tensor, start: fx.Int32):
    _copy_aligned(x, out, start).launch(block=(out.shape[0] // 4,))


def test_alignment_is_specialized_on_not_trusted():
    """align=16 promises 16-byte addresses; a view 4 bytes into its buffer is
    its own specialization, in which the promise is capped by what the data
    pointer has: on a GPU its loads go in pieces instead of faulting."""
    base = np.arange(36, dtype=np.float32)
    out = np.zeros(32, np.float32)
    copy_aligned(base[:32], out, 0)
    np.testing.assert_array_equal(out, base[:32])
    copy_aligned(base[1:33], out, 0)  # 4-byte aligned data
    np.testing.assert_array_equal(out, base[1:33])
    assert copy_aligned.cache_info().compiles == 2
    assert "4-byte aligned" in flyc.compile_log()[-1].specialization
    ptx = {name: copy_aligned.lower(x, out, 0, target="cuda", arch="sm_90").device_code["_copy_aligned"]
           for name, x in (("aligned", base[:32]), ("offset", base[1:33]))}
    assert "ld.global.v4.f32" in ptx["aligned"]
    assert "ld.global.v4.f32" not in ptx["offset"] and "ld.global.f32" in ptx["offset"]


def test_a_broken_align_promise_is_reported_with_bounds_checks(monkeypatch):
    x, out = np.arange(40, dtype=np.float32), np.zeros(32, np.float32)
    monkeypatch.setenv("FLYDSL_DEBUG_BOUNDS", "0")
    copy_aligned(x, out, 2)  # unchecked: the CPU does not trust align= (a GPU would fault)
    np.testing.assert_array_equal(out, x[2:34])
    monkeypatch.setenv("FLYDSL_DEBUG_BOUNDS", "1")
    copy_aligned(x, out, 4)  # 16 bytes in: as promised
    np.testing.assert_array_equal(out, x[4:36])
    with pytest.raises(IndexError, match=r"index \(2\) of tensor 'x' is not 16-byte aligned, as align=16 promises"):
        copy_aligned(x, out, 2)
