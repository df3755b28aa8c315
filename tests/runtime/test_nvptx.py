"""The NVIDIA target without a GPU: kernels lowered to PTX for sm_90 use the
instructions they should (global and shared memory, barriers, warp
shuffles, wide loads), assemble with NVIDIA's ptxas, and what the target
cannot do is a clear Python error, never a crashed process. (Every launcher
the other runtime tests trace is assembled too: conftest.py.)"""

import re
import sys
from pathlib import Path

import numpy as np
import pytest

import flyrt
import flyrt.compiler as flyc
import flyrt.expr as fx
import ptxas
from flyrt import _core
from flyrt.drivers import cuda, device_libraries
from kernels_for_tests import unary
from test_block import barrier_in_while

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "notebooks"))

import kernels.pa_decode_fp8 as pa  # noqa: E402
from kernels.pa_reference import make_case  # noqa: E402
from kernels.softmax import softmax  # noqa: E402


def test_softmax_uses_shared_memory_barriers_and_shuffles():
    x = np.zeros((4, 1024), np.float32)
    lowered = softmax.lower(x, x, target="cuda", arch="sm_90")
    assert lowered.target.cpu == "sm_90" and lowered.target.warp_size == 32
    ptx = lowered.device_code["softmax_kernel"]
    for instruction in ("ld.global", "st.global", "st.shared", "ld.shared", "bar.sync", "shfl.sync.idx.b32",
                        ".reqntid 256, 1, 1"):
        assert instruction in ptx, instruction
    report = ptxas.assemble(ptx, "softmax_kernel")
    assert "Used" in report and "registers" in report


def pa_step(case):
    """PA decode's step for `case`, as a call builds it (its launcher and arguments, to lower)."""
    out = np.zeros_like(case["query"])
    return pa._Step(pa._decode_buffers(**case, softmax_scale=None, workers=2, out=out, pages_per_work=None))


@pytest.mark.parametrize("fmt", ["e4m3fnuz", "e4m3fn"])
@pytest.mark.parametrize("per_token", [False, True])
def test_pa_decode_lowers_and_assembles(fmt, per_token):
    case = make_case(num_seqs=2, num_q_heads=8, num_kv_heads=2, head_size=128, context_length=64, fmt=fmt,
                     per_token=per_token)
    step = pa_step(case)
    lowered = step.launcher.lower(*step.args, target="cuda", arch="sm_90")
    assert sorted(lowered.device_code) == ["pa_combine_kernel", "pa_decode_mma_kernel"]
    for kernel, ptx in lowered.device_code.items():
        ptxas.assemble(ptx, kernel)


@pytest.mark.parametrize("fmt", ["e4m3fn", "e4m3fnuz"])
@pytest.mark.parametrize("warps, stages, one_launch, prefetch", pa.VARIANTS)
def test_every_pa_decode_variant_the_tuner_tries_assembles(warps, stages, one_launch, prefetch, fmt):
    """With bounds checks (the default), whose report paths hold values: at the fast mode's occupancy hint
    the single-warp kernel spilled 356-448 bytes on sm_90, so the hint is halved when checked; the kernels of
    four and eight warps spilled 344-448 bytes while LLVM sank the merged output into the checked store's
    branch (NVPTX now compiles without machine sinking). None spill."""
    case = make_case(num_seqs=2, num_q_heads=16, num_kv_heads=1, head_size=128, context_length=64, fmt=fmt)
    flyrt.set_bounds_checks(True)
    try:
        step = pa._Step(pa_step(case).buffers, stages, one_launch, warps, prefetch)
        code = step.launcher.lower(*step.args, target="cuda", arch="sm_90").device_code
    finally:
        flyrt.set_bounds_checks(None)
    assert sorted(code) == (["pa_decode_mma_kernel"] if one_launch else ["pa_combine_kernel", "pa_decode_mma_kernel"])
    assert f".reqntid {32 * warps}, 1, 1" in code["pa_decode_mma_kernel"]
    assert "flyrt_report" in code["pa_decode_mma_kernel"]  # the checks are there
    for kernel, ptx in code.items():
        report = ptxas.assemble(ptx, kernel)
        if kernel == "pa_decode_mma_kernel":
            assert re.search(r"\b0 bytes spill stores, 0 bytes spill loads", report), report


def test_float64_math_without_libdevice_is_a_clear_error():
    x = np.ones(8, np.float64)
    found = device_libraries.libdevice()  # found first: the first CUDA target would hand it over again
    _core.set_libdevice_path("")
    try:
        unary.lower(x, x, 8, lambda v: fx.exp(v.to(fx.Float32)), target="cuda", arch="sm_90")  # f32: no libdevice
        with pytest.raises(RuntimeError, match="Float64 exp or log.*libdevice.10.bc"):
            unary.lower(x, x, 8, lambda v: fx.log(v), target="cuda", arch="sm_90")
    finally:
        _core.set_libdevice_path(found)
    lowered = unary.lower(x, x, 8, lambda v: fx.log(v), target="cuda", arch="sm_90")
    ptx = lowered.device_code["_unary_kernel"]
    assert ".extern .func" not in ptx and "__nv_log" not in ptx  # libdevice's code, inlined
    ptxas.assemble(ptx)


