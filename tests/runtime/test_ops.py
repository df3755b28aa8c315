"""Every op and dtype against numpy, including NaN/inf, wrap-around,
division by zero and the signs of division and remainder."""

import numpy as np
import pytest

import flyrt.expr as fx
from kernels_for_tests import binary, unary

INTS = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64]
FLOATS = [np.float16, np.float32, np.float64]
RNG = np.random.default_rng(7)


def ints(dtype, n=257):
    info = np.iinfo(dtype)
    values = RNG.integers(info.min, info.max, size=n, dtype=dtype, endpoint=True)
    edges = np.array([info.min, info.max, 0, 1, info.max - 1], dtype=dtype)
    values[: len(edges)] = edges
    return values


def floats(dtype, n=257):
    values = (RNG.standard_normal(n) * 10).astype(dtype)
    values[:6] = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.5], dtype=dtype)
    return values


def run_binary(op, a, b, out_dtype=None):
    out = np.zeros(len(a), dtype=out_dtype or a.dtype)
    binary(a, b, out, len(a), op)
    return out


def run_unary(op, a, out_dtype=None):
    out = np.zeros(len(a), dtype=out_dtype or a.dtype)
    unary(a, out, len(a), op)
    return out


def add(x, y): return x + y
def sub(x, y): return x - y
def mul(x, y): return x * y
def floordiv(x, y): return x // y
def mod(x, y): return x % y
def truediv(x, y): return x / y
def band(x, y): return x & y
def bor(x, y): return x | y
def bxor(x, y): return x ^ y
def fmax(x, y): return fx.max(x, y)
def fmin(x, y): return fx.min(x, y)


@pytest.mark.parametrize("dtype", INTS)
@pytest.mark.parametrize("op,reference", [(add, np.add), (sub, np.subtract), (mul, np.multiply),
                                          (band, np.bitwise_and), (bor, np.bitwise_or), (bxor, np.bitwise_xor),
                                          (fmax, np.maximum), (fmin, np.minimum)])
def test_integer_arithmetic_wraps_like_numpy(dtype, op, reference):
    a, b = ints(dtype), ints(dtype)[::-1].copy()
    with np.errstate(over="ignore"):
        expected = reference(a, b)
    np.testing.assert_array_equal(run_binary(op, a, b), expected)


@pytest.mark.parametrize("dtype", INTS)
def test_integer_division_and_remainder_follow_python(dtype):
    a = ints(dtype)
    b = ints(dtype)[::-1].copy()
    b[b == 0] = 3
    if np.issubdtype(dtype, np.signedinteger):
        b[:4] = np.array([-1, 7, -7, 1], dtype=dtype)  # includes MIN // -1
        a[4:8] = np.array([7, -7, 7, -7], dtype=dtype)
        b[4:8] = np.array([2, 2, -2, -2], dtype=dtype)
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(run_binary(floordiv, a, b), np.floor_divide(a, b))
        np.testing.assert_array_equal(run_binary(mod, a, b), np.mod(a, b))


def test_integer_division_by_zero_gives_zero():
    a = np.array([5, -5, 0, 7], dtype=np.int32)
    b = np.zeros(4, dtype=np.int32)
    np.testing.assert_array_equal(run_binary(floordiv, a, b), [0, 0, 0, 0])
    np.testing.assert_array_equal(run_binary(mod, a, b), [0, 0, 0, 0])


@pytest.mark.parametrize("dtype", [np.int32, np.uint32, np.int64, np.uint8])
def test_shifts_including_out_of_range_amounts(dtype):
    bits = np.iinfo(dtype).bits
    a = ints(dtype, 64)
    amounts = (np.arange(64) % (bits + 4)).astype(dtype)

    def lshift(x, y): return x << y
    def rshift(x, y): return x >> y

    expected_left = np.where(amounts >= bits, 0, np.left_shift(a, np.minimum(amounts, bits - 1)))
    fill = np.where(a < 0, -1, 0).astype(dtype) if np.issubdtype(dtype, np.signedinteger) else np.zeros_like(a)
    expected_right = np.where(amounts >= bits, fill, np.right_shift(a, np.minimum(amounts, bits - 1)))
    np.testing.assert_array_equal(run_binary(lshift, a, amounts), expected_left)
    np.testing.assert_array_equal(run_binary(rshift, a, amounts), expected_right)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("op,reference", [(add, np.add), (sub, np.subtract), (mul, np.multiply),
                                          (truediv, np.true_divide), (fmax, np.maximum), (fmin, np.minimum),
                                          (floordiv, np.floor_divide), (mod, np.mod)])
