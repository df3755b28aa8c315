"""Every op and dtype on the GPU: the kernels of tests/runtime/test_ops.py on
CUDA tensors, against numpy and, bit for bit where IEEE fixes the result,
against the same launchers on the CPU target."""

import numpy as np
import pytest

import flyrt.compiler as flyc
import flyrt.expr as fx
import test_fp8 as cpu_fp8
import test_math as cpu_math
import test_ops as cpu
from cuda_arrays import on_gpu
from flyrt import fp8
from kernels_for_tests import binary, unary


def gpu_binary(op, a, b, out_dtype=None):
    out = np.zeros(len(a), dtype=out_dtype or a.dtype)
    return on_gpu(binary, a, b, out, len(a), op)[2]


def gpu_unary(op, a, out_dtype=None):
    out = np.zeros(len(a), dtype=out_dtype or a.dtype)
    return on_gpu(unary, a, out, len(a), op)[1]


INTEGER_OPS = [cpu.add, cpu.sub, cpu.mul, cpu.floordiv, cpu.mod, cpu.band, cpu.bor, cpu.bxor, cpu.fmax, cpu.fmin]


@pytest.mark.parametrize("dtype", cpu.INTS)
@pytest.mark.parametrize("op", INTEGER_OPS)
def test_integer_ops_match_the_cpu_bit_for_bit(dtype, op):
    a, b = cpu.ints(dtype), cpu.ints(dtype)[::-1].copy()
    b[:3] = 0  # division by zero gives 0 on every target
    np.testing.assert_array_equal(gpu_binary(op, a, b), cpu.run_binary(op, a, b))


@pytest.mark.parametrize("dtype", [np.int32, np.uint32, np.int64, np.uint8])
def test_shifts_by_any_amount_match_the_cpu(dtype):
    bits = np.iinfo(dtype).bits
    a = cpu.ints(dtype, 64)
    amounts = (np.arange(64) % (bits + 4)).astype(dtype)
    for op in (lambda x, y: x << y, lambda x, y: x >> y):
        np.testing.assert_array_equal(gpu_binary(op, a, amounts), cpu.run_binary(op, a, amounts))


@pytest.mark.parametrize("dtype", cpu.FLOATS)
@pytest.mark.parametrize("op", [cpu.add, cpu.sub, cpu.mul, cpu.truediv, cpu.fmax, cpu.fmin, cpu.floordiv, cpu.mod])
def test_float_ops_match_the_cpu_with_nan_and_inf(dtype, op):
    a, b = cpu.floats(dtype), cpu.floats(dtype)[::-1].copy()
    np.testing.assert_array_equal(gpu_binary(op, a, b), cpu.run_binary(op, a, b))


def test_bfloat16_rounds_to_bfloat16():
    def bf16_add(x, y): return (x.to(fx.BFloat16) + y.to(fx.BFloat16)).to(fx.Float32)

    a = np.array([1.0, 1.0 + 2**-8, 3.0, 1e30, 2.5], dtype=np.float32)
    b = np.array([2**-9, 0.0, 2**-7, 1e30, -0.75], dtype=np.float32)
    np.testing.assert_array_equal(gpu_binary(bf16_add, a, b), cpu.to_bfloat16(cpu.to_bfloat16(a) + cpu.to_bfloat16(b)))


MATH = [("exp", np.exp), ("exp2", np.exp2), ("log", np.log), ("log2", np.log2), ("sqrt", np.sqrt),
        ("floor", np.floor), ("ceil", np.ceil), ("rsqrt", lambda x: 1 / np.sqrt(x))]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name,reference", MATH)
def test_math_functions_within_an_ulp_or_two(dtype, name, reference):
    function = getattr(fx, name)
    rng = np.random.default_rng(3)
    a = np.concatenate([np.abs(cpu.floats(dtype)), rng.uniform(0.5, 2.0, 4096), 10.0 ** rng.uniform(-30, 30, 4096),
                        rng.uniform(-80, 80, 4096)]).astype(dtype)
    a[3] = 0.0
    with np.errstate(all="ignore"):
        expected = reference(a.astype(np.float64))
    got = gpu_unary(lambda x: function(x), a)
    np.testing.assert_allclose(got, expected.astype(dtype), rtol=2e-6, atol=0, equal_nan=True)


