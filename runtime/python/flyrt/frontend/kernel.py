"""``@flyc.kernel``: a function run by every thread of a launch.

Calling a kernel inside a launcher's trace binds its arguments; ``.launch``
traces the kernel for those argument types (once per trace and signature)
and emits the launch into the launcher."""

import functools
import inspect
import operator

from .. import _core
from ..core import dtypes
from ..core.errors import KernelError
from ..core.specialization import ConstSpec, ScalarSpec, TensorSpec
from ..core.user_code import user_line
from ..language import tensor
from ..language.annotations import Stream, Tensor, is_constexpr
from ..language.reads import number
from ..language.tracing import active, current, line
from ..language.values import Value, constant, convert, select
from .rewriting import rewrite


class KernelFunction:
    def __init__(self, fn, known_block_size=None, name=None, min_blocks_per_sm=0):
        functools.update_wrapper(self, fn)
        self.fn = fn
        self.name = name or fn.__name__
        self.signature = inspect.signature(fn)
        self.known_block_size = _dim3(known_block_size) if known_block_size else (0, 0, 0)
        self.min_blocks_per_sm = _blocks_per_target(min_blocks_per_sm, self.name)

    def __call__(self, *args, **kwargs):
        if active() is None:
            raise RuntimeError(f"kernel {self.name} can only be launched from a @flyc.jit launcher")
        bound = self.signature.bind(*args, **kwargs)
        bound.apply_defaults()
        return PendingLaunch(self, bound.arguments)

    def __repr__(self):
        return f"<flyrt kernel {self.name}>"


class PendingLaunch:
    """A kernel bound to arguments, waiting for its launch geometry."""

    def __init__(self, kernel, arguments):
        self.kernel = kernel
        self.arguments = arguments
        self.min_blocks_per_sm = kernel.min_blocks_per_sm

    def launch(self, grid=(1, 1, 1), block=(1, 1, 1), smem=0, stream=None, min_blocks_per_sm=None):
        """`min_blocks_per_sm`: this launch's occupancy hint, in place of the
        kernel's (a variant its Constexpr arguments make may need another
        register budget); the kernel compiles for each hint it is given."""
        if min_blocks_per_sm is not None:
            self.min_blocks_per_sm = _blocks_per_target(min_blocks_per_sm, self.kernel.name)
        # The launch protocol: the active trace emits it (emit_launch), an
        # interpretation runs it; the language names neither.
        return current().launch_kernel(self, grid, block, smem, stream)

    def emit_launch(self, trace, grid, block, smem, stream):
        """The launch into `trace`'s IR (Trace.launch_kernel)."""
        where = line()
        params, natives, signature = self._classify()
        known_block = self.kernel.known_block_size
        if known_block == (0, 0, 0) and all(type(b) is int for b in _dim3(block)):
            # A block fixed where it is launched: compiled for it (thread
            # indices get their true range, so the compiler drops bounds
            # checks it proves, and the CPU's thread loops their trip counts).
            known_block = _dim3(block)
        specialization = (self.kernel, signature, known_block, tuple(sorted(self.min_blocks_per_sm.items())))
        name = trace.kernels.get(specialization)
        if name is None:
            name = self._trace(trace, params, specialization)
        for pname in trace.kernel_stores[name]:
            self.arguments[pname].written = True  # the launcher's tensor: its artifact writes it
        geometry = [v.id for v in launch_sizes(f"launcher {trace.launcher_name}: kernel {self.kernel.name}", grid,
                                               block, smem)]
        trace.builder.launch(name, geometry + [check_stream(stream).id], natives, where)

    def _classify(self):
        """Per parameter: how the kernel receives it (a TensorSpec, ScalarSpec
        or ConstSpec, as a launcher's parameters are specialized), its native
        values in the launcher, and a hashable signature of the whole call."""
        params, natives, signature = [], [], []
        for pname, value in self.arguments.items():
            annotation = self.kernel.signature.parameters[pname].annotation
            if isinstance(value, tensor.TensorValue):
                spec = TensorSpec(value.dtype, value.ndim, value.contiguous, value.index_bits, value.base_align,
                                  value.stride_multiple)
                natives.extend(value.native)
            elif is_constexpr(annotation) or annotation is Stream or isinstance(value, Stream):
                if isinstance(value, Value):
                    raise TypeError(f"kernel {self.kernel.name}: '{pname}' is a Constexpr but got a traced value")
                spec = ConstSpec(value)
            elif isinstance(value, Value) or isinstance(annotation, dtypes.DType):
                dtype = annotation if isinstance(annotation, dtypes.DType) else value.dtype
                spec = ScalarSpec(dtype)
                natives.append(convert(value, dtype).id)
            elif annotation is Tensor:
                raise TypeError(f"kernel {self.kernel.name}: '{pname}' must be a tensor, got {type(value).__name__}")
            else:
                spec = ConstSpec(value)  # other Python values are compiled in, as Constexpr
            params.append(spec)
            # A constant by its type and value: 1 and True are equal, and their kernels are not.
            signature.append(("const", type(value).__name__, _hashable(value)) if isinstance(spec, ConstSpec)
                             else spec)
        return params, natives, tuple(signature)

    def kernel_arguments(self, params, ids):
        """The kernel's arguments as its function receives them, from its
        parameters' values `ids` (traced parameters, or interpreted values)."""
        ids = list(ids)
        args = {}
        for pname, spec in zip(self.arguments, params):
            if isinstance(spec, TensorSpec):
                count = 1 + 2 * spec.ndim
                args[pname] = tensor.TensorValue(pname, spec.dtype, ids[:count], spec.contiguous, spec.index_bits,
                                                 spec.align, spec.stride_multiple)
                ids = ids[count:]
            elif isinstance(spec, ScalarSpec):
                args[pname] = Value(ids.pop(0), spec.dtype)
            else:
                args[pname] = spec.value
        return args

    def _trace(self, trace, params, specialization):
        kernel, known_block = self.kernel, specialization[2]
        name = trace.unique_name(kernel.name)
        types, names = [], []
        for pname, spec in zip(self.arguments, params):
            if isinstance(spec, TensorSpec):
                types.extend(tensor.native_types(spec.dtype, spec.ndim, spec.index_bits))
                names.extend([pname] + [f"{pname}.shape{i}" for i in range(spec.ndim)]
                             + [f"{pname}.stride{i}" for i in range(spec.ndim)])
            elif isinstance(spec, ScalarSpec):
                types.append(spec.dtype.ir_type)
                names.append(pname)
        code = kernel.fn.__code__
        builder = trace.module.add_function(
            name, "kernel", types, names, code.co_filename, code.co_firstlineno, known_block,
            self.min_blocks_per_sm.get(trace.target.name, 0))
        trace.builders.append(builder)
        try:
            args = self.kernel_arguments(params, builder.parameters)
            rewrite(kernel.fn)(**args)
        finally:
            trace.builders.pop()
        trace.kernels[specialization] = name
        trace.kernel_stores[name] = [pname for pname, value in args.items()
                                     if isinstance(value, tensor.TensorValue) and value.written]
        return name


