"""The Jupyter debugger protocol on xflydsl, driven as JupyterLab drives it:
DAP requests in `debug_request` messages on the control channel, replies in
`debug_reply`, debugpy's events in `debug_event` messages on IOPub."""

import queue
import time
from pathlib import Path

import pytest
from jupyter_client.kernelspec import KernelSpecManager

REPO = Path(__file__).resolve().parents[2]
TIMEOUT = 30

INITIALIZE = {
    "clientID": "test-client",
    "clientName": "testClient",
    "adapterID": "",
    "pathFormat": "path",
    "linesStartAt1": True,
    "columnsStartAt1": True,
    "supportsVariableType": True,
    "supportsVariablePaging": True,
    "supportsRunInTerminalRequest": True,
    "locale": "en",
}


class DebugClient:
    """A debugger frontend over a KernelSession's jupyter_client."""

    def __init__(self, session):
        self.session = session
        self.kc = session.kc
        self.seq = 0
        self.events = []

    def request(self, command, arguments=None, succeed=True):
        self.seq += 1
        content = {"type": "request", "seq": self.seq, "command": command, "arguments": arguments or {}}
        msg = self.kc.session.msg("debug_request", content)
        self.kc.control_channel.send(msg)
        try:
            reply = self.kc.get_control_msg(timeout=TIMEOUT)
        except queue.Empty:
            raise AssertionError(f"no reply to '{command}' in {TIMEOUT} s (the kernel {self._liveness()})")
        assert reply["msg_type"] == "debug_reply"
        assert reply["parent_header"]["msg_id"] == msg["header"]["msg_id"]
        body = reply["content"]
        assert body["command"] == command and body["request_seq"] == self.seq, body
        if succeed:
            assert body["success"], body
        return body

    def start(self):
        self.request("initialize", INITIALIZE)
        self.request("attach")
        self.request("configurationDone")

    def dump_cell(self, code):
        return self.request("dumpCell", {"code": code})["body"]["sourcePath"]

    def set_breakpoints(self, path, *lines, condition=None):
        breakpoints = [dict({"line": line}, **({"condition": condition} if condition else {})) for line in lines]
        body = self.request("setBreakpoints", {"breakpoints": breakpoints, "source": {"path": str(path)},
                                               "sourceModified": False})["body"]
        assert [b["verified"] for b in body["breakpoints"]] == [True] * len(lines), body
        return body

    def wait_event(self, event, timeout=TIMEOUT):
        """The next `debug_event` named `event` (others are kept in .events)."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            try:
                msg = self.kc.get_iopub_msg(timeout=max(left, 0))
            except queue.Empty:
                raise AssertionError(f"no '{event}' event in {timeout} s (the kernel {self._liveness()}); got "
                                     f"{[e.get('event') for e in self.events]}")
            if msg["msg_type"] != "debug_event":
                continue
            self.events.append(msg["content"])
            if msg["content"].get("event") == event:
                return msg["content"]

    def _liveness(self):
        return "alive" if self.session.km.is_alive() else "dead"

    def stack(self, thread_id):
        frames = self.request("stackTrace", {"threadId": thread_id})["body"]["stackFrames"]
        return [(f["name"], f["line"], f["source"]["path"]) for f in frames], frames

    def local_variables(self, frame_id):
        scopes = self.request("scopes", {"frameId": frame_id})["body"]["scopes"]
        local = next(s for s in scopes if s["name"] == "Locals")
        variables = self.request("variables", {"variablesReference": local["variablesReference"]})
        return {v["name"]: v["value"] for v in variables["body"]["variables"]}

    def execute_reply(self):
        return self.kc.get_shell_msg(timeout=TIMEOUT)["content"]


@pytest.fixture
def debug(fresh_kernel):
    client = DebugClient(fresh_kernel)
    client.start()
    return client


CELL = "def add(a, b):\n    c = a + b\n    return c\n\ntotal = add(2, 3)\nprint('total', total)\n"


def test_kernel_info_advertises_the_debugger(kernel):
    kernel.kc.kernel_info()
    reply = kernel.kc.get_shell_msg(timeout=TIMEOUT)["content"]
    assert reply["debugger"] is True
    assert "debugger" in reply["supported_features"]
    # JupyterLab enables its debugger switch from the kernelspec's metadata.
    assert KernelSpecManager().get_kernel_spec("xflydsl").metadata["debugger"] is True


def test_debug_info_before_the_debugger_starts_names_the_cell_files(fresh_kernel):
    info = DebugClient(fresh_kernel).request("debugInfo")["body"]
    assert info["isStarted"] is False and info["hashMethod"] == "Murmur2"
    assert info["tmpFilePrefix"].endswith("/") and info["tmpFileSuffix"] == ".py"


def test_a_breakpoint_in_a_cell_stops_steps_shows_variables_and_continues(debug):
    path = debug.dump_cell(CELL)
    assert Path(path).read_text() == CELL
    debug.set_breakpoints(path, 2)
    info = debug.request("debugInfo")["body"]
    assert info["isStarted"] and info["breakpoints"] == [{"source": path, "breakpoints": [{"line": 2}]}]

    debug.kc.execute(CELL)
    stopped = debug.wait_event("stopped")
    assert stopped["body"]["reason"] == "breakpoint"
    thread = stopped["body"]["threadId"]
    assert debug.request("debugInfo")["body"]["stoppedThreads"] == [thread]
    names, frames = debug.stack(thread)
    assert names == [("add", 2, path), ("<module>", 5, path)]  # the user's frames only
    assert debug.local_variables(frames[0]["id"]) == {"a": "2", "b": "3"}
    rich = debug.request("richInspectVariables", {"variableName": "a", "frameId": frames[0]["id"]})
    assert rich["body"]["data"]["text/plain"] == "2"

    debug.request("next", {"threadId": thread})
    debug.wait_event("stopped")
    names, frames = debug.stack(thread)
    assert names[0] == ("add", 3, path)
    assert debug.local_variables(frames[0]["id"])["c"] == "5"

    debug.request("continue", {"threadId": thread})
    debug.wait_event("continued")
    assert debug.execute_reply()["status"] == "ok"
    assert debug.request("debugInfo")["body"]["stoppedThreads"] == []
    value, _ = debug.session.execute("total")
    assert value["status"] == "ok"


def test_many_stops_in_one_cell_keep_the_kernel_alive(debug):
    # Every stop of all threads took a path in xeus 2.4.1 that read a missing
    # field of a const message (undefined behaviour): now and then the kernel
    # died at a stop (debugpy_client.cpp).
    code = "def bump(n):\n    return n + 1\n\ncount = 0\nfor _ in range(STOPS):\n    count = bump(count)\n"
    stops = 80
    debug.session.execute(f"STOPS = {stops}")
    debug.set_breakpoints(debug.dump_cell(code), 2)
    debug.kc.execute(code)
    for _ in range(stops):
        stopped = debug.wait_event("stopped")
        assert debug.request("debugInfo")["body"]["stoppedThreads"] == [stopped["body"]["threadId"]]
        debug.request("continue", {"threadId": stopped["body"]["threadId"]})
    assert debug.execute_reply()["status"] == "ok"
    debug.set_breakpoints(debug.dump_cell(code))  # none: the next cell runs through
    value, outputs = debug.session.execute("print(count)")
    assert debug.session.stdout(outputs) == f"{stops}\n"


def test_a_breakpoint_in_a_module_of_the_notebooks_stops_there(debug):
    module = REPO / "notebooks" / "kernels" / "pa_reference.py"
    line = next(n for n, text in enumerate(module.read_text().splitlines(), 1)
                if text.lstrip().startswith("def _gather")) + 1
    debug.set_breakpoints(module, line)
    debug.session.execute(f"import sys\nsys.path.insert(0, {str(REPO / 'notebooks')!r})\n"
                          "from kernels.pa_reference import make_case, pa_decode_reference")
    debug.kc.execute("case = make_case(num_seqs=1, context_length=20)\nref = pa_decode_reference(**case)")
    stopped = debug.wait_event("stopped")
    names, frames = debug.stack(stopped["body"]["threadId"])
    assert names[0] == ("_gather", line, str(module))
    assert "block_size" in debug.local_variables(frames[0]["id"])
    debug.request("setBreakpoints", {"breakpoints": [], "source": {"path": str(module)}})  # _gather runs twice
    debug.request("continue", {"threadId": stopped["body"]["threadId"]})
    reply = debug.execute_reply()
    assert reply["status"] == "ok", reply


def test_an_interrupt_while_stopped_ends_the_cell_and_the_kernel_keeps_debugging(debug):
    debug.session.execute("kept = 41")
    code = "x = 1\ny = kept + x\n"
    debug.set_breakpoints(debug.dump_cell(code), 2)
    # Not stop_on_error (jupyter_client's default): after its error reply xeus aborts the shell
    # requests queued by then, which under load was the next execute below.
    debug.kc.execute(code, stop_on_error=False)
    debug.wait_event("stopped")
    debug.session.km.interrupt_kernel()
    reply = debug.execute_reply()
    assert reply["status"] == "error" and reply["ename"] == "KeyboardInterrupt"
    assert debug.request("debugInfo")["body"]["stoppedThreads"] == []

    debug.kc.execute(code)  # stops again: the thread is traced, not left suspended
    stopped = debug.wait_event("stopped")
    debug.request("continue", {"threadId": stopped["body"]["threadId"]})
    assert debug.execute_reply()["status"] == "ok"
    value, outputs = debug.session.execute("print(y)")
    assert debug.session.stdout(outputs) == "42\n"


def test_turning_the_debugger_off_and_on_again(debug):
    code = "p = 1\nq = p + 1\nr = q + 1\n"
    path = debug.dump_cell(code)
    debug.set_breakpoints(path, 2)
    debug.kc.execute(code)
    debug.wait_event("stopped")
    debug.request("disconnect", {"restart": False, "terminateDebuggee": True})  # as JupyterLab sends it
    assert debug.execute_reply()["status"] == "ok"  # resumed: the cell finished
    assert debug.request("debugInfo")["body"]["isStarted"] is False
    reply, _ = debug.session.execute(code)  # no breakpoint is left behind
    assert reply["status"] == "ok"

    debug.start()
    debug.set_breakpoints(path, 3)
    debug.kc.execute(code)
    stopped = debug.wait_event("stopped")
    assert debug.stack(stopped["body"]["threadId"])[0][0][1] == 3
    debug.request("continue", {"threadId": stopped["body"]["threadId"]})
    assert debug.execute_reply()["status"] == "ok"


def test_variables_of_the_namespace_while_nothing_is_stopped(debug):
    debug.session.execute("import numpy as np\nanswer = 42\nmatrix = np.eye(2)")
    variables = debug.request("inspectVariables")["body"]["variables"]
    names = {v["name"]: v for v in variables}
    assert names["answer"]["value"] == "42" and "matrix" in names
    assert not {"In", "Out", "_i1", "get_ipython"} & set(names)  # IPython's bookkeeping is hidden
    rich = debug.request("richInspectVariables", {"variableName": "answer"})
    assert rich["body"]["data"]["text/plain"] == "42"
    missing = debug.request("richInspectVariables", {"variableName": "not_defined"}, succeed=False)
    assert missing["success"] is False


KERNEL_CELL = """
import numpy as np
import flyrt.compiler as flyc
import flyrt.expr as fx

