"""Running a launcher interpreted: its body, then each kernel it launches,
as the user's own Python functions (not rewritten, not traced), on concrete
values through the eager builder. Nothing is compiled, and the launcher's
cache of compiled artifacts is not touched: an interpreted call runs the
live functions, so it is never stale.

Tensors are numpy arrays (and torch CPU tensors, as numpy views); a GPU
tensor is refused, as interpretation reads and writes host memory. Bounds
are always checked here, whatever the compiled mode's setting: an access out
of bounds raises IndexError at once, at the kernel's line.
"""

import numpy as np

from .. import _core
from ..core import dtypes, host_arrays, settings, specialization
from ..drivers import targets
from ..frontend.kernel import check_stream, launch_sizes
from ..language import tensor
from ..language.tracing import active, tracing
from ..language.values import Value, convert
from . import memory
from .block_threads import BlockRunner
from .eager_builder import EagerBuilder

_runner = BlockRunner()


class Interpretation:
    """What the DSL's ops find as the current trace while interpreting: the
    eager builder of this GPU thread (or of the launcher's host code)."""

    eager = True

    def __init__(self, builder, launcher_name):
        self.builder = builder
        self.target = targets.cpu(settings.cpu_warp_size())
        self.launcher_name = launcher_name
        self.files = {}

    def launch_kernel(self, pending, grid, block, smem, stream):
        """A kernel launched in interpreted code: run now, on the host."""
        check_stream(stream)  # the compiled launch's checks of it
        return run_kernel(pending, grid, block, smem)


def run_launcher(launcher, args, kwargs):
    """`launcher(*args, **kwargs)`, interpreted."""
    for name, value in launcher.signature.bind_partial(*args, **kwargs).arguments.items():
        _refuse_device_tensor(name, value)  # before the checks of a CPU launch, which would only say "not on the CPU"
    bound, key = launcher._specialize(args, kwargs, targets.CPU)  # the compiled call's argument checks
    specs = specialization.decode(key, bound)
    arguments = {name: _argument(name, value, spec)
                 for name, value, spec in zip(launcher.signature.parameters, bound, specs)}
    with tracing(Interpretation(EagerBuilder(), launcher.__qualname__)), np.errstate(all="ignore"):
        launcher.fn(**arguments)


def _refuse_device_tensor(name, value):
    device = getattr(value, "__dlpack_device__", None)
    if device is not None and not isinstance(value, np.ndarray) and device()[0] != _core.codes.device_types["host"]:
        raise TypeError(f"argument '{name}': interpreter mode (FLYDSL_INTERPRET) runs kernels on the host and "
                        f"takes numpy arrays or CPU tensors; copy this {type(value).__name__} to the host "
                        "first (tensor.cpu())")


def _argument(name, value, spec):
    if isinstance(spec, specialization.TensorSpec):
        array = value if isinstance(value, np.ndarray) else host_arrays.host_view(value)
        buffer, strides = memory.of_array(array, name)
        index = (dtypes.Int64 if spec.index_bits == 64 else dtypes.Int32).numpy_dtype.type
        native = [buffer] + [index(n) for n in array.shape] + [index(s) for s in strides]
        return tensor.TensorValue(name, spec.dtype, native, spec.contiguous, spec.index_bits, spec.align,
                                  spec.stride_multiple)
    if isinstance(spec, specialization.ScalarSpec):
        return convert(value, spec.dtype) if isinstance(value, Value) else _scalar(value, spec.dtype)
    if isinstance(spec, specialization.StreamSpec):
        while hasattr(value, "handle"):
            value = value.handle
        return Value(np.int64(-1 if value is None else value), dtypes.Int64)
    return value


def _scalar(value, dtype):
    return Value(np.asarray(value).astype(dtype.numpy_dtype)[()], dtype)


def run_kernel(pending, grid, block_size, smem):
    """A kernel launch met while interpreting a launcher: every block, one
    after another, each thread running the kernel's Python function."""
    context = active()
    if context.builder.thread is not None:
        raise RuntimeError(f"kernel {pending.kernel.name} is launched from a kernel: launches belong in a "
                           "@flyc.jit launcher's host code")
    params, natives, _ = pending._classify()
    arguments = pending.kernel_arguments(params, natives)
    who = f"launcher {context.launcher_name}: kernel {pending.kernel.name}"
    sizes = [int(v.id) for v in launch_sizes(who, grid, block_size, smem)]
    grid, block_dim, smem = tuple(sizes[:3]), tuple(sizes[3:6]), sizes[6]
    # the CPU's limits, checked as the CPU launch checks them
    problem = _core.geometry_problem(grid, block_dim, smem, pending.kernel.known_block_size)
    if problem:
        raise RuntimeError(f"launcher {context.launcher_name}: {problem}")
    function, name = pending.kernel.fn, context.launcher_name

    def body(gpu_thread):
        interpretation = Interpretation(EagerBuilder(gpu_thread), name)
        with tracing(interpretation), np.errstate(all="ignore"):
            try:
                function(**arguments)
            except Exception as error:
                _note(error, f"(interpreted: {gpu_thread.name} of kernel {pending.kernel.name})")
                raise

    for z in range(grid[2]):
        for y in range(grid[1]):
            for x in range(grid[0]):
                _runner.run_block(body, (x, y, z), block_dim, grid, smem)


def _note(error, note):
    """PEP 678's note (3.11+); on 3.10, whose tracebacks print no notes, the message's last line."""
    if hasattr(error, "add_note"):
        error.add_note(note)
    elif len(error.args) == 1 and isinstance(error.args[0], str):
        error.args = (f"{error.args[0]}\n{note}",)
