"""NVIDIA's assembler for the PTX flyrt makes: PyPI's nvidia-cuda-nvcc-cu12
(pinned in requirements.txt), or $FLYRT_PTXAS, or one on PATH."""

import importlib.util
import os
import re
import shutil
import subprocess
import tempfile

from flyrt import _core
from flyrt.drivers import cuda

ARCH = "sm_90"


def find():
    if os.environ.get("FLYRT_PTXAS"):
        return os.environ["FLYRT_PTXAS"]
    spec = importlib.util.find_spec("nvidia.cuda_nvcc")
    for root in (spec.submodule_search_locations or []) if spec else []:
        candidate = os.path.join(root, "bin", "ptxas")
        if os.access(candidate, os.X_OK):
            return candidate
    return shutil.which("ptxas")


def assemble(ptx, name="kernel", extra=()):
    """Assembles `ptx` for sm_90 (with ptxas options `extra`); returns ptxas's report, raises
    AssertionError with it on failure."""
    with tempfile.TemporaryDirectory() as work:
        source = os.path.join(work, f"{name}.ptx")
        with open(source, "w") as f:
            f.write(ptx)
        done = subprocess.run([find(), f"-arch={ARCH}", "-v", *extra, source, "-o", os.path.join(work, "k.cubin")],
                              capture_output=True, text=True)
    if done.returncode != 0:
        raise AssertionError(f"ptxas rejected {name}:\n{done.stderr}")
    return done.stderr


def check_module(module):
    """Compiles a traced module for sm_90 and assembles every kernel; returns their names."""
    target = cuda.arch_target(ARCH)  # the drivers' target: it hands the compiler libdevice
    payload, _ = module.compile(target)
    images = _core.device_images(payload)
    for kernel, ptx in images:
        externs = re.findall(r"\.extern \.func .*?(\w+)$", ptx, re.M)
        assert externs in ([], ["vprintf"]), f"{kernel}: PTX calls {externs}: the driver resolves vprintf alone"
        assemble(ptx, kernel)
    return [kernel for kernel, _ in images]