@pytest.mark.parametrize("name,reference", MATH[:5])
def test_half_precision_math_rounds_the_float32_result(name, reference):
    function = getattr(fx, name)
    a = np.abs(np.random.default_rng(4).standard_normal(1000) * 4).astype(np.float16)
    with np.errstate(all="ignore"):
        expected = reference(a.astype(np.float32)).astype(np.float16)
    np.testing.assert_allclose(gpu_unary(lambda x: function(x), a).astype(np.float32), expected.astype(np.float32),
                               rtol=1e-3, equal_nan=True)


def test_float32_exp2_is_the_cpu_polynomial_bit_for_bit():
    x = np.linspace(-160, 140, 300_001, dtype=np.float32)
    np.testing.assert_array_equal(gpu_unary(lambda v: fx.exp2(v), x), cpu.run_unary(lambda v: fx.exp2(v), x))


def test_float32_approximate_exp2_is_within_two_ulps_of_the_rounded_result():
    x = np.concatenate([np.linspace(-126, 127.99, 300_001), np.random.default_rng(5).uniform(-20, 0, 100_000)])
    x = x.astype(np.float32)
    got = gpu_unary(lambda v: fx.exp2(v, approx=True), x).astype(np.float64)
    rounded = np.exp2(x.astype(np.float64)).astype(np.float32)  # the correctly rounded results
    ulps = np.abs(got - rounded) / np.spacing(rounded).astype(np.float64)
    print(f"exp2(approx=True): {ulps.max():.2f} ulp from the correctly rounded result on the GPU")
    assert ulps.max() <= 2
    np.testing.assert_array_equal(gpu_unary(lambda v: fx.exp2(v, approx=True), np.float32([-np.inf, -200.0, 0.0])),
                                  [0.0, 0.0, 1.0])  # the softmax's masked scores give weight 0


def test_comparisons_selects_fma_and_saturating_casts_match_the_cpu():
    a, b = cpu.floats(np.float32, 64), cpu.floats(np.float32, 64)[::-1].copy()
    for op in (lambda x, y: x < y, lambda x, y: x >= y, lambda x, y: x != y):
        np.testing.assert_array_equal(gpu_binary(op, a, b, np.bool_), cpu.run_binary(op, a, b, np.bool_))
    for op in (lambda x, y: fx.select(x > y, x, y * 2.0), lambda x, y: fx.fma(x, y, 1.0)):
        np.testing.assert_array_equal(gpu_binary(op, a, b), cpu.run_binary(op, a, b))
    finite = np.array([1.7, -1.7, 2.5, -2.5, 1e10, -1e10, np.nan], dtype=np.float32)
    np.testing.assert_array_equal(gpu_unary(lambda x: x.to(fx.Int32), finite, np.int32),
                                  [1, -1, 2, -2, 2**31 - 1, -(2**31), 0])
    small = np.array([300, -129, 127], dtype=np.int32)
    np.testing.assert_array_equal(gpu_unary(lambda x: x.to(fx.Int8).to(fx.Int32), small), small.astype(np.int8))


@pytest.mark.parametrize("fmt", cpu_fp8.FORMATS)
def test_all_256_fp8_codes_decode_exactly(fmt):
    codes = fp8.as_fp8(np.arange(256, dtype=np.uint8), fmt)
    f32, f16, bf16 = np.zeros(256, np.float32), np.zeros(256, np.float16), np.zeros(256, np.int16)
    _, f32, f16, bf16 = on_gpu(cpu_fp8.decode, codes, f32, f16, bf16)
    expected = fp8.dequantize(codes)
    np.testing.assert_array_equal(f32, expected)
    np.testing.assert_array_equal(f16.astype(np.float32), expected)
    np.testing.assert_array_equal((bf16.astype(np.int32) << 16).astype(np.uint32).view(np.float32), expected)


@pytest.mark.parametrize("fmt", cpu_fp8.FORMATS)
def test_fp8_encoding_is_bit_identical_to_the_host_helpers(fmt):
    x = cpu_fp8.edge_values(fmt)
    outs = [fp8.as_fp8(np.zeros(len(x), np.uint8), fmt) for _ in range(3)]
    moved = on_gpu(cpu_fp8.encode, x, *outs)
    np.testing.assert_array_equal(moved[1].view(np.uint8), fp8.quantize(x, fmt).view(np.uint8))
    cpu_outs = [fp8.as_fp8(np.zeros(len(x), np.uint8), fmt) for _ in range(3)]
    cpu_fp8.encode(x, *cpu_outs)
    for gpu_out, cpu_out in zip(moved[1:], cpu_outs):
        np.testing.assert_array_equal(gpu_out.view(np.uint8), cpu_out.view(np.uint8))


