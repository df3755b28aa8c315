"""The Python half of the kernel's debugger (the C++ half is
``xeus_flydsl/src/debugger.cpp``): debugpy in the thread that runs the cells,
and the answers that need the user's namespace while no thread is stopped.
"""

import ast
import sys
import threading

from IPython.core.inputtransformer2 import leading_empty_lines

# Stepping skips these: the kernel's shell and IPython around every cell, and
# flyrt's runtime around every kernel (its interpreter mode included).
_SKIPPED_MODULES = ("xflydsl_shell", "xeus_python_shell", "IPython", "flyrt")


class DebugSession:
    def __init__(self, shell):
        self.shell = shell
        self.listening = False
        self._explorer = None

    def listen(self, host, port):
        """Start debugpy's adapter, once per process, in the calling thread
        (the shell's): debugpy traces the thread that calls ``listen``."""
        import debugpy
        from xeus_python_shell.debugger import XDebugger

        debugpy.configure(python=sys.executable, subProcess=False)
        debugpy.listen((host, port))
        self._explorer = XDebugger()
        # Breakpoints are set on the cell as typed: its leading empty lines
        # must keep their line numbers.
        transforms = self.shell.input_transformer_manager.cleanup_transforms
        if leading_empty_lines in transforms:
            transforms.remove(leading_empty_lines)
        self.listening = True

    def after_cell(self):
        """An interrupt while stopped at a breakpoint ends the cell from inside
        debugpy's wait loop, which leaves the thread marked suspended (the
        next cell would hang) and untraced: mark it running, trace it again."""
        if not self.listening:
            return
        import debugpy
        from _pydevd_bundle.pydevd_additional_thread_info import set_additional_thread_info
        from _pydevd_bundle.pydevd_constants import STATE_RUN, STATE_SUSPEND

        info = set_additional_thread_info(threading.current_thread())
        if info.pydev_state == STATE_SUSPEND:
            info.pydev_state = STATE_RUN
            info.pydev_step_cmd = info.pydev_original_step_cmd = -1
            info.pydev_step_stop = None
        debugpy.trace_this_thread(True)

    @staticmethod
    def skip_rules():
        return [{"module": name, "include": False} for name in _SKIPPED_MODULES]

    # -- variables while no thread is stopped: the user's namespace --------

    def inspect_variables(self, message):
        return self._explorer.inspect_variables(message)

    def variables(self, message):
        return self._explorer.variables(message)

    def filter_variables(self, message, reply):
        """debugpy's answer without IPython's bookkeeping names (In, Out, _i1...)."""
        if not reply.get("success", False):
            return reply
        return self._explorer.build_variables_response(message, reply["body"]["variables"])

    @staticmethod
    def copy_to_globals_request(message):
        """The setExpression request that binds a stopped frame's variable in
        that frame's globals (JupyterLab's "Copy to Globals"), or None for a
        name that is not an identifier."""
        arguments = message["arguments"]
        target, source = arguments["dstVariableName"], arguments["srcVariableName"]
        if not (target.isidentifier() and source.isidentifier()):
            return None
        return {
            "type": "request",
            "command": "setExpression",
            "seq": message["seq"] + 1,
            "arguments": {"expression": f"globals()[{target!r}]", "value": source, "frameId": arguments["srcFrameId"]},
        }

    @staticmethod
    def modules(message):
        """The modules loaded from Python files, a page of them as asked
        (JupyterLab's Kernel Sources panel, whose sources take breakpoints)."""
        loaded = [(name, path) for name, path in ((m.__name__, _python_file(m)) for m in list(sys.modules.values()))
                  if path]
        arguments = message.get("arguments", {})
        start = arguments.get("startModule", 0)
        count = arguments.get("moduleCount") or len(loaded)
        page = [{"id": start + i, "name": name, "path": path}
                for i, (name, path) in enumerate(loaded[start:start + count])]
        return {
            "type": "response",
            "request_seq": message["seq"],
            "success": True,
            "command": message["command"],
            "body": {"modules": page, "totalModules": len(loaded)},
        }

    # -- rich rendering (JupyterLab's variable renderer) --------------------

    def rich_inspect(self, message):
        name = message["arguments"]["variableName"]
        if not name.isidentifier() or name not in self.shell.user_ns:
            return _rich_reply(message, {}, {}, success=False)
        data, metadata = self.shell.display_formatter.format(self.shell.user_ns[name])
        return _rich_reply(message, data, metadata)

    @staticmethod
    def rich_evaluate_request(message):
        """The evaluate request that formats the variable in the stopped
        frame, or None for a name that is not a variable."""
        name = message["arguments"]["variableName"]
        if not name.isidentifier():
            return None
        return {
            "type": "request",
            "command": "evaluate",
            "seq": message["seq"] + 1,
            "arguments": {
                "expression": f"get_ipython().display_formatter.format({name})",
                "frameId": message["arguments"]["frameId"],
                "context": "clipboard",
            },
        }

    @staticmethod
    def rich_inspect_reply(message, evaluated):
        if not evaluated or not evaluated.get("success", False):
            return _rich_reply(message, {}, {}, success=False)
        try:
            data, metadata = ast.literal_eval(evaluated["body"]["result"])
        except (ValueError, SyntaxError, TypeError):
            return _rich_reply(message, {}, {}, success=False)
        return _rich_reply(message, data, metadata)


def _python_file(module):
    try:
        origin = getattr(getattr(module, "__spec__", None), "origin", None)
    except Exception:  # noqa: BLE001  a lazy module's __getattr__ may raise anything
        return None
    return origin if isinstance(origin, str) and origin.endswith(".py") else None


def _rich_reply(message, data, metadata, success=True):
    return {
        "type": "response",
        "request_seq": message["seq"],
        "success": success,
        "command": message["command"],
        "body": {"data": data, "metadata": metadata},
    }
