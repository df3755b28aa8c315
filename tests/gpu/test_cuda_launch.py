"""How launches meet CUDA: the target chosen by the tensors (or forced),
torch's current stream as the default, explicit streams, other libraries'
tensors, and errors that name the parameter, kernel, launcher and line."""

import os

import numpy as np
import pytest
import torch

import flyrt
import flyrt.compiler as flyc
import flyrt.expr as fx
from cuda_arrays import cuda
from kernels.vector_add import vector_add


@flyc.kernel
def _plus_one(x: fx.Tensor, y: fx.Tensor):
    i = fx.block_idx.x * fx.block_dim.x + fx.thread_idx.x
    if i < x.shape[0]:
        y[i] = x[i] + 1.0


@flyc.jit
def plus_one(x: fx.Tensor, y: fx.Tensor):
    _plus_one(x, y).launch(grid=((x.shape[0] + 255) // 256,), block=(256,))


@flyc.jit
def plus_one_on(x: fx.Tensor, y: fx.Tensor, stream: fx.Stream = fx.Stream(None)):
    _plus_one(x, y).launch(grid=((x.shape[0] + 255) // 256,), block=(256,), stream=stream)


N = 1 << 20


def test_the_same_launcher_runs_where_its_tensors_are():
    x = np.arange(N, dtype=np.float32)
    y = np.zeros_like(x)
    plus_one(x, y)
    gx, gy = cuda(x), torch.zeros(N, device="cuda")
    plus_one(gx, gy)
    np.testing.assert_array_equal(gy.cpu().numpy(), y)
    assert plus_one.cache_info().size == 2  # one artifact per target
    assert any("cuda:0 (sm_" in r.specialization for r in flyc.compile_log() if r.launcher == plus_one.__qualname__)


def test_launches_run_on_torchs_current_stream():
    side = torch.cuda.Stream()
    x, y = torch.zeros(N, device="cuda"), torch.zeros(N, device="cuda")
    torch.cuda.synchronize()
    with torch.cuda.stream(side):
        torch.cuda._sleep(20_000_000)  # the side stream is busy for a while...
        x.fill_(41.0)  # ...before it writes x
        plus_one(x, y)  # on the side stream: after the fill
    side.synchronize()
    assert (y == 42.0).all()


def test_an_explicit_stream_argument():
    side = torch.cuda.Stream()
    x, y = torch.zeros(N, device="cuda"), torch.zeros(N, device="cuda")
    torch.cuda.synchronize()
    with torch.cuda.stream(side):
        torch.cuda._sleep(20_000_000)
        x.fill_(1.0)
    plus_one_on(x, y, side)  # called outside the side stream's context
    side.synchronize()
    assert (y == 2.0).all()
    plus_one_on(x, y, fx.Stream(side.cuda_stream))
    side.synchronize()
    plus_one_on(x, y)  # default: torch's current stream
    torch.cuda.synchronize()
    assert (y == 2.0).all()


def test_cupy_arrays_through_the_cuda_array_interface():
    cupy = pytest.importorskip("cupy")
    a, b = cupy.arange(1000, dtype=cupy.float32), cupy.ones(1000, dtype=cupy.float32)
    c = cupy.zeros(1005, dtype=cupy.float32)
    vector_add(a, b, c, 1000)
    cupy.cuda.Device().synchronize()
    np.testing.assert_array_equal(cupy.asnumpy(c[:1000]), np.arange(1000) + 1)


def test_host_arrays_on_a_cuda_launcher_name_the_parameter():
    with pytest.raises(ValueError, match=r"argument 'y' is a host array, but launcher plus_one runs on CUDA"):
        plus_one(torch.zeros(8, device="cuda"), np.zeros(8, np.float32))
    plus_one.set_target("cuda")
    try:
        with pytest.raises(ValueError, match=r"argument 'x' is a host array.*as chosen"):
            plus_one(np.zeros(8, np.float32), np.zeros(8, np.float32))
    finally:
        plus_one.set_target("auto")


def test_a_forced_cpu_target_refuses_device_tensors():
    flyrt.set_target("cpu")
    try:
        with pytest.raises(ValueError, match=r"argument 'x' is on cuda:0, but launcher plus_one runs on the CPU"):
            plus_one(torch.zeros(8, device="cuda"), torch.zeros(8, device="cuda"))
    finally:
        flyrt.set_target("auto")


def test_launch_failures_name_the_kernel_and_launcher():
    @flyc.kernel
    def _wide(x: fx.Tensor):
        x[fx.thread_idx.x] = 1.0

    @flyc.jit
    def wide(x: fx.Tensor):
        _wide(x).launch(block=(2048,))

    with pytest.raises(RuntimeError, match=r"launcher .*wide: kernel _wide: block size x = 2048 exceeds the limit "
                                           r"of 1024 on this GPU"):
        wide(torch.zeros(2048, device="cuda"))


def test_out_of_bounds_reports_name_the_tensor_and_line(monkeypatch):
    @flyc.kernel
    def _shifted(x: fx.Tensor, y: fx.Tensor):
        i = fx.block_idx.x * fx.block_dim.x + fx.thread_idx.x
        y[i + 100] = x[i]  # past y's end for the last 100 threads

    @flyc.jit
    def shifted(x: fx.Tensor, y: fx.Tensor):
        _shifted(x, y).launch(grid=(4,), block=(256,))

    monkeypatch.delenv("FLYDSL_DEBUG_BOUNDS", raising=False)  # checks on: the default
    x, y = torch.ones(1024, device="cuda"), torch.zeros(1024, device="cuda")
    shifted(x, y)  # asynchronous: the launch returns, its report is read at the next synchronization
    with pytest.raises(IndexError) as info:
        flyrt.synchronize()
    message = str(info.value)
    assert "out of bounds for tensor 'y' of shape (1024)" in message
    assert f"{os.path.basename(__file__)}:" in message and "y[i + 100]" not in message
    assert (y[100:] == 1).all() and (y[:100] == 0).all()  # the access was skipped, the rest written
    flyrt.synchronize()  # read once: nothing more to say
    shifted(x, y)
    torch.cuda.synchronize()  # torch's wait reads no report: the next launch of the kernel says it
    with pytest.raises(IndexError, match=r"an earlier launch of kernel _shifted: index .* out of bounds"):
        shifted(x, y)
    monkeypatch.setenv("FLYDSL_DEBUG_BOUNDS", "0")
    y.zero_()
    shifted(x, torch.zeros(2048, device="cuda"))  # a fresh specialization without checks runs
    flyrt.synchronize()


def test_a_checked_launch_does_not_wait_for_its_kernel(monkeypatch):
    """The report of a checked launch is written by the kernel into host
    memory and read later: a launch returns while its kernel runs, so checks do not serialize
    the host with the GPU (a long kernel is still running when the call returns)."""
    @flyc.kernel
    def _spin(x: fx.Tensor, n: fx.Int32):
        total = fx.Float32(0.0)
        for k in range(n):
            total = total + x[(k * 7) % x.shape[0]]
        x[0] = total

    @flyc.jit
    def spin(x: fx.Tensor, n: fx.Int32):
        _spin(x, n).launch(block=(1,))

    monkeypatch.delenv("FLYDSL_DEBUG_BOUNDS", raising=False)
    x = torch.ones(1024, device="cuda")
    spin(x, 1)
    flyrt.synchronize()
    done = torch.cuda.Event()
    spin(x, 20_000_000)  # about a second of one thread's loads
    done.record()
    assert not done.query(), "the checked launch waited for its kernel"
    flyrt.synchronize()
    assert done.query()


def test_a_checked_launch_in_a_cuda_graph_reports_at_synchronize(monkeypatch):
    @flyc.kernel
    def _store(y: fx.Tensor, at: fx.Int32):
        y[at] = 1.0

    @flyc.jit
    def store(y: fx.Tensor, at: fx.Int32):
        _store(y, at).launch(block=(1,))

    monkeypatch.delenv("FLYDSL_DEBUG_BOUNDS", raising=False)
    y = torch.zeros(4, device="cuda")
    store(y, 0)  # compiled and loaded outside the capture
    flyrt.synchronize()
    stream = torch.cuda.Stream()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.stream(stream), torch.cuda.graph(graph, stream=stream):
        store(y, 9)  # out of bounds in every replay
    graph.replay()
    with pytest.raises(IndexError, match=r"index \(9\) is out of bounds for tensor 'y' of shape \(4\)"):
        flyrt.synchronize()


def test_interpreter_mode_refuses_a_cuda_tensor_and_runs_its_host_copy():
    x = torch.arange(8, dtype=torch.float32, device="cuda")
    y = torch.zeros_like(x)
    plus_one(x, y)  # compiled for the GPU first
    compiles = plus_one.cache_info().compiles
    plus_one.interpret = True
    try:
        with pytest.raises(TypeError, match=r"argument 'x': interpreter mode .* copy this Tensor to the host first"):
            plus_one(x, y)
        host_x, host_y = x.cpu(), torch.zeros(8)
        plus_one(host_x, host_y)
        assert host_y.tolist() == [v + 1.0 for v in range(8)]
    finally:
        plus_one.interpret = None
    y.zero_()
    plus_one(x, y)  # compiled again, on the GPU: interpreting touched nothing of its cache
    assert y.tolist() == [v + 1.0 for v in range(8)]
    assert plus_one.cache_info().compiles == compiles


def _pa_kernels_loaded(assembler):
    """PA decode's MMA kernels compiled and loaded with `assembler` ("": none), their results and image kinds."""
    import kernels.pa_decode_fp8 as pa
    from kernels.devices import on
    from kernels.pa_reference import make_case

    from flyrt import _core

    _core.set_ptx_assembler_path(assembler)
    case = on("cuda", make_case(num_seqs=3, num_q_heads=8, num_kv_heads=1, head_size=128, context_length=1027))
    launcher = pa.pa_decode_ps_prepare(**case)[0].launcher
    launcher.cache_clear()  # compiled afresh, not served from memory
    out = pa.pa_decode_ps_launch(**case).float().cpu().numpy()
    return out, {k.kernel: k.image_kind for k in launcher.device_kernels()}


def test_cubins_assembled_in_process_load_and_compute_what_the_drivers_ptx_compile_does(monkeypatch):
    from flyrt import _core
    from flyrt.drivers import device_libraries

    monkeypatch.setenv("FLYDSL_NVJITLINK", "1")
    assembler = device_libraries.find_ptx_assembler()
    if not assembler:
        pytest.fail("no nvJitLink on this GPU machine: its image has nvidia-nvjitlink (TOOLCHAIN.md)")
    before = _core.ptx_assembler_path()
    try:
        through_driver, driver_kinds = _pa_kernels_loaded("")
        assembled, assembled_kinds = _pa_kernels_loaded(assembler)
    finally:
        _core.set_ptx_assembler_path(before)
    assert set(driver_kinds.values()) == {"ptx"} and set(assembled_kinds.values()) == {"cubin"}
    assert driver_kinds.keys() == assembled_kinds.keys()
    np.testing.assert_array_equal(assembled, through_driver)
