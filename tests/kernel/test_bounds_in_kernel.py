"""Bounds checks are on in the notebook kernel: an out-of-bounds store is an
IndexError at its line and the user's variables live on; `%flydsl bounds
off` is the fast mode."""

import re

from kernel_cells import FAR_STORE

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