def test_float_arithmetic_with_nan_and_inf(dtype, op, reference):
    a, b = floats(dtype), floats(dtype)[::-1].copy()
    with np.errstate(all="ignore"):
        expected = reference(a, b)
    got = run_binary(op, a, b)
    np.testing.assert_allclose(got, expected, rtol=1e-6 if dtype != np.float16 else 1e-3, equal_nan=True)


def to_bfloat16(x):
    """float32 -> bfloat16 (round to nearest even), as float32."""
    bits = x.astype(np.float32).view(np.uint32)
    rounding = ((bits >> 16) & 1) + 0x7FFF
    return ((bits + rounding) & 0xFFFF0000).astype(np.uint32).view(np.float32)


def test_bfloat16_arithmetic_rounds_to_bfloat16():
    def bf16_add(x, y): return (x.to(fx.BFloat16) + y.to(fx.BFloat16)).to(fx.Float32)

    a = np.array([1.0, 1.0 + 2**-8, 3.0, 1e30, 2.5], dtype=np.float32)
    b = np.array([2**-9, 0.0, 2**-7, 1e30, -0.75], dtype=np.float32)
    expected = to_bfloat16(to_bfloat16(a) + to_bfloat16(b))
    np.testing.assert_array_equal(run_binary(bf16_add, a, b), expected)
    assert expected[2] == 3.0  # a tie, rounded to even


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name,reference", [("exp", np.exp), ("exp2", np.exp2), ("log", np.log),
                                            ("log2", np.log2), ("sqrt", np.sqrt), ("floor", np.floor),
                                            ("ceil", np.ceil), ("rsqrt", lambda x: 1 / np.sqrt(x))])
def test_math_functions(dtype, name, reference):
    function = getattr(fx, name)
    a = np.abs(floats(dtype))
    a[3] = 0.0
    with np.errstate(all="ignore"):
        expected = reference(a)
    got = run_unary(lambda x: function(x), a)
    np.testing.assert_allclose(got, expected, rtol=2e-6, equal_nan=True)


def test_float32_exp2_is_accurate_over_the_whole_range():
    """f32 exp2 is inlined (a polynomial, so it vectorizes): within 1e-7
    relative of the exact value where normal, right at the edges."""
    x = np.linspace(-160, 140, 300_001, dtype=np.float32)
    got = run_unary(lambda v: fx.exp2(v), x)
    with np.errstate(over="ignore"):
        exact = np.exp2(x.astype(np.float64))
    normal = (exact >= np.finfo(np.float32).tiny) & (exact <= np.finfo(np.float32).max)
    assert np.max(np.abs(got[normal] - exact[normal]) / exact[normal]) < 1e-7
    subnormal = (exact < np.finfo(np.float32).tiny) & (exact > 0)
    assert np.max(np.abs(got[subnormal] - exact[subnormal])) <= 2.0**-149  # within one subnormal step
    edges = np.array([np.inf, -np.inf, np.nan, 0.0, -0.0, 128.0, 127.99, -149.0, -150.0, -126.5], np.float32)
    with np.errstate(over="ignore"):
        exactly_rounded = np.exp2(edges.astype(np.float64)).astype(np.float32)
    np.testing.assert_array_equal(run_unary(lambda v: fx.exp2(v), edges), exactly_rounded)


@pytest.mark.parametrize("name,reference,ulps", [("exp", np.exp, 1), ("exp2", np.exp2, 1), ("log", np.log, 2),
                                                  ("log2", np.log2, 3)])
