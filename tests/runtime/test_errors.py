"""Bad input: clear Python errors that name the user's file and line, never
a crash, and the launcher still works afterwards."""

import traceback

import numpy as np
import pytest

import flyrt.compiler as flyc
import flyrt.expr as fx
from kernels_for_tests import HELPER_MODULE_SOURCE

HERE = __file__


def line_of(text):
    with open(HERE) as f:
        for number, source in enumerate(f, 1):
            if text in source and "line_of(" not in source:
                return number
    raise AssertionError(text)


def frames_here(error):
    return [(f.filename, f.lineno) for f in traceback.extract_tb(error.__traceback__) if f.filename == HERE]


@flyc.kernel
def _uses_undefined(out: fx.Tensor):
    out[0] = undefined_helper(1)  # noqa: F821  (the error under test)


@flyc.jit
def uses_undefined(out: fx.Tensor):
    _uses_undefined(out).launch()


def test_trace_error_traceback_points_at_the_kernel_line():
    with pytest.raises(NameError) as info:
        uses_undefined(np.zeros(1, np.float32))
    assert (HERE, line_of("out[0] = undefined_helper(1)")) in frames_here(info.value)


@flyc.jit
def reads_in_launcher(x: fx.Tensor):
    y = x[0] + 1  # the launcher cannot read tensor elements
    return y


def test_verifier_error_names_the_file_and_line():
    with pytest.raises(flyc.KernelError) as info:
        reads_in_launcher(np.zeros(3, np.float32))
    line = line_of("y = x[0] + 1")
    assert info.value.filename == HERE and info.value.lineno == line
    assert "cannot read or write tensor elements" in str(info.value)
    assert frames_here(info.value)[-1] == (HERE, line)


@flyc.kernel
def _copy(src: fx.Tensor, dst: fx.Tensor, n: fx.Int32):
    i = fx.block_idx.x * fx.block_dim.x + fx.thread_idx.x
    if i < n:
        dst[i] = src[i]


