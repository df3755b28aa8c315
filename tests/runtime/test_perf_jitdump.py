"""FLYDSL_PERF_JITDUMP=1: the CPU's JIT-compiled code is registered with
Linux perf through a jitdump file (each function's code and its Python
lines), and `perf record` + `perf inject --jit` + `perf annotate` attribute
a kernel's samples to the lines of its .py file."""

import importlib
import os
import re
import shutil
import struct
import subprocess
import sys

import numpy as np
import pytest

import code_objects

KERNEL = """\
import numpy as np
import flyrt.compiler as flyc
import flyrt.expr as fx


@flyc.kernel
def saxpy(x: fx.Tensor, y: fx.Tensor, n: fx.Int32):
    i = fx.block_idx.x * fx.block_dim.x + fx.thread_idx.x
    if i < n:
        y[i] = 2.0 * x[i] + y[i]


@flyc.jit
def launch(x: fx.Tensor, y: fx.Tensor, n: fx.Int32):
    saxpy(x, y, n).launch(grid=((n + 255) // 256,), block=(256,))


x = np.ones(1 << 20, np.float32)
y = np.zeros_like(x)
for _ in range({repeats}):
    launch(x, y, x.size)
assert y[0] == 2.0 * {repeats}, y[0]
"""
BODY_LINES = {8, 9, 10}  # the kernel's statements in KERNEL
STORE_LINE = 10

JIT_CODE_LOAD, JIT_CODE_DEBUG_INFO = 0, 2


def run_script(tmp_path, repeats=2, jitdump="1", prefix=()):
    script = tmp_path / "perf_kernel.py"
    script.write_text(KERNEL.format(repeats=repeats))
    env = dict(os.environ, FLYDSL_PERF_JITDUMP=jitdump, JITDUMPDIR=str(tmp_path / "dumps"),
               FLYDSL_RUNTIME_CACHE_DIR=str(tmp_path / "cache"))
    return script, subprocess.run([*prefix, sys.executable, str(script)], env=env, capture_output=True, text=True,
                                  timeout=300, cwd=tmp_path)


def read_jitdump(path):
    """(header flags, {code address: name}, {code address: [(file, line, address)]})."""
    data = path.read_bytes()
    magic, version, size, _machine, _pad, _pid, _time, flags = struct.unpack_from("<IIIIIIQQ", data)
    assert (magic, version) == (0x4A695444, 1)
    loads, lines, at = {}, {}, size
    while at < len(data):
        kind, total, _ = struct.unpack_from("<IIQ", data, at)
        if kind == JIT_CODE_LOAD:
            _pid, _tid, _vma, address, _size, _index = struct.unpack_from("<IIQQQQ", data, at + 16)
            name = data[at + 56:data.index(b"\0", at + 56)].decode()
            loads[address] = name
        elif kind == JIT_CODE_DEBUG_INFO:
            address, entries = struct.unpack_from("<QQ", data, at + 16)
            entry = at + 32
            for _ in range(entries):
                at_address, line, _discriminator = struct.unpack_from("<QII", data, entry)
                end = data.index(b"\0", entry + 16)
                lines.setdefault(address, []).append((data[entry + 16:end].decode(), line, at_address))
                entry = end + 1
        at += total
    return flags, loads, lines


def the_dump(tmp_path):
    dumps = list((tmp_path / "dumps" / ".debug" / "jit").glob("*/jit-*.dump"))
    assert len(dumps) == 1, dumps
    return dumps[0]


def test_the_jitdump_names_each_function_and_its_python_lines(tmp_path):
    script, done = run_script(tmp_path)
    assert done.returncode == 0, done.stderr
    flags, loads, lines = read_jitdump(the_dump(tmp_path))
    assert flags == 0  # perf inject refuses other flags (LLVM 19 leaves them unset; flyrt zeroes them)
    kernel = [address for address, name in loads.items() if name.startswith("saxpy")]
    assert kernel, loads
    named = {line for address in kernel for file, line, _ in lines.get(address, []) if file == str(script)}
    assert STORE_LINE in named and named <= BODY_LINES | {0, 6, 7}, named  # 0: code no statement owns


