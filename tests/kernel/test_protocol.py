"""What the conformance suite does not cover, through jupyter_client."""

import os
import platform
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from jupyter_client.manager import KernelManager
from kernel_session import KernelSession

ANSI = re.compile(r"\x1b\[[0-9;]*m")


def error_of(outputs):
    errors = [m["content"] for m in outputs if m["msg_type"] == "error"]
    assert len(errors) == 1, outputs
    return errors[0]


def of_type(outputs, msg_type):
    return [m["content"] for m in outputs if m["msg_type"] == msg_type]


# -- execute -----------------------------------------------------------------


def test_embeds_the_project_environment(kernel):
    reply, outputs = kernel.execute("import sys; print(sys.executable); print(sys.prefix)")
    executable, prefix = kernel.stdout(outputs).split()
    assert Path(executable) == Path(sys.executable)
    assert Path(prefix) == Path(sys.prefix)


def test_execution_count_silent_and_store_history(kernel):
    first, _ = kernel.execute("a = 1")
    second, _ = kernel.execute("a")
    assert second["execution_count"] == first["execution_count"] + 1
    reply, outputs = kernel.execute("print('quiet'); a", silent=True)
    assert reply["status"] == "ok"
    assert outputs == [] or all(m["msg_type"] == "stream" for m in outputs)
    assert not of_type(outputs, "execute_result")
    after, _ = kernel.execute("a")
    assert after["execution_count"] == second["execution_count"] + 1


def test_execute_result_and_user_expressions(kernel):
    reply, outputs = kernel.execute(
        "x = 6 * 7\nx", user_expressions={"double": "x * 2", "bad": "undefined_name"}
    )
    (result,) = of_type(outputs, "execute_result")
    assert result["data"]["text/plain"] == "42"
    assert result["execution_count"] == reply["execution_count"]
    expressions = reply["user_expressions"]
    assert expressions["double"]["status"] == "ok"
    assert expressions["double"]["data"]["text/plain"] == "84"
    assert expressions["bad"]["status"] == "error"
    assert expressions["bad"]["ename"] == "NameError"


def test_rich_mime_bundles(kernel):
    code = (
        "import base64\n"
        "PNG = base64.b64decode('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9aw'\n"
        "                       'AAAABJRU5ErkJggg==')\n"
        "class Rich:\n"
        "    def _repr_html_(self): return '<i>rich</i>'\n"
        "    def _repr_png_(self): return PNG\n"
        "Rich()"
    )
    _, outputs = kernel.execute(code)
    (result,) = of_type(outputs, "execute_result")
    assert result["data"]["text/html"] == "<i>rich</i>"
    assert result["data"]["image/png"].startswith("iVBORw0KGgo")


def test_display_update_and_clear(kernel):
    code = (
        "from IPython.display import display, clear_output\n"
        "handle = display('first', display_id=True)\n"
        "handle.update('second')\n"
        "clear_output(wait=True)\n"
    )
    _, outputs = kernel.execute(code)
    types = [m["msg_type"] for m in outputs]
    assert types == ["display_data", "update_display_data", "clear_output"], types
    display_id = outputs[0]["content"]["transient"]["display_id"]
    assert outputs[1]["content"]["transient"]["display_id"] == display_id
    assert outputs[1]["content"]["data"]["text/plain"] == "'second'"
    assert outputs[2]["content"]["wait"] is True


def test_error_traceback_hides_kernel_internals(kernel):
    reply, outputs = kernel.execute("def f():\n    return 1/0\nf()")
    assert reply["status"] == "error"
    assert reply["ename"] == "ZeroDivisionError"
    error = error_of(outputs)
    text = ANSI.sub("", "\n".join(error["traceback"]))
    assert "return 1/0" in text and "f()" in text
    for internal in ("xflydsl_shell", "interactiveshell.py", "async_helpers"):
        assert internal not in text


