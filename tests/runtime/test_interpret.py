"""Interpreter mode (FLYDSL_INTERPRET=1, flyrt.set_interpret, launcher.interpret):
kernels run as Python, with the compiled CPU target's results, bit for bit.

Transcendental math is bit-identical too here: the CPU target calls libm's
expf / logf / log2f for Float32 (the interpreter calls the same functions) and
inlines Float32 exp2 as a polynomial the interpreter replays op by op; so
every comparison below is exact (Float64 exp and log, inlined polynomials on
the CPU and libm's here, would only be within a few ulp: not used below)."""

import os
import signal
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

import flyrt
import flyrt.compiler as flyc
import flyrt.expr as fx
from flyrt import fp8
from flyrt.interpret import follow_environment

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "notebooks"))

import kernels.pa_decode_fp8 as pa  # noqa: E402
from kernels.activations import activation, rotary, silu  # noqa: E402
from kernels.axpy import axpy  # noqa: E402
from kernels.elementwise_2d import scaled_sum  # noqa: E402
from kernels.fp8_dequant import dequantize_scale  # noqa: E402
from kernels.gemm import gemm  # noqa: E402
from kernels.gemm_mma import gemm_mma  # noqa: E402
from kernels.pa_reference import make_case  # noqa: E402
from kernels.reductions import block_reduce, scratch_for  # noqa: E402
from kernels.rmsnorm import rmsnorm  # noqa: E402
from kernels.row_norms import row_norms  # noqa: E402
from kernels.softmax import softmax  # noqa: E402
from kernels.vector_add import vector_add  # noqa: E402

RNG = np.random.default_rng(7)


@pytest.fixture(autouse=True)
def compiled_afterwards(monkeypatch):
    monkeypatch.delenv("FLYDSL_INTERPRET", raising=False)
    yield
    flyrt.set_interpret(None)


def in_both_modes(run, make_arguments):
    """The arrays `run` leaves (and returns), compiled and interpreted."""
    results = []
    for interpret in (False, True):
        flyrt.set_interpret(interpret)
        arguments = make_arguments()
        returned = run(*arguments)
        results.append([a for a in (*arguments, returned) if isinstance(a, np.ndarray)])
    flyrt.set_interpret(None)
    return results


def assert_same_in_both_modes(run, make_arguments):
    compiled, interpreted = in_both_modes(run, make_arguments)
    for c, i in zip(compiled, interpreted):
        np.testing.assert_array_equal(c, i)  # NaNs where NaNs
        # bit for bit (signs of zero too), but for the sign and payload of NaNs, which LLVM does not keep
        # (it commutes operands, and x86 passes on the first operand's NaN)
        numbers = ~np.isnan(c) if c.dtype.kind == "f" else np.ones(c.shape, bool)
        assert c[numbers].tobytes() == i[numbers].tobytes()


# -- the example kernels ---------------------------------------------------------------

X, Y = RNG.standard_normal(300).astype(np.float32), RNG.standard_normal(300).astype(np.float32)
M = (RNG.standard_normal((3, 300)) * 4).astype(np.float32)
EXAMPLES = {
    "vector_add": (lambda a, b, c: vector_add(a, b, c, 300), lambda: (X.copy(), Y.copy(), np.zeros(300, np.float32))),
    "axpy": (lambda x, y: axpy(1.7, x, y, 300), lambda: (X.copy(), Y.copy())),
    "elementwise_2d": (scaled_sum, lambda: (M[:, :33].copy(), M[:, 33:66].copy(), X[:33].copy(),
                                            np.zeros((3, 33), np.float32))),
    "row_norms_strided": (row_norms, lambda: (M[::2, ::3], np.zeros(2, np.float32))),
    "softmax": (softmax, lambda: (M, np.zeros_like(M))),
    "rmsnorm": (lambda x, w, out: rmsnorm(x, w, out, 1e-6), lambda: (M, X.copy(), np.zeros_like(M))),
    "gemm": (gemm, lambda: (M[:, :17].copy(), M[0, :85].reshape(17, 5).copy(), np.zeros((3, 5), np.float32))),
    "activation_silu": (lambda x, out: activation(x, out, silu), lambda: (X.copy(), np.zeros(300, np.float32))),
    "rotary": (rotary, lambda: (M[:, :64].copy(), np.array([0, 7, 4000], np.int32), np.zeros((3, 64), np.float32))),
    "gemm_mma": (gemm_mma, lambda: (M[:, :16].astype(np.float16), M[1, :32].reshape(16, 2).astype(np.float16),
                                    np.full((3, 2), np.nan, np.float32))),
}


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_example_kernels_give_the_compiled_results(name):
    assert_same_in_both_modes(*EXAMPLES[name])


