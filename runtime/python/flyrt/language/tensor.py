"""Tensors inside a trace: a data pointer, shape and strides (in elements),
all runtime values; element access loads and stores through the strides.

With bounds checks on (the default in every process; FLYDSL_DEBUG_BOUNDS=0 or
flyrt.set_bounds_checks(False) is the fast mode) every access is checked
against the shape; an access out of bounds is skipped and the launch raises
IndexError naming the tensor, the index and the Python line. Checks the
compiler proves cost nothing."""

from .. import _core
from ..core import dtypes
from ..core.errors import source_line
from ..core.user_code import user_frame
from .control_flow import UNDEFINED, if_
from .tracing import current, interpreting, line
from .values import Value, constant, convert


def _checks_bounds():
    """Bounds checks are on when asked for, and always in interpreter mode
    (where a stray index would read another element of the array, or raise
    numpy's error far from the kernel's line)."""
    return _core.bounds_checks() or interpreting()


class TensorValue:
    """A tensor argument as a launcher or kernel sees it while tracing."""

    def __init__(self, name, dtype, native, contiguous, index_bits=32, base_align=16, stride_multiple=1):
        ndim = (len(native) - 1) // 2
        index = dtypes.Int64 if index_bits == 64 else dtypes.Int32
        self.name = name
        self.dtype = dtype
        self.native = list(native)  # value ids: pointer, shape..., strides...
        self.pointer = native[0]
        self.index_bits = index_bits
        self._shape = [Value(v, index) for v in native[1 : 1 + ndim]]
        self._strides = [Value(v, index) for v in native[1 + ndim :]]
        if contiguous and ndim > 0:
            self._strides[-1] = 1  # known, so inner loops vectorize
        if stride_multiple > 1:
            # The strides' low bits are zeros (specialized on): said in the IR, where the range analysis
            # proves a vector access's alignment from them, and LLVM learns it too.
            self._strides = [s & constant(-stride_multiple, index) if isinstance(s, Value) and not s.concrete
                             else s for s in self._strides]
        self.contiguous = contiguous
        self.base_align = base_align  # bytes the data pointer is a multiple of (specialized on, up to 16)
        self.stride_multiple = stride_multiple  # what every stride but a contiguous last is a multiple of
        self.written = False  # a store into it was traced
        self.shared_shape = None  # an fx.shared array's shape, in Python ints

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

    def _indices(self, index):
        if not isinstance(index, tuple):
            index = (index,)
        if len(index) != self.ndim:
            raise IndexError(f"tensor {self.name} has {self.ndim} dimensions, indexed with {len(index)}")
        if any(isinstance(i, slice) for i in index):
            raise IndexError("slices of traced tensors are not supported; index single elements")
        return [convert(i, dtypes.Int64) if isinstance(i, Value) else constant(int(i), dtypes.Int64) for i in index]

    def _offset(self, indices):
        offset = None
        for i, stride in zip(indices, self._strides):
            term = i if (not isinstance(stride, Value) and stride == 1) else i * convert(stride, dtypes.Int64)
            offset = term if offset is None else offset + term
        return offset if offset is not None else constant(0, dtypes.Int64)

    def _checked(self, indices, access, fallback, lanes=1, align=0, names=("element",)):
        """`access()` where every index (and a vector's last lane) is within
        the shape, and where the address is a multiple of `align` bytes as a
        vector access promised; elsewhere the launch records an IndexError and
        `fallback()` stands in. Checks the compiler proves are dropped
        (ir::fold_decided_values). An access with more than one result
        (`names`) returns them as a tuple."""
        single = len(names) == 1

        def results(make):
            return (make(),) if single else tuple(make())

        shape = [convert(s, dtypes.Int64) for s in self._shape]
        checked = list(zip(indices, shape))
        if lanes > 1:
            checked.append((indices[-1] + (lanes - 1), shape[-1]))
        ok = None
        for i, size in checked:
            # one unsigned compare: a negative index wraps past any size
            inside = convert(i, dtypes.UInt64) < convert(size, dtypes.UInt64)
            ok = inside if ok is None else ok & inside
        holes = ", ".join("{}" for _ in indices)
        vector = f" (a vector of {lanes} lanes)" if lanes > 1 else ""

        def report(describe, values):
            # The message names the user's line; built only on the path that reports (an interpreted
            # access that stays in bounds never formats it).
            def reported(*_):
                frame = user_frame()
                where = source_line(frame.f_code.co_filename, frame.f_lineno) if frame else "?"
                current().builder.report(describe(where), [v.id for v in values], line())
                return results(fallback)
            return reported

        def guarded(*_):
            return results(access)

        elements = align // max(1, self.dtype.bits // 8)
        if elements > 1:
            # the data pointer is aligned (specialized on): the offset in elements must be too
            aligned = (self._offset(indices) & (elements - 1)) == 0

            def promise(where):
                return (f"index ({holes}) of tensor '{self.name}' is not {align}-byte aligned, as align={align} "
                        f"promises, at {where}")

            def guarded(*_):
                return if_(aligned, lambda *_: results(access), report(promise, indices), (UNDEFINED,) * len(names),
                           names)

        def out_of_bounds(where):
            return f"index ({holes}){vector} is out of bounds for tensor '{self.name}' of shape ({holes}) at {where}"

        out = if_(ok, guarded, report(out_of_bounds, indices + shape), (UNDEFINED,) * len(names), names)
        return out[0] if single else out

    def __getitem__(self, index):
        indices = self._indices(index)
        builder = current().builder

        def load():
            return Value(builder.load(self.pointer, self._offset(indices).id, line()), self.dtype)

        if _checks_bounds():
            return self._checked(indices, load, lambda: constant(0, self.dtype))
        return load()

    def load_vector(self, index, lanes, align=None):
        """`lanes` consecutive elements along the last dimension, from `index`;
        `align`: bytes the address is promised to be a multiple of."""
        indices = self._vector_indices(index, lanes)
        align = self._alignment(align, lanes)
        builder = current().builder

        def load():
            offset = self._offset(indices).id
            return Value(builder.load_vector(self.pointer, offset, lanes, line(), align), self.dtype)

        if _checks_bounds():
            return self._checked(indices, load, lambda: Value(
                builder.broadcast(constant(0, self.dtype).id, lanes, line()), self.dtype), lanes, align)
        return load()

    def store_vector(self, index, vector, align=None):
        indices = self._vector_indices(index, vector.lanes)
        align = self._alignment(align, vector.lanes)
        vector = convert(vector, self.dtype)
        builder = current().builder

        def store():
            builder.store(self.pointer, self._offset(indices).id, vector.id, line(), align)
            return 0

        self.written = True
        if _checks_bounds():
            self._checked(indices, store, lambda: 0, vector.lanes, align)
        else:
            store()

    def _alignment(self, align, lanes):
        """A vector access's alignment in bytes (0: the element's): what
        `align=` promises, but no more than the data pointer has (the launcher
        is specialized on it), so a less aligned tensor is accessed safely.
        GPUs move a vector in one access only from an address that is a
        multiple of its size: less aligned ones go in pieces."""
        if align is None:
            return 0
        element = max(1, self.dtype.bits // 8)
        if isinstance(align, Value) or align < element or align & (align - 1):
            raise ValueError(f"align= takes a power of two of bytes, at least the element's {element}, not {align!r}")
        align = min(int(align), self.base_align)
        return align if align > element else 0

    def _vector_indices(self, index, lanes):
        if not 2 <= lanes <= 16:
            raise ValueError(f"vectors have 2 to 16 lanes, not {lanes}")
        if not (self.ndim and not isinstance(self._strides[-1], Value) and self._strides[-1] == 1):
            raise TypeError(f"vector access to tensor {self.name} needs a contiguous last dimension")
        return self._indices(index)

    def update(self, index, emit, fallback, names=("element",)):
        """An atomic access of the element at `index` (atomics.py): what
        ``emit(pointer, offset)`` builds there, bounds-checked as ``t[i]``."""
        indices = self._indices(index)
        self.written = True

        def access():
            return emit(self.pointer, self._offset(indices).id)

        if _checks_bounds():
            return self._checked(indices, access, fallback, names=names)
        return access()

    def __setitem__(self, index, value):
        indices = self._indices(index)
        value = convert(value, self.dtype)
        builder = current().builder

        def store():
            builder.store(self.pointer, self._offset(indices).id, value.id, line())
            return 0

        self.written = True
        if _checks_bounds():
            self._checked(indices, store, lambda: 0)
        else:
            store()


def pointer_type(dtype):
    return _core.Type(_core.Scalar.ptr, dtype.scalar)


def native_types(dtype, ndim, index_bits=32):
    """IR types of a tensor's native values: pointer, shape, strides (Int32,
    or Int64 for a tensor specialized on 64-bit indexing)."""
    index = (dtypes.Int64 if index_bits == 64 else dtypes.Int32).ir_type
    return [pointer_type(dtype)] + [index] * (2 * ndim)
