"""Traced scalar values: Python operators on them emit IR ops (in
interpreter mode, compute them: a value's id is then the value itself, and
it has a truth value, an index and a printed form).

Integer ``//`` and ``%`` follow Python (floor division, the remainder takes
the divisor's sign); ``/`` is true division (integers become Float32).
Integer division by zero gives 0 instead of trapping.
"""

from .. import _core
from ..core import dtypes, fp8
from .reads import number
from .tracing import current, line

A = _core.Arith
P = _core.Predicate


class Value:
    """An SSA value of the function being traced."""

    __slots__ = ("id", "dtype")
    __array_priority__ = 1000  # numpy scalars defer to traced values

    def __init__(self, value_id, dtype):
        self.id = value_id
        self.dtype = dtype

    def __repr__(self):
        lanes = self.lanes
        kind = self.dtype.name if lanes == 1 else f"Vector[{lanes} x {self.dtype.name}]"
        if self.concrete:
            return f"{kind}({self})"
        return f"<traced {kind} %{self.id}>"

    def __str__(self):
        if not self.concrete:
            return repr(self)
        if getattr(self.dtype, "is_fp8", False):
            return str(fp8.dequantize(self.id, self.dtype.format)[()])
        return str(self.id.tolist())

    def __format__(self, spec):
        if self.concrete and spec:
            return format(self.id.item(), spec)
        return format(str(self), spec)

    @property
    def concrete(self):
        """Whether this value was computed by the interpreter (its id is then
        the value itself: a numpy scalar or array), not traced (an int id)."""
        return type(self.id) is not int

    @property
    def lanes(self):
        """1 for a scalar; the number of lanes of a vector (fx.Vector)."""
        if self.concrete:
            return 1 if self.id.ndim == 0 else len(self.id)
        return current().builder.type_of(self.id).lanes

    # -- vectors: flyrt.vector, built on Value, gives it __getitem__ (a lane),
    # insert and reduce; flyrt.block gives it the warp shuffles --------------

    def store(self, tensor, index, align=None):
        tensor.store_vector(index, self, align)

    def __bool__(self):
        if self.concrete and self.lanes == 1:
            return bool(self.id)
        raise TypeError(
            f"a traced {self.dtype.name} has no Python truth value here: dynamic control flow works "
            "in `if`, `while`, `for ... in range(...)`, `and`/`or`/`not` and `x if c else y` written "
            "directly in a kernel or traced helper, but not inside loops or branches that `return`, "
            "`break` or `continue`; use fx.select(cond, a, b) or fx.const_expr for Python decisions"
        )

    def __index__(self):
        if self.concrete and self.lanes == 1 and not self.dtype.is_float:
            return int(self.id)
        raise TypeError(
            f"a traced {self.dtype.name} cannot be used as a Python int (e.g. in range_constexpr or "
            "a Python list index); use range(...) for a dynamic loop, or pass it as fx.Constexpr"
        )

    def __float__(self):
        if self.concrete and self.lanes == 1 and self.dtype.is_float:
            return float(self.id)
        raise TypeError(f"a traced {self.dtype.name} has no Python value while it is traced")

    def __iter__(self):
        raise TypeError(f"a traced {self.dtype.name} is not iterable")

    def __hash__(self):
        return id(self)

    # -- conversions ----------------------------------------------------------

    def to(self, dtype):
        return convert(self, dtype)

    def bitcast(self, dtype):
        if dtype.bits != self.dtype.bits:
            raise TypeError(f"bitcast from {self.dtype.name} to {dtype.name}: the widths differ")
        b = current().builder
        lanes = self.lanes
        target = dtype.ir_type if lanes == 1 else _core.Type(dtype.scalar, lanes=lanes)
        return Value(b.bitcast(self.id, target, line()), dtype)

    def select(self, if_true, if_false):
        return select(self, if_true, if_false)

    # -- arithmetic -------------------------------------------------------------

    def __add__(self, other):
        return _binary(A.add, self, other)

    def __radd__(self, other):
        return _binary(A.add, other, self)

    def __sub__(self, other):
        return _binary(A.sub, self, other)

    def __rsub__(self, other):
        return _binary(A.sub, other, self)

    def __mul__(self, other):
        return _binary(A.mul, self, other)

    def __rmul__(self, other):
        return _binary(A.mul, other, self)

    def __truediv__(self, other):
        return true_divide(self, other)

    def __rtruediv__(self, other):
        return true_divide(other, self)

    def __floordiv__(self, other):
        return floor_divide(self, other)

    def __rfloordiv__(self, other):
        return floor_divide(other, self)

    def __mod__(self, other):
        return modulo(self, other)

    def __rmod__(self, other):
        return modulo(other, self)

    def __and__(self, other):
        return _bitwise(A.bit_and, self, other)

    def __rand__(self, other):
        return _bitwise(A.bit_and, other, self)

    def __or__(self, other):
        return _bitwise(A.bit_or, self, other)

    def __ror__(self, other):
        return _bitwise(A.bit_or, other, self)

    def __xor__(self, other):
        return _bitwise(A.bit_xor, self, other)

    def __rxor__(self, other):
        return _bitwise(A.bit_xor, other, self)

    def __lshift__(self, other):
        return _bitwise(A.shl, self, other)

    def __rlshift__(self, other):
        return _bitwise(A.shl, other, self)

    def __rshift__(self, other):
        return _bitwise(A.shr, self, other)

    def __rrshift__(self, other):
        return _bitwise(A.shr, other, self)

    def __neg__(self):
        return unary(A.neg, self)

    def __pos__(self):
        return self

    def __invert__(self):
        if self.dtype.is_bool:
            return logical_not(self)
        if self.dtype.is_float:
            raise TypeError("~ needs an integer or Boolean")
        return unary(A.bit_not, self)

    def __abs__(self):
        return unary(A.abs, self)

    # -- comparisons ------------------------------------------------------------

    def __lt__(self, other):
        return compare(P.lt, self, other)

    def __le__(self, other):
        return compare(P.le, self, other)

    def __gt__(self, other):
        return compare(P.gt, self, other)

    def __ge__(self, other):
        return compare(P.ge, self, other)

    def __eq__(self, other):
        return compare(P.eq, self, other)

    def __ne__(self, other):
        return compare(P.ne, self, other)