@pytest.mark.parametrize("fmt", ["e4m3fnuz", "e4m3fn"])
def test_fp8_dequantize_example(fmt):
    codes = fp8.quantize(RNG.standard_normal((3, 101)) * 50, fmt)
    scales = RNG.uniform(0.5, 2.0, 3).astype(np.float32)
    assert_same_in_both_modes(lambda c, s, out: dequantize_scale(c, s, out, True),
                              lambda: (codes, scales, np.zeros((3, 101), np.float32)))


@pytest.mark.parametrize("options", [{}, {"fmt": "e4m3fn", "num_q_heads": 4, "num_kv_heads": 2}])
def test_paged_attention_decode(options):
    assert_same_in_both_modes(lambda case: pa.pa_decode_ps_launch(**case, workers=2),
                              lambda: (make_case(seed=3, num_seqs=1, context_length=40, **options),))


# -- blocks: barriers, shared memory, shuffles ---------------------------------------------


@flyc.kernel
def _block_ops_kernel(x: fx.Tensor, out: fx.Tensor, ints: fx.Tensor):
    t = fx.thread_idx.x
    n = fx.block_dim.x
    tile = fx.shared((64,), fx.Float32)
    extra = fx.dynamic_shared(fx.Int32, n)
    v = x[fx.block_idx.x * n + t]
    tile[t] = v
    extra[t] = t * 3
    fx.barrier()
    row = fx.block_idx.x * n + t
    out[0, row] = tile[n - 1 - t] + extra[(t + 1) % n].to(fx.Float32)
    out[1, row] = fx.shuffle(v, 3, 16)
    out[2, row] = v.shuffle_xor(5)
    out[3, row] = fx.warp_reduce(v, "add")
    out[4, row] = fx.warp_reduce(v, "max", 8)
    out[5, row] = block_reduce(v, "add", scratch_for(64), 64)
    ints[0, row] = fx.lane_id()
    ints[1, row] = fx.warp_reduce(t * 7 - 100, "min")
    ints[2, row] = fx.shuffle_xor(t, 16)  # past a partial warp's end: the thread's own value


@flyc.jit
def block_ops(x: fx.Tensor, out: fx.Tensor, ints: fx.Tensor, threads: fx.Int32, blocks: fx.Int32):
    _block_ops_kernel(x, out, ints).launch(grid=(blocks,), block=(threads,), smem=threads * 4)


@pytest.mark.parametrize("threads", [64, 48])
def test_barriers_shared_memory_and_shuffles(threads):
    values = RNG.standard_normal(threads * 2).astype(np.float32)
    assert_same_in_both_modes(
        lambda x, out, ints: block_ops(x, out, ints, threads, 2),
        lambda: (values, np.zeros((6, threads * 2), np.float32), np.zeros((3, threads * 2), np.int32)))


# -- op semantics ------------------------------------------------------------------------


