"""Asynchronous copies from a tensor into shared memory, for software
pipelines: a thread issues the copies of the data it will need a few steps
ahead, computes on what landed earlier, and waits only when it needs more.

- ``fx.async_copy(dst, dst_index, src, src_index, lanes=1, mask=None)``
  starts copying ``lanes`` consecutive elements of tensor ``src`` from
  ``src_index`` into shared array ``dst`` (``fx.shared``) at ``dst_index``:
  4, 8 or 16 bytes a thread. Where ``mask`` is false it writes zeros and reads
  nothing, so the tail of a tensor needs no branch.
- ``fx.async_commit()`` closes the group of the thread's copies issued since
  the last commit.
- ``fx.async_wait(pending=0)`` waits until at most ``pending`` of the
  thread's committed groups are still in flight: its older copies have
  landed. Other threads see them after an ``fx.barrier()``, as any write to
  shared memory.

Accessing an array an async copy writes before a wait retires that copy is a
compile error at that line, on every target (the verifier counts the
groups: runtime/src/ir/async_copies.cpp). A pipeline with several stages in
flight gives each stage its own shared array.

NVIDIA GPUs from sm_80 copy with ``cp.async`` (16 bytes ``.cg``, bypassing
L1). On the CPU, on AMD GPUs (flyrt does not use gfx942's direct-to-LDS
loads: they fill a wave's consecutive LDS words, not each thread's own
address) and from an address not known to be a multiple of the copy's size,
a copy lands at once: a load and a store, with the same visible result.
"""

import operator

from ..core import dtypes
from ..core.errors import KernelError
from ..core.user_code import user_line
from .control_flow import if_
from .reads import number
from .tensor import TensorValue, _checks_bounds
from .tracing import current, line
from .values import Value, constant, convert


def _fail(message):
    raise KernelError(message, *user_line())


def async_copy(dst, dst_index, src, src_index, lanes=1, mask=None):
    """Starts copying ``src[src_index]`` (and the ``lanes - 1`` elements
    after it along the last dimension) into ``dst[dst_index]`` onwards; where
    ``mask`` is false, zeros. Both indices' last components are multiples of
    ``lanes`` (checked with the bounds)."""
    for name, t in (("dst", dst), ("src", src)):
        if not isinstance(t, TensorValue):
            _fail(f"fx.async_copy's {name} is a tensor or a shared array, not {type(t).__name__}")
    if dst.dtype != src.dtype:
        _fail(f"fx.async_copy from {src.dtype.name} tensor '{src.name}' into a {dst.dtype.name} array: "
              "the element types must match")
    if isinstance(lanes, Value) or not 1 <= number(lanes, operator.index) <= 16:
        _fail(f"fx.async_copy(lanes=...) takes a Python int from 1 to 16, not {lanes!r}")
    lanes = number(lanes, operator.index)
    itemsize = max(1, dst.dtype.bits // 8)
    size = lanes * itemsize
    if size not in (4, 8, 16):
        fits = ", ".join(f"lanes={n // itemsize}" for n in (4, 8, 16) if n % itemsize == 0 and n >= itemsize)
        _fail(f"fx.async_copy moves 4, 8 or 16 bytes a thread; {lanes} x {dst.dtype.name} is {size} "
              f"({dst.dtype.name} takes {fits})")
    for t in (dst, src):
        if lanes > 1 and not (t.ndim and not isinstance(t.strides[-1], Value) and t.strides[-1] == 1):
            _fail(f"fx.async_copy of {lanes} lanes needs tensor '{t.name}' contiguous along its last dimension")
    dst_indices, src_indices = dst._indices(dst_index), src._indices(src_index)
    align = min(size, dst.base_align, src.base_align)
    fill = constant(True, dtypes.Boolean) if mask is None else convert(mask, dtypes.Boolean)
    builder = current().builder

    def copy(fill, src_offset):
        dst.written = True
        builder.async_copy(dst.pointer, dst._offset(dst_indices).id, src.pointer, src_offset.id, lanes, align,
                           fill.id, line())
        return 0

    def inside(t, indices, access):  # access() where the indices lie in t (and are aligned); else a report
        return t._checked(indices, access, lambda: 0, lanes, align)

    def read_and_copy():
        return inside(src, src_indices, lambda: inside(
            dst, dst_indices, lambda: copy(constant(True, dtypes.Boolean), src._offset(src_indices))))

    def zeros():  # the masked-off copy: the source is neither read nor checked
        return inside(dst, dst_indices, lambda: copy(fill, constant(0, dtypes.Int64)))

    if not _checks_bounds():
        copy(fill, src._offset(src_indices))
    elif mask is None:
        read_and_copy()
    else:
        if_(fill, lambda *_: (read_and_copy(),), lambda *_: (zeros(),), (0,), ("copied",))


def async_commit():
    """Closes the group of this thread's async copies issued since the last."""
    current().builder.async_commit(line())


def async_wait(pending=0):
    """Waits until at most ``pending`` (a Python int) of this thread's
    committed groups are in flight."""
    if isinstance(pending, Value) or number(pending, operator.index) < 0:
        _fail(f"fx.async_wait(pending=...) takes a Python int of 0 or more, not {pending!r}")
    current().builder.async_wait(number(pending, operator.index), line())
