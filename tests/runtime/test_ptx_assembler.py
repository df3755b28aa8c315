"""PTX assembled into cubins in-process, without a GPU: with
FLYDSL_NVJITLINK=1 and nvJitLink found (PyPI's nvidia-nvjitlink-cu12, pinned
in requirements.txt), a CUDA device target turns it on and kernels carry a
cubin beside their PTX, which the driver then loads instead of compiling the
PTX; a library that cannot assemble is one warning and the PTX path; unset,
nothing is assembled. (tests/gpu loads both kinds.)"""

import json
import struct
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import flyrt
from flyrt import _core
from flyrt.drivers import device_libraries
from flyrt.runtime import launcher as launcher_module

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "notebooks"))

from kernels.vector_add import vector_add  # noqa: E402
from test_invalidation import TWO_KERNELS, make_module  # noqa: E402,F401  (make_module: a fixture)
from test_warm_start import child_env  # noqa: E402

EM_CUDA = 190


@pytest.fixture
def assembler(monkeypatch):
    """The nvJitLink FLYDSL_NVJITLINK=1 finds here, turned on as a CUDA device target does; off again afterwards."""
    monkeypatch.setenv("FLYDSL_NVJITLINK", "1")
    path = device_libraries.find_ptx_assembler()
    assert path, "no nvJitLink found: requirements.txt pins nvidia-nvjitlink-cu12"
    _core.set_ptx_assembler_path(path)
    yield path
    _core.set_ptx_assembler_path("")


def cubin_architecture(cubin):
    """The SM a cubin is for, from its ELF header's e_flags: the low byte in
    CUDA 12's cubins (ELF ABI version 7), the next one in CUDA 13's (8)."""
    flags = struct.unpack_from("<I", cubin, 48)[0]
    return (flags >> 8 if cubin[8] >= 8 else flags) & 0xFF


def compiled_kernels(n):
    """vector_add compiled for sm_90 without a GPU (a size no other test uses: a fresh artifact)."""
    a = np.ones(n, np.float32)
    flyrt.set_compile_only("sm_90")
    try:
        vector_add(a, a, np.zeros_like(a), n)
        return {k.kernel: k for k in vector_add.device_kernels()}
    finally:
        flyrt.set_compile_only(None)


def test_kernels_carry_a_cubin_for_their_architecture_where_nvjitlink_is_found(assembler):
    kernel = compiled_kernels(1001)["vector_add_kernel"]
    assert kernel.image_kind == "cubin" and kernel.image_bytes > 1000
    a = np.ones(16, np.float32)
    lowered = vector_add.lower(a, a, a, 16, target="cuda", arch="sm_90")
    cubin = lowered.device_binaries["vector_add_kernel"]
    assert cubin[:4] == b"\x7fELF" and struct.unpack_from("<H", cubin, 18)[0] == EM_CUDA
    assert cubin_architecture(cubin) == 90
    assert lowered.device_code["vector_add_kernel"].startswith("//")  # the PTX is kept beside it


def test_a_helper_edit_assembles_only_the_kernel_that_inlines_it(assembler, make_module):
    mod = make_module(TWO_KERNELS)
    x = np.ones(8, np.float32)

    def cubins():
        flyrt.set_compile_only("sm_90")
        try:
            mod.launch(x, np.zeros_like(x))
            return {k.kernel: k.image_kind for k in mod.launch.device_kernels()}
        finally:
            flyrt.set_compile_only(None)

    assert cubins() == {"uses_helper": "cubin", "doubles": "cubin"}
    assembled, reused = _core.assembled_cubin_counts()
    exec("def helper(v):\n    return v * 10.0\n", mod.__dict__)
    assert cubins() == {"uses_helper": "cubin", "doubles": "cubin"}
    # the edited kernel is assembled; the other's PTX is the same, and so is its cubin
    after = _core.assembled_cubin_counts()
    assert (after[0] - assembled, after[1] - reused) == (1, 1)


