"""Dynamic control flow on traced values, rewritten from the Python AST."""

import re

import numpy as np
import pytest

import flyrt.compiler as flyc
import flyrt.expr as fx


@flyc.kernel
def _nested(out: fx.Tensor, n: fx.Int32, m: fx.Int32):
    i = fx.thread_idx.x
    acc = 0
    for j in range(n):
        if j % 2 == 0:
            for k in range(m):
                acc += j * k + i
        else:
            acc -= 1
    out[i] = acc


@flyc.jit
def nested(out: fx.Tensor, n: fx.Int32, m: fx.Int32):
    _nested(out, n, m).launch(block=(out.shape[0],))


def test_nested_dynamic_loops_and_ifs_carry_values():
    out = np.zeros(8, np.int32)
    nested(out, 5, 3)
    expected = [sum((j * k + i) for j in range(5) if j % 2 == 0 for k in range(3)) - 2 for i in range(8)]
    np.testing.assert_array_equal(out, expected)
    nested(out, 0, 3)
    np.testing.assert_array_equal(out, 0)
    assert nested.cache_info().compiles == 1


@flyc.kernel
def _branches(x: fx.Tensor, out: fx.Tensor):
    i = fx.thread_idx.x
    v = x[i]
    if v > 10.0:
        y = v * 2.0
        tag = 1
    elif v < 0.0:
        y = -v
        tag = 2
    else:
        y = v
        tag = 3
    out[i, 0] = y
    out[i, 1] = tag
    out[i, 2] = 100.0 if v > 5.0 else -100.0


@flyc.jit
def branches(x: fx.Tensor, out: fx.Tensor):
    _branches(x, out).launch(block=(x.shape[0],))


def test_branch_merged_values_and_conditional_expressions():
    x = np.array([20.0, -3.0, 4.0, 7.0], np.float32)
    out = np.zeros((4, 3), np.float32)
    branches(x, out)
    np.testing.assert_array_equal(out, [[40, 1, 100], [3, 2, -100], [4, 3, -100], [7, 3, 100]])


@flyc.kernel
def _running(x: fx.Tensor, out: fx.Tensor, n: fx.Int32):
    # an online rescale of a list of accumulators, as flash attention's, skipped past n: the list leaves the
    # traced if element by element
    frags = [fx.Vector.zeros(4, fx.Float32) for _ in range(2)]
    peak = float("-inf")
    for i in range(0, x.shape[0], 2):
        for at in fx.range_constexpr(2):
            if i + at < n:
                new = fx.max(peak, x[i + at])
                rescale = fx.exp2(peak - new)
                peak = new
                frags = [f * rescale + 1.0 for f in frags]
    out[0] = frags[0][0]
    out[1] = frags[1][3]


@flyc.jit
def running(x: fx.Tensor, out: fx.Tensor, n: fx.Int32):
    _running(x, out, n).launch()


@flyc.kernel
def _reshaped(out: fx.Tensor, n: fx.Int32):
    parts = [out[0], out[1]]
    if n > 0:
        parts = [out[0]]
    out[0] = parts[0]


@flyc.jit
def reshaped(out: fx.Tensor, n: fx.Int32):
    _reshaped(out, n).launch()


def test_a_list_of_values_leaves_a_traced_if_element_by_element():
    x = np.arange(6, dtype=np.float32)
    out = np.zeros(2, np.float32)
    running(x, out, 5)  # pages 0..4 of 0..5: 1, then (f / 2 + 1) four times
    np.testing.assert_array_equal(out, [1.9375, 1.9375])
    with pytest.raises(TypeError, match="'parts' enters the if as a sequence of 2 values and must stay one"):
        reshaped(out, 1)


@flyc.kernel
def _collatz(start: fx.Tensor, steps: fx.Tensor):
    i = fx.thread_idx.x
    v = start[i]
    count = 0
    while v != 1:
        v = v // 2 if v % 2 == 0 else 3 * v + 1
        count += 1
    steps[i] = count


@flyc.jit
def collatz(start: fx.Tensor, steps: fx.Tensor):
    _collatz(start, steps).launch(block=(start.shape[0],))


def collatz_reference(v):
    count = 0
    while v != 1:
        v = v // 2 if v % 2 == 0 else 3 * v + 1
        count += 1
    return count


def test_while_loops():
    start = np.array([1, 2, 3, 7, 27, 97], np.int64)
    steps = np.zeros(6, np.int32)
    collatz(start, steps)
    np.testing.assert_array_equal(steps, [collatz_reference(int(v)) for v in start])


@flyc.kernel
def _guarded(x: fx.Tensor, out: fx.Tensor, n: fx.Int32):
    i = fx.block_idx.x * fx.block_dim.x + fx.thread_idx.x
    if i >= n:
        return
    # short-circuit: x[i + 1] is only read where i + 1 < n
    if i + 1 < n and x[i + 1] > x[i]:
        out[i] = 1
    elif not (i + 1 < n) or x[i] == 0:
        out[i] = 2
    else:
        out[i] = 3


