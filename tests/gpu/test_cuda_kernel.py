"""The xflydsl kernel with its launches on the GPU, driven by jupyter_client as
a notebook drives it: a notice names the GPU a launcher recompiled for,
`%flydsl status` lists the kernels loaded there and their device memory,
an interrupt ends a wait on a long GPU launch, what a kernel prints with
fx.printf (CUDA's vprintf) is the cell's output, an out-of-bounds store is an
IndexError at its line (bounds checks are on in the kernel), and a restart
releases the device."""

import re
import subprocess
import time

import pytest
from kernel_cells import FAR_STORE, PRINTED, PRINTF
from kernel_session import KernelSession

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


def text(kernel, code):
    """What a cell printed, displayed and returned (plain text)."""
    reply, outputs = kernel.execute(code, timeout=120)
    assert reply["status"] == "ok", reply
    return kernel.stdout(outputs) + kernel.displayed(outputs) + "".join(
        m["content"]["data"]["text/plain"] for m in outputs if m["msg_type"] == "execute_result")


@pytest.fixture
def kernel():
    session = KernelSession()
    yield session
    session.shutdown()


def gpu_pids():
    listed = subprocess.run(["nvidia-smi", "--query-compute-apps=pid", "--format=csv,noheader"],
                            capture_output=True, text=True, check=True).stdout
    return {int(line) for line in listed.split()}


def test_notices_and_status_name_the_gpu(kernel):
    text(kernel, SETUP)
    assert text(kernel, "out[:3].tolist()") == "[1.0, 2.0, 3.0]"
    notice = text(kernel, "def helper(v):\n    return v * 10.0\nlaunch(x, out)\nprint(out[:3].tolist())")
    assert "flyrt: recompiled launcher launch for cuda:0 (sm_" in notice, notice
    assert "[0.0, 10.0, 20.0]" in notice
    status = text(kernel, "%flydsl status")
    assert "GPU kernels loaded: " in status and "launch / add_one on cuda:0:" in status, status
    assert "registers" in status and "MiB" in status


def test_what_a_gpu_kernel_prints_is_the_cells_output_in_order(kernel):
    text(kernel, SETUP + PRINTF)
    printed = text(kernel, "print('before')\nsay(torch.arange(4, dtype=torch.float32, device='cuda'))\n"
                           "print('after')").splitlines()
    assert printed[0] == "before" and printed[-1] == "after", printed
    assert sorted(printed[1:-1]) == PRINTED  # a warp's lanes print in an order CUDA does not fix


def test_an_interrupt_ends_a_wait_on_a_long_gpu_launch(kernel):
    text(kernel, SETUP)
    msg_id = kernel.kc.execute("spin(busy, 100_000)  # tens of seconds on the GPU\nflyrt.synchronize()")
    time.sleep(2.0)
    interrupted = time.perf_counter()
    kernel.km.interrupt_kernel()
    reply = kernel.kc.get_shell_msg(timeout=30)
    waited = time.perf_counter() - interrupted
    assert reply["parent_header"]["msg_id"] == msg_id
    assert reply["content"]["ename"] == "KeyboardInterrupt", reply["content"]
    assert waited < 2.0, f"the wait ended {waited:.2f} s after the interrupt"
    assert text(kernel, "1 + 1") == "2"  # alive, state intact
    print(f"interrupt -> reply: {waited * 1e3:.0f} ms")


def test_a_restart_releases_the_device(kernel):
    text(kernel, SETUP)
    before = kernel.km.provisioner.process.pid
    assert before in gpu_pids()
    kernel.km.restart_kernel(now=False)
    kernel.kc.wait_for_ready(timeout=120)
    for _ in range(50):
        if before not in gpu_pids():
            break
        time.sleep(0.1)
    assert before not in gpu_pids(), "the old kernel process still holds the GPU"
    assert text(kernel, "'x' in globals()") == "False"


def test_an_out_of_bounds_store_on_the_gpu_is_an_index_error_and_the_kernel_lives(kernel):
    text(kernel, SETUP)
    text(kernel, FAR_STORE + "y = torch.zeros(64, device='cuda')")  # bounds checks: the kernel's default
    # unchecked: 800 MB past `y`; checked launches are asynchronous, their report read at the next wait
    reply, _ = kernel.execute("copy_at(x, y, 200000000); flyrt.synchronize()", timeout=120)
    assert reply["status"] == "error" and reply["ename"] == "IndexError", reply
    assert "index (200000000) is out of bounds for tensor 'y' of shape (64)" in reply["evalue"]
    # `y[i + offset] = x[i]`, line 7 of its cell, named as IPython's traceback names the cell
    assert re.fullmatch(r"Cell In\[\d+\], line 7", reply["evalue"].rsplit(" at ", 1)[1]), reply["evalue"]
    assert text(kernel, "float(y.sum())") == "0.0"  # nothing was stored; the CUDA context is fine
    assert text(kernel, "copy_at(x, y, 0); float(y.sum())") == "2016.0"
