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

With FP8 fragments (``fx.Float8E4M3FN`` or ``fx.Float8E4M3FNUZ`` bytes) it is
m16n8k32: a holds 16 and b 8 values, K = 32, each 32-bit word four
consecutive k of a row of A (a column of B):

    a[i], i < 16: A[g + 8 * ((i // 4) % 2), 4 * t + i % 4 + 16 * (i // 8)]
    b[i], i < 8:  B[4 * t + i % 4 + 16 * (i // 4), g]

(``a_position(i, k=32)``, ``b_position(i, k=32)``). On NVIDIA GPUs from sm_89
on, Float8E4M3FN is one ``mma.sync...m16n8k32...e4m3``; Float8E4M3FNUZ (which
their tensor cores lack), and either format on sm_80 to sm_87, is decoded
exactly to Float16 in each lane, then two ``mma.sync`` m16n8k16 (every value
of both formats is a Float16 value). The CPU computes either format exactly
as above. The hardware's accumulation order and rounding are unspecified
(PTX ISA): a GPU result equals the CPU's when the partial sums are exact in
Float32, and is within a few Float32 ulps of the sum's magnitude otherwise.

``fx.wave_mma`` is AMD's own form, D = A B + C with A, B, C and D 16x16,
over a wave of 64 lanes, each lane holding what MFMA's matrix cores read and
write: with lane the thread's index in its wave, r = lane % 16 and
q = lane // 16,

    a[i], i < 4:  A[r, 4 * q + i]
    b[i], i < 4:  B[4 * q + i, r]
    c[i], d[i]:   C[4 * q + i, r]

(``wave_a_position``, ``wave_b_position``, ``wave_c_position``). On AMD GPUs
with MFMA it is one ``v_mfma_f32_16x16x16`` (f16, bf16) with no value moved
between lanes, where ``fx.mma`` moves each operand into this layout and its
result back; a kernel written for it reads its fragments from memory where
MFMA wants them. It needs waves of 64: an AMD GPU, or the CPU after
``fx.set_warp_size(64)``, which computes it exactly as ``fx.mma``; NVIDIA's
warps of 32 take ``fx.mma``. Blocks are whole waves, as for ``fx.mma`` on AMD.
"""

from .. import _core
from ..core import dtypes
from ..core.errors import KernelError
from ..core.user_code import user_line
from .block import lane_id
from .tracing import current, line
from .values import Value, IR_FP8_FORMATS, convert


def mma(a, b, c):
    """d = a . b + c for one warp; a: 8 and b: 4 lanes of Float16 (or
    BFloat16), or a: 16 and b: 8 lanes of one FP8 type (K = 32); c: 4 lanes
    of Float32. Returns d (4 lanes of Float32)."""
    if isinstance(a, Value) and getattr(a.dtype, "is_fp8", False):
        return _mma_fp8(a, b, c)
    _half_fragments("fx.mma", a, 8, b, 4)
    c = _accumulator(c)
    return Value(current().builder.mma(a.id, b.id, c.id, line()), dtypes.Float32)


def wave_mma(a, b, c):
    """d = a . b + c for one 64-lane wave in MFMA's layout; a and b: 4 lanes
    of Float16 (or BFloat16), c: 4 lanes of Float32. Returns d (4 lanes of
    Float32)."""
    _half_fragments("fx.wave_mma", a, 4, b, 4)
    target = current().target
    if target.warp_size != 64:
        raise KernelError(f"fx.wave_mma is AMD's MFMA layout, for waves of 64 lanes; the {target.name} target's "
                          f"warps are {target.warp_size} (on the CPU: fx.set_warp_size(64); NVIDIA: fx.mma)",
                          *user_line())
    c = _accumulator(c, "fx.wave_mma")
    return Value(current().builder.mma(a.id, b.id, c.id, line(), layout=_core.MMALayout.wave), dtypes.Float32)


def _half_fragments(op, a, a_lanes, b, b_lanes):
    """Checks that a and b are Float16 (or BFloat16) fragments of one type, of a_lanes and b_lanes."""
    for name, value, lanes in (("a", a, a_lanes), ("b", b, b_lanes)):
        if not isinstance(value, Value) or value.lanes != lanes or value.dtype not in (dtypes.Float16, dtypes.BFloat16):
            raise TypeError(f"{op}: {name} must be a {lanes}-lane Float16 or BFloat16 fragment, got {value!r}")
    if b.dtype is not a.dtype:
        raise TypeError(f"{op}: a and b must have one type, not {a.dtype.name} and {b.dtype.name}")


def _accumulator(c, name="fx.mma"):
    c = convert(c, dtypes.Float32)
    if c.lanes != 4:
        raise TypeError(f"{name}: c must be a 4-lane Float32 fragment, got {c!r}")
    return c


def _mma_fp8(a, b, c):
    """m16n8k32 on FP8 fragments: the tensor cores of NVIDIA's sm_89 on
    (e4m3fn) or their f16 form on the exactly decoded values (e4m3fnuz, and
    sm_80 to sm_87); AMD's MFMA (gfx94x's FP8 one for e4m3fnuz, f16 ones on
    the exactly decoded values otherwise); the CPU exactly (either format)."""
    for name, value, lanes in (("a", a, 16), ("b", b, 8)):
        if not isinstance(value, Value) or value.lanes != lanes or value.dtype is not a.dtype:
            raise TypeError(f"fx.mma: {name} must be a {lanes}-lane {a.dtype.name} fragment, got {value!r}")
    target = current().target
    if target.name == "nvptx" and int(target.cpu[3:]) < 80:
        raise KernelError(f"fx.mma of {a.dtype.name} on {target.cpu}: NVIDIA's tensor cores take m16n8k16 "
                          "and FP8 fragments from sm_80 on", *user_line())
    c = _accumulator(c)
    fmt = IR_FP8_FORMATS[a.dtype.format.name]
    return Value(current().builder.mma(a.id, b.id, c.id, line(), fp8=fmt), dtypes.Float32)


def _g_t():
    lane = lane_id() % 32
    return lane // 4, lane % 4


def a_position(i, k=16):
    """(row, column) of A that element i of this lane's a fragment holds
    (k=32: the FP8 form's)."""
    g, t = _g_t()
    if k == 32:
        return g + 8 * ((i // 4) % 2), 4 * t + i % 4 + 16 * (i // 8)
    return g + 8 * ((i // 2) % 2), 2 * t + i % 2 + 8 * (i // 4)


def b_position(i, k=16):
    """(row, column) of B that element i of this lane's b fragment holds
    (k=32: the FP8 form's)."""
    g, t = _g_t()
    if k == 32:
        return 4 * t + i % 4 + 16 * (i // 4), g
    return 2 * t + i % 2 + 8 * (i // 2), g


def c_position(i):
    """(row, column) of C and D that element i of this lane's fragments holds."""
    g, t = _g_t()
    return g + 8 * (i // 2), 2 * t + i % 2


def _r_q():
    lane = lane_id() % 64
    return lane % 16, lane // 16


def wave_a_position(i):
    """(row, column) of A that element i of this lane's fx.wave_mma a fragment holds."""
    r, q = _r_q()
    return r, 4 * q + i


def wave_b_position(i):
    """(row, column) of B that element i of this lane's fx.wave_mma b fragment holds."""
    r, q = _r_q()
    return 4 * q + i, r


def wave_c_position(i):
    """(row, column) of C and D that element i of this lane's fx.wave_mma fragments holds."""
    r, q = _r_q()
    return 4 * q + i, r