def test_syntax_error_is_reported(kernel):
    reply, outputs = kernel.execute("def broken(:\n    pass")
    assert reply["status"] == "error"
    assert error_of(outputs)["ename"] == "SyntaxError"


# -- streams -------------------------------------------------------------------


def test_streams_from_threads_arrive_whole_and_batched(kernel):
    code = (
        "import threading\n"
        "def chatter(k):\n"
        "    for i in range(500): print(f'{k}:{i}')\n"
        "threads = [threading.Thread(target=chatter, args=(k,)) for k in range(4)]\n"
        "[t.start() for t in threads]; [t.join() for t in threads];"
    )
    _, outputs = kernel.execute(code)
    lines = kernel.stdout(outputs).splitlines()
    assert sorted(lines) == sorted(f"{k}:{i}" for k in range(4) for i in range(500))
    for k in range(4):  # each thread's lines keep their order
        mine = [int(line.split(":")[1]) for line in lines if line.startswith(f"{k}:")]
        assert mine == list(range(500))
    assert len(of_type(outputs, "stream")) < 100  # buffered, not a message per write


def test_output_written_to_file_descriptors(kernel):
    code = (
        "import ctypes, os, subprocess\n"
        "os.write(1, b'raw fd one\\n')\n"
        "os.write(2, b'raw fd two\\n')\n"
        "libc = ctypes.CDLL(None)\n"
        "libc.printf(b'from printf %d\\n', 7)\n"
        "subprocess.run(['echo', 'from a subprocess'], check=True)\n"
        "os.system('echo from os.system >&2')\n"
        "os.write(1, 'caf\\u00e9 \\u20ac\\n'.encode())\n"
    )
    reply, outputs = kernel.execute(code)
    assert reply["status"] == "ok"
    out, err = kernel.stdout(outputs), kernel.stdout(outputs, "stderr")
    for text in ("raw fd one", "from printf 7", "from a subprocess", "caf\u00e9 \u20ac"):
        assert text in out
    assert "raw fd two" in err and "from os.system" in err


# -- IPython features ----------------------------------------------------------


def test_magics_and_shell_escapes(kernel):
    _, outputs = kernel.execute("%timeit -n 10 -r 2 sum(range(100))")
    assert "loops each" in kernel.stdout(outputs)
    _, outputs = kernel.execute("%time y = sum(range(10))")
    assert "Wall time" in kernel.stdout(outputs)
    _, outputs = kernel.execute("!echo shell-escape-works")
    assert "shell-escape-works" in kernel.stdout(outputs)
    _, outputs = kernel.execute("files = !ls /\n'usr' in files")
    assert of_type(outputs, "execute_result")[0]["data"]["text/plain"] == "True"


def test_matplotlib_inline(kernel):
    code = (
        "%matplotlib inline\n"
        "import matplotlib.pyplot as plt\n"
        "plt.plot([1, 2, 3], [3, 1, 2]);\n"
    )
    reply, outputs = kernel.execute(code)
    assert reply["status"] == "ok"
    images = [d for d in of_type(outputs, "display_data") if "image/png" in d["data"]]
    assert len(images) == 1


def test_help_is_a_page_payload(kernel):
    reply, _ = kernel.execute("len??")
    (page,) = reply["payload"]
    assert page["source"] == "page"
    assert "Return the number of items" in page["data"]["text/plain"]


def test_top_level_await_and_asyncio_run(kernel):
    _, outputs = kernel.execute("import asyncio\nawait asyncio.sleep(0.01)\n'awaited'")
    assert of_type(outputs, "execute_result")[0]["data"]["text/plain"] == "'awaited'"
    code = "async def g(): return 5\nasyncio.run(g())"
    _, outputs = kernel.execute(code)
    assert of_type(outputs, "execute_result")[0]["data"]["text/plain"] == "5"


