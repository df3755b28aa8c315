"""What the C++ interpreter delegates to: one object per kernel process.

Each public method answers one Jupyter request and returns the reply content
as a dict; publishing goes through ``native``, the module the C++ side embeds
(``_xflydsl_kernel``).
"""

import builtins
import getpass
import os
import platform
import sys

from IPython.core.error import StdinNotImplementedError
from IPython.utils.tokenutil import token_at_cursor

from . import comms, perf_watch, runtime_hooks, streams
from ._version import __version__
from .cell_hooks import hooks
from .debugger import DebugSession
from .magics import FlydslMagics
from .shell import create_shell

LANGUAGE_INFO = {
    "name": "python",
    "version": platform.python_version(),
    "mimetype": "text/x-python",
    "file_extension": ".py",
    "pygments_lexer": "ipython3",
    "codemirror_mode": {"name": "ipython", "version": 3},
    "nbconvert_exporter": "python",
}

BANNER = (
    f"xflydsl {__version__}: Python {platform.python_version()} with IPython, "
    "on xeus, for FlyDSL-style GPU kernels\n"
    "Compiled kernels are recompiled when the code they depend on changes.\n"
)


class KernelFacade:
    """Answers the kernel's requests with an IPython shell."""

    def __init__(self, native):
        self._native = native
        self._allow_stdin = False
        sys.stdout = streams.KernelStream(native, "stdout", 1)
        sys.stderr = streams.KernelStream(native, "stderr", 2)
        os.environ.setdefault("MPLBACKEND", "module://matplotlib_inline.backend_inline")
        if "" not in sys.path:
            sys.path.insert(0, "")  # the working directory's modules import, as in ipykernel

        self.shell = create_shell()
        self.shell.kernel = self
        # Cells compile under the file a debugger's dumpCell writes them to.
        self.shell.compile.get_filename = native.cell_file
        self.debugger = DebugSession(self.shell)
        self.shell.display_pub.publish_display_data = self._publish_display_data
        self.shell.display_pub.clear_output = native.clear_output
        self.shell.displayhook.publish_execution_result = native.publish_execution_result
        self.comm_manager = comms.install(native)
        self.hooks = hooks
        runtime_hooks.install(hooks)
        hooks.register_after_cell(perf_watch.after_cell)  # after the sweep: it re-times what that evicted
        self.shell.register_magics(FlydslMagics)
        builtins.input = self._input
        getpass.getpass = self._getpass

    # -- publishing -------------------------------------------------------

    def _publish_display_data(self, data, metadata, transient, update):
        self._native.display_data(data, metadata or {}, transient or {}, bool(update))

    # -- stdin ------------------------------------------------------------

    def _read_stdin(self, prompt, password):
        if not self._allow_stdin:
            raise StdinNotImplementedError(
                "input() was called, but this client does not accept input requests "
                "(allow_stdin is false, as under nbconvert)."
            )
        sys.stdout.flush()
        sys.stderr.flush()
        return self._native.input_request(str(prompt), password)

    def _input(self, prompt=""):
        return self._read_stdin(prompt, False)

    def _getpass(self, prompt="Password: ", stream=None):
        return self._read_stdin(prompt, True)

    # -- requests ---------------------------------------------------------

    def execute(self, code, execution_count, silent, store_history, user_expressions, allow_stdin):
        self._allow_stdin = allow_stdin
        shell = self.shell
        shell.execution_count = execution_count
        shell.last_error = None
        try:
            result = shell.run_cell(code, store_history=store_history, silent=silent)
            error = result.error_before_exec or result.error_in_exec
        except KeyboardInterrupt as interrupt:  # in a post-cell callback: the cell ran, the request stops
            shell.showtraceback()
            error = interrupt
        finally:
            self.debugger.after_cell()

        payload = shell.payload_manager.read_payload()
        shell.payload_manager.clear_payload()
        if error is not None:
            return self._error_reply(error, shell.take_last_error(), silent)
        return {
            "status": "ok",
            "payload": payload,
            "user_expressions": shell.user_expressions(user_expressions or {}),
        }

    def _error_reply(self, error, shown, silent):
        if shown is not None:
            ename, evalue, traceback = type(error).__name__, str(error), shown[2]
        else:  # e.g. a UsageError, which IPython reports on stderr only
            ename, evalue, traceback = type(error).__name__, str(error), []
        if not silent:
            self._native.publish_execution_error(ename, evalue, traceback)
        return {"status": "error", "ename": ename, "evalue": evalue, "traceback": traceback}

    def complete(self, code, cursor_pos):
        if cursor_pos is None or cursor_pos < 0:
            cursor_pos = len(code)
        matches, start, end = self.shell.complete_code(code, cursor_pos)
        return {
            "status": "ok",
            "matches": matches,
            "cursor_start": start,
            "cursor_end": end,
            "metadata": {},
        }

    def inspect(self, code, cursor_pos, detail_level):
        if cursor_pos is None or cursor_pos < 0:
            cursor_pos = len(code)
        name = token_at_cursor(code, cursor_pos)
        reply = {"status": "ok", "found": False, "data": {}, "metadata": {}}
        try:
            bundle = self.shell.object_inspect_mime(name, detail_level=detail_level)
        except KeyError:
            return reply
        if not self.shell.enable_html_pager:
            bundle.pop("text/html", None)
        reply.update(found=True, data=bundle)
        return reply

    def is_complete(self, code):
        status, indent = self.shell.input_transformer_manager.check_complete(code)
        reply = {"status": status}
        if status == "incomplete":
            reply["indent"] = " " * (indent or 0)
        return reply

    def kernel_info(self):
        return {
            "status": "ok",
            "implementation": "xflydsl",
            "implementation_version": __version__,
            "language_info": LANGUAGE_INFO,
            "banner": BANNER,
            "debugger": True,
            "supported_features": ["debugger"],
            "help_links": [
                {"text": "Python", "url": "https://docs.python.org/3.11/"},
                {"text": "IPython", "url": "https://ipython.readthedocs.io/"},
            ],
        }

    def internal_request(self, message):
        """A request from the control thread (xeus's control messenger)."""
        if message.get("debugger") == "listen":
            self.debugger.listen(message["host"], message["port"])
            return {"status": "ok"}
        raise ValueError(f"unknown internal request {message!r}")

    # -- history, answered from IPython's (in-memory) history -------------

    def history_tail(self, n, raw, output):
        entries = self.shell.history_manager.get_tail(n, raw=raw, output=output, include_latest=True)
        return _history_reply(entries)

    def history_range(self, session, start, stop, raw, output):
        manager = self.shell.history_manager
        entries = manager.get_range(session, start, stop, raw=raw, output=output)
        # IPython numbers the current session 0 here but not in get_tail;
        # clients get the real number everywhere.
        current = manager.session_number
        return _history_reply((s or current, line, text) for s, line, text in entries)

    def history_search(self, pattern, raw, output, n, unique):
        entries = self.shell.history_manager.search(pattern, raw=raw, output=output, n=n, unique=unique)
        return _history_reply(entries)

    # -- cell hooks and shutdown ------------------------------------------

    def run_before_cell_hooks(self, code):
        self.hooks.run_before(code)

    def run_after_cell_hooks(self, code, succeeded):
        self.hooks.run_after(code, succeeded)

    def shutdown(self):
        """Run the user's atexit handlers: the process ends without finalizing."""
        import atexit

        self.shell.history_manager.end_session()
        atexit._run_exitfuncs()


def _history_reply(entries):
    return {"status": "ok", "history": [list(entry) for entry in entries]}