def is_traced(value):
    return isinstance(value, Value)


def constant(value, dtype=None):
    """A traced constant of `dtype` (default: the Python value's DSL type)."""
    if isinstance(value, Value):
        return value if dtype is None else convert(value, dtype)
    dtype = dtype or dtypes.default_for(value)
    b = current().builder
    if dtype.is_float:
        return Value(b.constant_float(dtype.ir_type, number(value, float), line()), dtype)
    if isinstance(value, float):
        if value != int(value):
            raise TypeError(f"{value!r} is not an integer: it cannot be a {dtype.name} constant")
        value = int(value)
    value = number(value, int)  # an object's own conversion is a read of its state (reads.py)
    if dtype.is_bool:
        value = 1 if value else 0
    elif dtype.is_unsigned:
        value &= (1 << dtype.bits) - 1
        if value >= 1 << 63:
            value -= 1 << 64  # the IR holds 64-bit patterns
    else:
        value = ((value + (1 << (dtype.bits - 1))) % (1 << dtype.bits)) - (1 << (dtype.bits - 1))
    return Value(b.constant_int(dtype.ir_type, value, line()), dtype)


def _dtype_call(dtype, value):
    """`fx.Float32(x)`: a Python number as a constant, anything else converted."""
    if isinstance(value, (bool, int, float)):
        return constant(value, dtype)
    return convert(value, dtype)


dtypes.DType.__call__ = _dtype_call


def convert(value, dtype):
    """`value` (traced or Python) as a traced `dtype`."""
    if isinstance(dtype, fp8.FP8DType):
        if isinstance(value, Value) and value.dtype is dtype:
            return value
        return _encode_fp8(convert(value, dtypes.Float32), dtype.format)
    if not isinstance(value, Value):
        return constant(value, dtype)
    if value.dtype is dtype:
        return value
    if isinstance(value.dtype, fp8.FP8DType):
        return convert(_decode_fp8(value, value.dtype.format, dtype), dtype)
    b = current().builder
    lanes = value.lanes
    target = dtype.ir_type if lanes == 1 else _core.Type(dtype.scalar, lanes=lanes)
    return Value(b.cast(value.id, target, line()), dtype)


def _operands(a, b):
    """Both operands as traced values of their common type."""
    for v in (a, b):
        if isinstance(v, Value) and getattr(v.dtype, "is_fp8", False):
            raise TypeError(f"{v.dtype.name} values are storage: convert them with .to(fx.Float32) first")
    if isinstance(a, Value) and isinstance(b, Value):
        common = dtypes.promote(a.dtype, b.dtype)
    elif isinstance(a, Value):
        common = _meet_python(a.dtype, b)
    elif isinstance(b, Value):
        common = _meet_python(b.dtype, a)
    else:
        raise TypeError("neither operand is traced")
    a, b = convert(a, common), convert(b, common)
    lanes_a, lanes_b = a.lanes, b.lanes
    if lanes_a != lanes_b:
        if lanes_a != 1 and lanes_b != 1:
            raise TypeError(f"vectors of {lanes_a} and {lanes_b} lanes do not combine")
        builder = current().builder
        if lanes_a == 1:
            a = Value(builder.broadcast(a.id, lanes_b, line()), common)
        else:
            b = Value(builder.broadcast(b.id, lanes_a, line()), common)
    return a, b, common


