"""Scalar types of the DSL: each is an annotation, a constructor and a cast.

``fx.Int32`` annotates a parameter; ``fx.Int32(3)`` makes a traced constant;
``fx.Int32(x)`` converts a traced value (as ``x.to(fx.Int32)``).
"""

import numpy as np

from .. import _core

_S = _core.Scalar


class DType:
    """One scalar type of the IR, with the numpy dtype that stores it."""

    def __init__(self, name, scalar, numpy_dtype, python_type):
        self.name = name
        self.scalar = scalar
        self.ir_type = _core.Type(scalar)
        self.numpy_dtype = np.dtype(numpy_dtype) if numpy_dtype is not None else None
        self.python_type = python_type

    @property
    def is_float(self):
        return self.python_type is float

    @property
    def is_bool(self):
        return self.python_type is bool

    @property
    def is_integer(self):
        return self.python_type is int

    @property
    def is_unsigned(self):
        return self.name.startswith("UInt")

    @property
    def bits(self):
        return _BITS[self.scalar]

    is_fp8 = False

    # Calling a dtype in a kernel converts, `fx.Float32(x)`: language/values.py, which
    # is built on the dtypes, gives DType its __call__.

    def __repr__(self):
        return f"fx.{self.name}"

    def __reduce__(self):
        return (by_name, (self.name,))


_BITS = {
    _S.i1: 1, _S.i8: 8, _S.i16: 16, _S.i32: 32, _S.i64: 64,
    _S.u8: 8, _S.u16: 16, _S.u32: 32, _S.u64: 64,
    _S.f16: 16, _S.bf16: 16, _S.f32: 32, _S.f64: 64,
}

Boolean = DType("Boolean", _S.i1, np.bool_, bool)
Int8 = DType("Int8", _S.i8, np.int8, int)
Int16 = DType("Int16", _S.i16, np.int16, int)
Int32 = DType("Int32", _S.i32, np.int32, int)
Int64 = DType("Int64", _S.i64, np.int64, int)
UInt8 = DType("UInt8", _S.u8, np.uint8, int)
UInt16 = DType("UInt16", _S.u16, np.uint16, int)
UInt32 = DType("UInt32", _S.u32, np.uint32, int)
UInt64 = DType("UInt64", _S.u64, np.uint64, int)
Float16 = DType("Float16", _S.f16, np.float16, float)
# numpy has no bfloat16: its tensors are uint16 arrays tagged with this dtype
BFLOAT16_STORAGE = np.dtype(np.uint16, metadata={"flyrt_dtype": "bfloat16"})
BFloat16 = DType("BFloat16", _S.bf16, BFLOAT16_STORAGE, float)
Float32 = DType("Float32", _S.f32, np.float32, float)
Float64 = DType("Float64", _S.f64, np.float64, float)

ALL = [Boolean, Int8, Int16, Int32, Int64, UInt8, UInt16, UInt32, UInt64,
       Float16, BFloat16, Float32, Float64]
_BY_SCALAR = {d.scalar: d for d in ALL}
_BY_NAME = {d.name: d for d in ALL}


def from_scalar(scalar):
    return _BY_SCALAR[scalar]


def by_name(name):
    return _BY_NAME[name]


def default_for(value):
    """The type a Python scalar takes when it meets the DSL."""
    if isinstance(value, bool):
        return Boolean
    if isinstance(value, int):
        return Int32 if -(2**31) <= value < 2**31 else Int64
    if isinstance(value, float):
        return Float32
    raise TypeError(f"{type(value).__name__} is not a DSL scalar")


def promote(a, b):
    """The common type of a binary op's operands (C-like rules)."""
    if a is b:
        return a
    if a.is_float and b.is_float:
        if a.bits != b.bits:
            return a if a.bits > b.bits else b
        return Float32  # Float16 with BFloat16
    if a.is_float or b.is_float:
        return a if a.is_float else b
    if a.is_bool:
        return b
    if b.is_bool:
        return a
    if a.bits != b.bits:
        return a if a.bits > b.bits else b
    return a if a.is_unsigned else b
