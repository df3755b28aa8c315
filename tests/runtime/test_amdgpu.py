"""The AMD target without an AMD GPU: code objects for gfx942 read by LLVM's
own tools (code_objects.py), the argument packing HIP launches use, and
compile-only mode. Nothing here runs on AMD hardware."""

import sys
from pathlib import Path

import numpy as np
import pytest

import flyrt
import flyrt.compiler as flyc
import flyrt.expr as fx
from flyrt import _core, fp8

import code_objects
import test_matrix as matrix

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "notebooks"))

from kernels.fp8_dequant import dequantize_scale  # noqa: E402
from kernels.gemm_mma import gemm_mma  # noqa: E402
from kernels.softmax import softmax  # noqa: E402
from kernels.vector_add import vector_add  # noqa: E402


def test_architectures_by_name():
    t = _core.amdgpu_target("gfx942")
    assert (t.cpu, t.warp_size, t.triple, t.matrix_multiply) == ("gfx942", 64, "amdgcn-amd-amdhsa", True)
    assert _core.amdgpu_target("gfx942:sramecc+:xnack-").cpu == "gfx942"
    assert _core.amdgpu_target("gfx1100").features == "+wavefrontsize64"  # wave64 where wave32 is the default
    assert not _core.amdgpu_target("gfx908").matrix_multiply
    with pytest.raises(ValueError, match="'gfx9999' is not an AMD GPU architecture LLVM 19 knows .*gfx942"):
        _core.amdgpu_target("gfx9999")


def test_vector_add_code_object_and_its_argument_packing():
    a = np.ones(1000, np.float32)
    code = vector_add.lower(a, a, a.copy(), 1000, target="hip", arch="gfx942").device_code["vector_add_kernel"]
    notes = code_objects.check_code_object(code, "vector_add_kernel", 10)
    assert notes[".max_flat_workgroup_size"] == 256  # the launch's constant block, compiled in
    assert {"global_load_dword", "global_store_dword"} <= code_objects.instructions(code)
    # the bytes a launch hands HIP: each slot's low bytes where the metadata puts that argument
    slots = [0x1111222233334444 + i for i in range(10)]
    packed = _core.pack_kernel_arguments(code, "vector_add_kernel", slots)
    for slot, argument in zip(slots, notes[".args"]):
        at, size = argument[".offset"], argument[".size"]
        assert packed[at:at + size] == slot.to_bytes(8, "little")[:size]


def test_shared_memory_barriers_and_shuffles():
    x = np.zeros((4, 1000), np.float32)
    code = softmax.lower(x, x.copy(), target="hip", arch="gfx942").device_code["softmax_kernel"]
    used = code_objects.instructions(code)
    assert "s_barrier" in used and "ds_bpermute_b32" in used
    assert any(i.startswith("ds_write") for i in used) and any(i.startswith("ds_read") for i in used)
    assert code_objects.kernel_notes(code, "softmax_kernel")[".group_segment_fixed_size"] > 0  # static LDS stated


@pytest.mark.parametrize("fmt", ["e4m3fnuz", "e4m3fn"])
def test_fp8_decodes_with_the_conversion_instruction(fmt):
    codes = fp8.as_fp8(np.zeros((8, 64), np.uint8), fmt)
    code = dequantize_scale.lower(codes, np.ones(8, np.float32), np.zeros((8, 64), np.float32), True,
                                  target="hip", arch="gfx942").device_code["dequant_kernel"]
    assert any(i.startswith("v_cvt_pk_f32_fp8") for i in code_objects.instructions(code))


def test_mma_runs_on_the_matrix_cores():
    a, b = np.zeros((32, 32), np.float16), np.zeros((32, 32), np.float16)
    code = gemm_mma.lower(a, b, np.zeros((32, 32), np.float32), target="hip", arch="gfx942").device_code
    used = code_objects.instructions(next(iter(code.values())))
    assert any(i.startswith("v_mfma_f32_16x16x16") for i in used), sorted(used)
    with pytest.raises(flyc.KernelError, match="AMD GPU with MFMA"):
        gemm_mma.lower(a, b, np.zeros((32, 32), np.float32), target="hip", arch="gfx908")


@flyc.jit
def mma_in_blocks_of(a: fx.Tensor, b: fx.Tensor, c: fx.Tensor, d: fx.Tensor, THREADS: fx.Constexpr[int]):
    """test_matrix.py's kernel (each warp's d = a b + c) in blocks of THREADS."""
    matrix._mma(a, b, c, d, 16).launch(block=(THREADS,))


