#!/usr/bin/env bash
# On a machine with an NVIDIA GPU and no package access (the lent H200), with
# .gpu/ brought along (scripts/gpu_bundle.sh makes it here): builds flyrt and
# the xflydsl kernel there (scripts/gpu_setup.sh), runs the GPU tests (the
# kernel's among them), every runtime test and, with .gpu-flydsl/ brought
# along, the FlyDSL adapter's, then the main job (the
# notebooks through the kernel with nbconvert, on the GPU); with --bench also
# the GPU benchmarks. Executed notebooks land in notebooks/_executed.
#   scripts/gpu_tests.sh [--bench]
set -euo pipefail
cd "$(dirname "$0")/.."
bench=0
[[ "${1:-}" == --bench ]] && bench=1
scripts/gpu_setup.sh
source "${FLYRT_GPU_WORK:-/tmp/xflydsl-gpu}/env.sh"
export PYTHONDONTWRITEBYTECODE=1
python=${PYTHON:-python3}

status=0
"$python" -m pytest tests/gpu --confcutdir=tests/gpu -p no:cacheprovider -q -rs || status=1
"$python" -m pytest tests/runtime --confcutdir=tests/runtime -p no:cacheprovider -q -rs || status=1
if "$python" -c "import flydsl" 2>/dev/null; then  # .gpu-flydsl/ came along: the adapter's tests on this Python
    "$python" -m pytest tests/flydsl_adapter -p no:cacheprovider -q -rs || status=1
fi
scripts/run_main.sh || status=1
if ((bench)); then
    "$python" tests/bench/bench_gpu.py || status=1
    "$python" tests/bench/bench_gpu_kernel.py || status=1
fi
exit $status