@flyc.kernel
def _semantics_kernel(a: fx.Tensor, b: fx.Tensor, f: fx.Tensor, ints: fx.Tensor, floats: fx.Tensor,
                      bytes_: fx.Tensor, n: fx.Int32):
    i = fx.block_idx.x * fx.block_dim.x + fx.thread_idx.x
    if i < n:
        x, y, z = a[i], b[i], f[i]
        ints[0, i] = x // y
        ints[1, i] = x % y
        ints[2, i] = x << (y & 63)
        ints[3, i] = x >> (y & 63)
        ints[4, i] = (x.to(fx.UInt32) >> (y & 40).to(fx.UInt32)).to(fx.Int32)
        ints[5, i] = z.to(fx.Int32)
        ints[6, i] = z.to(fx.UInt8).to(fx.Int32)
        ints[7, i] = x * y + (-x)
        ints[8, i] = fx.max(x, y) - fx.min(x, y).to(fx.Int64).to(fx.Int32)
        floats[0, i] = z * z + z  # two roundings: no contraction into an FMA
        floats[1, i] = fx.fma(z, z, z)
        floats[2, i] = z / (x.to(fx.Float32) - 0.5)
        floats[3, i] = fx.exp2(z) + fx.exp(z * 0.1) + fx.log(fx.abs(z)) + fx.log2(fx.abs(z) + 1.0)
        floats[4, i] = fx.sqrt(fx.abs(z)) + fx.rsqrt(fx.abs(z)) + fx.floor(z) + fx.ceil(-z)
        floats[5, i] = fx.max(z, 0.0) + fx.min(z, -0.0) + z // 0.75 + z % 0.75
        floats[6, i] = z.to(fx.Float16).to(fx.Float32) + z.to(fx.BFloat16).to(fx.Float32)
        floats[7, i] = fx.select(z > 0.0, z.bitcast(fx.Int32).to(fx.Float32), (z < 1.0).to(fx.Float32))
        bytes_[0, i] = z.to(fx.Float8E4M3FNUZ).bitcast(fx.UInt8)
        bytes_[1, i] = z.to(fx.Float8E4M3FN).bitcast(fx.UInt8)
        bytes_[2, i] = fx.Float16(z).to(fx.Float8E4M3FN).bitcast(fx.UInt8)


@flyc.jit
def semantics(a: fx.Tensor, b: fx.Tensor, f: fx.Tensor, ints: fx.Tensor, floats: fx.Tensor, bytes_: fx.Tensor,
              n: fx.Int32):
    _semantics_kernel(a, b, f, ints, floats, bytes_, n).launch(grid=((n + 63) // 64,), block=(64,))


def test_integer_float_and_conversion_semantics_match_bit_for_bit():
    special = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1e10, -1e10, 3e9, 255.5, 256.0, -1.5, 0.5, 2.5,
                        1e-40, -1e-45, 240.0, 448.0, 464.0, 1e-3, 0.0078125], np.float32)
    count = 300
    floats = np.concatenate([special, (RNG.standard_normal(count - len(special)) * 30).astype(np.float32)])
    ints_a = RNG.integers(-2**31, 2**31, count).astype(np.int32)
    ints_a[:6] = [-2**31, -2**31, 7, -7, 0, 5]
    ints_b = RNG.integers(-70, 70, count).astype(np.int32)
    ints_b[:6] = [-1, 0, 0, 3, -3, 64]
    assert_same_in_both_modes(
        lambda *arrays: semantics(*arrays, count),
        lambda: (ints_a, ints_b, floats, np.zeros((9, count), np.int32), np.zeros((8, count), np.float32),
                 np.zeros((3, count), np.uint8)))


@flyc.kernel
def _fp8_kernel(codes_fnuz: fx.Tensor, codes_fn: fx.Tensor, out: fx.Tensor, back: fx.Tensor):
    i = fx.thread_idx.x
    a = codes_fnuz[i].to(fx.Float32)
    b = codes_fn[i].to(fx.Float32)
    out[0, i] = a
    out[1, i] = b
    back[0, i] = (a * 1.0625).to(fx.Float8E4M3FNUZ).bitcast(fx.UInt8)
    back[1, i] = (b * 1.0625).to(fx.Float8E4M3FN).bitcast(fx.UInt8)


@flyc.jit
def fp8_codes(codes_fnuz: fx.Tensor, codes_fn: fx.Tensor, out: fx.Tensor, back: fx.Tensor):
    _fp8_kernel(codes_fnuz, codes_fn, out, back).launch(grid=(1,), block=(256,))