def test_mma_in_a_block_that_is_part_of_a_wave_is_an_error_for_amd():
    """An MFMA reads its operands from all 64 lanes of a wave, and a block of 32 threads leaves lanes 32-63 off
    (their registers stale): refused at the fx.mma line, as is a block whose size the trace does not know; a
    block of whole waves compiles, each fx.mma two MFMAs (one a warp)."""
    a, b = np.zeros((2, 16, 16), np.float16), np.zeros((2, 16, 8), np.float16)
    c = np.zeros((2, 16, 8), np.float32)
    with pytest.raises(flyc.KernelError, match="fx.mma on gfx942 needs blocks of whole 64-lane waves.*is 32 threads"
                       ) as raised:
        mma_in_blocks_of.lower(a, b, c, c.copy(), 32, target="hip", arch="gfx942")
    assert "test_matrix.py:" in str(raised.value)
    with pytest.raises(flyc.KernelError, match="block is not known"):
        matrix.mma.lower(a, b, c, c.copy(), target="hip", arch="gfx942")  # block=(32 * a.shape[0],)
    code = mma_in_blocks_of.lower(a, b, c, c.copy(), 64, target="hip", arch="gfx942").device_code["_mma"]
    assert code_objects.disassembly(code).count("v_mfma_f32_16x16x16") == 2
    assert mma_in_blocks_of.lower(a, b, c, c.copy(), 32, target="cuda", arch="sm_90").device_code  # NVIDIA: warps


@pytest.mark.compiled_for("amdgpu")  # (PA decode traced for gfx942 is its wave kernel)
@pytest.mark.parametrize("checked", [False, True], ids=["fast mode", "bounds checks (the default)"])
def test_pa_decode_compiles_without_spills(checked):
    """Nothing goes to scratch in either mode. With bounds checks (the
    default) the matrix-unit kernel keeps some scalar values in vector
    registers' lanes (SGPR spills, 132 seen here: its page-table-dependent
    accesses keep their checks, and each check's report path holds values)."""
    import kernels.pa_decode_fp8 as pa
    from kernels.pa_reference import make_case

    flyrt.set_compile_only("gfx942")
    flyrt.set_bounds_checks(checked)
    try:
        launcher = pa.compile_pa_decode_ps(None, False, True, 4, False, 1, "e4m3fnuz")["launch"]
        pa.pa_decode_ps_launch(**make_case(seed=1))
        code = launcher.device_code()
    finally:
        flyrt.set_compile_only(None)
        flyrt.set_bounds_checks(None)
    assert code, "PA decode compiled nothing"
    for kernel, image in code.items():
        notes = code_objects.check_code_object(image, kernel, 0)
        assert notes[".vgpr_spill_count"] == 0 and notes[".private_segment_fixed_size"] == 0, kernel
        if not checked:
            assert notes[".sgpr_spill_count"] == 0, kernel


@pytest.mark.compiled_for("amdgpu")  # (PA decode traced for gfx942 is its wave kernel)
@pytest.mark.parametrize("fmt", ["e4m3fnuz", "e4m3fn"])
def test_pa_decode_on_gfx942_is_a_wave_in_mfmas_own_layout(fmt):
    """The wave kernel (fx.wave_mma): one 64-lane wave a block, each tile 8 MFMAs for its scores and 8 for
    its values at head 128, no value moved between lanes but a row's softmax statistics (two shuffles for
    its peak, two for its sum), nothing in scratch."""
    import kernels.pa_decode_fp8 as pa
    from kernels.pa_reference import make_case

    flyrt.set_compile_only("gfx942")
    flyrt.set_bounds_checks(False)
    wanted = pa.USE_MMA_KERNEL
    pa.USE_MMA_KERNEL = True
    try:
        pa.pa_decode_ps_launch(**make_case(num_seqs=2, num_q_heads=16, num_kv_heads=1, head_size=128, seed=1,
                                           fmt=fmt))
        code = pa.compile_pa_decode_ps(None, False, True, 16, False, 1, fmt)["launch"].device_code()
    finally:
        pa.USE_MMA_KERNEL = wanted
        flyrt.set_compile_only(None)
        flyrt.set_bounds_checks(None)
    assert sorted(code) == ["pa_combine_kernel", "pa_decode_wave_kernel"]
    image = code["pa_decode_wave_kernel"]
    notes = code_objects.check_code_object(image, "pa_decode_wave_kernel", 0)
    assert notes[".vgpr_spill_count"] == 0 and notes[".private_segment_fixed_size"] == 0, notes
    assert notes[".max_flat_workgroup_size"] == 64
    text = code_objects.disassembly(image)
    assert text.count("v_mfma_f32_16x16x16_f16") == 16  # its fragments are f16: exact products
    assert text.count("ds_bpermute") == 4


@pytest.mark.compiled_for("amdgpu")  # (PA decode traced for gfx942 is its wave kernel)
@pytest.mark.parametrize("warps, stages, one_launch, prefetch", [
    (1, 1, False, False), (1, 1, False, True), (4, 1, False, False), (4, 1, False, True), (8, 1, False, True)])