def _meet_python(dtype, value):
    """A Python scalar adopts the traced type, unless it needs a float; an
    int too wide for the traced integer type is an error, never wrapped
    (a bit pattern of the type's width passes: `x & 0xFFFFFFFF`)."""
    if isinstance(value, (bool, int)):
        if dtype.is_integer and not isinstance(value, bool) and not (
                -(1 << (dtype.bits - 1)) <= value < (1 << dtype.bits)):
            raise OverflowError(f"{value} does not fit in the traced {dtype.name} it meets: convert that value first "
                                "(.to(fx.Int64))")
        return dtype
    if isinstance(value, float):
        return dtype if dtype.is_float else dtypes.Float32
    raise TypeError(f"cannot combine a traced {dtype.name} with {type(value).__name__}")


def _binary(kind, a, b):
    a, b, common = _operands(a, b)
    if common.is_bool and kind in (A.add, A.sub, A.mul):
        a, b, common = convert(a, dtypes.Int32), convert(b, dtypes.Int32), dtypes.Int32
    builder = current().builder
    return Value(builder.binary(kind, a.id, b.id, line()), common)


def _bitwise(kind, a, b):
    a, b, common = _operands(a, b)
    if common.is_float:
        raise TypeError("bitwise operators need integer or Boolean operands")
    if common.is_bool and kind in (A.shl, A.shr):
        raise TypeError("shifts need integer operands")
    builder = current().builder
    return Value(builder.binary(kind, a.id, b.id, line()), common)


def unary(kind, x):
    x = constant(x)
    builder = current().builder
    return Value(builder.unary(kind, x.id, line()), x.dtype)


def float_unary(kind, x):
    """A math function: integers are converted to Float32 first."""
    x = constant(x)
    if not x.dtype.is_float:
        x = convert(x, dtypes.Float32)
    return unary(kind, x)


def compare(predicate, a, b):
    a, b, _ = _operands(a, b)
    builder = current().builder
    return Value(builder.compare(predicate, a.id, b.id, line()), dtypes.Boolean)


def select(cond, if_true, if_false):
    """`if_true` where `cond` holds, else `if_false` (both evaluated)."""
    cond = convert(cond, dtypes.Boolean)
    if_true, if_false, _ = _operands_or_constants(if_true, if_false)
    builder = current().builder
    return Value(builder.select(cond.id, if_true.id, if_false.id, line()), if_true.dtype)


def _operands_or_constants(a, b):
    if not isinstance(a, Value) and not isinstance(b, Value):
        a = constant(a)
    return _operands(a, b)


def _float_binary(kind, a, b):
    """An op on floats: integer operands are converted to Float32 first."""
    a, b, common = _operands_or_constants(a, b)
    if not common.is_float:
        a, b, common = convert(a, dtypes.Float32), convert(b, dtypes.Float32), dtypes.Float32
    builder = current().builder
    return Value(builder.binary(kind, a.id, b.id, line()), common)


def true_divide(a, b):
    return _float_binary(A.div, a, b)


def power(a, b):
    """a ** b as C's pow."""
    return _float_binary(A.pow, a, b)


def _float_divmod(a, b):
    """numpy's divmod for floats (npy_divmod), exact where floor(a / b) is not."""
    builder = current().builder
    common = a.dtype
    zero = constant(0.0, common)
    signed_zero = select(compare(P.lt, b, zero), constant(-0.0, common), zero)
    fmod = Value(builder.binary(A.rem, a.id, b.id, line()), common)
    adjust = _bitwise(A.bit_and, compare(P.ne, fmod, zero),
                      compare(P.ne, compare(P.lt, b, zero), compare(P.lt, fmod, zero)))
    modulus = select(adjust, fmod + b, fmod)
    modulus = select(compare(P.eq, modulus, zero), signed_zero, modulus)
    exact = Value(builder.binary(A.div, (a - fmod).id, b.id, line()), common)
    exact = select(adjust, exact - 1.0, exact)
    floored = unary(A.floor, exact)
    floored = select(compare(P.gt, exact - floored, constant(0.5, common)), floored + 1.0, floored)
    quotient = Value(builder.binary(A.div, a.id, b.id, line()), common)
    floored = select(compare(P.eq, exact, zero), select(compare(P.lt, quotient, zero), constant(-0.0, common), zero),
                     floored)
    floored = select(compare(P.eq, b, zero), quotient, floored)
    return floored, modulus


def floor_divide(a, b):
    a, b, common = _operands(a, b)
    builder = current().builder
    if common.is_float:
        return _float_divmod(a, b)[0]
    quotient = Value(builder.binary(A.div, a.id, b.id, line()), common)
    if common.is_unsigned or common.is_bool:
        return quotient
    # Truncation rounds towards zero; Python floors: step down when the
    # remainder is non-zero and its sign differs from the divisor's.
    remainder = Value(builder.binary(A.rem, a.id, b.id, line()), common)
    return select(_adjusts(remainder, b), quotient - 1, quotient)


