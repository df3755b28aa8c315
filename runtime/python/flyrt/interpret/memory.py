"""What a pointer is in interpreter mode: a flat numpy view of the memory a
tensor or shared array covers, indexed by element offsets as compiled code
indexes it (offsets from the data pointer, through the strides)."""

import numpy as np

from . import numerics


class Buffer:
    """Elements reachable from one data pointer; `origin` is the pointer's
    position in `data` (a strided tensor may reach below it)."""

    def __init__(self, data, origin, name):
        self.data = data
        self.origin = origin
        self.name = name
        self.plain = np.dtype(data.dtype.str)  # the storage type without flyrt's metadata
        self.bfloat16 = (data.dtype.metadata or {}).get("flyrt_dtype") == "bfloat16"

    def _position(self, offset, lanes):
        start = self.origin + int(offset)
        if start < 0 or start + lanes > len(self.data):
            raise IndexError(f"element offset {int(offset)} (and {lanes - 1} more) is outside the memory of "
                             f"'{self.name}' ({len(self.data) - self.origin} elements from its data pointer)")
        return start

    def load(self, offset, lanes=1):
        start = self._position(offset, lanes)
        raw = self.data[start] if lanes == 1 else np.array(self.data[start : start + lanes], self.plain)
        if self.bfloat16:
            return numerics.bfloat16_from_bits(raw)
        return self.plain.type(raw) if lanes == 1 else raw

    def store(self, offset, value):
        lanes = np.size(value)
        start = self._position(offset, lanes)
        if not self.data.flags.writeable:
            raise ValueError(f"'{self.name}' is read-only (its WRITEABLE flag is off) and the kernel stores into it")
        stored = numerics.bfloat16_bits(value) if self.bfloat16 else np.asarray(value).astype(self.plain)
        if lanes == 1:
            self.data[start] = stored
        else:
            self.data[start : start + lanes] = stored


    def clear(self, offset, lanes):
        """Zeros `lanes` elements from `offset` (zero bits are 0 in every element type)."""
        start = self._position(offset, lanes)
        self.data[start : start + lanes] = 0


def of_array(array, name):
    """A Buffer over every element `array` reaches, and its strides in elements."""
    itemsize = array.dtype.itemsize
    strides = [s // itemsize for s in array.strides]
    if array.size == 0:
        return Buffer(np.zeros(0, array.dtype), 0, name), strides
    low = sum(min(0, (n - 1) * s) for n, s in zip(array.shape, strides))
    high = sum(max(0, (n - 1) * s) for n, s in zip(array.shape, strides))
    lowest = array[tuple(slice(n - 1, n) if s < 0 else slice(0, 1) for n, s in zip(array.shape, strides))]
    flat = np.lib.stride_tricks.as_strided(lowest, shape=(high - low + 1,), strides=(itemsize,),
                                           writeable=array.flags.writeable)
    return Buffer(flat.view(array.dtype), -low, name), strides


def shared_array(dtype, count, name):
    """A zeroed shared array of `count` elements of DSL type `dtype`."""
    return Buffer(np.zeros(count, dtype.numpy_dtype), 0, name)
