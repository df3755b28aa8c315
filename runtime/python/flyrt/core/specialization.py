"""What a launcher is specialized on, decoded from the key the C++
dispatcher builds (src/dispatch/specialization_key.hpp has the encoding)."""

from dataclasses import dataclass
from typing import NamedTuple

from .. import _core
from . import dtypes, fp8

_TAGS = _core.codes.key_tags
TENSOR, SCALAR, CONST_INT, CONST_OBJECT, CONST_BOOL, STREAM = (
    _TAGS[name] for name in ("tensor", "scalar", "const_int", "const_object", "const_bool", "stream"))
_KEY_WIDTH = {TENSOR: 7, SCALAR: 2, CONST_INT: 2, CONST_OBJECT: 2, CONST_BOOL: 2, STREAM: 1}
PREFIX = 3  # compile mode (bounds checks), target code, device index

_KINDS = _core.codes.param_kinds
PARAM_TENSOR, PARAM_SCALAR, PARAM_CONSTEXPR, PARAM_STREAM = (
    _KINDS[name] for name in ("tensor", "scalar", "constexpr", "stream"))
_CLASSES = _core.codes.scalar_classes
_CLASS_DTYPES = {"automatic": None, "boolean": dtypes.Boolean, "int32": dtypes.Int32, "int64": dtypes.Int64,
                 "float32": dtypes.Float32, "float64": dtypes.Float64}
SCALAR_CLASSES = [_CLASS_DTYPES[name] for name in sorted(_CLASSES, key=_CLASSES.get)]  # by code


class Parameter(NamedTuple):
    """A launcher's parameter as the C++ dispatcher reads it (by position):
    its kind (PARAM_*), its scalar class's index in SCALAR_CLASSES, and its
    default."""

    name: str
    kind: int
    scalar: int
    has_default: bool
    default: object


@dataclass(frozen=True)
class TensorSpec:
    dtype: dtypes.DType
    ndim: int
    contiguous: bool
    index_bits: int = 32  # 64 when a shape or stride does not fit in Int32
    align: int = 16  # bytes the data pointer is a multiple of, up to 16
    # elements every stride is a multiple of (a power of two up to 16; a contiguous tensor's last stride is 1)
    stride_multiple: int = 1

    def describe(self):
        layout = "contiguous" if self.contiguous else "strided"
        wide = ", 64-bit indices" if self.index_bits == 64 else ""
        aligned = f", {self.align}-byte aligned" if self.align < 16 else ""
        covered = self.ndim - (1 if self.contiguous else 0)  # the strides stride_multiple speaks of
        strides = f", strides multiples of {self.stride_multiple}" if covered and self.stride_multiple > 1 else ""
        return f"{self.dtype.name}[{self.ndim}-d, {layout}{wide}{aligned}{strides}]"


@dataclass(frozen=True)
class ScalarSpec:
    dtype: dtypes.DType

    def describe(self):
        return self.dtype.name


@dataclass(frozen=True)
class ConstSpec:
    value: object

    def describe(self):
        return f"Constexpr={self.value!r}"


@dataclass(frozen=True)
class StreamSpec:
    def describe(self):
        return "Stream"


def portable(key):
    """Whether another process can build the same key: no Constexpr known by identity."""
    pos = PREFIX
    while pos < len(key):
        if key[pos] not in _KEY_WIDTH or key[pos] == CONST_OBJECT:
            return False
        pos += _KEY_WIDTH[key[pos]]
    return True


def decode(key, bound_args):
    """One spec per parameter, from the key and the call's bound arguments.
    The key starts with the compile mode (bounds checks, read by the tracer
    from the environment as well), the target and the device."""
    specs, pos = [], PREFIX
    for value in bound_args:
        tag = key[pos]
        if tag == TENSOR:
            code = key[pos + 1]
            dtype = fp8.BY_KEY_CODE[code] if code in fp8.BY_KEY_CODE else dtypes.from_scalar(_core.Scalar(code))
            specs.append(TensorSpec(dtype, key[pos + 2], bool(key[pos + 3]), *key[pos + 4:pos + 7]))
        elif tag == SCALAR:
            specs.append(ScalarSpec(SCALAR_CLASSES[key[pos + 1]]))
        elif tag in (CONST_INT, CONST_OBJECT, CONST_BOOL):
            specs.append(ConstSpec(value))
        elif tag == STREAM:
            specs.append(StreamSpec())
        else:
            raise ValueError(f"unknown specialization key tag {tag}")
        pos += _KEY_WIDTH[tag]
    return specs