def modulo(a, b):
    a, b, common = _operands(a, b)
    if common.is_float:
        return _float_divmod(a, b)[1]
    builder = current().builder
    remainder = Value(builder.binary(A.rem, a.id, b.id, line()), common)
    if common.is_unsigned or common.is_bool:
        return remainder
    return select(_adjusts(remainder, b), remainder + b, remainder)


def _adjusts(remainder, divisor):
    zero = constant(0, remainder.dtype)
    nonzero = compare(P.ne, remainder, zero)
    signs_differ = compare(P.ne, compare(P.lt, remainder, zero), compare(P.lt, divisor, zero))
    return _bitwise(A.bit_and, nonzero, signs_differ)


def logical_not(x):
    x = convert(x, dtypes.Boolean)
    return _bitwise(A.bit_xor, x, True)


def minimum(a, b):
    a, b, common = _operands(a, b)
    builder = current().builder
    return Value(builder.binary(A.min, a.id, b.id, line()), common)


def maximum(a, b):
    a, b, common = _operands(a, b)
    builder = current().builder
    return Value(builder.binary(A.max, a.id, b.id, line()), common)


def fma(a, b, c):
    a = constant(a) if not isinstance(a, Value) else a
    common = dtypes.promote(dtypes.promote(a.dtype, _dtype_of(b, a.dtype)), _dtype_of(c, a.dtype))
    a, b, c = convert(a, common), convert(b, common), convert(c, common)
    builder = current().builder
    lanes = max(v.lanes for v in (a, b, c))
    if lanes > 1:  # scalars broadcast over vectors
        a, b, c = (v if v.lanes == lanes else Value(builder.broadcast(v.id, lanes, line()), common) for v in (a, b, c))
    return Value(builder.fma(a.id, b.id, c.id, line()), common)


def _dtype_of(value, fallback):
    return value.dtype if isinstance(value, Value) else _meet_python(fallback, value)


# -- FP8 conversions (traced) -------------------------------------------------------


def _decode_fp8(value, fmt, dtype=None):
    """A traced FP8 byte (or vector of them) -> `dtype` (Float32 unless a
    float type is given), exactly: one IR conversion, which each target
    lowers with the same rules as the host helpers (NVIDIA GPUs with their
    conversion instructions)."""
    dtype = dtype if dtype is not None and dtype.is_float else dtypes.Float32
    lanes = value.lanes
    target = dtype.ir_type if lanes == 1 else _core.Type(dtype.scalar, lanes=lanes)
    decoded = current().builder.decode_fp8(value.id, target, IR_FP8_FORMATS[fmt.name], line())
    return Value(decoded, dtype)


IR_FP8_FORMATS = {"e4m3fnuz": _core.FP8Format.e4m3fnuz, "e4m3fn": _core.FP8Format.e4m3fn}


def _encode_fp8(value, fmt):
    """A traced float -> FP8 byte of `fmt` (nearest even, saturating)."""
    x = value.to(dtypes.Float32)
    bits = x.bitcast(dtypes.UInt32)
    sign = bits >> 31
    magnitude = abs(x)
    exponent = ((bits >> 23) & 0xFF).to(dtypes.Int32) - 127
    mantissa = bits & 0x7FFFFF
    kept = mantissa >> 20
    rest = mantissa & ((1 << 20) - 1)
    round_up = (rest > (1 << 19)) | ((rest == (1 << 19)) & ((kept & 1) == 1))
    kept = kept + round_up.to(dtypes.UInt32)
    exponent = exponent + (kept >> 3).to(dtypes.Int32)
    kept = kept & 7
    normal_code = (((exponent + fmt.bias) << 3).to(dtypes.UInt32)) | kept
    quantum = 2.0 ** (1 - fmt.bias - 3)
    scaled = magnitude / quantum
    # nearest even for the subnormal multiples: floor, then settle the tie
    floor = float_unary(A.floor, scaled)
    fraction = scaled - floor
    floor_int = floor.to(dtypes.UInt32)
    subnormal_code = select((fraction > 0.5) | ((fraction == 0.5) & ((floor_int & 1) == 1)), floor_int + 1, floor_int)
    code = select(exponent + fmt.bias >= 1, normal_code, subnormal_code)
    code = select(magnitude > fmt.max_value, fmt.max_code, code)
    code = select(code > fmt.max_code, fmt.max_code, code)
    negative = (sign == 1) & ((code != 0) | fmt.has_negative_zero)
    code = select(negative, code | 0x80, code)
    code = select(x != x, 0x80 if not fmt.has_negative_zero else 0x7F, code)
    return Value(code.to(dtypes.UInt8).id, fp8.dtype_of(fmt))
