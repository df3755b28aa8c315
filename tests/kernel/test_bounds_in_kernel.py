"""Bounds checks are on in the notebook kernel: an out-of-bounds store is an
IndexError at its line and the user's variables live on; `%flydsl bounds
off` is the fast mode. What a kernel prints (fx.printf) is the cell's
output, in order with the cell's own."""

import re

from kernel_cells import FAR_STORE, PRINTED, PRINTF

KERNELS = FAR_STORE + """
import numpy as np
x = np.arange(64, dtype=np.float32)
y = np.zeros(64, np.float32)
"""


def value(kernel, code):
    reply, outputs = kernel.execute(code)
    assert reply["status"] == "ok", reply
    return next(m["content"]["data"]["text/plain"] for m in outputs if m["msg_type"] == "execute_result")


def test_an_out_of_bounds_store_is_an_index_error_and_the_kernel_lives(kernel):
    assert kernel.execute("kept = 41")[0]["status"] == "ok"
    assert kernel.execute(KERNELS)[0]["status"] == "ok"
    reply, _ = kernel.execute("copy_at(x, y, 200000000)")  # without checks: a store 800 MB past y
    assert reply["status"] == "error" and reply["ename"] == "IndexError", reply
    assert "index (200000000) is out of bounds for tensor 'y' of shape (64)" in reply["evalue"]
    # the line of `y[i + offset] = x[i]`, in the cell's name as IPython's traceback gives it
    assert re.fullmatch(r"Cell In\[\d+\], line 7", reply["evalue"].rsplit(" at ", 1)[1]), reply["evalue"]
    assert value(kernel, "kept + 1") == "42"
    assert value(kernel, "float(y.sum())") == "0.0"  # nothing was stored
    assert value(kernel, "copy_at(x, y, 0); float(y.sum())") == "2016.0"


def test_bounds_off_is_the_fast_mode_and_status_says_which(kernel):
    assert kernel.execute(KERNELS)[0]["status"] == "ok"
    try:
        reply, outputs = kernel.execute("%flydsl bounds off\n%flydsl status")
        assert reply["status"] == "ok"
        text = kernel.stdout(outputs)
        assert "flyrt: bounds checks are off (fast mode)" in text and "bounds checks: off (fast mode)" in text
        assert value(kernel, "copy_at(x, y, 0); float(y.sum())") == "2016.0"
        assert value(kernel, "copy_at.cache_info().compiles") == "1"  # unchecked: its own artifact
    finally:
        kernel.execute("%flydsl bounds on")
    assert "bounds checks: on" in kernel.stdout(kernel.execute("%flydsl status")[1])
    reply, outputs = kernel.execute("%flydsl bounds maybe")
    assert reply["status"] == "error" and "%flydsl bounds on|off" in reply["evalue"]


def test_flydsl_cache_shows_and_clears_the_disk_cache(kernel, tmp_path):
    cache = tmp_path / "cache"
    setup = (f"import os\nos.environ['FLYDSL_RUNTIME_ENABLE_CACHE'] = '1'\n"
             f"os.environ['FLYDSL_RUNTIME_CACHE_DIR'] = {str(cache)!r}\n")
    assert kernel.execute(setup + KERNELS.replace("far_store", "cached_store").replace("copy_at", "cached_copy"))[0][
        "status"] == "ok"
    try:
        assert value(kernel, "cached_copy(x, y, 0); float(y.sum())") == "2016.0"
        reply, outputs = kernel.execute("%flydsl cache")
        shown = kernel.displayed(outputs)
        assert f"disk cache at {cache}: on; 1 entries" in shown and "1 misses" in shown, shown
        reply, outputs = kernel.execute("%flydsl cache clear")
        assert f"flyrt: cleared the disk cache at {cache}" in kernel.stdout(outputs)
        assert ": on; 0 entries" in kernel.displayed(outputs)
    finally:
        kernel.execute("del os.environ['FLYDSL_RUNTIME_ENABLE_CACHE'], os.environ['FLYDSL_RUNTIME_CACHE_DIR']")
    reply, _ = kernel.execute("%flydsl cache purge")
    assert reply["status"] == "error" and "%flydsl cache [clear]" in reply["evalue"]


HARDENING_CELL = """
import numpy as np
import flyrt.compiler as flyc
import flyrt.expr as fx

def endless_helper(v):
    return endless_helper(v) + 1.0

@flyc.kernel
def put_one(x: fx.Tensor):
    x[0] = 1.0

@flyc.kernel
def endless_kernel(x: fx.Tensor):
    x[0] = endless_helper(x[0])

@flyc.jit
def huge_grid(x: fx.Tensor):
    put_one(x).launch(grid=(1 << 40,), block=(1,))

@flyc.jit
def traced_grid(x: fx.Tensor, n: fx.Int64):
    put_one(x).launch(grid=(n,), block=(1,))

@flyc.jit
def endless(x: fx.Tensor):
    endless_kernel(x).launch(block=(1,))

@flyc.jit
def fine(x: fx.Tensor):
    put_one(x).launch(block=(1,))

hx = np.zeros(4, np.float32)
"""


def test_sizes_past_32_bits_and_endless_recursion_are_errors_and_the_kernel_lives(kernel):
    assert kernel.execute("kept = 41")[0]["status"] == "ok"
    assert kernel.execute(HARDENING_CELL)[0]["status"] == "ok"
    reply, _ = kernel.execute("huge_grid(hx)")
    assert reply["ename"] == "KernelError", reply
    assert ("launcher huge_grid: kernel put_one: grid size x = 1099511627776 does not fit in 32 bits (a launch "
            "takes at most 2147483647)") in reply["evalue"]
    launch_line = HARDENING_CELL.lstrip("\n").splitlines().index("    put_one(x).launch(grid=(1 << 40,), block=(1,))")
    assert re.match(rf"Cell In\[\d+\], line {launch_line + 1}: ", reply["evalue"]), reply["evalue"]
    reply, _ = kernel.execute("traced_grid(hx, 1 << 40)")
    assert reply["ename"] == "RuntimeError" and "launcher traced_grid: grid size x does not fit in 32 bits" in \
        reply["evalue"], reply
    reply, _ = kernel.execute("endless(hx)")
    assert reply["ename"] == "EndlessRecursion", reply
    assert "endless_helper calls itself without end while tracing" in reply["evalue"]
    assert value(kernel, "fine(hx); float(hx.sum())") == "1.0"  # the untouched grid stored nothing before
    assert value(kernel, "kept + 1") == "42"


def test_what_a_kernel_prints_is_the_cells_output_in_order(kernel):
    assert kernel.execute(PRINTF + "import numpy as np\nx = np.arange(4, dtype=np.float32)")[0]["status"] == "ok"
    reply, outputs = kernel.execute("print('before')\nsay(x)\nprint('after')")
    assert reply["status"] == "ok", reply
    assert kernel.stdout(outputs).splitlines() == ["before", *PRINTED, "after"]
