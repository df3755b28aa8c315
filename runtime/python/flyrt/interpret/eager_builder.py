"""The eager builder: the function builder's interface (what language/values.py,
tensor.py, vector.py, block.py and matrix.py call while tracing),
computing each op at once on concrete values instead of emitting IR.

A value's "id" is the value itself: a numpy scalar, or a 1-d numpy array for
a vector (numerics.BFloat16Values for BFloat16). The DSL's typing rules stay
in values.py and friends; this file holds only what each IR op does, as
codegen/lowering.cpp and codegen/cpu/ lower it for the CPU.
"""

import functools
import re
import sys

import numpy as np

from .. import _core
from ..core import dtypes, fp8
from ..core.errors import KernelError
from ..core import fp8 as fp8_values  # the module, where mma's parameter `fp8` hides its name
from ..core.user_code import user_line
from ..drivers import targets
from . import numerics

A = _core.Arith
K = _core.AtomicOp
P = _core.Predicate
S = _core.Scalar

# (exp2_approx: the CPU computes it as exp2, exactly)
_MATH = {A.exp: "exp", A.exp2: "exp2", A.exp2_approx: "exp2", A.log: "log", A.log2: "log2", A.sqrt: "sqrt",
         A.rsqrt: "rsqrt"}
_LIBRARY = {A.sin: "sin", A.cos: "cos", A.tanh: "tanh", A.erf: "erf", A.pow: "pow"}
_ATOMIC_ARITH = {K.add: A.add, K.sub: A.sub, K.min: A.min, K.max: A.max, K.bit_and: A.bit_and,
                 K.bit_or: A.bit_or, K.bit_xor: A.bit_xor}
# A conversion of the C formats fx.printf writes (or a %%), its "ll" left out for Python.
_PRINT_SPEC = re.compile(r"%(?P<body>[-+ #0]*\d*(?:\.\d*)?)(?:ll)?(?P<kind>[diuoxXeEfFgG%])")
_COMPARE = {P.eq: np.equal, P.ne: np.not_equal, P.lt: np.less, P.le: np.less_equal, P.gt: np.greater,
            P.ge: np.greater_equal}


@functools.lru_cache(maxsize=None)
def _numpy_type(kind):
    """The numpy type a value of IR scalar `kind` is held in."""
    if kind == S.bf16:
        return np.dtype(np.float32)
    return np.dtype(dtypes.from_scalar(kind).numpy_dtype.str)


@functools.lru_cache(maxsize=None)
def _fused_multiply_add():
    """Whether LLVM fuses llvm.fmuladd (the inline math's) on this CPU."""
    return "+fma" in targets.cpu(32).features.split(",")


def _finish(result, like):
    """`result` as the type of `like`: a scalar for a 0-d result, BFloat16
    rounded where `like` is BFloat16."""
    if numerics.is_bfloat16(like):
        return numerics.to_bfloat16(result)
    return np.asarray(result, np.asarray(like).dtype)[()]


def _integer_divide(kind, a, b):
    """sdiv / udiv / srem / urem that never trap (lowering.cpp: safe_divisor):
    x / 0 and x % 0 are 0; MIN / -1 wraps to MIN."""
    a, b = np.asarray(a), np.asarray(b)
    by_zero = b == 0
    trap = by_zero
    if a.dtype.kind == "i":
        trap = trap | ((a == np.iinfo(a.dtype).min) & (b == -1))
    divisor = np.where(trap, 1, b).astype(a.dtype)
    remainder = np.fmod(a, divisor)  # C's %: the sign of the dividend
    if kind == A.rem:
        out = remainder
    else:
        out = (a - remainder) // divisor  # exact, so flooring is truncating
    return np.where(by_zero, 0, out).astype(a.dtype)[()]


def _shift(kind, a, b):
    """Shifts by the width or more give 0 (or the sign fill), as lowering.cpp makes them."""
    a, b = np.asarray(a), np.asarray(b)
    width = a.dtype.itemsize * 8
    too_far = b.astype(a.dtype.str.replace("i", "u")) >= width
    amount = np.where(too_far, 0, b).astype(a.dtype)
    if kind == A.shl:
        return np.where(too_far, 0, np.left_shift(a, amount)).astype(a.dtype)[()]
    fill = np.right_shift(a, width - 1) if a.dtype.kind == "i" else np.zeros_like(a)
    return np.where(too_far, fill, np.right_shift(a, amount)).astype(a.dtype)[()]


