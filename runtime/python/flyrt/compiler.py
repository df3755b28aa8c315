"""The DSL's decorators, as kernels use them: ``import flyrt.compiler as flyc``."""

from .core.errors import KernelError
from .frontend.kernel import KernelFunction
from .invalidation.factories import StaleLauncherError, compile_cache
from .runtime.compile_log import compile_log
from .runtime.launcher import JitFunction, jit
from .tuning.autotuner import AutotuneError, Autotuner, autotune
from .tuning.config import Config


def kernel(fn=None, *, known_block_size=None, name=None, min_blocks_per_sm=0):
    """Decorator: a function every thread of a launch runs. `known_block_size`
    compiles in the block size (launches must use it); `min_blocks_per_sm`
    asks GPUs to hold that many blocks per multiprocessor at once (CUDA's
    __launch_bounds__, AMD's waves per EU: fewer registers each, more
    latency hidden), for every GPU or per target ({"nvptx": 12, "amdgpu": 8})."""
    def make(f):
        return KernelFunction(f, known_block_size=known_block_size, name=name, min_blocks_per_sm=min_blocks_per_sm)

    return make if fn is None else make(fn)
