"""``sys.stdout`` / ``sys.stderr`` that publish on the kernel's iopub channel.

Buffering, the lock and the publishing live in C++ (``native``), shared with
the capture of file descriptors 1 and 2, so Python prints, C ``printf`` and
subprocess output reach the client through one ordered, thread-safe path.
"""

import io


class KernelStream(io.TextIOBase):
    """A text stream whose writes go to the kernel's ``name`` stream."""

    def __init__(self, native, name, fileno):
        super().__init__()
        self._native = native
        self._name = name
        self._fileno = fileno

    @property
    def name(self):
        return f"<{self._name}>"

    @property
    def encoding(self):
        return "utf-8"

    @property
    def errors(self):
        return "replace"

    def writable(self):
        return True

    def isatty(self):
        return False

    def fileno(self):
        # fds 1 and 2 are pipes the kernel drains, so os.write(fileno) works.
        return self._fileno

    def write(self, text):
        if not isinstance(text, str):
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        if self.closed:
            raise ValueError("I/O operation on closed stream")
        self._native.stream_write(self._name, text)
        return len(text)

    def flush(self):
        self._native.stream_flush()
