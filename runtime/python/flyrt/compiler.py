"""The DSL's decorators, as kernels use them: ``import flyrt.compiler as flyc``."""

from .compile_log import compile_log  # noqa: F401
from .errors import KernelError  # noqa: F401
from .factories import StaleLauncherError, compile_cache  # noqa: F401
from .kernel import KernelFunction
from .launcher import JitFunction, jit  # noqa: F401


def kernel(fn=None, *, known_block_size=None, name=None, min_blocks_per_sm=0):
    """Decorator: a function every thread of a launch runs. `known_block_size`
    compiles in the block size (launches must use it); `min_blocks_per_sm`
    asks GPUs to hold that many blocks per multiprocessor at once (CUDA's
    __launch_bounds__: fewer registers each, more latency hidden)."""
    def make(f):
        return KernelFunction(f, known_block_size=known_block_size, name=name, min_blocks_per_sm=min_blocks_per_sm)

    return make if fn is None else make(fn)
