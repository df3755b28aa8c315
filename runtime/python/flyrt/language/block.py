"""Block-level SIMT: shared memory, barriers and warp shuffles.

Barriers and shuffles must be reached by every thread of the block: under a
branch or loop that depends on the thread they are a compile error naming
the line (on the CPU a block's threads run as loops split at each one). The
warp size is the target's: 32 on NVIDIA GPUs; the CPU's is 32 or 64.
"""

import math
import operator

from .. import _core
from ..core import dtypes, settings
from ..core.errors import KernelError
from ..core.user_code import user_line
from .reads import number
from .tensor import TensorValue
from .tracing import active, current, line
from .values import Value, constant, convert, maximum, minimum


def warp_size():
    """Threads per warp of the target being traced for (outside a trace: the
    CPU's, 32 or 64)."""
    trace = active()
    return trace.target.warp_size if trace is not None else settings.cpu_warp_size()


set_warp_size = settings.set_cpu_warp_size  # fx.set_warp_size


def barrier():
    """Waits until every thread of the block got here; shared memory written
    before is visible to every thread after."""
    current().builder.barrier(line())


def _shared_tensor(name, dtype, shape, pointer):
    shape = tuple(int(s) for s in shape)
    strides = [math.prod(shape[i + 1 :]) for i in range(len(shape))]
    native = [pointer] + [constant(s, dtypes.Int32).id for s in shape] + [constant(s, dtypes.Int32).id for s in strides]
    array = TensorValue(name, dtype, native, contiguous=True)
    array.shared_shape = shape
    return array


def shared(shape, dtype):
    """A per-block shared-memory array of `shape` (Python ints) and `dtype`."""
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    if any(isinstance(s, Value) or number(s, operator.index) <= 0 for s in shape):
        raise TypeError("fx.shared needs a shape of positive Python ints; use smem= and fx.dynamic_shared for sizes "
                        "known only at launch")
    shape = tuple(number(s, operator.index) for s in shape)
    itemsize = max(1, dtype.bits // 8)
    size, most = math.prod(shape) * itemsize, current().target.max_shared_bytes
    if size > most:  # refused here: the block's byte count is 32-bit, a larger one would wrap
        raise KernelError(f"fx.shared({shape}, {dtype.name}) is {size} bytes of shared memory; a block has at most "
                          f"{most} on this target", *user_line())
    pointer = current().builder.shared(dtype.scalar, size, line())
    return _shared_tensor("shared", dtype, shape, pointer)


def dynamic_shared(dtype, size):
    """The launch's `smem=` bytes, after the static arrays, as a 1-D array of
    `size` elements of `dtype` (`size` may be traced)."""
    if not isinstance(size, Value) and not 0 <= number(size, operator.index) < 2**31:
        raise KernelError(f"fx.dynamic_shared({dtype.name}, {size}): a size from 0 to 2**31 - 1 elements",
                          *user_line())
    pointer = current().builder.dynamic_shared(dtype.scalar, line())
    size = convert(size, dtypes.Int32)
    return TensorValue("dynamic_shared", dtype, [pointer, size.id, constant(1, dtypes.Int32).id], contiguous=True)


# -- where a thread is: its block and thread indices, the grid's and block's sizes


class _Dim3:
    def __init__(self, which):
        self._which = which

    def _get(self, dim):
        builder = current().builder
        return Value(builder.special(self._which, dim, line()), dtypes.Int32)

    @property
    def x(self):
        return self._get(0)

    @property
    def y(self):
        return self._get(1)

    @property
    def z(self):
        return self._get(2)


thread_idx = _Dim3(_core.Special.thread_idx)
block_idx = _Dim3(_core.Special.block_idx)
block_dim = _Dim3(_core.Special.block_dim)
grid_dim = _Dim3(_core.Special.grid_dim)


def thread_linear():
    return thread_idx.x + block_dim.x * (thread_idx.y + block_dim.y * thread_idx.z)


def lane_id():
    return thread_linear() % warp_size()


def _shuffle_from(value, source_thread):
    value = constant(value) if not isinstance(value, Value) else value
    source = convert(source_thread, dtypes.Int32)
    return Value(current().builder.shuffle(value.id, source.id, line()), value.dtype)


def _check_width(width):
    warp = warp_size()
    width = warp if width is None else int(width)
    if width < 1 or width > warp or width & (width - 1):
        raise ValueError(f"shuffle width must be a power of two up to the warp size {warp}, got {width}")
    return width


def shuffle(value, src_lane, width=None):
    """The value lane `src_lane` of this lane's `width`-wide group holds."""
    width = _check_width(width)
    tid = thread_linear()
    lane = tid % width
    return _shuffle_from(value, tid - lane + src_lane % width)


def shuffle_xor(value, offset, width=None):
    """The value held by lane `lane ^ offset` (butterfly exchange)."""
    width = _check_width(width)
    tid = thread_linear()
    lane = tid % width
    return _shuffle_from(value, tid - lane + (lane ^ offset))


_REDUCERS = {
    "add": lambda a, b: a + b,
    "max": maximum,
    "min": minimum,
}


def warp_reduce(value, op="add", width=None):
    """`op` ("add", "max", "min") over the lanes of each `width`-wide group;
    every lane gets the result."""
    if op not in _REDUCERS:
        raise ValueError(f"warp_reduce op must be one of {sorted(_REDUCERS)}, got {op!r}")
    width = _check_width(width)
    combine = _REDUCERS[op]
    offset = width // 2
    while offset >= 1:
        value = combine(value, shuffle_xor(value, offset, width))
        offset //= 2
    return value


# A Value's warp shuffles (values.py names them).
Value.shuffle = shuffle
Value.shuffle_xor = shuffle_xor