def _float_to_int(x, to):
    """llvm.fptosi.sat / fptoui.sat: truncation, saturating; NaN gives 0."""
    wide = np.trunc(np.asarray(x, np.float64))
    info = np.iinfo(to)
    low, high = float(info.min), float(info.max) + 1.0  # both exact in float64
    inside = np.where(np.isnan(wide) | (wide < low) | (wide >= high), 0.0, wide).astype(to)
    out = np.where(wide >= high, np.array(info.max, to), np.where(wide < low, np.array(info.min, to), inside))
    return out.astype(to)[()]


def cast(x, kind):
    """lowering.cpp's cast to IR scalar `kind`, lane by lane."""
    source = np.asarray(x)
    to = _numpy_type(kind)
    from_float = source.dtype.kind == "f"
    if kind == S.i1:
        return (source != 0)[()]  # floats: unordered-not-equal, so NaN is true
    if kind == S.bf16:
        return numerics.to_bfloat16(source if from_float else source.astype(np.float64))
    if to.kind == "f":
        return source.astype(to)[()]
    if from_float:
        return _float_to_int(source, to)
    return source.astype(to)[()]  # integers: sign- or zero-extend as the source is signed, or truncate


def bitcast(x, kind):
    source = np.asarray(x)
    if numerics.is_bfloat16(x):
        source = numerics.bfloat16_bits(x)
    if kind == S.bf16:
        return numerics.bfloat16_from_bits(source.view(np.uint16))[()]
    return source.view(_numpy_type(kind))[()]


def _pack(fp8):
    """k per 32-bit word of an MMA fragment: 4 for FP8, else 2."""
    return 4 if fp8 is not None and fp8 != _core.FP8Format.none else 2


