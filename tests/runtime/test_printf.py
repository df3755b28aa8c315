"""fx.printf: C's formatting from compiled CPU kernels to Python's
sys.stdout (pytest's capture sees it) when the launcher returns, the same
text in interpreter mode, each thread's lines in its order; errors at the
user's line; CUDA's vprintf in PTX that ptxas assembles, and ROCm's hostcall
printf in gfx942 code objects."""

import importlib
import re

import numpy as np
import pytest

import code_objects
import flyrt
import flyrt.compiler as flyc
import flyrt.expr as fx
import ptxas
from flyrt import _core
from flyrt.drivers import device_libraries


@flyc.kernel
def _formats(x: fx.Tensor, n: fx.Int32):
    i = fx.thread_idx.x
    if i < n:
        fx.printf("t%d x=%.3f e=%+.2e g=%g|%5d|%-4x|%08.2f %s %c %%\n", i, x[i], x[i] * 1e10, x[i] * 1e-7,
                  i * 1000, i, x[i], "py", 65)
        fx.printf("hex %x %X oct %o, u %u %d, big %d, bool %d\n", fx.Int8(-1 - i), fx.UInt16(65535) - i,
                  fx.Int32(8) + i, fx.Int32(-1), fx.UInt64(2**64 - 1), fx.Int64(-(2**62)), i == 1)


@flyc.jit
def formats(x: fx.Tensor, n: fx.Int32):
    _formats(x, n).launch(block=(4,))


def expected_formats(x, n):
    lines = []
    for i in range(n):
        lines.append("t%d x=%.3f e=%+.2e g=%g|%5d|%-4x|%08.2f %s %c %%\n" % (
            i, x[i], np.float32(x[i] * np.float32(1e10)), np.float32(x[i] * np.float32(1e-7)), i * 1000, i, x[i],
            "py", 65))
        lines.append("hex %x %X oct %o, u %u %d, big %d, bool %d\n" % (
            (-1 - i) & 0xFF, 65535 - i, 8 + i, 2**32 - 1, 2**64 - 1, -(2**62), i == 1))
    return "".join(lines)


@pytest.mark.parametrize("interpret", [False, True])
def test_every_conversion_prints_as_c_and_python_format(capsys, interpret):
    x = np.array([0.5, -1.25, 3.0, 7.0], np.float32)
    flyrt.set_interpret(interpret)
    try:
        print("before")
        formats(x, 3)
        print("after")
    finally:
        flyrt.set_interpret(None)
    # a block's threads run in order on the CPU and in the interpreter: the same text, in order
    assert capsys.readouterr().out == "before\n" + expected_formats(x, 3) + "after\n"


@flyc.kernel
def _steps(out: fx.Tensor):
    t = fx.block_idx.x * fx.block_dim.x + fx.thread_idx.x
    for step in range(3):
        fx.printf("thread %d step %d\n", t, step)
    out[t] = t


@flyc.jit
def steps(out: fx.Tensor, blocks: fx.Int32):
    _steps(out).launch(grid=(blocks,), block=(32,))


def test_each_thread_prints_in_its_order_and_lines_never_tear(capsys):
    out = np.zeros(64 * 32, np.int32)
    steps(out, 64)  # blocks run on the thread pool at once
    lines = capsys.readouterr().out.splitlines()
    assert sorted(lines) == sorted(f"thread {t} step {s}" for t in range(64 * 32) for s in range(3))
    for t in (0, 77, 2047):
        assert [line for line in lines if line.startswith(f"thread {t} ")] == [f"thread {t} step {s}" for s in range(3)]


@flyc.kernel
def _print_then_overrun(x: fx.Tensor, offset: fx.Int32):
    i = fx.thread_idx.x
    fx.printf("thread %d was here\n", i)
    x[i + offset] = 1.0


@flyc.jit
def print_then_overrun(x: fx.Tensor, offset: fx.Int32):
    _print_then_overrun(x, offset).launch(block=(2,))


def test_what_a_kernel_printed_before_an_error_is_kept(capsys):
    x = np.zeros(4, np.float32)
    with pytest.raises(IndexError, match="out of bounds"):
        print_then_overrun(x, 100)
    assert capsys.readouterr().out == "thread 0 was here\nthread 1 was here\n"


@pytest.mark.parametrize("body,message", [
    ("fx.printf('%ld\\n', i)", "drop the length modifier 'l'"),
    ("fx.printf('%s\\n', i)", "'%s' takes Python values"),
    ("fx.printf('%d %d\\n', i)", "1 value\\(s\\) for a format of more conversions"),
    ("fx.printf('%d\\n', i, i)", "2 values for 1 conversion"),
    ("fx.printf('%d\\n', x[i])", "needs an integer, and the value is Float32"),
    ("fx.printf('%f\\n', i)", "needs a float, and the value is Int32"),
    ("fx.printf('%q\\n', i)", "'%q' is not a conversion"),
    ("fx.printf('%d\\n', fx.Vector.zeros(4, fx.Int32))", "4-lane vector"),
    ("fx.printf(42)", "the format is a Python str"),
])
def test_a_bad_format_is_an_error_at_its_line(body, message, tmp_path, monkeypatch):
    source = f"""
import flyrt.compiler as flyc
import flyrt.expr as fx

@flyc.kernel
def bad(x: fx.Tensor):
    i = fx.thread_idx.x
    {body}

@flyc.jit
def run(x: fx.Tensor):
    bad(x).launch(block=(2,))
"""
    name = f"printf_case_{abs(hash(body))}"
    (tmp_path / f"{name}.py").write_text(source)
    monkeypatch.syspath_prepend(str(tmp_path))
    module = importlib.import_module(name)
    with pytest.raises(flyc.KernelError, match="fx.printf: .*" + message) as raised:
        module.run(np.zeros(4, np.float32))
    assert f"{name}.py:8" in str(raised.value)


def test_nvidia_kernels_call_vprintf_with_the_values_in_8_byte_slots():
    x = np.ones(4, np.float32)
    ptx = formats.lower(x, 3, target="cuda", arch="sm_90").device_code["_formats"]
    assert re.search(r"\.extern \.func\s+\(\.param \.b32 func_retval0\) vprintf$", ptx, re.M)
    assert "st.local.f64" in ptx and "st.local.u64" in ptx
    ptxas.assemble(ptx, "_formats")


def test_amd_kernels_use_rocms_hostcall_printf():
    x = np.ones(4, np.float32)
    code = formats.lower(x, 3, target="hip", arch="gfx942").device_code["_formats"]
    listed = code_objects.kernel_notes(code, "_formats")
    assert any(a[".value_kind"] == "hidden_hostcall_buffer" for a in listed[".args"])  # HIP serves the calls


def test_amd_printf_without_ockl_is_a_clear_error():
    x = np.ones(4, np.float32)
    found = device_libraries.ocml()
    _core.set_ocml_path("")
    try:
        with pytest.raises(RuntimeError, match="uses fx.printf, which comes from ROCm's device library ockl.bc"):
            formats.lower(x, 3, target="hip", arch="gfx942")
    finally:
        _core.set_ocml_path(found)


def test_printing_from_a_launcher_is_refused():
    @flyc.jit
    def chatty(x: fx.Tensor):
        fx.printf("%d\n", x.shape[0])

    with pytest.raises(flyc.KernelError, match="fx.printf prints from kernels"):
        chatty(np.zeros(3, np.float32))