def test_float64_exp_and_log_are_accurate_over_their_ranges(name, reference, ulps):
    """f64 exp and log are inlined (IR, no libm: they vectorize here, and AMD
    GPUs have no library to link): within a few ulp where finite and
    nonzero, IEEE results exactly at the edges."""
    rng = np.random.default_rng(7)
    if name.startswith("log"):
        x = np.concatenate([np.exp(rng.uniform(-690, 690, 200_000)), rng.uniform(0.5, 2, 20_000),
                            2.0 ** np.arange(-1074, 1024), [5e-324, 1e-310, 0.0, -1.0, np.inf, np.nan]])
    else:
        x = np.concatenate([rng.uniform(-745, 709.7, 200_000), rng.uniform(-1, 1, 20_000), np.arange(-1074.0, 1024.0),
                            [0.0, -0.0, np.inf, -np.inf, np.nan, 709.79, -745.14, 1024.0, -1076.0]])
    got = run_unary(lambda v: getattr(fx, name)(v), x)
    with np.errstate(all="ignore"):
        exact = reference(x)
    finite = np.isfinite(exact) & (exact != 0)
    assert np.max(np.abs(got[finite] - exact[finite]) / np.spacing(np.abs(exact[finite]))) <= ulps
    np.testing.assert_array_equal(got[~finite], exact[~finite])


def test_abs_neg_not_and_comparisons():
    a = ints(np.int32, 64)
    np.testing.assert_array_equal(run_unary(lambda x: abs(x), a), np.abs(a))
    np.testing.assert_array_equal(run_unary(lambda x: -x, a), -a)
    np.testing.assert_array_equal(run_unary(lambda x: ~x, a), ~a)
    f = floats(np.float32, 64)
    g = f[::-1].copy()
    for op, reference in [(lambda x, y: x < y, np.less), (lambda x, y: x <= y, np.less_equal),
                          (lambda x, y: x > y, np.greater), (lambda x, y: x >= y, np.greater_equal),
                          (lambda x, y: x == y, np.equal), (lambda x, y: x != y, np.not_equal)]:
        np.testing.assert_array_equal(run_binary(op, f, g, np.bool_), reference(f, g))


def test_unsigned_comparisons_are_unsigned():
    a = np.array([0, 1, 2**31, 2**32 - 1], dtype=np.uint32)
    b = np.array([2**31, 1, 0, 5], dtype=np.uint32)
    np.testing.assert_array_equal(run_binary(lambda x, y: x < y, a, b, np.bool_), a < b)


def test_select_fma_casts_and_bitcast():
    a = floats(np.float32, 64)
    b = floats(np.float32, 64)[::-1].copy()
    got = run_binary(lambda x, y: fx.select(x > y, x, y * 2.0), a, b)
    with np.errstate(all="ignore"):
        np.testing.assert_allclose(got, np.where(a > b, a, b * 2), equal_nan=True)
    got = run_binary(lambda x, y: fx.fma(x, y, 1.0), a, b)
    with np.errstate(all="ignore"):
        np.testing.assert_allclose(got, a.astype(np.float64) * b + 1, rtol=1e-6, equal_nan=True)
    finite = np.array([1.7, -1.7, 2.5, -2.5, 1e10, -1e10, np.nan], dtype=np.float32)
    got = run_unary(lambda x: x.to(fx.Int32), finite, np.int32)
    np.testing.assert_array_equal(got, [1, -1, 2, -2, 2**31 - 1, -(2**31), 0])  # saturating, NaN -> 0
    got = run_unary(lambda x: x.bitcast(fx.Int32), finite, np.int32)
    np.testing.assert_array_equal(got, finite.view(np.int32))
    small = np.array([300, -129, 127], dtype=np.int32)
    np.testing.assert_array_equal(run_unary(lambda x: x.to(fx.Int8).to(fx.Int32), small), small.astype(np.int8))
    np.testing.assert_array_equal(run_unary(lambda x: x.to(fx.Float64).to(fx.Int32), small), small)


def test_mixed_types_promote():
    a = np.arange(8, dtype=np.int32)
    b = np.linspace(0, 1, 8).astype(np.float32)
    out = np.zeros(8, np.float32)
    binary(a, b, out, 8, add)
    np.testing.assert_allclose(out, a + b)
    np.testing.assert_allclose(run_binary(lambda x, y: x * 0.5 + y, b, b), b * 0.5 + b)
    np.testing.assert_array_equal(run_unary(lambda x: x * 3 + 1, a), a * 3 + 1)