WARM_EDIT = """
import json
import sys
import numpy as np
import flyrt
import flyrt.compiler as flyc
from flyrt import _core
from flyrt.drivers import device_libraries
import two_kernels

_core.set_ptx_assembler_path(device_libraries.find_ptx_assembler())
flyrt.set_compile_only("sm_90")
x = np.ones(8, np.float32)
two_kernels.launch(x, np.zeros_like(x))
first = flyc.compile_log()[-1].source
step = float(sys.argv[1])
two_kernels.helper = lambda v: v * step  # reaches uses_helper, not doubles; new to the disk cache
two_kernels.launch(x, np.zeros_like(x))
print(json.dumps([first, *_core.assembled_cubin_counts()]))
"""


def test_after_a_warm_start_a_helper_edit_assembles_only_the_kernel_it_changed(assembler, tmp_path):
    """The cubins of a payload from the disk cache are kept as the process's own: the edit reassembles
    `uses_helper` and reuses `doubles`' cubin (it assembled both before the payload kept them)."""
    (tmp_path / "two_kernels.py").write_text("import flyrt.compiler as flyc\nimport flyrt.expr as fx\n" + TWO_KERNELS)
    (tmp_path / "warm_edit.py").write_text(WARM_EDIT)
    env = child_env(tmp_path)

    def run(step):
        done = subprocess.run([sys.executable, str(tmp_path / "warm_edit.py"), str(step)], env=env, capture_output=True,
                              text=True, cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout.splitlines()[-1])

    assert run(10) == ["compiled", 3, 1]  # both kernels, then the edited one; doubles' cubin reused
    assert run(20) == ["disk cache, no trace", 1, 1]  # the warm start's cubins kept: only the edited kernel


def test_without_nvjitlink_the_ptx_goes_to_the_driver():
    _core.set_ptx_assembler_path("")
    kernel = compiled_kernels(1002)["vector_add_kernel"]
    assert kernel.image_kind == "ptx"


def test_the_assembler_is_part_of_the_disk_cache_key(assembler):
    target = flyrt.drivers.cuda.arch_target("sm_90")
    on = launcher_module._compiler_id(target)
    _core.set_ptx_assembler_path("")
    off = launcher_module._compiler_id(target)
    assert "assembler none" in off and on != off and "libnvJitLink" in on


@pytest.mark.parametrize("content, problem", [(b"not a library", "cannot open nvJitLink"),
                                              (None, "is not an nvJitLink")])
def test_a_library_that_cannot_assemble_is_one_warning_and_the_ptx_path(tmp_path, monkeypatch, content, problem):
    if content is None:
        path = _core.__file__  # a shared library, without nvJitLink's functions
    else:
        path = tmp_path / "libnvJitLink.so.13"
        path.write_bytes(content)
    monkeypatch.setenv("FLYDSL_NVJITLINK", str(path))
    device_libraries.ptx_assembler.cache_clear()
    try:
        with pytest.warns(RuntimeWarning, match=problem):
            assert device_libraries.ptx_assembler() == ""
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            assert device_libraries.ptx_assembler() == ""  # once
        assert _core.ptx_assembler_path() == ""
        assert compiled_kernels(1003 if content else 1004)["vector_add_kernel"].image_kind == "ptx"
    finally:
        device_libraries.ptx_assembler.cache_clear()


@pytest.mark.parametrize("setting", [None, "", "0", "none"])
def test_nvjitlink_is_used_only_when_asked_for(monkeypatch, setting):
    if setting is None:
        monkeypatch.delenv("FLYDSL_NVJITLINK", raising=False)
    else:
        monkeypatch.setenv("FLYDSL_NVJITLINK", setting)
    assert device_libraries.find_ptx_assembler() == ""
    monkeypatch.setenv("FLYDSL_NVJITLINK", "1")
    assert "libnvJitLink" in device_libraries.find_ptx_assembler()
