"""The xflydsl kernel with its launches on the GPU, driven by jupyter_client as
a notebook drives it: a notice names the GPU a launcher recompiled for,
`%flydsl status` lists the kernels loaded there and their device memory,
an interrupt ends a wait on a long GPU launch, and a restart releases the
device."""

import subprocess
import time

import pytest
from jupyter_client.manager import start_new_kernel

SETUP = """
import torch
import flyrt
import flyrt.compiler as flyc
import flyrt.expr as fx

def helper(v):
    return v + 1.0

@flyc.kernel
def add_one(x: fx.Tensor, out: fx.Tensor):
    i = fx.block_idx.x * fx.block_dim.x + fx.thread_idx.x
    out[i] = helper(x[i])

@flyc.jit
def launch(x: fx.Tensor, out: fx.Tensor):
    add_one(x, out).launch(grid=(x.shape[0] // 64,), block=(64,))

@flyc.kernel
def _spin(out: fx.Tensor, rounds: fx.Int32):
    acc = fx.Float32(0.0)
    for r in range(rounds):
        for s in range(rounds):
            acc = acc * 0.5 + 1.0
    out[fx.block_idx.x * fx.block_dim.x + fx.thread_idx.x] = acc

@flyc.jit
def spin(out: fx.Tensor, rounds: fx.Int32):
    _spin(out, rounds).launch(grid=(1,), block=(64,))

x = torch.arange(256, dtype=torch.float32, device='cuda')
out, busy = torch.zeros_like(x), torch.zeros(64, device='cuda')
launch(x, out)
spin(busy, 2)
torch.cuda.synchronize()
"""


class Kernel:
    def __init__(self):
        self.km, self.kc = start_new_kernel(kernel_name="xflydsl", startup_timeout=120)

    def execute(self, code, timeout=120):
        outputs = []
        reply = self.kc.execute_interactive(code, output_hook=outputs.append, timeout=timeout)
        return reply["content"], outputs

    def text(self, code):
        reply, outputs = self.execute(code)
        assert reply["status"] == "ok", reply
        return "".join(m["content"].get("text", "") + m["content"].get("data", {}).get("text/plain", "")
                       for m in outputs if m["msg_type"] in ("stream", "display_data", "execute_result"))


@pytest.fixture
def kernel():
    session = Kernel()
    yield session
    session.kc.stop_channels()
    session.km.shutdown_kernel(now=True)


def gpu_pids():
    listed = subprocess.run(["nvidia-smi", "--query-compute-apps=pid", "--format=csv,noheader"],
                            capture_output=True, text=True, check=True).stdout
    return {int(line) for line in listed.split()}


def test_notices_and_status_name_the_gpu(kernel):
    kernel.text(SETUP)
    assert kernel.text("out[:3].tolist()") == "[1.0, 2.0, 3.0]"
    notice = kernel.text("def helper(v):\n    return v * 10.0\nlaunch(x, out)\nprint(out[:3].tolist())")
    assert "flyrt: recompiled launcher launch for cuda:0 (sm_" in notice, notice
    assert "[0.0, 10.0, 20.0]" in notice
    status = kernel.text("%flydsl status")
    assert "GPU kernels loaded: " in status and "launch / add_one on cuda:0:" in status, status
    assert "registers" in status and "MiB" in status


def test_an_interrupt_ends_a_wait_on_a_long_gpu_launch(kernel):
    kernel.text(SETUP)
    msg_id = kernel.kc.execute("spin(busy, 100_000)  # tens of seconds on the GPU\nflyrt.synchronize()")
    time.sleep(2.0)
    interrupted = time.perf_counter()
    kernel.km.interrupt_kernel()
    reply = kernel.kc.get_shell_msg(timeout=30)
    waited = time.perf_counter() - interrupted
    assert reply["parent_header"]["msg_id"] == msg_id
    assert reply["content"]["ename"] == "KeyboardInterrupt", reply["content"]
    assert waited < 2.0, f"the wait ended {waited:.2f} s after the interrupt"
    assert kernel.text("1 + 1") == "2"  # alive, state intact
    print(f"interrupt -> reply: {waited * 1e3:.0f} ms")


def test_a_restart_releases_the_device(kernel):
    kernel.text(SETUP)
    before = kernel.km.provisioner.process.pid
    assert before in gpu_pids()
    kernel.km.restart_kernel(now=False)
    kernel.kc.wait_for_ready(timeout=120)
    for _ in range(50):
        if before not in gpu_pids():
            break
        time.sleep(0.1)
    assert before not in gpu_pids(), "the old kernel process still holds the GPU"
    assert kernel.text("'x' in globals()") == "False"