def check_stream(stream):
    """A launch's stream as a traced Int64 handle: None (or fx.Stream(None))
    is the launcher call's own stream."""
    while isinstance(stream, Stream):
        stream = stream.handle
    if stream is None:
        return constant(_DEFAULT_STREAM, dtypes.Int64)
    if isinstance(stream, Value):
        return convert(stream, dtypes.Int64)
    if isinstance(stream, int):
        if not 0 <= stream < 2**64:  # a driver's handle is an address
            raise ValueError(f"stream={stream}: a stream handle is an address, from 0 to 2**64 - 1")
        return constant(stream, dtypes.Int64)
    raise TypeError(f"stream= takes None, an int handle, fx.Stream or a launcher's fx.Stream parameter, not "
                    f"{type(stream).__name__}")


_DEFAULT_STREAM = _core.codes.default_stream  # the stream the launcher call runs on


_LARGEST = 2**31 - 1  # a launch's sizes are 32-bit on every target
_BEYOND_32_BITS = -(2**31)  # launch::size_beyond_32_bits: the launch refuses it, never truncates


def launch_sizes(who, grid, block, smem):
    """A launch's grid, block and smem= as the Int32 values its geometry
    record holds: a Python size past 32 bits is an error now, a traced one
    becomes a value the launch refuses (launch_status.cpp), never a
    truncated size (grid=(1 << 40,) once launched nothing)."""
    named = [f"grid size {axis}" for axis in "xyz"] + [f"block size {axis}" for axis in "xyz"] + ["smem"]
    return [_launch_size(who, what, value)
            for what, value in zip(named, (*_dim3(grid), *_dim3(block), smem))]


def _launch_size(who, what, value):
    if not isinstance(value, Value):
        size = number(value, operator.index)
        if not -_LARGEST <= size <= _LARGEST:
            raise KernelError(f"{who}: {what} = {size} does not fit in 32 bits (a launch takes at most "
                              f"{_LARGEST})", *user_line())
        return constant(size, dtypes.Int32)
    if value.dtype.is_integer and (value.dtype.bits > 32 or (value.dtype.bits == 32 and value.dtype.is_unsigned)):
        wide = convert(value, dtypes.Int64) if not value.dtype.is_unsigned or value.dtype.bits < 64 else value
        outside = select(wide > _LARGEST, True, wide < -_LARGEST)
        return convert(select(outside, _BEYOND_32_BITS, wide), dtypes.Int32)
    return convert(value, dtypes.Int32)


def _dim3(value):
    if isinstance(value, (tuple, list)):
        if not 1 <= len(value) <= 3:
            raise ValueError(f"grid and block take 1 to 3 sizes, got {len(value)}")
        return tuple(value) + (1,) * (3 - len(value))
    return (value, 1, 1)


def _hashable(value):
    try:
        hash(value)
        return value
    except TypeError:
        return repr(value)


_GPU_TARGETS = ("nvptx", "amdgpu")


def _blocks_per_target(blocks, kernel):
    """`min_blocks_per_sm` as {target name: blocks}: one count for every GPU,
    or a count per target (a register budget tuned for one vendor's register
    file can make another's spill)."""
    if isinstance(blocks, dict):
        unknown = sorted(set(blocks) - set(_GPU_TARGETS))
        if unknown:
            raise ValueError(f"kernel {kernel}: min_blocks_per_sm names {unknown}; its keys are GPU targets "
                             f"{list(_GPU_TARGETS)}")
        return {name: operator.index(count) for name, count in blocks.items()}
    count = operator.index(blocks)
    return dict.fromkeys(_GPU_TARGETS, count)
