"""Atomics and fences (fx.atomic_*, fx.memory_fence): exact on the CPU
target, where the grid's blocks run on a thread pool, and in interpreter
mode; the NVIDIA and AMD code carries the instructions with the scope and
order asked for (conftest assembles every traced launcher for sm_90 and
gfx942 as well)."""

import sys
from pathlib import Path

import numpy as np
import pytest

import flyrt.compiler as flyc
import flyrt.expr as fx

import code_objects

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "notebooks"))
from kernels.histogram import histogram  # noqa: E402
from kernels.split_sum import split_sum  # noqa: E402

RNG = np.random.default_rng(7)


@pytest.fixture(params=[False, True], ids=["compiled", "interpreted"])
def interpret(request):
    launchers = [histogram, split_sum, claim_slots, apply_all, swap_in, scaled_fetch_add]
    for launcher in launchers:
        launcher.interpret = request.param
    yield request.param
    for launcher in launchers:
        launcher.interpret = None


def test_a_histogram_counts_every_value_once(interpret):
    n, bins = (3000, 37) if interpret else (200_003, 300)
    values = RNG.integers(0, bins, n).astype(np.int32)
    counts = np.zeros(bins, np.int32)
    histogram(values, counts, n, 2 if interpret else 64, bins)
    np.testing.assert_array_equal(counts, np.bincount(values, minlength=bins))


def test_the_last_block_combines_the_partial_sums_in_the_same_launch(interpret):
    n, blocks = (1000, 3) if interpret else (1_000_003, 97)
    x = RNG.integers(-8, 8, n).astype(np.float32)  # small integers: every order sums exactly
    partials, tickets, total = np.zeros(blocks, np.float32), np.zeros(1, np.int32), np.zeros(1, np.float32)
    for _ in range(2):  # the ticket is reset by the last block: a second launch works too
        split_sum(x, partials, tickets, total, n, blocks)
        assert total[0] == x.sum() and tickets[0] == 0


@flyc.kernel
def _claim_slots(counter: fx.Tensor, order: fx.Tensor, n: fx.Int32):
    i = fx.block_idx.x * fx.block_dim.x + fx.thread_idx.x
    if i < n:
        order[fx.atomic_add(counter, 0, 1)] = i


