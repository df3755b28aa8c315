"""Compiled kernels name the user's Python lines: PTX .file/.loc directives
(which ptxas keeps with -lineinfo, as the driver is asked to), DWARF line
tables in AMD code objects and in the CPU's objects, each naming the kernel's
file and a helper's own file and line; the IR text, which keys the disk
cache, names the files too."""

import importlib
import os
import re
import subprocess
import sys
import tempfile

import numpy as np
import pytest

import code_objects
import ptxas

HELPER = """\
def scaled(v):
    return v * 3.0
"""

KERNEL = """\
import flyrt.compiler as flyc
import flyrt.expr as fx
import line_helper


@flyc.kernel
def triple(x: fx.Tensor, y: fx.Tensor, n: fx.Int32):
    i = fx.block_idx.x * fx.block_dim.x + fx.thread_idx.x
    if i < n:
        y[i] = line_helper.scaled(x[i])


@flyc.jit
def launch(x: fx.Tensor, y: fx.Tensor, n: fx.Int32):
    triple(x, y, n).launch(grid=((n + 63) // 64,), block=(64,))
"""
KERNEL_LINE, HELPER_LINE = 10, 2  # y[i] = ...; return v * 3.0


@pytest.fixture
def lines(tmp_path, monkeypatch):
    (tmp_path / "line_helper.py").write_text(HELPER)
    (tmp_path / "line_kernel.py").write_text(KERNEL)
    monkeypatch.syspath_prepend(str(tmp_path))
    yield importlib.import_module("line_kernel"), tmp_path
    for name in ("line_kernel", "line_helper"):
        sys.modules.pop(name, None)


def arrays():
    return np.ones(100, np.float32), np.zeros(100, np.float32), 100


def dwarf_lines(objects):
    """{file name: set of lines} of the line tables in ELF objects (llvm-dwarfdump)."""
    found = {}
    with tempfile.TemporaryDirectory() as work:
        for i, data in enumerate(objects):
            path = os.path.join(work, f"{i}.o")
            with open(path, "wb") as f:
                f.write(data)
            text = subprocess.run([code_objects.tool("llvm-dwarfdump"), "--debug-line", path], capture_output=True,
                                  text=True, check=True).stdout
            for table in text.split("debug_line[")[1:]:
                names = {int(i): name for i, name in re.findall(r'file_names\[\s*(\d+)\]:\s*\n\s*name: "([^"]+)"',
                                                               table)}
                for line, file in re.findall(r"^0x[0-9a-f]+\s+(\d+)\s+\d+\s+(\d+)", table, re.M):
                    found.setdefault(names.get(int(file)), set()).add(int(line))
    return found


def test_ptx_names_the_kernel_and_helper_lines_and_ptxas_keeps_them(lines):
    module, folder = lines
    lowered = module.launch.lower(*arrays(), target="cuda", arch="sm_90")
    ptx = lowered.device_code["triple"]
    files = dict(re.findall(r'\.file\s+(\d+)\s+"([^"]+)"', ptx))
    by_name = {os.path.basename(path): number for number, path in files.items()}
    assert files[by_name["line_kernel.py"]] == str(folder / "line_kernel.py")
    locs = set(re.findall(r"\.loc\s+(\d+)\s+(\d+)", ptx))
    assert (by_name["line_kernel.py"], str(KERNEL_LINE)) in locs
    assert (by_name["line_helper.py"], str(HELPER_LINE)) in locs
    report = ptxas.assemble(ptx, "triple", extra=["-lineinfo"])
    assert "error" not in report.lower()


def test_amd_code_objects_and_cpu_objects_carry_line_tables(lines):
    module, _ = lines
    amd = module.launch.lower(*arrays(), target="hip", arch="gfx942").device_code["triple"]
    cpu = module.launch.lower(*arrays(), target="cpu").host_objects
    for objects in ([amd], cpu):
        found = dwarf_lines(objects)
        assert KERNEL_LINE in found.get("line_kernel.py", set()), found
        assert HELPER_LINE in found.get("line_helper.py", set()), found
    x, y, n = arrays()
    module.launch(x, y, n)
    assert np.all(y == 3.0)  # and the code with line information runs as before


def test_the_ir_names_each_file_so_the_disk_cache_tells_files_apart(lines):
    module, folder = lines
    text = module.launch.lower(*arrays(), target="cpu").ir
    assert f"of {folder / 'line_kernel.py'}" in text and f"of {folder / 'line_helper.py'}" in text