def test_fp8_both_formats_over_all_256_codes():
    codes = np.arange(256, dtype=np.uint8)
    (_, _, out, back), _ = compiled_and_interpreted = in_both_modes(
        fp8_codes, lambda: (fp8.as_fp8(codes, "e4m3fnuz"), fp8.as_fp8(codes, "e4m3fn"),
                            np.zeros((2, 256), np.float32), np.zeros((2, 256), np.uint8)))
    for c, i in zip(*compiled_and_interpreted):
        assert np.ascontiguousarray(c).tobytes() == np.ascontiguousarray(i).tobytes()
    np.testing.assert_array_equal(out[0], fp8.dequantize(codes, "e4m3fnuz"))
    np.testing.assert_array_equal(back[1], fp8.quantize(out[1] * np.float32(1.0625), "e4m3fn").view(np.uint8))


@flyc.kernel
def _vector_kernel(x: fx.Tensor, out: fx.Tensor, sums: fx.Tensor):
    i = fx.thread_idx.x * 4
    v = fx.Vector.load(x, i, 4)
    w = (v * 2.0 + 1.0).insert(0, v[3]) - fx.Vector.broadcast(0.25, 4)
    w.store(out, i)
    sums[0, fx.thread_idx.x] = w.reduce("add")
    sums[1, fx.thread_idx.x] = v.reduce("max") + v.to(fx.Int32).reduce("min").to(fx.Float32)


@flyc.jit
def vectors(x: fx.Tensor, out: fx.Tensor, sums: fx.Tensor):
    _vector_kernel(x, out, sums).launch(grid=(1,), block=(16,))


def test_vectors():
    values = (RNG.standard_normal(64) * 10).astype(np.float32)
    assert_same_in_both_modes(vectors, lambda: (values, np.zeros(64, np.float32), np.zeros((2, 16), np.float32)))


# -- errors, debugging ------------------------------------------------------------------------


@flyc.kernel
def _stray_kernel(x: fx.Tensor, out: fx.Tensor, n: fx.Int32):
    i = fx.thread_idx.x
    out[i] = x[i + n]  # the line an out-of-bounds read is reported at


@flyc.jit
def stray(x: fx.Tensor, out: fx.Tensor, n: fx.Int32):
    _stray_kernel(x, out, n).launch(grid=(1,), block=(8,))


def line_of(text):
    return next(n for n, line in enumerate(Path(__file__).read_text().splitlines(), 1) if text in line)


def test_out_of_bounds_access_is_an_index_error_at_the_kernels_line():
    x, out = np.arange(8, dtype=np.float32), np.zeros(8, np.float32)
    stray.interpret = True
    try:
        with pytest.raises(IndexError) as info:
            stray(x, out, 3)
        where = f"{__file__}:{line_of('out[i] = x[i + n]  # the line')}"
        assert str(info.value).startswith(f"index (8) is out of bounds for tensor 'x' of shape (8) at {where}")
        assert "thread (5,0,0)" in "".join(getattr(info.value, "__notes__", [str(info.value)]))  # 3.10: the message
        assert info.traceback[-1].path == Path(__file__) or any(e.path == Path(__file__) for e in info.traceback)
        stray(x, out, 0)  # the next launch works
        np.testing.assert_array_equal(out, x)
    finally:
        stray.interpret = None
    flyrt.set_bounds_checks(True)
    try:
        with pytest.raises(IndexError) as compiled:
            stray(x, out, 3)
    finally:
        flyrt.set_bounds_checks(None)
    assert str(info.value).startswith(str(compiled.value))  # the compiled launch's words (3.10: then the thread)


@flyc.kernel
def _misbehaving_kernel(out: fx.Tensor, mode: fx.Constexpr[int]):
    t = fx.thread_idx.x
    if mode == 1 and t < 16:
        fx.barrier()  # only half the block gets here
    if mode == 2 and t == 5:
        raise ValueError(f"thread {t} gives up")
    if mode == 3 and t == 2:
        raise KeyboardInterrupt
    if mode == 4 and t == 1:
        while True:
            t = t + 1  # until Ctrl-C
    out[t] = t


@flyc.jit
def misbehaving(out: fx.Tensor, mode: fx.Constexpr[int]):
    _misbehaving_kernel(out, mode).launch(grid=(1,), block=(32,))


@pytest.fixture
def interpreted():
    flyrt.set_interpret(True)
    yield
    flyrt.set_interpret(None)


@flyc.kernel
def _fill_kernel(out: fx.Tensor):
    out[fx.thread_idx.x] = 1


