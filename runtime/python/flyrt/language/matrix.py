"""``fx.mma``: a warp's matrix multiply-accumulate, D = A B + C with A 16x16,
B 16x8, C and D 16x8, Float16 or BFloat16 operands and Float32 accumulators,
each lane holding fragments laid out as NVIDIA's mma.m16n8k16 (.row.col)
lays them out. With lane the thread's index in its warp of 32 (AMD's waves
of 64 are two such warps, each with its own A, B and C), g = lane // 4 and
t = lane % 4:

    a[i], i < 8:  A[g + 8 * ((i // 2) % 2), 2 * t + i % 2 + 8 * (i // 4)]
    b[i], i < 4:  B[2 * t + i % 2 + 8 * (i // 2), g]
    c[i], d[i]:   C[g + 8 * (i // 2), 2 * t + i % 2]

``a_position``, ``b_position`` and ``c_position`` give those (row, column)
as traced values. Every lane of the warp must reach ``fx.mma`` (whole warps:
a block size that is a multiple of 32; and, as for shuffles, not under
control flow that depends on the thread). On NVIDIA GPUs (sm_80 on) it is
one ``mma.sync`` on the tensor cores; on AMD GPUs with MFMA (gfx90a, gfx94x)
one ``v_mfma_f32_16x16x16`` per half-wave, the fragments moved into its
layout and back by cross-lane permutes; on the CPU it is computed exactly
(the products are exact in Float32, summed in order of k).
"""

from ..core import dtypes
from .block import lane_id
from .tracing import current, line
from .values import Value, convert


def mma(a, b, c):
    """d = a . b + c for one warp; a: 8 and b: 4 lanes of Float16 (or
    BFloat16), c: 4 lanes of Float32. Returns d (4 lanes of Float32)."""
    for name, value, lanes in (("a", a, 8), ("b", b, 4)):
        if not isinstance(value, Value) or value.lanes != lanes or value.dtype not in (dtypes.Float16, dtypes.BFloat16):
            raise TypeError(f"fx.mma: {name} must be a {lanes}-lane Float16 or BFloat16 fragment, got {value!r}")
    if b.dtype is not a.dtype:
        raise TypeError(f"fx.mma: a and b must have one type, not {a.dtype.name} and {b.dtype.name}")
    c = convert(c, dtypes.Float32)
    if c.lanes != 4:
        raise TypeError(f"fx.mma: c must be a 4-lane Float32 fragment, got {c!r}")
    return Value(current().builder.mma(a.id, b.id, c.id, line()), dtypes.Float32)


def _g_t():
    lane = lane_id() % 32
    return lane // 4, lane % 4


def a_position(i):
    """(row, column) of A that element i of this lane's a fragment holds."""
    g, t = _g_t()
    return g + 8 * ((i // 2) % 2), 2 * t + i % 2 + 8 * (i // 4)


def b_position(i):
    """(row, column) of B that element i of this lane's b fragment holds."""
    g, t = _g_t()
    return 2 * t + i % 2 + 8 * (i // 2), g


def c_position(i):
    """(row, column) of C and D that element i of this lane's fragments holds."""
    g, t = _g_t()
    return g + 8 * (i // 2), 2 * t + i % 2