@flyc.jit
def copy(src: fx.Tensor, dst: fx.Tensor, n: fx.Int32, block: fx.Constexpr[int] = 64):
    _copy(src, dst, n).launch(grid=((n + block - 1) // block,), block=(block,))


def test_wrong_arguments_raise_before_native_code_runs():
    src, dst = np.arange(8, dtype=np.float32), np.zeros(8, np.float32)
    with pytest.raises(TypeError, match="takes 4 arguments but 5 were given"):
        copy(src, dst, 8, 64, 1)
    with pytest.raises(TypeError, match="missing the required argument 'n'"):
        copy(src, dst)
    with pytest.raises(TypeError, match="unexpected keyword argument 'count'"):
        copy(src, dst, count=8)
    with pytest.raises(TypeError, match="must be a numpy array or a torch tensor"):
        copy([1.0, 2.0], dst, 2)
    with pytest.raises(TypeError, match="unsupported tensor dtype"):
        copy(np.zeros(8, np.complex64), dst, 8)
    with pytest.raises(ValueError, match="does not fit in Int32"):
        copy(src, dst, 2**40)
    with pytest.raises(TypeError, match="integer parameter"):
        copy(src, dst, 8.0)
    assert copy.cache_info().misses == 0
    copy(src, dst, 8)  # and it still works
    np.testing.assert_array_equal(dst, src)


@flyc.jit
def copy_on(src: fx.Tensor, dst: fx.Tensor, n: fx.Int32, stream: fx.Stream = fx.Stream(None)):
    _copy(src, dst, n).launch(grid=((n + 63) // 64,), block=(64,), stream=stream)


def test_a_stream_argument_that_is_no_stream_is_refused_by_name():
    src, dst = np.arange(8, dtype=np.float32), np.zeros(8, np.float32)
    with pytest.raises(TypeError, match="argument 'stream' must be a stream: None, an int handle, fx.Stream"):
        copy_on(src, dst, 8, "default")
    with pytest.raises(TypeError, match="argument 'stream' must be a stream"):
        copy_on(src, dst, 8, fx.Stream(2.5))
    copy_on(src, dst, 8, fx.Stream(fx.Stream(0)))  # nested handles are read through (CPU launches ignore them)
    np.testing.assert_array_equal(dst, src)


def test_an_array_of_the_other_byte_order_is_refused_never_misread():
    src, dst = np.arange(8, dtype=">f4"), np.zeros(8, np.float32)
    with pytest.raises(ValueError, match=r"argument 'src': its bytes are big-endian.*astype\(src.dtype.newbyteorder"):
        copy(src, dst, 8)
    copy(src.astype(src.dtype.newbyteorder("=")), dst, 8)
    np.testing.assert_array_equal(dst, np.arange(8))


def test_rank_mismatch_is_an_index_error_at_the_kernel_line():
    with pytest.raises(IndexError, match="has 2 dimensions, indexed with 1") as info:
        copy(np.zeros((2, 4), np.float32), np.zeros(8, np.float32), 8)
    assert (HERE, line_of("dst[i] = src[i]")) in frames_here(info.value)


def test_launch_geometry_errors():
    src, dst = np.arange(8, dtype=np.float32), np.zeros(8, np.float32)
    with pytest.raises(RuntimeError, match="exceeds the limit of 1024"):
        copy(src, dst, 8, block=2048)
    with pytest.raises(RuntimeError, match="only be launched from a @flyc.jit launcher"):
        _copy(src, dst, 8)


def test_out_of_bounds_access_is_reported_with_debug_bounds(monkeypatch):
    monkeypatch.setenv("FLYDSL_DEBUG_BOUNDS", "1")
    src = np.arange(8, dtype=np.float32)
    guard = np.full(16, -1.0, np.float32)
    dst = guard[:4]
    with pytest.raises(IndexError) as info:
        copy(src, dst, 8)  # n says 8, dst holds 4
    message = str(info.value)
    assert "tensor 'dst' of shape (4)" in message
    assert "index (4)" in message
    assert f"{HERE}:{line_of('dst[i] = src[i]')}" in message
    np.testing.assert_array_equal(guard[4:], -1.0)  # nothing written past dst
    np.testing.assert_array_equal(dst, src[:4])


def test_a_read_only_output_is_refused_naming_it_and_a_read_only_input_is_fine():
    src, dst = np.arange(8, dtype=np.float32), np.zeros(8, np.float32)
    dst.setflags(write=False)
    with pytest.raises(ValueError, match=r"argument 'dst': launcher copy stores into it, and the array is read-only"):
        copy(src, dst, 8)
    assert not dst.any()
    src.setflags(write=False)
    out = np.zeros(8, np.float32)
    copy(src, out, 8)  # only read: fine
    np.testing.assert_array_equal(out, src)


def test_the_same_kernel_text_in_two_files_reports_the_file_that_failed(tmp_path, monkeypatch):
    import importlib
    import textwrap

    monkeypatch.syspath_prepend(str(tmp_path))
    source = textwrap.dedent("""
        import flyrt.compiler as flyc
        import flyrt.expr as fx

        @flyc.kernel
        def _k(x: fx.Tensor):
            x[fx.thread_idx.x] = x[fx.thread_idx.x] * SCALE

        @flyc.jit
        def run(x: fx.Tensor):
            _k(x).launch(block=(4,))
        """)
    for name in ("same_text_a", "same_text_b"):
        (tmp_path / f"{name}.py").write_text(source)
    first, second = (importlib.import_module(name) for name in ("same_text_a", "same_text_b"))
    first.SCALE = 2.0
    first.run(np.ones(4, np.float32))  # its rewritten code is cached
    with pytest.raises(NameError, match="SCALE") as info:
        second.run(np.ones(4, np.float32))
    files = [entry.filename for entry in traceback.extract_tb(info.value.__traceback__)]
    assert str(tmp_path / "same_text_b.py") in files and str(tmp_path / "same_text_a.py") not in files


@pytest.mark.parametrize("edit", ["lines added above", "lines removed above"])
def test_a_file_edited_on_disk_since_its_import_is_not_traced_in_place_of_the_loaded_code(tmp_path, monkeypatch,
                                                                                          edit):
    """inspect reads a file as it is now: without the check, lines added or removed above a module's
    functions after its import had the launcher trace whatever text sat at their old lines (the kernel's
    body as the launcher's). The user is told to reload; after a reload the edited file runs."""
    import importlib

    monkeypatch.syspath_prepend(str(tmp_path))
    source = HELPER_MODULE_SOURCE
    name = "lines_added" if edit == "lines added above" else "lines_removed"
    path = tmp_path / f"{name}.py"
    path.write_text(source)
    importlib.invalidate_caches()
    module = importlib.import_module(name)
    x, out = np.arange(4, dtype=np.float32), np.zeros(4, np.float32)
    edited = ('"""Two lines added above."""\n\n' + source if edit == "lines added above" else
              source.replace("\n\n\ndef twice", "\ndef twice"))
    path.write_text(edited)
    with pytest.raises(OSError, match=rf"source of \w+ in .*{name}\.py changed on disk since it was "
                                           r"loaded.*reload its module"):
        module.run(x, out)
    importlib.reload(module)
    module.run(x, out)
    np.testing.assert_array_equal(out, x * 2.0)