@flyc.jit
def fill_with_block(out: fx.Tensor, threads: fx.Int32, smem: fx.Int32):
    _fill_kernel(out).launch(grid=(1,), block=(threads,), smem=smem)


@pytest.mark.parametrize("threads, smem", [(2048, 0), (0, 0), (4, 1 << 20)])
def test_a_geometry_the_cpu_refuses_is_refused_in_the_same_words(threads, smem):
    out = np.zeros(4, np.int32)
    messages = []
    for interpret in (False, True):
        fill_with_block.interpret = interpret
        with pytest.raises(RuntimeError) as refused:
            fill_with_block(out, threads, smem)
        messages.append(str(refused.value))
    fill_with_block.interpret = None
    assert messages[0] == messages[1], messages
    assert not out.any()  # nothing ran


def idle_after_launch():
    """The interpreter's threads are all parked between launches."""
    return all(t.name.endswith("(idle)") for t in threading.enumerate() if t.name.startswith(("flyrt", "block")))


def test_a_barrier_only_part_of_the_block_reaches_is_an_error_not_a_hang(interpreted):
    out = np.zeros(32, np.int32)
    with pytest.raises(RuntimeError, match=r"threads \(0,0,0\), .* and 12 more: fx.barrier\(\) at .*test_interpret.py:"
                                           rf"{line_of('fx.barrier()  # only half')}; threads \(16,0,0\), .*returned"):
        misbehaving(out, 1)
    assert idle_after_launch()
    misbehaving(out, 0)
    np.testing.assert_array_equal(out, np.arange(32))


def test_an_exception_in_one_thread_reaches_the_caller_with_the_kernels_traceback(interpreted):
    out = np.zeros(32, np.int32)
    with pytest.raises(ValueError, match="thread 5 gives up") as info:
        misbehaving(out, 2)
    assert info.traceback[-1].lineno + 1 == line_of('raise ValueError(f"thread {t} gives up")')
    assert idle_after_launch()
    with pytest.raises(KeyboardInterrupt):
        misbehaving(out, 3)
    misbehaving(out, 0)
    np.testing.assert_array_equal(out, np.arange(32))


def test_ctrl_c_stops_a_running_kernel(interpreted, ctrl_c):
    out = np.zeros(32, np.int32)
    stopped, sent = threading.Event(), []

    def press_ctrl_c():  # again each second while the kernel runs: a lost Ctrl-C fails the test, not hangs it
        stopped.wait(0.5)
        while not stopped.is_set():
            sent.append(1)
            os.kill(os.getpid(), signal.SIGINT)
            stopped.wait(1.0)

    presser = threading.Thread(target=press_ctrl_c)
    presser.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            misbehaving(out, 4)
    finally:
        stopped.set()
        presser.join()
    assert len(sent) == 1, f"the kernel stopped at Ctrl-C number {len(sent)}"
    assert idle_after_launch()
    misbehaving(out, 0)
    np.testing.assert_array_equal(out, np.arange(32))


@flyc.kernel
def _chatty_kernel(x: fx.Tensor):
    i = fx.block_idx.x * fx.block_dim.x + fx.thread_idx.x
    print("thread", i, "sees", x[i])
    if i == 2:
        breakpoint()


@flyc.jit
def chatty(x: fx.Tensor):
    _chatty_kernel(x).launch(grid=(2,), block=(2,))


def test_print_and_breakpoint_inside_a_kernel(interpreted, capsys, monkeypatch):
    stops = []

    def hook(*args, **kwargs):
        frame = sys._getframe(1)
        i = frame.f_locals["i"]
        stops.append((frame.f_code.co_name, frame.f_lineno, int(i), repr(i), threading.current_thread().name))

    monkeypatch.setattr(sys, "breakpointhook", hook)
    chatty(np.array([0.5, 1.5, 2.5, 3.5], np.float32))
    assert capsys.readouterr().out.splitlines() == [f"thread {i} sees {i + 0.5}" for i in range(4)]
    assert stops == [("_chatty_kernel", line_of("breakpoint()"), 2, "Int32(2)", "block (1,0,0) thread (0,0,0)")]


