"""AMD code objects flyrt makes, read by LLVM 19's own tools: llvm-readelf
--notes for the metadata HIP reads (a reader independent of flyrt's) and
llvm-objdump -d for the instructions ($FLYRT_LLVM_BIN, else the -19 names
on PATH, else Debian's /usr/lib/llvm-19/bin: not an unversioned one on
PATH, which may be another LLVM's)."""

import os
import re
import shutil
import subprocess
import tempfile

import yaml

from flyrt import _core
from flyrt.drivers import hip

ARCH = "gfx942"


def tool(name):
    chosen = os.environ.get("FLYRT_LLVM_BIN")
    for candidate in ([os.path.join(chosen, name)] if chosen else []) + [f"{name}-19", f"/usr/lib/llvm-19/bin/{name}"]:
        found = shutil.which(candidate)
        if found:
            return found
    raise AssertionError(f"LLVM's {name} is missing (Debian's llvm-19 package has it)")


def run_tool(name, code, *arguments):
    """LLVM's `name` on an object file (`code`: its bytes, an AMD code object or a host object); its output."""
    with tempfile.NamedTemporaryFile(suffix=".o") as f:
        f.write(code)
        f.flush()
        done = subprocess.run([tool(name), *arguments, f.name], capture_output=True, text=True)
    if done.returncode != 0:
        raise AssertionError(f"{name} rejected the object:\n{done.stderr}")
    return done.stdout


def notes(code):
    """The code object's HSA metadata as llvm-readelf prints it (YAML), parsed."""
    text = run_tool("llvm-readelf", code, "--notes")
    document = text[text.index("---"):text.rindex("...")]
    return yaml.safe_load(document.replace("!str ", ""))


def kernel_notes(code, name):
    return next(k for k in notes(code)["amdhsa.kernels"] if k[".name"] == name)


def disassembly(code):
    return run_tool("llvm-objdump", code, "-d", f"--mcpu={ARCH}")


def instructions(code):
    """The mnemonics of the code object, each once."""
    return set(re.findall(r"^\s+([sv]_\w+|global_\w+|ds_\w+|buffer_\w+|flat_\w+|scratch_\w+)", disassembly(code),
                          re.M))


def check_code_object(code, kernel, parameters):
    """What every code object must say of `kernel` (which takes `parameters`
    native arguments): listed with 64-lane waves, and its arguments where
    flyrt's own reader (the one launches pack by) puts them."""
    listed = kernel_notes(code, kernel)
    assert listed[".wavefront_size"] == 64
    ours = next(k for k in _core.code_object_kernels(code) if k["name"] == kernel)
    theirs = [(a[".offset"], a[".size"]) for a in listed.get(".args", [])]
    assert [(a["offset"], a["size"]) for a in ours["arguments"]] == theirs
    assert len(theirs) >= parameters
    assert ours["kernarg_bytes"] == listed[".kernarg_segment_size"]
    assert "s_endpgm" in instructions(code)
    return listed


def check_module(module):
    """Compiles a traced module for gfx942 and checks every kernel's code
    object; returns their names."""
    payload, _ = module.compile(hip.arch_target(ARCH))  # the drivers' target: it hands the compiler ocml
    images = _core.device_images(payload)
    for kernel, code in images:
        assert isinstance(code, bytes) and code[:4] == b"\x7fELF", kernel
        check_code_object(code, kernel, 0)
    return [kernel for kernel, _ in images]