def test_kernel_info(kernel):
    kernel.kc.kernel_info()
    content = kernel.kc.get_shell_msg(timeout=10)["content"]
    assert content["implementation"] == "xflydsl"
    info = content["language_info"]
    assert info["name"] == "python"
    assert info["codemirror_mode"] == {"name": "ipython", "version": 3}
    assert info["pygments_lexer"] == "ipython3"
    assert info["nbconvert_exporter"] == "python"
    assert info["file_extension"] == ".py"
    assert info["version"] == platform.python_version()  # the kernel runs this environment's Python
    assert "xflydsl" in content["banner"]


def test_completion_inspection_and_is_complete(kernel):
    kernel.execute("import collections\nmy_counter = collections.Counter('abca')")
    kernel.kc.complete("my_cou")
    assert "my_counter" in kernel.kc.get_shell_msg(timeout=10)["content"]["matches"]
    kernel.kc.complete("my_counter.most_c")
    reply = kernel.kc.get_shell_msg(timeout=10)["content"]
    assert "most_common" in reply["matches"]
    assert reply["cursor_end"] == len("my_counter.most_c")
    kernel.kc.inspect("my_counter", 3, detail_level=0)
    reply = kernel.kc.get_shell_msg(timeout=10)["content"]
    assert reply["found"] and "Counter" in reply["data"]["text/plain"]
    for code, status in [("x = (1,", "incomplete"), ("x = 1", "complete"), ("x = )", "invalid")]:
        kernel.kc.is_complete(code)
        assert kernel.kc.get_shell_msg(timeout=10)["content"]["status"] == status


def test_cell_hooks_run_around_every_cell(kernel):
    kernel.execute(
        "import xflydsl_shell\n"
        "seen = []\n"
        "before = xflydsl_shell.hooks.register_before_cell(lambda code: seen.append(('before', code)))\n"
        "after = xflydsl_shell.hooks.register_after_cell(lambda code, ok: seen.append(('after', ok)))\n"
    )
    kernel.execute("1/0")
    kernel.execute("def boom(*args): raise RuntimeError('hook broke')\n"
                   "xflydsl_shell.hooks.register_before_cell(boom)")
    reply, outputs = kernel.execute("xflydsl_shell.hooks.unregister(boom); 'still runs'")
    assert reply["status"] == "ok"
    assert "hook broke" in kernel.stdout(outputs, "stderr")
    _, outputs = kernel.execute("xflydsl_shell.hooks.unregister(before); xflydsl_shell.hooks.unregister(after); seen")
    seen = eval(of_type(outputs, "execute_result")[0]["data"]["text/plain"])
    assert seen[1:3] == [("before", "1/0"), ("after", False)]
    assert ("after", True) in seen[3:]


# -- stdin ---------------------------------------------------------------------


def test_input_and_getpass_over_stdin(kernel):
    prompts = []

    def answer(msg):
        prompts.append(msg["content"]["prompt"])
        kernel.kc.input("secret" if msg["content"]["prompt"] == "pw? " else "Ada")

    code = "import getpass\nname = input('name? ')\npw = getpass.getpass('pw? ')\nprint(name, len(pw))"
    reply = kernel.kc.execute_interactive(code, allow_stdin=True, stdin_hook=answer, output_hook=lambda m: None,
                                          timeout=30)
    assert reply["content"]["status"] == "ok"
    assert prompts == ["name? ", "pw? "]
    _, outputs = kernel.execute("print(name, pw)")
    assert kernel.stdout(outputs) == "Ada secret\n"


def test_input_without_stdin_is_a_clear_error(kernel):
    reply, outputs = kernel.execute("input('x? ')", allow_stdin=False)
    assert reply["status"] == "error"
    assert reply["ename"] == "StdinNotImplementedError"
    assert "does not accept input" in reply["evalue"]


# -- stop_on_error -------------------------------------------------------------