@flyc.jit
def guarded(x: fx.Tensor, out: fx.Tensor, n: fx.Int32):
    _guarded(x, out, n).launch(grid=((n + 31) // 32,), block=(32,))


def test_early_exit_and_short_circuit_conditions():
    n = 37
    x = np.random.default_rng(1).integers(0, 3, n).astype(np.int32)
    out = np.full(64, -1, np.int32)
    guarded(x, out, n)
    expected = [1 if i + 1 < n and x[i + 1] > x[i] else 2 if not (i + 1 < n) or x[i] == 0 else 3 for i in range(n)]
    np.testing.assert_array_equal(out[:n], expected)
    np.testing.assert_array_equal(out[n:], -1)  # nothing written past the end


@flyc.kernel
def _unrolled(x: fx.Tensor, out: fx.Tensor, width: fx.Constexpr[int], negate: fx.Constexpr[bool]):
    i = fx.thread_idx.x
    total = 0.0
    for k in fx.range_constexpr(width):
        total = total + x[i, k] * (k + 1)
    if fx.const_expr(negate):
        total = -total
    out[i] = total


@flyc.jit
def unrolled(x: fx.Tensor, out: fx.Tensor, width: fx.Constexpr[int], negate: fx.Constexpr[bool]):
    _unrolled(x, out, width, negate).launch(block=(x.shape[0],))


def test_range_constexpr_and_const_expr_specialize():
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    out = np.zeros(3, np.float32)
    unrolled(x, out, 4, False)
    np.testing.assert_allclose(out, x @ np.arange(1, 5))
    unrolled(x, out, 2, True)
    np.testing.assert_allclose(out, -(x[:, :2] @ np.arange(1, 3)))
    unrolled(x, out, 4, False)
    assert unrolled.cache_info().compiles == 2
    assert not re.search(r"^\s*(%.* = )?for ", unrolled.last_ir.split("kernel", 1)[1], re.M)  # no loop op


@flyc.kernel
def _countdown(out: fx.Tensor, start: fx.Int32, stop: fx.Int32, step: fx.Int32):
    n = 0
    last = -1
    for k in range(start, stop, step):
        n += 1
        last = k
    out[0] = n
    out[1] = last
    m = 0
    for k in range(10, 0, -3):
        m = m * 100 + k
    out[2] = m


@flyc.jit
def countdown(out: fx.Tensor, start: fx.Int32, stop: fx.Int32, step: fx.Int32):
    _countdown(out, start, stop, step).launch()


@pytest.mark.parametrize("start,stop,step", [(0, 10, 3), (10, 0, -3), (5, 5, 1), (7, 2, 1), (-4, 4, 2)])
def test_range_with_runtime_and_negative_steps(start, stop, step):
    out = np.zeros(3, np.int64)
    countdown(out, start, stop, step)
    values = list(range(start, stop, step))
    assert out[0] == len(values)
    assert out[1] == (values[-1] if values else -1)
    assert out[2] == 10 * 10**6 + 7 * 10**4 + 4 * 100 + 1


@flyc.kernel
def _widen(x: fx.Tensor, out: fx.Tensor):
    acc = 0  # a Python int; the loop makes it Float32
    for k in range(x.shape[0]):
        acc = acc + x[k]
    out[0] = acc


@flyc.jit
def widen(x: fx.Tensor, out: fx.Tensor):
    _widen(x, out).launch()


def test_loop_carried_python_int_widens_to_the_body_type():
    x = np.array([0.5, 0.25, 2.0], np.float32)
    out = np.zeros(1, np.float32)
    widen(x, out)
    assert out[0] == 2.75


def clamp(v, lo, hi):
    """A plain Python helper with dynamic control flow: traced through."""
    if v < lo:
        return lo
    return fx.min(v, hi)


@flyc.jit
def scaled(v, factor):
    return v * factor


@flyc.kernel
def _helpers(x: fx.Tensor, out: fx.Tensor):
    i = fx.thread_idx.x
    out[i] = scaled(clamp(x[i], 0.0, 1.0), 10.0)


@flyc.jit
def helpers(x: fx.Tensor, out: fx.Tensor):
    _helpers(x, out).launch(block=(x.shape[0],))


def test_python_helpers_and_jit_helpers_are_traced_through():
    x = np.array([-1.0, 0.25, 3.0], np.float32)
    out = np.zeros(3, np.float32)
    helpers(x, out)
    np.testing.assert_allclose(out, [0.0, 2.5, 10.0])


@flyc.kernel
def _guarded_rows(out: fx.Tensor, n: fx.Int32, form: fx.Constexpr[int]):
    i = fx.block_idx.x * fx.block_dim.x + fx.thread_idx.x
    row = fx.thread_idx.y
    value = i * 10 + row
    if fx.const_expr(form == 0):
        if i < n:
            out[row, i] = value
    elif fx.const_expr(form == 1):
        if n > i:
            out[row, i] = value
    elif fx.const_expr(form == 2):
        if i <= n - 1:
            out[row, i] = value
    else:
        if i < n:
            out[row, i] = value
        else:
            out[row, n] = -1  # the threads past the guard write too


@flyc.jit
def guarded_rows(out: fx.Tensor, n: fx.Int32, form: fx.Constexpr[int]):
    _guarded_rows(out, n, form).launch(grid=((n + 15) // 16,), block=(16, out.shape[0]))


@pytest.mark.parametrize("form", [0, 1, 2, 3])
@pytest.mark.parametrize("n", [1, 5, 16, 37])
def test_a_guard_on_the_grid_index_covers_every_row_of_a_2d_block(form, n):
    """On the CPU the threads past such a guard are not run at all (a block's x
    loop ends where the guard stops passing); the rows of a 2D block and the
    threads with work on the guard's other side still run."""
    rows = 3
    out = np.full((rows, n + 1), -7, np.int32)
    guarded_rows(out, n, form)
    expected = np.arange(n)[None, :] * 10 + np.arange(rows)[:, None]
    np.testing.assert_array_equal(out[:, :n], expected)
    edge = -1 if form == 3 and n % 16 else -7
    np.testing.assert_array_equal(out[:, n], edge)
