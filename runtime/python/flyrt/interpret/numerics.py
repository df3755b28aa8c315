"""Floating-point arithmetic exactly as the CPU target's compiled code does it.

numpy already rounds Float16, Float32 and Float64 operations as LLVM does; what
it lacks: BFloat16 (held here as float32 values rounded to BFloat16 after each
operation, as LLVM's promotion to float does), a fused multiply-add with one
rounding, and the math functions the CPU target calls or inlines
(codegen/cpu/cpu_lowering.cpp): libm's expf / logf / log2f and its sin, cos,
tanh, erf and pow (both widths, called here through ctypes so that results are
the compiled code's to the bit), and an inline polynomial for Float32 exp2
(codegen/inline_math.cpp), replayed here op by op.
Float64 exp / exp2 / log / log2 are inline polynomials there and libm's here:
within a few units in the last place, not bit-identical.
"""

import ctypes
import ctypes.util
import functools
from fractions import Fraction

import numpy as np

from ..drivers import targets


class BFloat16Values(np.ndarray):
    """BFloat16 lanes (or a 0-d scalar): float32 values every one of which a
    BFloat16 holds exactly; numpy has no BFloat16 type."""


def is_bfloat16(x):
    return isinstance(x, BFloat16Values)


def to_bfloat16(x):
    """`x` (any float array or scalar) rounded to BFloat16, nearest even, as
    LLVM's fptrunc: float64 goes to float32 rounding to odd first, so that the
    two roundings equal one; subnormal floats are zero where the CPU's
    conversion instruction reads them so."""
    x = np.asarray(x)
    if x.dtype == np.float64:
        x = _round_to_odd_f32(x)
    x = x.astype(np.float32)
    if _converts_bfloat16_in_hardware():
        x = np.where(np.abs(x) < np.finfo(np.float32).tiny, np.copysign(np.float32(0), x), x)
    bits = x.view(np.uint32)
    rounded = (bits + np.uint32(0x7FFF) + ((bits >> np.uint32(16)) & np.uint32(1))) >> np.uint32(16)
    quiet_nan = (bits >> np.uint32(16)) | np.uint32(0x40)
    high = np.where(np.isnan(x), quiet_nan, rounded).astype(np.uint32) << np.uint32(16)
    return high.view(np.float32).view(BFloat16Values)


@functools.lru_cache(maxsize=None)
def _converts_bfloat16_in_hardware():
    """Whether LLVM converts to BFloat16 with AVX512-BF16 / AVX-NE-CONVERT,
    which read subnormal inputs as zero."""
    features = targets.cpu(32).features.split(",")
    return "+avx512bf16" in features or "+avxneconvert" in features


def bfloat16_from_bits(bits):
    return (np.asarray(bits).astype(np.uint32) << np.uint32(16)).view(np.float32).view(BFloat16Values)


def bfloat16_bits(x):
    return (np.asarray(x, np.float32).view(np.uint32) >> np.uint32(16)).astype(np.uint16)


def _round_to_odd_f32(x):
    """float64 -> float32 rounding to odd: an inexact result keeps its last bit
    set, so a later rounding to fewer bits rounds as if from `x` itself."""
    with np.errstate(over="ignore"):
        f = x.astype(np.float32)
    inexact = (f.astype(np.float64) != x) & np.isfinite(x) & np.isfinite(f)
    even = (f.view(np.uint32) & np.uint32(1)) == 0
    toward = np.where(x > f.astype(np.float64), np.float32(np.inf), np.float32(-np.inf))
    return np.where(inexact & even, np.nextafter(f, toward), f).astype(np.float32)


def _round_to_odd_f64(s, error):
    """s + error (exact, error the rounding error of s) rounded to odd in float64."""
    inexact = (error != 0) & np.isfinite(s) & np.isfinite(error)
    even = (s.view(np.int64) & 1) == 0
    toward = np.where(error > 0, np.inf, -np.inf)
    return np.where(inexact & even, np.nextafter(s, toward), s)


def fma(a, b, c):
    """a * b + c rounded once (llvm.fma), in the operands' type."""
    like = np.asarray(a)
    if like.dtype == np.float64:
        return _fma_f64(a, b, c)
    a64, b64, c64 = (np.asarray(v, np.float64) for v in (a, b, c))
    product = a64 * b64  # exact: at most 2 x 24 significant bits
    total = product + c64
    virtual = total - product
    error = (product - (total - virtual)) + (c64 - virtual)  # Knuth's two-sum: exact
    odd = _round_to_odd_f64(total, error)
    if is_bfloat16(a):
        return to_bfloat16(odd)
    return odd.astype(like.dtype)[()]


def _fma_f64(a, b, c):
    def one(x, y, z):
        if not all(np.isfinite((x, y, z))):
            return x * y + z
        return float(Fraction(float(x)) * Fraction(float(y)) + Fraction(float(z)))  # correctly rounded

    out = np.vectorize(one, otypes=[np.float64])(a, b, c)
    return out[()]


def fmuladd(a, b, c, fused):
    """llvm.fmuladd: fused where the CPU has an FMA unit (LLVM fuses it there)."""
    return fma(a, b, c) if fused else (a * b + c)


