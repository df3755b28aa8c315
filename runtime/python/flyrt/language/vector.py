"""``fx.Vector``: 2 to 16 lanes of one scalar type, lowered to LLVM vectors.

Vectors load and store consecutive elements of a tensor's (or a shared
array's) last dimension, combine elementwise with the Python operators
(scalars broadcast), convert with ``.to()``, and ``reduce``, ``v[lane]`` and
``v.insert(lane, x)`` move between vectors and scalars.
"""

from .. import _core
from ..core import dtypes
from .tracing import current, line
from .values import Value, constant, convert

_REDUCTIONS = {"add": _core.Arith.add, "max": _core.Arith.max, "min": _core.Arith.min}


def _lane(vector, lane):
    if isinstance(lane, Value) or not isinstance(lane, int):
        raise TypeError("vector lanes are chosen by Python ints")
    if not 0 <= lane < vector.lanes:
        raise IndexError(f"lane {lane} of a {vector.lanes}-lane vector")
    return lane


def extract(vector, lane):
    if vector.lanes == 1:
        raise TypeError(f"a traced {vector.dtype.name} is a scalar, not a vector")
    return Value(current().builder.extract(vector.id, _lane(vector, lane), line()), vector.dtype)


def insert(vector, lane, element):
    element = convert(element, vector.dtype)
    return Value(current().builder.insert(vector.id, element.id, _lane(vector, lane), line()), vector.dtype)


def reduce(vector, op="add"):
    if op not in _REDUCTIONS:
        raise ValueError(f"vectors reduce with {sorted(_REDUCTIONS)}, not {op!r}")
    return Value(current().builder.reduce(_REDUCTIONS[op], vector.id, line()), vector.dtype)


class Vector:
    """Constructors of traced vectors (the values are ordinary traced values)."""

    @staticmethod
    def load(tensor, index, lanes, align=None):
        """`lanes` elements of `tensor`'s last dimension from `index`. `align`
        promises the address is a multiple of that many bytes: on GPUs a
        vector aligned to its size moves in one wide access, others element
        by element."""
        return tensor.load_vector(index, lanes, align)

    @staticmethod
    def broadcast(value, lanes, dtype=None):
        if not 2 <= lanes <= 16:
            raise ValueError(f"vectors have 2 to 16 lanes, not {lanes}")
        scalar = convert(value, dtype) if dtype is not None else constant(value)
        return Value(current().builder.broadcast(scalar.id, lanes, line()), scalar.dtype)

    @staticmethod
    def zeros(lanes, dtype=dtypes.Float32):
        return Vector.broadcast(0, lanes, dtype)

    @staticmethod
    def from_elements(elements, dtype=None):
        elements = list(elements)
        first = convert(elements[0], dtype) if dtype is not None else constant(elements[0])
        vector = Vector.broadcast(first, len(elements))
        for lane, element in enumerate(elements[1:], 1):
            vector = vector.insert(lane, element)
        return vector


# A vector Value's methods (values.py names them).
Value.__getitem__ = extract
Value.insert = insert
Value.reduce = reduce