# Where an exact MMA's operands live (matrix.py's layouts): (lane, element)
# of A[row][k] and B[k][column] for result i of a lane, in NVIDIA's warp of 32
# (result i of lane 4g + t is row g + 8 (i // 2), column 2t + i % 2; a word
# holds p consecutive k) and MFMA's wave of 64 (lane l: row l % 16 of A,
# column l % 16 of B, four k from 4 (l // 16), rows 4 (l // 16) + i of C).
def _warp_a_at(p):
    return lambda lane, i, k: (4 * (lane // 4) + (k % (4 * p)) // p, (k % p) + p * (i // 2) + 2 * p * (k // (4 * p)))


def _warp_b_at(p):
    return lambda lane, i, k: (4 * (2 * (lane % 4) + i % 2) + (k % (4 * p)) // p, (k % p) + p * (k // (4 * p)))


def _wave_a_at(lane, i, k):
    return 4 * (lane // 16) + i + 16 * (k // 4), k % 4


def _wave_b_at(lane, i, k):
    return lane % 16 + 16 * (k // 4), k % 4


class EagerBuilder:
    """Computes ops as they are called. `thread` is the GPU thread running
    (block_threads.GpuThread), None in a launcher's host code."""

    def __init__(self, thread=None):
        self.thread = thread
        # Shared arrays this thread's async copies write that no wait retired yet: for each, the
        # groups committed after its newest copy (the compiler's rule, ir/async_copies.cpp).
        self._in_flight = {}

    def _gpu(self, what):
        if self.thread is None:
            raise RuntimeError(f"{what} only exists inside a @flyc.kernel")
        return self.thread

    # -- values ------------------------------------------------------------------

    def set_file(self, filename):
        pass  # interpreted code keeps its own frames: nothing to point at

    def constant_int(self, ir_type, value, line):
        if ir_type.kind == S.i1:
            return np.bool_(value)
        return np.int64(value).astype(_numpy_type(ir_type.kind))[()]

    def constant_float(self, ir_type, value, line):
        if ir_type.kind == S.bf16:
            return numerics.to_bfloat16(np.float64(value))
        return _numpy_type(ir_type.kind).type(value)

    def broadcast(self, x, lanes, line):
        out = np.full(lanes, x, np.asarray(x).dtype)
        return out.view(numerics.BFloat16Values) if numerics.is_bfloat16(x) else out

    def extract(self, vector, lane, line):
        return _finish(vector[lane], vector)

    def insert(self, vector, element, lane, line):
        out = vector.copy()
        out[lane] = element
        return out

    def reduce(self, kind, vector, line):
        """In lane order, as lowering.cpp's reductions (a float sum starts at -0)."""
        combine = {A.add: np.add, A.max: self._maximum, A.min: self._minimum}[kind]
        floats = np.asarray(vector).dtype.kind == "f"
        total = _finish(np.asarray(-0.0 if floats and kind == A.add else vector[0], vector.dtype), vector)
        for lane in range(0 if floats and kind == A.add else 1, len(vector)):
            total = _finish(combine(total, vector[lane]), vector)
        return total

    # -- arithmetic ----------------------------------------------------------------

    @staticmethod
    def _minimum(a, b):
        return numerics.minimum(a, b) if np.asarray(a).dtype.kind == "f" else np.minimum(a, b)

    @staticmethod
    def _maximum(a, b):
        return numerics.maximum(a, b) if np.asarray(a).dtype.kind == "f" else np.maximum(a, b)

    def binary(self, kind, a, b, line):
        floats = np.asarray(a).dtype.kind == "f"
        if kind in (A.div, A.rem) and not floats:
            return _integer_divide(kind, a, b)
        if kind in (A.shl, A.shr):
            return _shift(kind, a, b)
        if kind == A.min:
            return _finish(self._minimum(a, b), a)
        if kind == A.max:
            return _finish(self._maximum(a, b), a)
        if kind == A.pow:
            return numerics.library_function("pow", a, b)
        operation = {A.add: np.add, A.sub: np.subtract, A.mul: np.multiply, A.div: np.true_divide,
                     A.rem: np.fmod, A.bit_and: np.bitwise_and, A.bit_or: np.bitwise_or,
                     A.bit_xor: np.bitwise_xor}[kind]
        return _finish(operation(a, b), a)

    def unary(self, kind, x, line):
        if kind in _MATH:
            return numerics.math_function(_MATH[kind], x, _fused_multiply_add())
        if kind in _LIBRARY:
            return numerics.library_function(_LIBRARY[kind], x)
        operation = {A.neg: np.negative, A.bit_not: np.invert, A.abs: np.abs, A.floor: np.floor,
                     A.ceil: np.ceil}[kind]
        return _finish(operation(x), x)

    def fma(self, a, b, c, line):
        if np.asarray(a).dtype.kind == "f":
            return numerics.fma(a, b, c)
        return _finish(a * b + c, a)

    def compare(self, predicate, a, b, line):
        return np.asarray(_COMPARE[predicate](a, b))[()]

    def select(self, condition, if_true, if_false, line):
        return _finish(np.where(condition, if_true, if_false), if_true)

    def cast(self, x, ir_type, line):
        return cast(x, ir_type.kind)

    def bitcast(self, x, ir_type, line):
        return bitcast(x, ir_type.kind)

    def decode_fp8(self, codes, ir_type, fmt, line):
        """Exactly as fp8.dequantize, the host helper the compiled decode follows."""
        decoded = fp8.dequantize(codes, fmt.name)
        return cast(decoded, ir_type.kind) if ir_type.kind != S.f32 else decoded[()]

    # -- memory ----------------------------------------------------------------------

    def load(self, pointer, offset, line):
        self._landed(pointer, "reads")
        return pointer.load(offset)

    def load_vector(self, pointer, offset, lanes, line, align=0):
        self._landed(pointer, "reads")
        return pointer.load(offset, lanes)

    def store(self, pointer, offset, value, line, align=0):
        self._landed(pointer, "writes")
        pointer.store(offset, value)

    def atomic(self, kind, pointer, offset, value, scope, order, line):
        """A read-modify-write: the threads take turns, so a plain read and
        write is atomic; the new value is what binary() computes, as the CPU
        target's atomicrmw does."""
        self._landed(pointer, "writes")
        old = pointer.load(offset)
        pointer.store(offset, value if kind == K.xchg else self.binary(_ATOMIC_ARITH[kind], old, value, line))
        return old

    def atomic_cas(self, pointer, offset, compare, value, scope, order, line):
        self._landed(pointer, "writes")
        old = pointer.load(offset)
        success = np.bool_(old == compare)
        if success:
            pointer.store(offset, value)
        return old, success

    def fence(self, scope, order, line):
        pass  # one thread runs at a time: every access is already ordered

    def async_copy(self, dst, dst_offset, src, src_offset, lanes, align, fill, line):
        """Lands at once, as on the CPU target; the array is remembered as
        in flight until a wait retires the copy."""
        self._gpu("fx.async_copy")
        if fill:
            dst.store(dst_offset, src.load(src_offset, lanes))
        else:
            dst.clear(dst_offset, lanes)
        self._in_flight[dst] = 0

    def wait_for_prior_grids(self, line):
        self._gpu("fx.wait_for_prior_grids")  # launches run one after another here: nothing to wait for

    def launch_dependents(self, line):
        self._gpu("fx.launch_dependents")

    def async_commit(self, line):
        self._in_flight = {array: commits + 1 for array, commits in self._in_flight.items()}

    def async_wait(self, pending, line):
        self._in_flight = {array: commits for array, commits in self._in_flight.items() if commits <= pending}

    def _landed(self, pointer, how):
        commits = self._in_flight.get(pointer)
        if commits is None:
            return
        needed = "fx.async_commit() and then fx.async_wait(0)" if commits == 0 else \
            f"fx.async_wait({commits - 1}) or fewer pending"
        raise KernelError(f"this {how} a shared array before the thread's async copy into it has landed; it needs "
                          f"{needed} first", *user_line())

    def shared(self, kind, size_bytes, line):
        thread = self._gpu("shared memory")
        return thread.block.shared_array(thread, dtypes.from_scalar(kind), size_bytes)

    def dynamic_shared(self, kind, line):
        return self._gpu("shared memory").block.dynamic_shared(dtypes.from_scalar(kind))

    def report(self, message, values, line):
        """A failed bounds check: raised at once, where the compiled launch
        would skip the access, finish and then raise the same IndexError."""
        text = message
        for value in values:
            text = text.replace("{}", str(int(value)), 1)
        raise IndexError(text)

    def print(self, format, values, line):
        """fx.printf: the C format (language/printing.py wrote it) through
        Python's %, which formats as C does; written at once, as this thread
        reaches it."""
        specs = [m for m in _PRINT_SPEC.finditer(format) if m["kind"] != "%"]
        arguments = []
        for spec, value in zip(specs, values):
            if spec["kind"] in "eEfFgG":
                arguments.append(float(value))
            else:
                arguments.append(int(value) & (2**64 - 1) if spec["kind"] in "uoxX" else int(value))
        python_format = _PRINT_SPEC.sub(lambda m: "%" + m["body"] + m["kind"], format)
        sys.stdout.write(python_format % tuple(arguments))

    # -- threads -----------------------------------------------------------------------

    def special(self, which, dim, line):
        return np.int32(self._gpu("fx.thread_idx and friends").special(which, dim))

    def barrier(self, line):
        self._gpu("fx.barrier").exchange("fx.barrier()", None)

    def shuffle(self, value, source, line):
        """CPU target semantics (cpu_codegen.cpp: value_of_thread): the value
        of block-linear thread `source`, or this thread's own when no such thread is."""
        thread = self._gpu("a warp shuffle")
        values = thread.exchange("a warp shuffle", value)
        source = int(source)
        return values[source] if 0 <= source < len(values) else value

    def mma(self, a, b, c, line, fp8=None, layout=None):
        """cpu_codegen.cpp's emit_mma and emit_wave_mma: per lane of a warp
        of 32 (NVIDIA's layout) or a wave of 64 (MFMA's), products of
        Float16 / BFloat16 (or, `fp8` their format, FP8) fragments exact in
        float32, summed in order of k."""
        thread = self._gpu("fx.mma")
        fragments = thread.exchange("fx.mma", (a, b))
        pack = _pack(fp8)
        if layout == _core.MMALayout.wave:
            lanes, steps, a_at, b_at = 64, 16, _wave_a_at, _wave_b_at
        else:
            lanes, steps, a_at, b_at = 32, 8 * pack, _warp_a_at(pack), _warp_b_at(pack)
        tid = thread.linear
        lane = tid % lanes
        group = tid - lane

        def element(which, at):
            holder, index = group + at[0], at[1]
            fragment = fragments[holder][which] if 0 <= holder < len(fragments) else (a, b)[which]
            if pack == 4:
                return fp8_values.dequantize(np.asarray(fragment[index], np.uint8), fp8.name)[()]
            return np.float32(fragment[index])

        d = np.array(c, np.float32)
        for i in range(4):
            total = np.float32(c[i])
            for k in range(steps):
                total = np.float32(total + element(0, a_at(lane, i, k)) * element(1, b_at(lane, i, k)))
            d[i] = total
        return d

