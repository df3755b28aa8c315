#!/usr/bin/env bash
# On a machine with an NVIDIA GPU and no package access (the lent H200):
# builds flyrt for that machine's Python against the LLVM bundle brought
# along, runs the GPU tests and every runtime test there, and with --bench
# the GPU benchmarks. Make the bundle here first:
#   ../shared/tools/gpu-llvm-bundle .gpu/llvm.tar.xz
#   scripts/gpu_wheels.sh        # IPython and what it needs, for the Python there
# then run this there from the repository root, with .gpu brought along:
#   scripts/gpu_tests.sh [--bench]
set -euo pipefail
cd "$(dirname "$0")/.."
bench=0
[[ "${1:-}" == --bench ]] && bench=1
work=${FLYRT_GPU_WORK:-/tmp/flyrt-gpu}
python=${PYTHON:-python3}
mkdir -p "$work"
[[ -f $work/llvm/setup.sh ]] || tar xf "${FLYRT_LLVM_BUNDLE:-.gpu/llvm.tar.xz}" -C "$work"
source "$work/llvm/setup.sh"

# The default c++ there (and $CXX) is a wrapper that links libstdc++
# statically into shared objects: name the system's g++.
cxx=${FLYRT_GPU_CXX:-/usr/bin/x86_64-linux-gnu-g++-13}
start=$(date +%s)
cmake -S runtime -B "$work/build" -G Ninja -DLLVM_DIR="$LLVM_DIR" -DCMAKE_CXX_COMPILER="$cxx" \
    -DPython3_EXECUTABLE="$(command -v "$python")" -DCMAKE_INSTALL_PREFIX="$work/install" >/dev/null
cmake --build "$work/build"
cmake --install "$work/build" >/dev/null
site=$("$python" -c "import sys; print('$work/install/lib/python%d.%d/site-packages' % sys.version_info[:2])")
echo "gpu_tests: built flyrt in $(($(date +%s) - start)) s for $("$python" --version)"
export PYTHONPATH="$site${PYTHONPATH:+:$PYTHONPATH}" PYTHONDONTWRITEBYTECODE=1
# IPython (in-place reloads) as wheels brought along: scripts/gpu_wheels.sh
if [[ -d .gpu/wheels ]]; then
    "$python" -m pip install -q --no-index --no-deps --no-compile --target "$work/wheels" .gpu/wheels/*.whl
    export PYTHONPATH="$PYTHONPATH:$work/wheels"
fi

status=0
"$python" -m pytest tests/gpu --confcutdir=tests/gpu -p no:cacheprovider -q -rs || status=1
"$python" -m pytest tests/runtime --confcutdir=tests/runtime -p no:cacheprovider -q -rs || status=1
if ((bench)); then
    "$python" tests/bench/bench_gpu.py || status=1
fi
exit $status