@flyc.jit
def claim_slots(counter: fx.Tensor, order: fx.Tensor, n: fx.Int32):
    _claim_slots(counter, order, n).launch(grid=((n + 63) // 64,), block=(64,))


def test_each_thread_gets_the_old_value_so_slots_are_claimed_once(interpret):
    n = 500 if interpret else 100_000
    counter, order = np.zeros(1, np.int32), np.full(n, -1, np.int32)
    claim_slots(counter, order, n)
    assert counter[0] == n
    np.testing.assert_array_equal(np.sort(order), np.arange(n))


@flyc.kernel
def _apply_all(x: fx.Tensor, out: fx.Tensor, old: fx.Tensor, n: fx.Int32):
    i = fx.block_idx.x * fx.block_dim.x + fx.thread_idx.x
    if i < n:
        v = x[i]
        old[0, i] = fx.atomic_add(out, 0, v)
        old[1, i] = fx.atomic_sub(out, 1, v)
        old[2, i] = fx.atomic_min(out, 2, v)
        old[3, i] = fx.atomic_max(out, 3, v)
        old[4, i] = fx.atomic_and(out, 4, v)
        old[5, i] = fx.atomic_or(out, 5, v)
        old[6, i] = fx.atomic_xor(out, 6, v)
        old[7, i] = fx.atomic_xchg(out, 7, v)


@flyc.jit
def apply_all(x: fx.Tensor, out: fx.Tensor, old: fx.Tensor, n: fx.Int32):
    _apply_all(x, out, old, n).launch(grid=((n + 127) // 128,), block=(128,))


def integer_case(dtype, n):
    """Values for apply_all, and the elements it starts from."""
    info = np.iinfo(dtype)
    x = RNG.integers(0 if info.min == 0 else -1000, 1000, n).astype(dtype)
    return x, np.array([5, 7, info.max, info.min, -1 if info.min else info.max, 0, 0, 42], dtype)


def check_integer_case(x, start, out, old):
    """What apply_all must leave, in any order of the threads."""
    with np.errstate(over="ignore"):
        total = x.sum(dtype=x.dtype)
        expected = [start[0] + total, start[1] - total, min(start[2], x.min()), max(start[3], x.max()),
                    np.bitwise_and.reduce(x, initial=start[4]), np.bitwise_or.reduce(x, initial=start[5]),
                    np.bitwise_xor.reduce(x, initial=start[6])]
    np.testing.assert_array_equal(out[:7], np.array(expected, x.dtype))
    # the exchange chain: the old values are the start and every value but the last one written
    assert sorted(old[7].tolist() + [out[7]]) == sorted(x.tolist() + [start[7]])


@pytest.mark.parametrize("dtype", [np.int32, np.uint32, np.int64, np.uint64])
def test_every_integer_operation(interpret, dtype):
    n = 300 if interpret else 50_000
    x, start = integer_case(dtype, n)
    out, old = start.copy(), np.zeros((8, n), dtype)
    with np.errstate(over="ignore"):
        apply_all(x, out, old, n)
    check_integer_case(x, start, out, old)


@flyc.kernel
def _scaled_fetch_add(x: fx.Tensor, out: fx.Tensor, n: fx.Int32):
    i = fx.block_idx.x * fx.block_dim.x + fx.thread_idx.x
    if i < n:
        fx.atomic_add(out, i % 4, x[i] * 0.5)
        fx.atomic_sub(out, 4 + i % 4, x[i])


@flyc.jit
def scaled_fetch_add(x: fx.Tensor, out: fx.Tensor, n: fx.Int32):
    _scaled_fetch_add(x, out, n).launch(grid=((n + 255) // 256,), block=(256,))


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
def test_float_add_and_sub(interpret, dtype):
    n = 256 if interpret else 40_000
    x = RNG.integers(-4, 5, n).astype(dtype)  # sums of small integers are exact in any order
    out = np.zeros(8, dtype)
    scaled_fetch_add(x, out, n)
    groups = [x[k::4] for k in range(4)]
    np.testing.assert_array_equal(out, [g.sum() * 0.5 for g in groups] + [-g.sum() for g in groups])


@flyc.kernel
def _swap_in(t: fx.Tensor, old: fx.Tensor, won: fx.Tensor, n: fx.Int32):
    i = fx.block_idx.x * fx.block_dim.x + fx.thread_idx.x
    if i < n:
        previous, success = fx.atomic_cas(t, i % 16, 0, i + 1, order="acq_rel")
        old[i] = previous
        won[i] = success


@flyc.jit
def swap_in(t: fx.Tensor, old: fx.Tensor, won: fx.Tensor, n: fx.Int32):
    _swap_in(t, old, won, n).launch(grid=((n + 63) // 64,), block=(64,))


def test_compare_and_swap_lets_one_thread_win_each_element(interpret):
    n = 200 if interpret else 10_000
    t, old, won = np.zeros(16, np.int64), np.zeros(n, np.int64), np.zeros(n, np.bool_)
    swap_in(t, old, won, n)
    winners = np.flatnonzero(won)
    assert len(winners) == 16 and sorted(winners % 16) == list(range(16))
    np.testing.assert_array_equal(t[winners % 16], winners + 1)
    assert (old[winners] == 0).all() and (old[~won] != 0).all()  # losers saw the winner's value


@flyc.kernel
def _out_of_bounds(t: fx.Tensor, i: fx.Int32):
    fx.atomic_add(t, i, 1)


@flyc.jit
def out_of_bounds(t: fx.Tensor, i: fx.Int32):
    _out_of_bounds(t, i).launch(grid=(1,), block=(1,))


def test_an_atomic_out_of_bounds_is_an_index_error_and_writes_nothing():
    t = np.zeros(4, np.int32)
    with pytest.raises(IndexError, match=r"index \(4\) is out of bounds for tensor 't' of shape \(4\)"):
        out_of_bounds(t, 4)
    assert not t.any()


def _launch_one(body):
    @flyc.kernel
    def k(t: fx.Tensor):
        body(t)

    @flyc.jit
    def run(t: fx.Tensor):
        k(t).launch(grid=(1,), block=(1,))

    return run


@pytest.mark.parametrize("body, dtype, message", [
    (lambda t: fx.atomic_add(t, 0, 1), np.int8, "fx.atomic_add on tensor 't' of Int8: it takes Int32, UInt32"),
    (lambda t: fx.atomic_or(t, 0, 1.0), np.float32, "fx.atomic_or on tensor 't' of Float32: it takes Int32"),
    (lambda t: fx.atomic_cas(t, 0, 1.0, 2.0), np.float32, "fx.atomic_cas on tensor 't' of Float32"),
    (lambda t: fx.atomic_add(t, 0, 1, scope="cluster"), np.int32, "scope='cluster'; expected one of 'block'"),
    (lambda t: fx.memory_fence(order="relaxed"), np.int32, "fx.memory_fence: order='relaxed'; expected one of"),
])
def test_what_an_atomic_does_not_take_is_an_error_at_its_line(body, dtype, message):
    with pytest.raises(flyc.KernelError, match=message) as info:
        _launch_one(body)(np.zeros(4, dtype))
    assert info.value.filename == __file__


def test_the_gpu_code_carries_each_scope_and_order():
    values, counts = np.zeros(1000, np.int32), np.zeros(64, np.int32)
    ptx = histogram.lower(values, counts, 1000, 4, 64, target="cuda", arch="sm_90").device_code["histogram_kernel"]
    assert "atom.relaxed.cta.add.u32" in ptx and "atom.relaxed.gpu.add.u32" in ptx
    x = np.zeros(1000, np.float32)
    ptx = split_sum.lower(x, x[:4], counts[:1], x[:1], 1000, 4, target="cuda", arch="sm_90").device_code
    ptx = ptx["split_sum_kernel"]
    assert "fence.acq_rel.gpu;" in ptx and "atom.acq_rel.gpu.add.u32" in ptx
    code = histogram.lower(values, counts, 1000, 4, 64, target="hip", arch="gfx942").device_code["histogram_kernel"]
    used = code_objects.instructions(code)
    assert "ds_add_u32" in used and "global_atomic_add" in used
    code = scaled_fetch_add.lower(x, x[:8], 1000, target="hip", arch="gfx942").device_code["_scaled_fetch_add"]
    assert "global_atomic_add_f32" in code_objects.instructions(code)
