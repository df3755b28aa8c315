"""The IPython shell that runs the cells of the xflydsl kernel.

Built on ``xeus_python_shell``: its shell, display publisher and display hook,
whose callbacks the C++ interpreter injects.  xeus 2.4.1 serves requests
synchronously, so cells run through IPython's own synchronous ``run_cell``
(top-level ``await`` still works through IPython's asyncio runner, and
``asyncio.run`` inside a cell works because no loop is left running).
"""

import sys

from IPython.core.async_helpers import _asyncio_runner
from IPython.core.events import available_events
from IPython.core.interactiveshell import InteractiveShell
from xeus_python_shell.compiler import XCachingCompiler
from xeus_python_shell.display import XDisplayHook, XDisplayPublisher
from xeus_python_shell.shell import XPythonShell

from .interruptible_events import InterruptibleEvents


class FlyShell(XPythonShell):
    """``XPythonShell`` driven synchronously, with an in-memory history."""

    # xeus-python-shell's runner needs a running asyncio loop that xeus 2.4.1
    # does not have; IPython's own runner starts one only for async cells.
    loop_runner = staticmethod(_asyncio_runner)
    run_cell_async = InteractiveShell.run_cell_async

    def init_events(self):
        super().init_events()
        events = InterruptibleEvents(self, available_events)
        events.callbacks = self.events.callbacks  # IPython's own, registered by super()
        self.events = events

    def init_history(self):
        # Parallel kernels must not fight over ~/.ipython's sqlite file.
        self.config.HistoryManager.hist_file = ":memory:"
        super().init_history()

    def ask_exit(self):
        """``exit`` / ``quit``: ask the client to close, as ipykernel does."""
        self.exit_now = True
        self.payload_manager.write_payload({"source": "ask_exit", "keepkernel": False})

    def take_last_error(self):
        """The ``[ename, evalue, traceback]`` of the cell that just ran, once."""
        error = getattr(self, "last_error", None)
        self.last_error = None
        return error


def create_shell(user_ns=None):
    """Build the singleton shell with xeus-python-shell's display classes."""
    shell = FlyShell.instance(
        use_jedi=True,
        # Names cells by their text (see KernelFacade), for the debugger.
        compiler_class=XCachingCompiler,
        display_pub_class=XDisplayPublisher,
        displayhook_class=XDisplayHook,
        user_ns=user_ns if user_ns is not None else {},
    )
    shell.last_error = None
    sys.displayhook = shell.displayhook
    return shell