def test_what_a_target_supports_comes_from_its_description():
    assert _core.nvptx_target(9, 0).sync_in_while and not _core.cpu_target(32).sync_in_while
    ptx = barrier_in_while.lower(np.zeros(4, np.float32), 3, target="cuda", arch="sm_90").device_code
    assert "bar.sync" in ptx["_barrier_in_while"]
    with pytest.raises(flyc.KernelError, match="not supported by the cpu target"):
        barrier_in_while(np.zeros(4, np.float32), 3)


def test_architectures_and_targets_by_name():
    assert cuda.arch_target("sm_89").cpu == "sm_89"
    assert cuda.arch_target("sm_100").cpu == "sm_90"  # LLVM 19's newest; the driver compiles it forward
    with pytest.raises(ValueError, match="named like 'sm_90'"):
        cuda.arch_target("hopper")
    with pytest.raises(ValueError, match="unknown target"):
        softmax.set_target("tpu")


@pytest.mark.skipif(_core.cuda_available(), reason="a GPU answers here: the GPU tests wait on it")
def test_synchronize_without_a_gpu_says_why():
    import flyrt

    with pytest.raises(RuntimeError, match="NVIDIA|CUDA"):
        flyrt.synchronize()


def _occupancy_kernel(blocks):
    @flyc.kernel(known_block_size=(64, 1, 1), min_blocks_per_sm=blocks)
    def occupied(x: fx.Tensor):
        x[fx.thread_idx.x] = x[fx.thread_idx.x] + 1.0

    @flyc.jit
    def launch(x: fx.Tensor):
        occupied(x).launch(block=(64,))

    return launch


def test_occupancy_hints_per_target():
    x = np.zeros(64, np.float32)
    per_target = _occupancy_kernel({"nvptx": 3, "amdgpu": 8})
    assert ".minnctapersm 3" in per_target.lower(x, target="cuda", arch="sm_90").device_code["occupied"]
    # 8 one-wave blocks per CU of 4 SIMDs: 2 waves each
    assert '"amdgpu-waves-per-eu"="2"' in per_target.lower(x, target="hip", arch="gfx942").llvm_ir
    only_amd = _occupancy_kernel({"amdgpu": 8})
    assert ".minnctapersm" not in only_amd.lower(x, target="cuda", arch="sm_90").device_code["occupied"]
    assert ".minnctapersm 5" in _occupancy_kernel(5).lower(x, target="cuda", arch="sm_90").device_code["occupied"]
    with pytest.raises(ValueError, match=r"min_blocks_per_sm names \['sm_90'\]; its keys are GPU targets"):
        _occupancy_kernel({"sm_90": 2})


def test_a_launch_can_give_its_own_occupancy_hint():
    """Each hint compiles a kernel of its own: a launcher launching one kernel with two hints gets two."""

    @flyc.kernel(known_block_size=(64, 1, 1), min_blocks_per_sm=3)
    def hinted(x: fx.Tensor, n: fx.Constexpr[int]):
        x[fx.thread_idx.x] = x[fx.thread_idx.x] + n

    @flyc.jit
    def launch(x: fx.Tensor):
        hinted(x, 1).launch(block=(64,))
        hinted(x, 1).launch(block=(64,), min_blocks_per_sm={"nvptx": 7})
        hinted(x, 1).launch(block=(64,), min_blocks_per_sm=7)  # the same hint on NVIDIA: the same kernel

    code = launch.lower(np.zeros(64, np.float32), target="cuda", arch="sm_90").device_code
    assert sorted(".minnctapersm 3" in ptx for ptx in code.values()) == [False, False, True], code.keys()

    @flyc.jit
    def misnamed(x: fx.Tensor):
        hinted(x, 1).launch(block=(64,), min_blocks_per_sm={"sm_90": 1})

    with pytest.raises(ValueError, match=r"min_blocks_per_sm names \['sm_90'\]"):
        misnamed.lower(np.zeros(64, np.float32), target="cuda", arch="sm_90")


def test_kernels_lowered_from_threads_at_once_match_one_at_a_time():
    # A compile releases the GIL and its kernels compile on threads of their
    # own, each on a target machine it leases: two launchers' compiles at
    # once must give the code each gives alone.
    import threading

    cases = [make_case(num_seqs=2, num_q_heads=8, num_kv_heads=2, head_size=128, context_length=64, fmt=fmt)
             for fmt in ("e4m3fnuz", "e4m3fn")]

    def lower(case):
        step = pa_step(case)
        return step.launcher.lower(*step.args, target="cuda", arch="sm_90").device_code

    alone = [lower(case) for case in cases]
    together = [None] * len(cases)

    def run(i):
        together[i] = lower(cases[i])

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(cases))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert together == alone
    assert len(alone[0]) == 2 and alone[0] != alone[1]
