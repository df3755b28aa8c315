"""Tensors inside a trace: a data pointer, shape and strides (in elements),
all runtime values; element access loads and stores through the strides."""

from . import _core, dtypes
from .tracing import current, line
from .values import Value, constant, convert


class TensorValue:
    """A tensor argument as a launcher or kernel sees it while tracing."""

    def __init__(self, name, dtype, native, contiguous):
        ndim = (len(native) - 1) // 2
        self.name = name
        self.dtype = dtype
        self.native = list(native)  # value ids: pointer, shape..., strides...
        self.pointer = native[0]
        self._shape = [Value(v, dtypes.Int32) for v in native[1 : 1 + ndim]]
        self._strides = [Value(v, dtypes.Int32) for v in native[1 + ndim :]]
        if contiguous and ndim > 0:
            self._strides[-1] = 1  # known, so inner loops vectorize
        self.contiguous = contiguous

    @property
    def ndim(self):
        return len(self._shape)

    @property
    def shape(self):
        return tuple(self._shape)

    @property
    def strides(self):
        return tuple(self._strides)

    def __len__(self):
        raise TypeError("len() of a traced tensor is not a Python int; use t.shape[0]")

    def __repr__(self):
        return f"<traced tensor {self.name}: {self.dtype.name}, {self.ndim}-d>"

    def _offset(self, index):
        if not isinstance(index, tuple):
            index = (index,)
        if len(index) != self.ndim:
            raise IndexError(f"tensor {self.name} has {self.ndim} dimensions, indexed with {len(index)}")
        offset = None
        for i, stride in zip(index, self._strides):
            if isinstance(i, slice):
                raise IndexError("slices of traced tensors are not supported; index single elements")
            i = convert(i, dtypes.Int64) if isinstance(i, Value) else constant(int(i), dtypes.Int64)
            term = i if (not isinstance(stride, Value) and stride == 1) else i * convert(stride, dtypes.Int64)
            offset = term if offset is None else offset + term
        return offset if offset is not None else constant(0, dtypes.Int64)

    def __getitem__(self, index):
        offset = self._offset(index)
        builder = current().builder
        return Value(builder.load(self.pointer, offset.id, line()), self.dtype)

    def __setitem__(self, index, value):
        offset = self._offset(index)
        value = convert(value, self.dtype)
        current().builder.store(self.pointer, offset.id, value.id, line())


def pointer_type(dtype):
    return _core.Type(_core.Scalar.ptr, dtype.scalar)


def native_types(dtype, ndim):
    """IR types of a tensor's native values: pointer, shape, strides."""
    i32 = dtypes.Int32.ir_type
    return [pointer_type(dtype)] + [i32] * (2 * ndim)