def helper(v):
    return v + 1.0

@flyc.kernel
def kern(x: fx.Tensor, out: fx.Tensor):
    i = fx.thread_idx.x
    out[i] = helper(x[i])

@flyc.jit
def launch(x: fx.Tensor, out: fx.Tensor):
    kern(x, out).launch(block=(x.shape[0],))

x = np.arange(4, dtype=np.float32)
out = np.zeros(4, np.float32)
launch(x, out)
"""


def test_the_invalidation_hooks_keep_working_while_debugging(debug):
    reply, _ = debug.session.execute(KERNEL_CELL)
    assert reply["status"] == "ok", reply
    code = "def helper(v):\n    return v * 10.0\n"
    debug.set_breakpoints(debug.dump_cell(code), 2)  # in the new helper: hit while the launcher traces
    reply, outputs = debug.session.execute(code)
    assert reply["status"] == "ok"
    assert "flyrt: evicted launcher launch: 'helper'" in debug.session.stdout(outputs)
    debug.kc.execute("launch(x, out)")
    stopped = debug.wait_event("stopped")
    names, _ = debug.stack(stopped["body"]["threadId"])
    assert names[0][0] == "helper" and names[-1][0] == "<module>"
    debug.request("continue", {"threadId": stopped["body"]["threadId"]})
    assert debug.execute_reply()["status"] == "ok"
    _, outputs = debug.session.execute("print(out.tolist(), launch.cache_info().compiles)")
    assert debug.session.stdout(outputs) == "[0.0, 10.0, 20.0, 30.0] 2\n"


def test_stepping_through_one_thread_of_pa_decode_in_interpreter_mode(debug):
    module = REPO / "notebooks" / "kernels" / "pa_decode_fp8.py"
    line = next(n for n, text in enumerate(module.read_text().splitlines(), 1)
                if text.strip() == "q_index = row // group")
    reply, _ = debug.session.execute(
        f"import sys, numpy as np\nsys.path.insert(0, {str(REPO / 'notebooks')!r})\n"
        "import kernels.pa_decode_fp8 as pa\nfrom kernels.pa_reference import make_case\n"
        "case = make_case(seed=3, num_seqs=1, context_length=20)\n"
        "compiled = pa.pa_decode_ps_launch(**case, workers=1)")
    assert reply["status"] == "ok", reply
    debug.set_breakpoints(module, line, condition="t == 2")  # one GPU thread of the block of 4
    debug.session.execute("%env FLYDSL_INTERPRET=1")
    debug.kc.execute("interpreted = pa.pa_decode_ps_launch(**case, workers=1)")

    stopped = debug.wait_event("stopped")
    thread = stopped["body"]["threadId"]
    names = {t["id"]: t["name"] for t in debug.request("threads")["body"]["threads"]}
    assert names[thread] == "block (0,0,0) thread (2,0,0)"
    frames, raw = debug.stack(thread)
    assert frames[0] == ("pa_decode_ps_kernel", line, str(module))
    assert debug.local_variables(raw[0]["id"])["t"] == "Int32(2)"
    debug.request("next", {"threadId": thread})
    debug.wait_event("stopped")
    frames, raw = debug.stack(thread)
    assert frames[0][1] == line + 1
    assert debug.local_variables(raw[0]["id"])["q_index"] == "Int32(0)"  # row 2 // group (4)

    debug.request("setBreakpoints", {"breakpoints": [], "source": {"path": str(module)}})
    debug.request("continue", {"threadId": thread})
    assert debug.execute_reply()["status"] == "ok"
    debug.session.execute("%env FLYDSL_INTERPRET=0")
    _, outputs = debug.session.execute("print(np.array_equal(compiled, interpreted))")
    assert debug.session.stdout(outputs) == "True\n"


def test_copy_to_globals_and_the_kernels_sources(debug):
    code = "def f(a):\n    b = a * 2\n    return b\n\nf(21)\n"
    debug.set_breakpoints(debug.dump_cell(code), 3)
    debug.kc.execute(code)
    stopped = debug.wait_event("stopped")
    _, frames = debug.stack(stopped["body"]["threadId"])
    copied = debug.request("copyToGlobals", {"srcVariableName": "b", "dstVariableName": "b_copy",
                                             "srcFrameId": frames[0]["id"]})
    assert copied["request_seq"] == debug.seq
    refused = debug.request("copyToGlobals", {"srcVariableName": "b", "dstVariableName": "not a name",
                                              "srcFrameId": frames[0]["id"]}, succeed=False)
    assert refused["success"] is False and "identifiers" in refused["message"]
    debug.request("continue", {"threadId": stopped["body"]["threadId"]})
    assert debug.execute_reply()["status"] == "ok"
    _, outputs = debug.session.execute("print(b_copy)")
    assert debug.session.stdout(outputs) == "42\n"

    # JupyterLab's Kernel Sources panel: the modules the kernel loaded from Python files, by pages.
    debug.session.execute(f"import sys\nsys.path.insert(0, {str(REPO / 'notebooks')!r})\n"
                          "import kernels.pa_reference")
    body = debug.request("modules", {"startModule": 0, "moduleCount": 10000})["body"]
    paths = {m["name"]: m["path"] for m in body["modules"]}
    assert paths["kernels.pa_reference"] == str(REPO / "notebooks" / "kernels" / "pa_reference.py")
    assert body["totalModules"] == len(body["modules"])
    page = debug.request("modules", {"startModule": 5, "moduleCount": 3})["body"]["modules"]
    assert [m["id"] for m in page] == [5, 6, 7] and page == body["modules"][5:8]