def test_every_pa_decode_variant_the_tuner_tries_is_the_wave_kernel_on_gfx942(warps, stages, one_launch,
                                                                              prefetch):
    """The tuner's variants (pa.VARIANTS, spelled out: a change there is a change here too) are the 32-lane
    kernel's: on AMD each is the one wave kernel."""
    import kernels.pa_decode_fp8 as pa
    from kernels.pa_reference import make_case

    assert (warps, stages, one_launch, prefetch) in pa.VARIANTS
    case = make_case(num_seqs=2, num_q_heads=16, num_kv_heads=1, head_size=128, context_length=64)
    buffers = pa._decode_buffers(**case, softmax_scale=None, workers=2, out=np.zeros_like(case["query"]),
                                 pages_per_work=None)
    images = {}
    for variant in ((1, 1, False, False), (warps, stages, one_launch, prefetch)):
        step = pa._Step(buffers, variant[1], variant[2], variant[0], variant[3])
        images[variant] = step.launcher.lower(*step.args, target="hip", arch="gfx942").device_code
    assert images[(1, 1, False, False)] == images[(warps, stages, one_launch, prefetch)]


@flyc.kernel
def _unary(x: fx.Tensor, y: fx.Tensor):
    i = fx.thread_idx.x
    y[i] = fx.exp(x[i]) + fx.log2(x[i])


@flyc.jit
def unary(x: fx.Tensor, y: fx.Tensor):
    _unary(x, y).launch(grid=(1,), block=(64,))


def test_float64_math_needs_no_device_library():
    x = np.ones(64)
    code = unary.lower(x, x.copy(), target="hip", arch="gfx942").device_code["_unary"]
    code_objects.check_code_object(code, "_unary", 4)  # linked with --no-undefined: nothing left to resolve


def test_compile_only_mode_compiles_once_runs_nothing_and_switches_cleanly():
    a = np.ones(300, np.float32)
    c = np.zeros(300, np.float32)
    flyrt.set_compile_only("gfx942")
    try:
        start = vector_add.cache_info()
        assert vector_add(a, a, c, 300) is None
        vector_add(a, a, c, 300)
        assert vector_add.cache_info().compiles == start.compiles + 1  # the second call hits
        before = vector_add.cache_info()
        assert before.size == 1
        assert c.sum() == 0  # nothing ran
        assert vector_add.device_code()["vector_add_kernel"][:4] == b"\x7fELF"
        flyrt.set_compile_only("gfx90a")  # another architecture: nothing compiled for gfx942 serves it
        vector_add(a, a, c, 300)
        after = vector_add.cache_info()
        assert after.size == 1 and after.compiles == before.compiles + 1
    finally:
        flyrt.set_compile_only(None)
    vector_add(a, a, c, 300)  # back on the CPU: a fresh compile, and it runs
    np.testing.assert_array_equal(c, 2 * a)


def test_running_on_hip_says_what_stands_in_the_way():
    """Without HIP (every machine here): one error saying the target is
    compile-only. With an AMD GPU, the host arrays are what is refused."""
    a = np.ones(8, np.float32)
    vector_add.set_target("hip")
    try:
        if _core.hip_problem():
            expected = "runs on the hip target, but no (HIP runtime|AMD GPU).*compile-only"
            with pytest.raises(RuntimeError, match=expected):
                vector_add(a, a, a.copy(), 8)
        else:
            with pytest.raises(ValueError, match="argument 'a' is a host array, but launcher vector_add runs on HIP"):
                vector_add(a, a, a.copy(), 8)
    finally:
        vector_add.set_target("auto")


@flyc.kernel
def two_large_shared_arrays(x: fx.Tensor):
    a = fx.shared((10240,), fx.Float32)  # 40 KB each: each fits a block's 64 KB of LDS, together they do not
    b = fx.shared((10240,), fx.Float32)
    a[fx.thread_idx.x] = 1.0
    b[fx.thread_idx.x] = 2.0
    fx.barrier()
    x[fx.thread_idx.x] = a[fx.thread_idx.x] + b[fx.thread_idx.x]


@flyc.jit
def launch_two_large_shared_arrays(x: fx.Tensor):
    two_large_shared_arrays(x).launch(grid=(1,), block=(64,))


@pytest.mark.compiled_for("nvptx")  # sm_90's 227 KB hold them
def test_lds_over_the_limit_is_an_error_naming_the_kernel_line_not_an_exit():
    """LLVM reports it as a diagnostic, which with no handler of flyrt's ends
    the process (exit(1)): the notebook kernel would die."""
    x = np.zeros(64, np.float32)
    for _ in range(2):  # a failed compile is not kept: the second fails the same way
        with pytest.raises(RuntimeError, match=r"LLVM cannot compile for gfx942: test_amdgpu.py:\d+:0: local memory "
                                               r"\(81920\) exceeds limit \(65536\) in function 'two_large_shared_arrays'"):
            launch_two_large_shared_arrays.lower(x, target="hip", arch="gfx942")
    assert vector_add.lower(x, x, x.copy(), 64, target="hip", arch="gfx942").device_code  # and the process goes on