def test_each_line_entry_is_at_the_address_of_its_code(tmp_path):
    """The dump's line entries are the kernel's own line table (LLVM's, read from the same code compiled to
    an object), at the addresses of the code they name, as the jitdump format defines them: not shifted by
    the 0x40 that LLVM 19's plugin adds for older perf, which made perf read every line 0x40 bytes late."""
    script, done = run_script(tmp_path)
    assert done.returncode == 0, done.stderr
    _, loads, lines = read_jitdump(the_dump(tmp_path))
    (code,) = [address for address, name in loads.items() if name == "saxpy.blocks"]
    dumped = [(at - code, line) for _, line, at in lines[code]]
    module = tmp_path / "kernel_only.py"
    module.write_text(KERNEL.split("\n\nx = np.ones")[0])
    sys.path.insert(0, str(tmp_path))
    try:
        kernel_only = importlib.import_module("kernel_only")
        x = np.ones(1 << 20, np.float32)
        objects = kernel_only.launch.lower(x, np.zeros_like(x), x.size, target="cpu").host_objects
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("kernel_only", None)
    image = next(o for o in objects
                 if re.search(r" T saxpy\.blocks$", code_objects.run_tool("llvm-nm", o, "--defined-only"), re.M))
    table = code_objects.run_tool("llvm-dwarfdump", image, "--debug-line")
    own = [(int(address, 16), int(line)) for address, line in re.findall(r"^(0x[0-9a-f]+)\s+(\d+)", table, re.M)]
    assert own and dumped == own[:len(dumped)], (dumped[:8], own[:8])


def test_nothing_is_dumped_unless_asked(tmp_path):
    _, done = run_script(tmp_path, jitdump="0")
    assert done.returncode == 0, done.stderr
    assert not (tmp_path / "dumps").exists()


def test_an_unwritable_dump_directory_is_a_clear_error(tmp_path):
    (tmp_path / "dumps").write_text("a file, not a directory")
    _, done = run_script(tmp_path)
    assert done.returncode != 0
    assert "FLYDSL_PERF_JITDUMP=1: cannot create" in done.stderr and "JITDUMPDIR" in done.stderr, done.stderr
    assert "perf_kernel.py" in done.stderr  # where: the launch's line


def perf_can_record(tmp_path):
    if shutil.which("perf") is None:
        return "perf is not installed (Debian's linux-perf)"
    probe = subprocess.run(["perf", "record", "-o", str(tmp_path / "probe.data"), "--", "true"],
                           capture_output=True, text=True)
    return None if probe.returncode == 0 else f"perf record cannot sample here: {probe.stderr.strip()[-200:]}"


def test_perf_annotate_attributes_samples_to_the_kernels_lines(tmp_path):
    why_not = perf_can_record(tmp_path)
    if why_not:
        pytest.skip(why_not)
    recorded = tmp_path / "perf.data"
    script, done = run_script(tmp_path, repeats=300, prefix=("perf", "record", "-k", "1", "-o", str(recorded), "--"))
    assert done.returncode == 0, done.stderr
    injected = tmp_path / "perf.jit.data"
    inject = subprocess.run(["perf", "inject", "--jit", "-i", str(recorded), "-o", str(injected)],
                            capture_output=True, text=True, cwd=tmp_path)
    assert inject.returncode == 0 and "invalid" not in inject.stderr, inject.stderr
    _, loads, _ = read_jitdump(the_dump(tmp_path))
    symbol = next(name for name in loads.values() if name.startswith("saxpy"))
    annotate = subprocess.run(["perf", "annotate", "-i", str(injected), "--stdio", "-l", symbol],
                              capture_output=True, text=True, cwd=tmp_path)
    assert annotate.returncode == 0, annotate.stderr
    attributed = {int(line) for line in re.findall(rf"{script.name}:(\d+)", annotate.stdout)}
    assert STORE_LINE in attributed, annotate.stdout[:2000]