def test_stop_on_error_aborts_queued_cells(kernel):
    failing = kernel.kc.execute("raise RuntimeError('stop here')", stop_on_error=True)
    queued = kernel.kc.execute("never_defined = 1")
    replies = {}
    while len(replies) < 2:
        msg = kernel.kc.get_shell_msg(timeout=30)
        replies[msg["parent_header"]["msg_id"]] = msg["content"]
    assert replies[failing]["status"] == "error"
    # The queued cell never runs; xeus 2.4.1 answers it with "error" where
    # newer kernels say "aborted".
    assert replies[queued]["status"] in ("aborted", "error")
    # xeus keeps aborting what arrives within 50 ms of the last abort.
    time.sleep(0.3)
    _, outputs = kernel.execute("'never_defined' in globals()")
    assert of_type(outputs, "execute_result")[0]["data"]["text/plain"] == "False"


# -- comms and widgets ---------------------------------------------------------


def test_kernel_opened_comm_and_messages_both_ways(kernel):
    code = (
        "from comm import create_comm\n"
        "received = []\n"
        "c = create_comm(target_name='xflydsl.test', data={'hello': 1})\n"
        "c.on_msg(lambda msg: received.append(msg['content']['data']))\n"
    )
    _, outputs = kernel.execute(code)
    (opened,) = of_type(outputs, "comm_open")
    assert opened["target_name"] == "xflydsl.test" and opened["data"] == {"hello": 1}
    comm_id = opened["comm_id"]

    msg = kernel.kc.session.msg("comm_msg", {"comm_id": comm_id, "data": {"ping": 2}})
    kernel.kc.shell_channel.send(msg)
    time.sleep(0.5)
    _, outputs = kernel.execute("c.send({'pong': received[-1]['ping'] + 1}); received")
    (sent,) = of_type(outputs, "comm_msg")
    assert sent["comm_id"] == comm_id and sent["data"] == {"pong": 3}

    kernel.kc.comm_info()
    info = kernel.kc.get_shell_msg(timeout=10)["content"]
    assert info["comms"][comm_id]["target_name"] == "xflydsl.test"


def test_client_opened_comm_reaches_registered_target(kernel):
    kernel.execute(
        "import comm\n"
        "opened = []\n"
        "def on_open(c, msg):\n"
        "    opened.append(msg['content']['data'])\n"
        "    c.on_msg(lambda m: c.send({'echo': m['content']['data']}))\n"
        "comm.get_comm_manager().register_target('xflydsl.echo', on_open)\n"
    )
    kernel.kc.shell_channel.send(kernel.kc.session.msg(
        "comm_open", {"comm_id": "c0ffee", "target_name": "xflydsl.echo", "data": {"a": 1}}))
    kernel.kc.shell_channel.send(kernel.kc.session.msg(
        "comm_msg", {"comm_id": "c0ffee", "data": {"b": 2}}))
    echoed = None
    deadline = time.time() + 10
    while echoed is None and time.time() < deadline:
        for msg in kernel.drain_iopub():
            if msg["msg_type"] == "comm_msg" and msg["content"]["comm_id"] == "c0ffee":
                echoed = msg["content"]["data"]
    assert echoed == {"echo": {"b": 2}}
    _, outputs = kernel.execute("opened")
    assert of_type(outputs, "execute_result")[0]["data"]["text/plain"] == "[{'a': 1}]"


def test_ipywidgets_open_a_widget_comm_and_sync_state(kernel):
    _, outputs = kernel.execute(
        "import ipywidgets\nslider = ipywidgets.IntSlider(value=3)\ndisplay(slider)")
    widget_opens = [c for c in of_type(outputs, "comm_open") if c["target_name"] == "jupyter.widget"]
    slider = next(c for c in widget_opens if c["data"]["state"].get("_model_name") == "IntSliderModel")
    assert slider["data"]["state"]["value"] == 3
    views = [d for d in of_type(outputs, "display_data") if "application/vnd.jupyter.widget-view+json" in d["data"]]
    assert views[0]["data"]["application/vnd.jupyter.widget-view+json"]["model_id"] == slider["comm_id"]

    update = {"method": "update", "state": {"value": 7}, "buffer_paths": []}
    kernel.kc.shell_channel.send(kernel.kc.session.msg(
        "comm_msg", {"comm_id": slider["comm_id"], "data": update}))
    time.sleep(0.5)
    _, outputs = kernel.execute("slider.value")
    assert of_type(outputs, "execute_result")[0]["data"]["text/plain"] == "7"


