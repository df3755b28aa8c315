"""Async copies (fx.async_copy, fx.async_commit, fx.async_wait): exact on
the CPU target and in interpreter mode, where a copy lands at once; the
compiler's check that nothing touches a copy's array before its wait, at
the user's line on every target; cp.async in the NVIDIA code (conftest also
assembles every traced launcher for sm_90 and gfx942)."""

import sys
from pathlib import Path

import numpy as np
import pytest

import flyrt
import flyrt.compiler as flyc
import flyrt.expr as fx

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "notebooks"))
from kernels.streaming import scale_shift_plain, scale_shift_staged  # noqa: E402

RNG = np.random.default_rng(11)


@pytest.fixture
def bounds_checks():
    before = flyrt.set_bounds_checks(True)
    yield
    flyrt.set_bounds_checks(before)


@pytest.fixture(params=[False, True], ids=["compiled", "interpreted"])
def interpret(request):
    launchers = [scale_shift_staged, scale_shift_plain, gather_tail]
    for launcher in launchers:
        launcher.interpret = request.param
    yield request.param
    for launcher in launchers:
        launcher.interpret = None


@pytest.mark.parametrize("stages", [2, 3, 4])
def test_the_staged_stream_computes_every_element_once(interpret, stages):
    # a length that leaves partial tiles, on more tiles than blocks: every stage is used
    n, blocks = (4 * 700, 2) if interpret else (4 * 123_457, 7)
    x = RNG.standard_normal(n + 8).astype(np.float32)
    y = np.full(n + 8, -7.0, np.float32)
    scale_shift_staged(x, y, n, 2.0, 0.5, blocks, stages)
    np.testing.assert_array_equal(y[:n], x[:n] * np.float32(2.0) + np.float32(0.5))
    assert (y[n:] == -7.0).all()  # nothing past n written
    plain = np.zeros_like(y)
    scale_shift_plain(x, plain, n, 2.0, 0.5, blocks)
    np.testing.assert_array_equal(plain[:n], y[:n])


@flyc.kernel
def _gather_tail(x: fx.Tensor, out: fx.Tensor, n: fx.Int32):
    buffer = fx.shared((64,), fx.Int16)
    t = fx.thread_idx.x
    i = t * 2  # two Int16 a thread: 4 bytes
    fx.async_copy(buffer, i, x, i, lanes=2, mask=i < n)
    fx.async_commit()
    fx.async_wait()
    fx.barrier()
    for k in range(2):
        out[i + k] = buffer[i + k]


@flyc.jit
def gather_tail(x: fx.Tensor, out: fx.Tensor, n: fx.Int32):
    _gather_tail(x, out, n).launch(block=(32,))


def test_a_masked_copy_writes_zeros_and_reads_nothing_past_the_tensor(interpret, bounds_checks):
    x = np.arange(1, 21, dtype=np.int16)  # 20 elements: threads from 10 on are masked off
    out = np.full(64, -1, np.int16)
    gather_tail(x, out, len(x))  # a read past x would be an IndexError
    np.testing.assert_array_equal(out[:20], x)
    assert (out[20:] == 0).all()


def test_a_copy_from_outside_the_tensor_is_an_index_error_with_bounds_checks(bounds_checks):
    @flyc.jit
    def run(x: fx.Tensor, out: fx.Tensor, n: fx.Int32):
        _gather_unmasked(x, out, n).launch(block=(32,))

    with pytest.raises(IndexError, match=r"out of bounds for tensor 'x' of shape \(20\)"):
        run(np.zeros(20, np.float32), np.zeros(32, np.float32), 20)


@flyc.kernel
def _gather_unmasked(x: fx.Tensor, out: fx.Tensor, n: fx.Int32):
    buffer = fx.shared((32,), fx.Float32)
    t = fx.thread_idx.x
    fx.async_copy(buffer, t, x, t)
    fx.async_wait(0)
    out[t] = n


def _launch(kernel):
    @flyc.jit
    def run(x: fx.Tensor):
        kernel(x).launch(block=(32,))
    return run


@flyc.kernel
def _read_before_wait(x: fx.Tensor, n: fx.Int32):
    buffer = fx.shared((32,), fx.Float32)
    t = fx.thread_idx.x
    fx.async_copy(buffer, t, x, t)
    fx.async_commit()
    x[t] = buffer[t] + 1.0  # line 0 of READ_LINES


@flyc.kernel
def _wait_keeps_the_group(x: fx.Tensor, n: fx.Int32):
    buffer = fx.shared((32,), fx.Float32)
    t = fx.thread_idx.x
    fx.async_copy(buffer, t, x, t)
    fx.async_commit()
    fx.async_wait(1)  # one group may stay pending: this one
    x[t] = buffer[t]  # line 1 of READ_LINES


@flyc.kernel
def _overwritten_in_flight(x: fx.Tensor, n: fx.Int32):
    buffer = fx.shared((32,), fx.Float32)
    t = fx.thread_idx.x
    fx.async_copy(buffer, t, x, t)
    buffer[t] = 0.0  # line 2 of READ_LINES