@flyc.kernel
def _vectors(x: fx.Tensor, out: fx.Tensor):
    i = (fx.block_idx.x * fx.block_dim.x + fx.thread_idx.x) * 8
    if i < x.shape[0]:
        v = fx.Vector.load(x, i, 8)
        w = (v * 2.0 + 1.0).to(fx.Float16).to(fx.Float32)
        w = w.insert(0, v.reduce("max"))
        w.store(out, i)


@flyc.jit
def vectors(x: fx.Tensor, out: fx.Tensor):
    _vectors(x, out).launch(grid=((x.shape[0] // 8 + 127) // 128,), block=(128,))


def test_vectors_load_convert_reduce_and_store():
    x = np.random.default_rng(5).standard_normal(8 * 1000).astype(np.float32)
    out = np.zeros_like(x)
    vectors(x, out)
    np.testing.assert_array_equal(on_gpu(vectors, x, np.zeros_like(x))[1], out)


@flyc.kernel
def _decode_vectors(codes: fx.Tensor, f16: fx.Tensor, f32: fx.Tensor):
    i = fx.thread_idx.x * 16
    v = fx.Vector.load(codes, i, 16)
    v.to(fx.Float16).store(f16, i)
    v.to(fx.Float32).store(f32, i)


@flyc.jit
def decode_vectors(codes: fx.Tensor, f16: fx.Tensor, f32: fx.Tensor):
    _decode_vectors(codes, f16, f32).launch(block=(codes.shape[0] // 16,))


@pytest.mark.parametrize("fmt", cpu_fp8.FORMATS)
def test_fp8_vectors_decode_exactly_through_the_conversion_instructions(fmt):
    # every code, and words with none of e4m3fnuz's special codes (its fast path)
    ordinary = np.array([c for c in range(256) if c not in (0x7F, 0xFF, 0x80)], np.uint8)
    codes = fp8.as_fp8(np.concatenate([np.arange(256, dtype=np.uint8), ordinary, ordinary[:3]]), fmt)
    _, f16, f32 = on_gpu(decode_vectors, codes, np.zeros(len(codes), np.float16), np.zeros(len(codes), np.float32))
    expected = fp8.dequantize(codes)
    np.testing.assert_array_equal(f32, expected)
    np.testing.assert_array_equal(f16.astype(np.float32), expected)


# CUDA's published maximum errors for libdevice's functions (the CUDA C++
# Programming Guide's math appendix), and sigmoid's on flyrt's exp.
LIBDEVICE_ULPS = {np.float32: {"sin": 2, "cos": 2, "tanh": 2, "erf": 2, "pow": 4, "sigmoid": 3},
                  np.float64: {"sin": 2, "cos": 2, "tanh": 2, "erf": 2, "pow": 2, "sigmoid": 3}}


def gpu_math(name, arguments):
    out = np.zeros(len(arguments[0]), arguments[0].dtype)
    if len(arguments) == 2:
        return on_gpu(binary, *arguments, out, len(out), getattr(fx, name))[2]
    return on_gpu(unary, arguments[0], out, len(out), getattr(fx, name))[1]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", sorted(cpu_math.CPU_ULPS))
def test_library_math_within_cudas_published_ulps(name, dtype):
    arguments, exact = cpu_math.inputs(name, dtype)
    measured = cpu_math.ulp_error(gpu_math(name, arguments), exact, dtype)
    print(f"{name} {dtype.__name__}: {measured:.2f} ulp on the GPU (bound {LIBDEVICE_ULPS[dtype][name]})")
    assert measured <= LIBDEVICE_ULPS[dtype][name]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_library_math_gives_ieee_results_at_the_edges(dtype):
    for name, arguments, expected in cpu_math.EDGES:
        got = gpu_math(name, tuple(np.array([a], dtype) for a in arguments))[0]
        expected = dtype(expected)
        assert (np.isnan(got) and np.isnan(expected)) or (got == expected and np.signbit(got) == np.signbit(expected)), \
            (name, arguments, got)


@pytest.mark.parametrize("name", ["sin", "cos", "tanh", "erf", "pow"])
def test_half_precision_library_math_rounds_the_float32_result(name):
    arguments, _ = cpu_math.inputs(name, np.float16, 2000)
    arguments = tuple(np.nan_to_num(a, posinf=100, neginf=-100) for a in arguments)
    in_float32 = gpu_math(name, tuple(a.astype(np.float32) for a in arguments))
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(gpu_math(name, arguments), in_float32.astype(np.float16))
