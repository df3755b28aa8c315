"""Python side of the xflydsl Jupyter kernel: the shell the C++ interpreter drives."""

from ._version import __version__
from .cell_hooks import hooks

__all__ = ["__version__", "hooks"]
