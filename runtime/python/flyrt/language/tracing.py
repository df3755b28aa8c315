"""The trace in progress: which module and function ops go into, and where
in the user's source each op comes from."""

import threading

from .. import _core
from ..core.user_code import user_frame

_state = threading.local()


class Trace:
    """One launcher being traced into one IR module, for one target."""

    eager = False  # interpret.launch.Interpretation: ops computed at once, no IR

    def __init__(self, name, target, recorder):
        self.launcher_name = name
        self.module = _core.Module(name)
        self.target = target  # a _core.Target: what the kernels run on
        self.builders = []  # function builders, innermost last
        self.kernels = {}  # (kernel, signature) -> traced kernel name
        self.kernel_stores = {}  # traced kernel name -> its tensor parameters stored into
        self.names = set()
        self.files = {}  # id(builder) -> file its ops currently come from
        self.recorder = recorder  # what the traced code reads and runs (dependencies.Recorder)
        self.nesting = {}  # helper -> how many calls of it are running (reads.call)

    def unique_name(self, base):
        name, n = base, 1
        while name in self.names:
            n += 1
            name = f"{base}_{n}"
        self.names.add(name)
        return name

    @property
    def builder(self):
        return self.builders[-1]

    def launch_kernel(self, pending, grid, block, smem, stream):
        """A kernel launched in traced code: emitted into this trace's IR."""
        return pending.emit_launch(self, grid, block, smem, stream)


def current():
    """The active trace; raises when DSL values are used outside one."""
    trace = getattr(_state, "trace", None)
    if trace is None:
        raise RuntimeError("flyrt DSL operations only work inside a @flyc.kernel or @flyc.jit function")
    return trace


def active():
    return getattr(_state, "trace", None)


def interpreting():
    """Whether DSL ops on this thread compute values now (interpreter mode)
    rather than emit IR."""
    trace = getattr(_state, "trace", None)
    return trace is not None and trace.eager


class tracing:
    """Context manager making `trace` the active one (nesting restores)."""

    def __init__(self, trace):
        self.trace = trace

    def __enter__(self):
        self.previous = getattr(_state, "trace", None)
        _state.trace = self.trace
        _core.set_tracing(True)
        return self.trace

    def __exit__(self, *exc):
        _state.trace = self.previous
        _core.set_tracing(self.previous is not None)
        return False


def line():
    """Source line for the next op; also points the builder at the file."""
    trace = current()
    if trace.eager:
        return 0  # interpreted ops need no line: errors carry the user's own frames
    frame = user_frame()
    if frame is None:
        return 0
    builder = trace.builder
    filename = frame.f_code.co_filename
    if trace.files.get(id(builder)) != filename:
        trace.files[id(builder)] = filename
        builder.set_file(filename)
    return frame.f_lineno