# -- interrupt and restart -------------------------------------------------------


def test_an_idle_interrupt_caught_by_a_thread_a_cell_started_is_dropped(fresh_kernel):
    # Threads started while a cell runs (thread pools of numpy, torch, flyrt)
    # inherit the cell's open SIGINT mask; an idle interrupt may land there.
    fresh_kernel.execute("import threading, time\n"
                         "worker = threading.Thread(target=time.sleep, args=(30,), daemon=True)\n"
                         "worker.start(); state = 41")
    for _ in range(3):
        fresh_kernel.km.interrupt_kernel()
        time.sleep(0.2)
    reply, outputs = fresh_kernel.execute("state + 1")
    assert reply["status"] == "ok", reply
    assert of_type(outputs, "execute_result")[0]["data"]["text/plain"] == "42"


LONG_LAUNCH = """
import numpy as np
import flyrt.compiler as flyc
import flyrt.expr as fx

@flyc.kernel
def _spin(out: fx.Tensor, rounds: fx.Int32):
    acc = fx.Float32(0.0)
    for r in range(rounds):
        acc = acc * 0.5 + 1.0
    out[fx.block_idx.x * fx.block_dim.x + fx.thread_idx.x] = acc

@flyc.jit
def spin(out: fx.Tensor, rounds: fx.Int32):
    _spin(out, rounds).launch(grid=(out.shape[0] // 64,), block=(64,))

out, big = np.zeros(64 * 64, np.float32), np.zeros(64 * 16384, np.float32)
spin(out, 1)
"""


def test_interrupt_a_busy_cell_keeps_the_kernel_and_its_state(fresh_kernel):
    fresh_kernel.execute("state = 41")
    fresh_kernel.km.interrupt_kernel()  # while idle: harmless
    time.sleep(0.3)
    reply, _ = fresh_kernel.execute("state")
    assert reply["status"] == "ok"

    fresh_kernel.execute(LONG_LAUNCH)
    for busy in ("while True: pass", "import time; time.sleep(60)", "spin(big, 10**6)  # minutes of native code"):
        # stop_on_error=False: xeus 2.4.1 aborts a request that arrives within 50 ms of an error
        # reply (here, the previous interrupt's), which a loaded machine made this test race into.
        msg_id = fresh_kernel.kc.execute(busy, stop_on_error=False)
        time.sleep(1.0)
        interrupted = time.perf_counter()
        fresh_kernel.km.interrupt_kernel()
        reply = fresh_kernel.kc.get_shell_msg(timeout=20)
        assert time.perf_counter() - interrupted < 2.0
        assert reply["parent_header"]["msg_id"] == msg_id
        assert reply["content"]["status"] == "error"
        assert reply["content"]["ename"] == "KeyboardInterrupt"
        assert fresh_kernel.km.is_alive()
    _, outputs = fresh_kernel.execute("state + 1")
    assert of_type(outputs, "execute_result")[0]["data"]["text/plain"] == "42"
    _, outputs = fresh_kernel.execute("spin(out, 2); float(out[0])")  # the interrupted launcher runs again
    assert of_type(outputs, "execute_result")[0]["data"]["text/plain"] == "1.5"