# -- switching modes, caches, the environment -------------------------------------------------

HELPERS = '''
import flyrt.compiler as flyc
import flyrt.expr as fx


def offset():
    return 1.0


@flyc.kernel
def add_offset_kernel(x: fx.Tensor):
    i = fx.thread_idx.x
    x[i] = x[i] + offset()


@flyc.jit
def add_offset(x: fx.Tensor):
    add_offset_kernel(x).launch(grid=(1,), block=(4,))
'''


@pytest.fixture
def module(tmp_path, monkeypatch):
    path = tmp_path / "interpret_helpers.py"
    path.write_text(HELPERS)
    monkeypatch.syspath_prepend(str(tmp_path))
    import importlib

    sys.modules.pop("interpret_helpers", None)
    return importlib.import_module("interpret_helpers")


def run_once(launcher):
    x = np.zeros(4, np.float32)
    launcher(x)
    return x[0]


def test_switching_modes_compiles_once_and_never_touches_the_cache(module):
    launcher = module.add_offset
    for interpret in (False, True, False, True, False):
        launcher.interpret = interpret
        assert run_once(launcher) == 1.0
    info = launcher.cache_info()
    assert (info.compiles, info.misses, info.hits, info.evictions) == (1, 1, 2, 0)


def test_a_helper_edited_while_interpreting_recompiles_when_compiled_again(module):
    launcher = module.add_offset
    assert run_once(launcher) == 1.0
    launcher.interpret = True
    module.offset = lambda: 2.0
    assert run_once(launcher) == 2.0  # the live helper: never stale
    assert launcher.cache_info().compiles == 1
    launcher.interpret = False
    assert run_once(launcher) == 2.0
    assert launcher.cache_info().compiles == 2
    assert run_once(launcher) == 2.0 and launcher.cache_info().compiles == 2


def test_the_environment_variable_is_followed_and_per_launcher_choices_win(module, monkeypatch):
    launcher = module.add_offset
    assert run_once(launcher) == 1.0
    monkeypatch.setenv("FLYDSL_INTERPRET", "1")
    assert type(launcher) is flyc.JitFunction  # read at import and when asked to, not on every call
    follow_environment()  # what the xflydsl kernel does before each cell
    assert isinstance(launcher, flyc.JitFunction) and type(launcher) is not flyc.JitFunction
    run_once(launcher)
    launcher.interpret = False
    assert type(launcher) is flyc.JitFunction
    launcher.interpret = None
    monkeypatch.setenv("FLYDSL_INTERPRET", "0")
    follow_environment()
    assert type(launcher) is flyc.JitFunction
    monkeypatch.setenv("FLYDSL_INTERPRET", "1")
    flyrt.set_interpret(False)  # the global choice wins over the environment
    assert type(launcher) is flyc.JitFunction
    flyrt.set_interpret(None)  # follows the environment again, read now
    assert type(launcher) is not flyc.JitFunction
    monkeypatch.delenv("FLYDSL_INTERPRET")
    follow_environment()
    assert type(launcher) is flyc.JitFunction
    assert launcher.cache_info().compiles == 1


def test_argument_errors_are_the_compiled_ones(module, interpreted):
    with pytest.raises(TypeError) as interpreted_error:
        module.add_offset("not a tensor")
    flyrt.set_interpret(False)
    with pytest.raises(TypeError) as compiled_error:
        module.add_offset("not a tensor")
    assert str(interpreted_error.value) == str(compiled_error.value)


class _DeviceArray:
    """What a GPU tensor shows of itself through DLPack: a device, kDLCUDA."""

    def __dlpack_device__(self):
        return (2, 0)


def test_a_device_tensor_is_refused_with_what_to_do(module, interpreted):
    with pytest.raises(TypeError, match=r"argument 'x': interpreter mode \(FLYDSL_INTERPRET\) runs kernels on the "
                                        r"host .* copy this _DeviceArray to the host first \(tensor.cpu\(\)\)"):
        module.add_offset(_DeviceArray())


def test_torch_cpu_tensors(module, interpreted):
    torch = pytest.importorskip("torch")
    x = torch.zeros(4)
    module.add_offset(x)
    assert x.tolist() == [1.0] * 4
