"""A live xflydsl kernel driven through jupyter_client, as a notebook drives
it: the tests' fixtures (tests/conftest.py) and the GPU kernel tests use it."""

import queue

from jupyter_client.manager import start_new_kernel

KERNEL_NAME = "xflydsl"
TIMEOUT = 60


class KernelSession:
    """A started kernel and a client, with helpers that collect iopub output."""

    def __init__(self, name=KERNEL_NAME):
        self.km, self.kc = start_new_kernel(kernel_name=name, startup_timeout=TIMEOUT)

    def execute(self, code, timeout=TIMEOUT, **options):
        """Runs `code`; returns (reply content, [iopub messages of this request]).
        Not stop_on_error unless asked: after an error reply xeus aborts the
        shell requests queued by the time it looks, and on a loaded machine
        that can be the next cell a test sends on reading the reply."""
        options.setdefault("stop_on_error", False)
        outputs = []
        reply = self.kc.execute_interactive(
            code, output_hook=outputs.append, timeout=timeout, **options
        )
        kept = [m for m in outputs if m["msg_type"] not in ("status", "execute_input")]
        return reply["content"], kept

    def stdout(self, outputs, name="stdout"):
        return "".join(
            m["content"]["text"]
            for m in outputs
            if m["msg_type"] == "stream" and m["content"]["name"] == name
        )

    def displayed(self, outputs):
        """The plain text of what the request displayed (display_data)."""
        return "".join(m["content"]["data"].get("text/plain", "")
                       for m in outputs if m["msg_type"] == "display_data")

    def drain_iopub(self, timeout=0.2):
        messages = []
        while True:
            try:
                messages.append(self.kc.get_iopub_msg(timeout=timeout))
            except queue.Empty:
                return messages

    def shutdown(self):
        if self.km.has_kernel:
            self.kc.stop_channels()
            self.km.shutdown_kernel(now=False)
