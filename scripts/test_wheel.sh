#!/usr/bin/env bash
# The main venv's CPython's wheel (scripts/build_wheels.sh), proven the way a
# user gets it: `pip install` into a fresh venv (.venv-wheel, made anew each
# run) with only what the wheel's metadata asks for, then the test tools; the
# kernel's tests of what a client drives (protocol, conformance, console,
# notebooks) and the FlyDSL adapter's run from that venv, its kernelspec and
# its flyrt (the kernel's other tests exercise the same Python code on the
# source build), with the runtime's tests of what the wheel builds
# differently from the source tree:
# LLVM linked in statically (every example compiled for the CPU, sm_90 and
# gfx942; the device libraries and the AMDGPU assembler under math and printf)
# and a package in site-packages (warm start, the disk cache and its trust).
# The main suite runs all of them on the source build. The main venv supplies
# ptxas and libdevice (as for scripts/test_pythons.sh).
#   scripts/test_wheel.sh [--install-only | PYTEST_ARGS...]
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/python_envs.sh
version=$(.venv/bin/python -c 'import sys; print("%d.%d" % sys.version_info[:2])')
scripts/build_wheels.sh "$version"  # incremental: seconds when dist/ has it already
wheel=$(wheel_for "$version")
base=$(.venv/bin/python -c 'import sys; print(sys._base_executable)')
venv=.venv-wheel

rm -rf "$venv"
"$base" -m venv "$venv"
pip=("$venv/bin/python" -m pip install -q --disable-pip-version-check -c requirements.txt)
"${pip[@]}" "$wheel"
"$venv/bin/python" - "$PWD/$venv" <<'PY'
import os, sys
import flyrt, xflydsl, xflydsl_shell
for module in (flyrt, xflydsl, xflydsl_shell):
    assert module.__file__.startswith(sys.argv[1]), f"{module.__name__} from {module.__file__}, not the wheel"
assert os.path.isfile(os.path.join(sys.prefix, "share/jupyter/kernels/xflydsl/kernel.json")), "no kernelspec"
PY
"${pip[@]}" pytest pytest-xdist jupyter_client jupyter_kernel_test jupyter_console nbconvert nbclient nbformat \
    ipywidgets matplotlib PyYAML torch flydsl
echo "test_wheel: $(basename "$wheel") in a fresh $("$venv/bin/python" --version) venv"
[[ ${1:-} == --install-only ]] && exit 0

export_main_venv_toolchain
export PATH="$PWD/$venv/bin:$PATH" PYDEVD_DISABLE_FILE_VALIDATION=1
kernel=(test_protocol.py test_conformance.py test_console.py test_notebooks.py)
runtime=(test_examples.py test_math.py test_printf.py test_warm_start.py test_disk_cache.py test_cache_trust.py)
python -m pytest "${kernel[@]/#/tests/kernel/}" tests/flydsl_adapter "${runtime[@]/#/tests/runtime/}" -p no:cacheprovider \
    -q -rs "$@"