def test_an_interrupt_sent_right_after_execute_stops_that_cell(fresh_kernel):
    # The signal lands while the kernel is still taking the request in, before the cell's
    # window opens (6 of 10 were lost so): it was sent after the request, so it is the request's.
    for _ in range(20):
        msg_id = fresh_kernel.kc.execute("import time\nfor _ in range(200): time.sleep(0.05)", stop_on_error=False)
        fresh_kernel.km.interrupt_kernel()
        reply = fresh_kernel.kc.get_shell_msg(timeout=30)
        assert reply["parent_header"]["msg_id"] == msg_id
        assert reply["content"].get("ename") == "KeyboardInterrupt", (reply["content"], fresh_kernel.drain_iopub())
    reply, outputs = fresh_kernel.execute("1 + 1")
    assert of_type(outputs, "execute_result")[0]["data"]["text/plain"] == "2"


# Sleeps in steps: an interrupt that lands between the print and a long sleep's system call
# (the client is quick to answer the print) would wait for that sleep's end.
SLOW_CALLBACK = """
import time, xflydsl_shell
def slow(code):
    if "# slow" in code:
        print("in the callback", flush=True)
        for _ in range(400):
            time.sleep(0.05)
"""


@pytest.mark.parametrize("registration", [
    "get_ipython().events.register('pre_run_cell', lambda info: slow(info.raw_cell))",
    "get_ipython().events.register('post_run_cell', lambda result: slow(result.info.raw_cell))",
    "xflydsl_shell.hooks.register_after_cell(lambda code, succeeded: slow(code))",
], ids=["pre_run_cell", "post_run_cell", "after-cell hook"])
def test_an_interrupt_in_a_callback_around_the_cell_stops_the_request(fresh_kernel, registration):
    # IPython reports an interrupt in an event callback and goes on, and the kernel's own hooks
    # dropped it: the cell ran to its end, its reply said "ok" and the cells queued after it ran.
    fresh_kernel.execute(SLOW_CALLBACK)
    fresh_kernel.execute(registration)
    cell = fresh_kernel.kc.execute("print('the cell ran')  # slow")
    queued = fresh_kernel.kc.execute("queued = 1")
    seen = []
    while not any("in the callback" in m["content"].get("text", "") for m in seen):
        seen.append(fresh_kernel.kc.get_iopub_msg(timeout=30))
    fresh_kernel.km.interrupt_kernel()
    interrupted = fresh_kernel.kc.get_shell_msg(timeout=30)  # past the callback's 20 s: a lost interrupt shows
    assert interrupted["parent_header"]["msg_id"] == cell
    assert interrupted["content"].get("ename") == "KeyboardInterrupt", (interrupted["content"], fresh_kernel.drain_iopub())
    aborted = fresh_kernel.kc.get_shell_msg(timeout=10)
    assert aborted["parent_header"]["msg_id"] == queued
    assert aborted["content"]["status"] in ("aborted", "error")  # xeus 2.4.1 says "error"
    if "pre_run_cell" in registration:
        assert "the cell ran" not in fresh_kernel.stdout(seen + fresh_kernel.drain_iopub())
    time.sleep(0.3)  # xeus aborts what arrives within 50 ms of its last abort
    _, outputs = fresh_kernel.execute("'queued' in globals()")
    assert of_type(outputs, "execute_result")[0]["data"]["text/plain"] == "False"


def test_a_kernel_started_with_sigint_ignored_is_still_interruptible():
    """A client started in the background by a shell (`jupyter lab &`, a CI
    job's `cmd &`) passes SIGINT ignored to its kernels, and CPython keeps an
    ignored SIGINT ignored: the kernel installs its handler itself."""
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        session = KernelSession()
    finally:
        signal.signal(signal.SIGINT, previous)
    try:
        msg_id = session.kc.execute("while True: pass")
        started = None
        while started is None:  # a loaded machine may take a while to begin the cell
            message = session.kc.get_iopub_msg(timeout=30)
            if message["parent_header"].get("msg_id") == msg_id and message["msg_type"] == "execute_input":
                started = message
        time.sleep(0.5)  # into the loop
        session.km.interrupt_kernel()
        reply = session.kc.get_shell_msg(timeout=20)
        assert reply["parent_header"]["msg_id"] == msg_id
        assert reply["content"]["ename"] == "KeyboardInterrupt"
        assert session.execute("1 + 1")[0]["status"] == "ok"
    finally:
        session.shutdown()