@flyc.kernel
def _refilled_after_the_wait(x: fx.Tensor, n: fx.Int32):
    buffer = fx.shared((32,), fx.Float32)
    t = fx.thread_idx.x
    fx.async_copy(buffer, t, x, t)
    fx.async_commit()
    for k in range(n):
        fx.async_wait(0)
        x[t] += buffer[t]  # line 3 of READ_LINES: the second turn reads the refill below unwaited
        fx.async_copy(buffer, t, x, t)


@flyc.kernel
def _copied_on_one_branch(x: fx.Tensor, n: fx.Int32):
    buffer = fx.shared((32,), fx.Float32)
    t = fx.thread_idx.x
    buffer[t] = 0.0
    if t < n:
        fx.async_copy(buffer, t, x, t)
    x[t] = buffer[t]  # line 4 of READ_LINES


def _line_of(marker):
    return next(number for number, text in enumerate(Path(__file__).read_text().splitlines(), 1) if marker in text)


@pytest.mark.parametrize("kernel, marker, needs", [
    (_read_before_wait, "line 0 of READ_LINES", r"reads a shared array .* needs fx.async_wait\(0\)"),
    (_wait_keeps_the_group, "line 1 of READ_LINES", r"fx.async_wait\(0\) or fewer"),
    (_overwritten_in_flight, "line 2 of READ_LINES", r"writes .* fx.async_commit\(\) and then fx.async_wait\(0\)"),
    (_refilled_after_the_wait, "line 3 of READ_LINES", r"fx.async_commit\(\) and then"),
    (_copied_on_one_branch, "line 4 of READ_LINES", r"fx.async_commit\(\) and then"),
], ids=["no-wait", "wait-1", "store", "loop", "branch"])
def test_touching_an_array_before_its_copy_landed_is_an_error_at_that_line(interpret, kernel, marker, needs):
    @flyc.jit
    def run(x: fx.Tensor, n: fx.Int32):
        kernel(x, n).launch(block=(32,))

    run.interpret = interpret
    with pytest.raises(flyc.KernelError, match=needs) as raised:
        run(np.ones(32, np.float32), 5)
    assert f"{Path(__file__).name}:{_line_of(marker)}" in str(raised.value)


@pytest.mark.parametrize("body, message", [
    (lambda x, s: fx.async_copy(s, 0, x, 0, lanes=3), r"moves 4, 8 or 16 bytes a thread; 3 x Float32 is 12"),
    (lambda x, s: fx.async_copy(s, 0, x, 0, lanes=0), r"lanes=\.\.\.\) takes a Python int from 1 to 16"),
    (lambda x, s: fx.async_copy(fx.shared((8,), fx.Int32), 0, x, 0), r"from Float32 tensor 'x' into a Int32"),
    (lambda x, s: fx.async_copy(s, 0, 1.0, 0), r"src is a tensor or a shared array, not float"),
    (lambda x, s: fx.async_wait(-1), r"fx.async_wait\(pending=\.\.\.\) takes a Python int of 0 or more"),
])
def test_what_a_copy_does_not_take_is_an_error_at_its_line(body, message):
    @flyc.kernel
    def bad(x: fx.Tensor):
        body(x, fx.shared((8,), fx.Float32))

    with pytest.raises(flyc.KernelError, match=message) as raised:
        _launch(bad)(np.zeros(8, np.float32))
    assert raised.value.filename == __file__


def test_a_copy_into_a_tensor_is_refused_by_the_compiler():
    @flyc.kernel
    def into_tensor(x: fx.Tensor):
        fx.async_copy(x, 0, x, 4)

    with pytest.raises(flyc.KernelError, match="an async copy goes from a tensor to a shared array"):
        _launch(into_tensor)(np.zeros(8, np.float32))


def test_nvidia_code_copies_with_cp_async_in_groups():
    x = np.zeros(4096, np.float32)
    ptx = scale_shift_staged.lower(x, x, 4096, 2.0, 0.5, 4, 3, target="cuda", arch="sm_90").device_code
    ptx = ptx["scale_shift_staged_kernel"]
    assert "cp.async.cg.shared.global" in ptx and ", 16, " in ptx
    assert "cp.async.commit_group;" in ptx and "cp.async.wait_group 2;" in ptx and "cp.async.wait_group 0;" in ptx
    # Int16 pairs: 4 bytes, .ca (.cg takes 16 only)
    small = np.zeros(64, np.int16)
    ptx = gather_tail.lower(small, small, 64, target="cuda", arch="sm_90").device_code["_gather_tail"]
    assert "cp.async.ca.shared.global" in ptx and ", 4, " in ptx


def test_before_sm80_and_on_amd_gpus_a_copy_is_a_load_and_a_store():
    x = np.zeros(4096, np.float32)
    ptx = scale_shift_staged.lower(x, x, 4096, 2.0, 0.5, 4, 3, target="cuda", arch="sm_75").device_code
    assert "cp.async" not in ptx["scale_shift_staged_kernel"]
    code = scale_shift_staged.lower(x, x, 4096, 2.0, 0.5, 4, 3, target="hip", arch="gfx942").device_code
    assert code["scale_shift_staged_kernel"]
