"""Tensors (strides, views, torch), specialization and cache counters."""

import numpy as np
import pytest

import flyrt.compiler as flyc
from flyrt.core import host_arrays
import flyrt.expr as fx


@flyc.kernel
def _scale_2d(x: fx.Tensor, out: fx.Tensor, alpha: fx.Float32):
    row = fx.block_idx.y * fx.block_dim.y + fx.thread_idx.y
    col = fx.block_idx.x * fx.block_dim.x + fx.thread_idx.x
    if row < x.shape[0] and col < x.shape[1]:
        out[row, col] = x[row, col] * alpha


@flyc.jit
def scale_2d(x: fx.Tensor, out: fx.Tensor, alpha: fx.Float32):
    rows, cols = x.shape
    scale_2d_grid = ((cols + 15) // 16, (rows + 7) // 8)
    _scale_2d(x, out, alpha).launch(grid=scale_2d_grid, block=(16, 8))


def test_2d_grid_on_odd_shapes_writes_nothing_past_the_end():
    x = np.random.default_rng(0).standard_normal((37, 53)).astype(np.float32)
    padded = np.full((40, 60), -7.0, np.float32)
    out = padded[:37, :53]  # a view: writes outside it would show in `padded`
    scale_2d(x, out, 3.0)
    np.testing.assert_allclose(out, x * 3.0, rtol=1e-6)
    assert (padded[37:, :] == -7.0).all() and (padded[:, 53:] == -7.0).all()


def test_strided_and_transposed_views():
    base = np.arange(64 * 48, dtype=np.float32).reshape(64, 48)
    views = [base[::2, 1::3], base.T, base[10:20, ::-1], base[::2, 1::3]]
    layouts = set()
    scale_2d.cache_clear()
    before = scale_2d.cache_info()
    for view in views:
        out = np.zeros_like(view)
        scale_2d(view, out, -1.0)
        np.testing.assert_array_equal(out, -view)
        layouts.add((view.flags.c_contiguous, out.flags.c_contiguous))
    # each layout combination is one specialization, compiled once
    info = scale_2d.cache_info()
    assert info.size == len(layouts) == info.compiles - before.compiles


def test_strides_that_split_elements_are_refused_by_name():
    base = np.zeros(64, np.float32)
    split = np.lib.stride_tricks.as_strided(base, shape=(4, 4), strides=(24, 6))  # 6 bytes: 1.5 floats
    with pytest.raises(ValueError, match="argument 'x': strides that are not a multiple of the element size"):
        scale_2d(split, np.zeros((4, 4), np.float32), 1.0)


def test_alternating_specializations_each_hit_their_own_code():
    wide, narrow = np.ones((4, 4), np.float64), np.ones((4, 4), np.float32)
    outs = {np.float64: np.zeros((4, 4), np.float64), np.float32: np.zeros((4, 4), np.float32)}
    scale_2d.cache_clear()
    before = scale_2d.cache_info()
    for step in range(6):
        x = wide if step % 2 else narrow
        scale_2d(x, outs[x.dtype.type], float(step))
        np.testing.assert_array_equal(outs[x.dtype.type], float(step))
    after = scale_2d.cache_info()
    assert (after.compiles - before.compiles, after.hits - before.hits) == (2, 4)
    scale_2d.cache_clear()  # the last one hit is gone too: the next call compiles
    scale_2d(narrow, outs[np.float32], 9.0)
    assert scale_2d.cache_info().compiles == after.compiles + 1
    np.testing.assert_array_equal(outs[np.float32], 9.0)


def test_same_call_never_recompiles_new_dtype_compiles_once():
    x = np.ones((4, 4), np.float64)
    out = np.zeros_like(x)
    scale_2d.cache_clear()
    before = scale_2d.cache_info()
    for _ in range(3):
        scale_2d(x, out, 2.0)
    after = scale_2d.cache_info()
    assert after.compiles - before.compiles == 1
    assert after.hits - before.hits == 2
    assert after.evictions == before.evictions + before.size
    np.testing.assert_array_equal(out, 2.0)


def test_torch_cpu_tensors(monkeypatch):
    torch = pytest.importorskip("torch")
    x = torch.arange(12, dtype=torch.float32).reshape(3, 4)
    out = torch.zeros(3, 4)
    scale_2d.cache_clear()
    before = scale_2d.cache_info()
    scale_2d(x, out, 0.5)  # through the Python adapter if first, which registers torch's dtypes
    assert torch.equal(out, x * 0.5)
    adapted = []
    monkeypatch.setattr(host_arrays, "host_view", lambda value: adapted.append(value))
    scale_2d(x, out, 3.0)  # read by the C++ dispatcher (0.7 us a tensor where the adapter took 2.6)
    assert torch.equal(out, x * 3.0) and adapted == []
    after = scale_2d.cache_info()
    assert (after.misses - before.misses, after.hits - before.hits) == (1, 1)  # the same specialization
    monkeypatch.undo()
    view = torch.zeros(4, 3).t()  # a non-contiguous torch view
    scale_2d(x, view, 2.0)
    assert torch.equal(view, x * 2.0)
    rows = torch.zeros(5, 4)
    scale_2d(x, rows[2:], 1.5)  # a view that starts inside its storage
    assert torch.equal(rows[2:], x * 1.5) and torch.equal(rows[:2], torch.zeros(2, 4))
    with pytest.raises(TypeError, match="unsupported tensor dtype torch.complex64"):
        scale_2d(x.to(torch.complex64), out, 1.0)


def test_plain_torch_tensors_are_read_by_torchs_exchange_table_and_subclasses_by_their_attributes(monkeypatch):
    torch = pytest.importorskip("torch")
    # torch 2.10 on puts DLPack's C exchange table on its tensor type (the pinned torch is 2.13)
    assert type(torch.Tensor.__dlpack_c_exchange_api__).__name__ == "PyCapsule"
    x = torch.arange(12, dtype=torch.float32).reshape(3, 4)
    out = torch.zeros(5, 4)[1:4]  # a view starting inside its storage
    scale_2d(x, out, 1.0)  # registers torch's dtypes, whichever way it went
    asked = []
    real_data_ptr = torch.Tensor.data_ptr
    monkeypatch.setattr(torch.Tensor, "data_ptr", lambda self: asked.append(type(self)) or real_data_ptr(self))

    scale_2d(x, out, 2.0)
    weight = torch.nn.Parameter(x.clone(), requires_grad=False)
    scale_2d(weight, out.t().contiguous().t(), 3.0)  # a Parameter, and a transposed layout
    assert asked == []  # neither read a Python attribute
    assert torch.equal(out, x * 2.0)

    class Tagged(torch.Tensor):  # a subclass may answer its attributes its own way: they are asked
        pass

    tagged_out = torch.zeros(3, 4).as_subclass(Tagged)
    scale_2d(x.as_subclass(Tagged), tagged_out, 4.0)
    assert Tagged in asked and torch.equal(tagged_out.as_subclass(torch.Tensor), x * 4.0)


def test_a_torch_tensor_whose_memory_holds_negated_values_is_refused():
    torch = pytest.importorskip("torch")
    lazy = torch.complex(torch.zeros(3, 4), torch.ones(3, 4)).conj().imag  # -1 everywhere, 1 in memory
    assert lazy.is_neg()
    out = torch.zeros(3, 4)
    for _ in range(2):  # the dispatcher, once torch's dtypes are registered, leaves it to the adapter too
        with pytest.raises(TypeError, match=r"negative bit set.*pass x.resolve_neg\(\)"):
            scale_2d(lazy, out, 1.0)
    scale_2d(lazy.resolve_neg(), out, 1.0)
    assert torch.equal(out, torch.full((3, 4), -1.0))


@flyc.kernel
def _fill(out: fx.Tensor, value, count: fx.Constexpr[int]):
    i = fx.thread_idx.x
    if i < count:
        out[i] = value


@flyc.jit
def fill(out: fx.Tensor, value, count: fx.Constexpr[int]):
    _fill(out, value, count).launch(block=(32,))


def test_constexpr_and_scalar_specializations():
    out = np.zeros(32, np.float32)
    fill(out, 1.5, 4)
    fill(out, 2.5, 4)  # same types: no compile
    assert fill.cache_info().compiles == 1
    fill(out, 7, 8)  # an int scalar and a new Constexpr: one new specialization
    assert fill.cache_info().compiles == 2
    np.testing.assert_array_equal(out[:8], 7)
    np.testing.assert_array_equal(out[8:], 0)
    fill(out, 2**40, 2)  # does not fit Int32: an Int64 specialization
    assert fill.cache_info().compiles == 3
    assert out[0] == np.float32(2**40)


@flyc.kernel
def _scalars(out: fx.Tensor, big: fx.Int64, flag: fx.Boolean, x: fx.Float32, d: fx.Float64):
    out[0] = big + 1
    out[1] = 1 if flag else 0
    out[2] = x * 2.0
    out[3] = d


@flyc.jit
def scalars(out: fx.Tensor, big: fx.Int64, flag: fx.Boolean, x: fx.Float32, d: fx.Float64):
    _scalars(out, big, flag, x, d).launch()


def test_annotated_scalar_parameters():
    out = np.zeros(4, np.float64)
    scalars(out, 2**40, True, 1.25, 0.1)
    assert out.tolist() == [2**40 + 1, 1, 2.5, 0.1]
    scalars(out, 3, False, 1, 2)  # Python ints convert to the annotated types
    assert out.tolist() == [4, 0, 2, 2]
    assert scalars.cache_info().compiles == 1


def test_shapes_past_int32_index_in_64_bits():
    """A broadcast view of 2**31 + 8 elements: its shape does not fit in Int32, so the launcher is
    specialized on 64-bit indexing for it; indices past 2**31 neither wrap nor read wrong."""
    import flyrt.compiler as flyc
    import flyrt.expr as fx

    @flyc.kernel
    def _tail(x: fx.Tensor, out: fx.Tensor):
        t = fx.thread_idx.x
        i = x.shape[0] - 8 + t
        out[t, 0] = i.to(fx.Float64)
        out[t, 1] = x[i, 1].to(fx.Float64)

    @flyc.jit
    def tail(x: fx.Tensor, out: fx.Tensor):
        _tail(x, out).launch(block=(8,))

    base = np.arange(3, dtype=np.float32)
    huge = np.lib.stride_tricks.as_strided(base, shape=(2**31 + 8, 3), strides=(0, 4))
    out = np.zeros((8, 2))
    tail(huge, out)
    np.testing.assert_array_equal(out[:, 0], 2**31 + np.arange(8))
    np.testing.assert_array_equal(out[:, 1], 1.0)
    assert "64-bit indices" in flyc.compile_log()[-1].specialization
    small = np.zeros((8, 2))
    tail(np.arange(48, dtype=np.float32).reshape(16, 3), small)
    np.testing.assert_array_equal(small[:, 0], np.arange(8, 16))
    np.testing.assert_array_equal(small[:, 1], np.arange(8, 16) * 3 + 1)