def test_restart_gives_a_clean_kernel(fresh_kernel):
    fresh_kernel.execute("before_restart = 1")
    fresh_kernel.km.restart_kernel(now=False)
    fresh_kernel.kc.wait_for_ready(timeout=30)
    reply, outputs = fresh_kernel.execute("'before_restart' in globals()")
    assert of_type(outputs, "execute_result")[0]["data"]["text/plain"] == "False"


def test_shutdown_runs_atexit_and_ends_the_process(fresh_kernel, tmp_path):
    marker = tmp_path / "atexit-ran"
    fresh_kernel.execute(f"import atexit\natexit.register(lambda: open({str(marker)!r}, 'w').write('yes'))")
    fresh_kernel.shutdown()
    assert not fresh_kernel.km.is_alive()
    assert marker.read_text() == "yes"


def test_a_forged_message_is_dropped_and_logged_never_shown_in_a_cell(fresh_kernel):
    from jupyter_client.session import Session

    fresh_kernel.execute("1")  # the cell output captures are set up
    forger = Session(key=b"not-the-kernel-key", username="intruder")
    channel = fresh_kernel.kc.shell_channel
    forger.send(channel.socket, forger.msg("execute_request", {"code": "forged = True", "silent": False}))
    reply, outputs = fresh_kernel.execute("'forged' in globals()")
    assert of_type(outputs, "execute_result")[0]["data"]["text/plain"] == "False"
    shown = fresh_kernel.stdout(outputs, "stderr") + fresh_kernel.stdout(outputs)
    reply, outputs = fresh_kernel.execute("2")
    shown += fresh_kernel.stdout(outputs, "stderr") + fresh_kernel.stdout(outputs)
    assert "ignature" not in shown, shown


CLIENT_THAT_DIES = """
import sys, time
from jupyter_client.manager import start_new_kernel
km, kc = start_new_kernel(kernel_name="xflydsl", startup_timeout=60)
print(km.provisioner.process.pid, flush=True)
time.sleep(600)
"""


def _running(pid):
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")  # a zombie has exited
    except FileNotFoundError:
        return False


def test_a_kernel_whose_client_is_killed_exits(tmp_path):
    client = subprocess.Popen([sys.executable, "-c", CLIENT_THAT_DIES], stdout=subprocess.PIPE, text=True,
                              cwd=tmp_path)
    kernel_pid = int(client.stdout.readline())
    assert _running(kernel_pid)
    client.send_signal(signal.SIGKILL)
    client.wait()
    deadline = time.monotonic() + 10
    while _running(kernel_pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    if _running(kernel_pid):
        os.kill(kernel_pid, signal.SIGKILL)
        pytest.fail("the kernel outlived the client that started it by 10 s")


def test_a_start_takes_one_kernel_info_request():
    """The first kernel_info reply waits until IOPub has a client (iopub_readiness):
    jupyter_client's readiness check then gets its IOPub message and does not ask
    again, which it did in most starts before (0.2 s each)."""
    for _ in range(3):
        km = KernelManager(kernel_name="xflydsl")
        km.start_kernel()
        kc = km.client()
        asked = []
        ask = kc.kernel_info
        kc.kernel_info = lambda: asked.append(1) or ask()
        try:
            kc.start_channels()
            kc.wait_for_ready(timeout=60)
        finally:
            kc.stop_channels()
            km.shutdown_kernel(now=True)
        assert len(asked) == 1, f"{len(asked)} kernel_info requests before the kernel was ready"