@functools.lru_cache(maxsize=None)
def _libm():
    name = ctypes.util.find_library("m")
    library = ctypes.CDLL(name) if name else None
    functions = {}
    signatures = [(f, ctypes.c_float, 1) for f in ("expf", "logf", "log2f", "exp2f")]
    for function in ("sin", "cos", "tanh", "erf", "pow"):
        arity = 2 if function == "pow" else 1
        signatures += [(function + "f", ctypes.c_float, arity), (function, ctypes.c_double, arity)]
    for function, c_type, arity in signatures:
        f = getattr(library, function, None) if library else None
        if f is not None:
            f.restype, f.argtypes = c_type, [c_type] * arity
        functions[function] = f
    return functions


def library_function(name, *operands):
    """sin, cos, tanh, erf (one operand) or pow (two) as the CPU target's
    call of libm gives it, lane by lane: Float64's function for Float64, else
    the float one, its result rounded to Float16 or BFloat16."""
    arrays = np.broadcast_arrays(*(np.asarray(x) for x in operands))
    like = np.asarray(operands[0])
    f64 = like.dtype == np.float64
    f = _libm()[name if f64 else name + "f"]
    if f is None:
        raise RuntimeError(f"interpreter mode: this machine's C math library has no {name}")
    element = np.float64 if f64 else np.float32
    lanes = [np.asarray(a, element).reshape(-1) for a in arrays]
    out = np.array([f(*(float(v) for v in values)) for values in zip(*lanes)], element).reshape(arrays[0].shape)
    if is_bfloat16(operands[0]):
        return to_bfloat16(out)
    return np.asarray(out, like.dtype)[()]


def _libm_f32(name, fallback, x):
    """What the compiled code's call of libm's `name` gives, lane by lane
    (numpy's own, which may differ in the last place, if no libm is found)."""
    f = _libm()[name]
    x32 = np.asarray(x, np.float32)
    if f is None:
        return fallback(x32)
    return np.array([f(float(v)) for v in x32.reshape(-1)], np.float32).reshape(x32.shape)


def _exp2_f32(x, fused):
    """inline_math.cpp's exp2_f32, op by op in float32."""
    f32 = np.float32
    x = np.asarray(x, np.float32)
    clamped = np.fmin(np.fmax(x, f32(-151.0)), f32(129.0))  # minnum / maxnum: NaN gives the other operand
    n = np.floor(clamped + f32(0.5))
    r = clamped - n
    q = f32(1.53533575e-04)
    for k in (1.33988761e-03, 9.61843739e-03, 5.55033247e-02, 2.40226479e-01, 6.93147203e-01):
        q = fmuladd(q, r, f32(k), fused)
    p = fmuladd(r, q, f32(1.0), fused)
    exponent = n.astype(np.int32)
    half = exponent >> 1

    def power_of_two(e):
        return ((e + 127) << 23).astype(np.int32).view(np.float32)

    result = (p * power_of_two(half)) * power_of_two(exponent - half)
    return np.where(np.isnan(x), x, result).astype(np.float32)


def math_function(name, x, fused):
    """exp, exp2, log, log2, sqrt or rsqrt of `x` as the CPU target computes it."""
    x = np.asarray(x)
    bf16 = is_bfloat16(x)
    if name == "sqrt":
        out = np.sqrt(x)
    elif name == "rsqrt":
        one = x.dtype.type(1)
        out = one / np.sqrt(x)
    elif x.dtype == np.float64:
        out = {"exp": np.exp, "exp2": np.exp2, "log": np.log, "log2": np.log2}[name](x)
    elif name == "exp2" and x.dtype == np.float32 and not bf16:
        out = _exp2_f32(x, fused)
    else:
        # Float32 (and Float16 / BFloat16, which LLVM promotes to float): libm's function
        numpy_function = {"exp": np.exp, "exp2": np.exp2, "log": np.log, "log2": np.log2}[name]
        out = _libm_f32(name + "f", numpy_function, x)
        if x.dtype == np.float16:
            out = out.astype(np.float16)
    if bf16:
        return to_bfloat16(out)
    return np.asarray(out, x.dtype)[()]


def minimum(a, b):
    """llvm.minimum: NaN if either is, -0 below +0."""
    return _min_max(a, b, np.minimum, np.logical_or)


def maximum(a, b):
    """llvm.maximum: NaN if either is, +0 above -0."""
    return _min_max(a, b, np.maximum, np.logical_and)


def _min_max(a, b, pick, sign_rule):
    out = pick(a, b)  # numpy propagates NaN; only the sign of a zero result needs settling
    zeros = (np.asarray(a) == 0) & (np.asarray(b) == 0)
    if np.any(zeros):
        negative = sign_rule(np.signbit(a), np.signbit(b))
        zero = np.where(negative, -0.0, 0.0).astype(np.asarray(out).dtype)
        out = np.where(zeros, zero, out)
    if is_bfloat16(a):
        return np.asarray(out, np.float32).view(BFloat16Values)
    return np.asarray(out)[()]
