#!/usr/bin/env bash
# On a machine with an NVIDIA GPU and no package access (the lent H200), with
# .gpu/ brought along (scripts/gpu_bundle.sh makes it here): installs the
# cp312 wheel there (scripts/gpu_setup.sh), runs the GPU tests (the kernel's
# among them) and the kernel's protocol tests from it, then the main job (the
# notebooks through the kernel with nbconvert, on the GPU); with --bench also
# the GPU benchmarks. The runtime's and FlyDSL adapter's tests run on CI from
# the same wheel (scripts/test_pythons.sh). Executed notebooks land in
# build/executed_notebooks.
#   scripts/gpu_tests.sh [--bench]
set -euo pipefail
cd "$(dirname "$0")/.."
bench=0
[[ "${1:-}" == --bench ]] && bench=1
scripts/gpu_setup.sh
source "${FLYRT_GPU_WORK:-/tmp/xflydsl-gpu}/env.sh"
export PYDEVD_DISABLE_FILE_VALIDATION=1 PYTHONDONTWRITEBYTECODE=1
python -c "import flyrt, xflydsl, sys; print('gpu_tests: flyrt from', flyrt.__file__, 'on', sys.version.split()[0])"

status=0
python -m pytest tests/gpu --confcutdir=tests/gpu -p no:cacheprovider -q -rs || status=1
python -m pytest tests/kernel/test_protocol.py -p no:cacheprovider -q -rs || status=1
scripts/run_main.sh || status=1
if ((bench)); then
    python tests/bench/bench_gpu.py || status=1
    python tests/bench/bench_gpu_kernel.py || status=1
    python tests/bench/bench_gpu_atomics.py || status=1
    python tests/bench/bench_gpu_math.py || status=1
    python tests/bench/bench_gpu_fp8_mma.py || status=1
    python tests/bench/bench_gpu_async_copy.py || status=1
    python tests/bench/bench_gpu_tuning.py || status=1
fi
exit $status
