"""Compiling and launching: ``@flyc.jit`` launchers, their compile log, the
disk cache and its trust, and warm start from disk."""
