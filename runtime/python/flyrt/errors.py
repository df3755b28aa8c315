"""Errors that point at the user's kernel source."""


class KernelError(Exception):
    """A kernel or launcher that cannot be compiled, with where it went wrong."""

    def __init__(self, message, filename=None, lineno=None):
        where = f"{filename}:{lineno}: " if filename else ""
        super().__init__(where + message)
        self.filename = filename
        self.lineno = lineno


def raise_at(error, filename, lineno):
    """Raises `error` from a frame at `filename:lineno`, so the traceback's
    last entry shows the user's line."""
    if not filename or not lineno or lineno < 1:
        raise error
    code = compile("\n" * (lineno - 1) + "raise __flyrt_error__", filename, "exec")
    exec(code, {"__flyrt_error__": error})
