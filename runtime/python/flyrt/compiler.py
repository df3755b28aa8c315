"""The DSL's decorators, as kernels use them: ``import flyrt.compiler as flyc``."""

from .compile_log import compile_log  # noqa: F401
from .errors import KernelError  # noqa: F401
from .factories import StaleLauncherError, compile_cache  # noqa: F401
from .kernel import KernelFunction
from .launcher import JitFunction, jit  # noqa: F401


def kernel(fn=None, *, known_block_size=None, name=None):
    """Decorator: a function every thread of a launch runs."""
    if fn is None:
        return lambda f: KernelFunction(f, known_block_size=known_block_size, name=name)
    return KernelFunction(fn, known_block_size=known_block_size, name=name)
