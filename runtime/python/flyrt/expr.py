"""The DSL as kernels use it: ``import flyrt.expr as fx``."""

import builtins
import operator

from . import _core
from .core import dtypes
from .core.dtypes import (
    BFloat16, Boolean, Float16, Float32, Float64, Int8, Int16, Int32, Int64, UInt8, UInt16, UInt32, UInt64
)
from .core.fp8 import Float8E4M3FN, Float8E4M3FNUZ
from .language import values
from .language.annotations import Constexpr, Stream, Tensor, is_constexpr
from .language.async_copy import async_commit, async_copy, async_wait
from .language.atomics import (atomic_add, atomic_and, atomic_cas, atomic_max, atomic_min, atomic_or, atomic_sub,
                               atomic_xchg, atomic_xor, memory_fence)
from .language.block import (
    barrier, block_dim, block_idx, dynamic_shared, grid_dim, lane_id, set_warp_size, shared, shuffle, shuffle_xor,
    thread_idx, warp_reduce, warp_size
)
from .language.fragments import a_fragment, b_fragment
from .language.grid_dependency import launch_dependents, wait_for_prior_grids
from .language.matrix import (a_position, b_position, c_position, mma, wave_a_position, wave_b_position,
                              wave_c_position, wave_mma)
from .language.printing import printf
from .language.reads import number
from .language.tracing import current
from .language.values import Value, select
from .language.vector import Vector

A = _core.Arith


def target():
    """What the kernels being traced run on (a description: ``.name`` "cpu"
    or "nvptx", ``.cpu`` such as "sm_90", ``.is_gpu``, ``.warp_size``,
    ``.matrix_multiply``): for choosing an implementation at trace time."""
    return current().target


def range_constexpr(*args):
    """A loop unrolled while tracing: its bounds must be Python ints."""
    for a in args:
        if isinstance(a, Value):
            raise TypeError("range_constexpr needs Python int bounds; use range(...) for a dynamic loop")
    return range(*(number(a, operator.index) for a in args))


def const_expr(value):
    """Marks a condition decided while tracing; it must be a Python value."""
    if isinstance(value, Value):
        raise TypeError("const_expr needs a Python value, got a traced one")
    return value


def _math(kind):
    def apply(x):
        return values.float_unary(kind, x)

    apply.__name__ = kind.name
    return apply


exp = _math(A.exp)
log = _math(A.log)
log2 = _math(A.log2)
sqrt = _math(A.sqrt)
rsqrt = _math(A.rsqrt)
floor = _math(A.floor)
ceil = _math(A.ceil)
sin = _math(A.sin)
cos = _math(A.cos)
tanh = _math(A.tanh)
erf = _math(A.erf)


def exp2(x, approx=False):
    """2 to the power x. approx=True: on GPUs one instruction (NVIDIA's
    ex2.approx, within 2 ulp, subnormal results flushed to 0; AMD's
    v_exp_f32, 1 ulp), as a softmax wants it; on the CPU exactly exp2."""
    return values.float_unary(A.exp2_approx if approx else A.exp2, x)


def pow(x, y):  # noqa: A001  (the DSL's name)
    """x to the power y, as C's pow (integers are converted to Float32)."""
    return values.power(x, y)


def sigmoid(x):
    """1 / (1 + exp(-x)), with flyrt's exp: 0 and 1 at the ends, never NaN
    but for a NaN."""
    x = values.constant(x)
    if not x.dtype.is_float:
        x = values.convert(x, Float32)
    return 1 / (1 + exp(-x))


def abs(x):  # noqa: A001  (the DSL's name)
    return values.unary(A.abs, x) if isinstance(x, Value) else builtins.abs(x)


def max(a, b):  # noqa: A001
    if not isinstance(a, Value) and not isinstance(b, Value):
        return a if a >= b else b
    return values.maximum(a, b)


def min(a, b):  # noqa: A001
    if not isinstance(a, Value) and not isinstance(b, Value):
        return a if a <= b else b
    return values.minimum(a, b)


def fma(a, b, c):
    """a * b + c with one rounding (floats)."""
    return values.fma(a, b, c)


def ceildiv(a, b):
    return (a + b - 1) // b
