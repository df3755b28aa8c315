"""Atomics and fences: ``fx.atomic_add(t, index, value)`` and the other
read-modify-writes of one element of a tensor or a shared array, which no
other thread's access to that element splits; ``fx.atomic_cas``;
``fx.memory_fence``.

Names and defaults are FlyDSL's: a read-modify-write is ``order="relaxed"``
and ``scope="system"``, a fence ``order="seq_cst"``. Each read-modify-write
returns the element's value before it. The index and its bounds check are
those of ``t[i]`` / ``t[i, j]``. An element type an operation does not take is
a compile error at the user's line.

On the CPU target the grid's blocks run on a thread pool and the atomics are
the host's; a block's threads run one after another between barriers, so
each sees the others' atomics in some order, as on a GPU. In interpreter
mode the threads take turns, and an atomic is a plain read and write.
"""

from .. import _core
from ..core import dtypes
from ..core.errors import KernelError
from ..core.user_code import user_line
from .tensor import TensorValue
from .tracing import current, line
from .values import Value, constant, convert

K = _core.AtomicOp
SCOPES = {"block": _core.MemoryScope.block, "device": _core.MemoryScope.device,
          "system": _core.MemoryScope.system}
ORDERS = {"relaxed": _core.MemoryOrder.relaxed, "acquire": _core.MemoryOrder.acquire,
          "release": _core.MemoryOrder.release, "acq_rel": _core.MemoryOrder.acq_rel,
          "seq_cst": _core.MemoryOrder.seq_cst}

_INTEGERS = (dtypes.Int32, dtypes.UInt32, dtypes.Int64, dtypes.UInt64)
_FLOATS = (dtypes.Float16, dtypes.BFloat16, dtypes.Float32, dtypes.Float64)
# The element types each operation takes: integers of 32 and 64 bits (what
# every target's atomics take), float add and subtract, exchange of words.
_TAKES = {
    K.add: _INTEGERS + _FLOATS,
    K.sub: _INTEGERS + _FLOATS,
    K.min: _INTEGERS,
    K.max: _INTEGERS,
    K.bit_and: _INTEGERS,
    K.bit_or: _INTEGERS,
    K.bit_xor: _INTEGERS,
    K.xchg: _INTEGERS + (dtypes.Float32, dtypes.Float64),
    K.cas: _INTEGERS,
}


def _fail(message):
    raise KernelError(message, *user_line())


def _target(what, t, kind):
    if not isinstance(t, TensorValue):
        _fail(f"{what} takes a tensor or a shared array (fx.shared), not {type(t).__name__}")
    if t.dtype not in _TAKES[kind]:
        names = ", ".join(d.name for d in _TAKES[kind])
        _fail(f"{what} on tensor '{t.name}' of {t.dtype.name}: it takes {names}")
    return t


def _memory(what, scope, order, fence=False):
    if scope not in SCOPES:
        _fail(f"{what}: scope={scope!r}; expected one of {', '.join(map(repr, SCOPES))}")
    if order not in ORDERS or (fence and order == "relaxed"):
        allowed = [o for o in ORDERS if not (fence and o == "relaxed")]
        _fail(f"{what}: order={order!r}; expected one of {', '.join(map(repr, allowed))}")
    return SCOPES[scope], ORDERS[order]


def _read_modify_write(kind, what, t, index, value, scope, order):
    t = _target(what, t, kind)
    scope, order = _memory(what, scope, order)
    value = convert(value, t.dtype)
    builder = current().builder

    def emit(pointer, offset):
        return Value(builder.atomic(kind, pointer, offset, value.id, scope, order, line()), t.dtype)

    return t.update(index, emit, lambda: constant(0, t.dtype))


def atomic_add(t, index, value, *, scope="system", order="relaxed"):
    """Atomically adds `value` to element `index` of `t` (a tensor or a
    shared array); returns the element's value before."""
    return _read_modify_write(K.add, "fx.atomic_add", t, index, value, scope, order)


def atomic_sub(t, index, value, *, scope="system", order="relaxed"):
    """Atomically subtracts `value` from element `index` of `t`; returns the
    element's value before."""
    return _read_modify_write(K.sub, "fx.atomic_sub", t, index, value, scope, order)


def atomic_min(t, index, value, *, scope="system", order="relaxed"):
    """Atomically keeps the smaller of element `index` of `t` and `value`
    (integers); returns the element's value before."""
    return _read_modify_write(K.min, "fx.atomic_min", t, index, value, scope, order)


def atomic_max(t, index, value, *, scope="system", order="relaxed"):
    """Atomically keeps the larger of element `index` of `t` and `value`
    (integers); returns the element's value before."""
    return _read_modify_write(K.max, "fx.atomic_max", t, index, value, scope, order)


def atomic_and(t, index, value, *, scope="system", order="relaxed"):
    """Atomically ands `value` into element `index` of `t` (integers);
    returns the element's value before."""
    return _read_modify_write(K.bit_and, "fx.atomic_and", t, index, value, scope, order)


def atomic_or(t, index, value, *, scope="system", order="relaxed"):
    """Atomically ors `value` into element `index` of `t` (integers); returns
    the element's value before."""
    return _read_modify_write(K.bit_or, "fx.atomic_or", t, index, value, scope, order)


def atomic_xor(t, index, value, *, scope="system", order="relaxed"):
    """Atomically xors `value` into element `index` of `t` (integers);
    returns the element's value before."""
    return _read_modify_write(K.bit_xor, "fx.atomic_xor", t, index, value, scope, order)


def atomic_xchg(t, index, value, *, scope="system", order="relaxed"):
    """Atomically replaces element `index` of `t` with `value`; returns the
    element's value before."""
    return _read_modify_write(K.xchg, "fx.atomic_xchg", t, index, value, scope, order)


def atomic_cas(t, index, cmp, val, *, scope="system", order="relaxed"):
    """Atomically replaces element `index` of `t` with `val` if it equals
    `cmp`; returns ``(old, success)``: the element's value before, and
    whether it was replaced. Integers only, as LLVM's cmpxchg: bitcast a
    float to compare its bits."""
    t = _target("fx.atomic_cas", t, K.cas)
    scope, order = _memory("fx.atomic_cas", scope, order)
    cmp, val = convert(cmp, t.dtype), convert(val, t.dtype)
    builder = current().builder

    def emit(pointer, offset):
        old, success = builder.atomic_cas(pointer, offset, cmp.id, val.id, scope, order, line())
        return Value(old, t.dtype), Value(success, dtypes.Boolean)

    return t.update(index, emit, lambda: (constant(0, t.dtype), constant(False, dtypes.Boolean)),
                    names=("old", "success"))


def memory_fence(*, scope="system", order="seq_cst"):
    """Orders this thread's memory accesses before the fence against those
    after it, as seen by the threads of `scope` ("block", "device",
    "system"); `order` is "acquire", "release", "acq_rel" or "seq_cst"."""
    scope, order = _memory("fx.memory_fence", scope, order, fence=True)
    current().builder.fence(scope, order, line())
