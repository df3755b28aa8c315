#!/usr/bin/env bash
# On the lent GPU machine when little device time is left: what matters most
# first, each step under a time limit of its own, its output in LOGS/<step>.log
# (default: $OUT where the device tool sets it, else /tmp/xflydsl-quick):
#   1. the wheel installed (scripts/gpu_setup.sh)
#   2. PA decode's and the tuner's GPU tests (every kernel variant, FlyDSL's
#      PA test shapes, the seed flow, the tuner's choices, host functions
#      timed on the GPU)
#   3. PA decode as tuned against the Triton peer (bench_gpu.py pa-quick)
#   4. the shapes the matrix-unit kernel took over from the SIMT one, beside
#      it and the peer (bench_gpu.py pa-coverage)
#   5. the regression notebooks through the pytest plugin, serial and -n 2
#      (bench_fleet.py --gpus 0,0)
#   6. Nsight Compute on PA decode's small shape as tuned (speed of light,
#      occupancy, warp stalls: what bounds it), tuned outside the profiler
#   7. the cache-hit launch and the helper edit (bench_gpu.py launch)
# A step that fails or runs out of time is reported and the next one runs.
#   scripts/gpu_quick.sh [seconds for steps 2 to 7, default 120 130 120 120 60 40; 0 skips a step]
set -uo pipefail
cd "$(dirname "$0")/.."
logs=${LOGS:-${OUT:-/tmp/xflydsl-quick}}
mkdir -p "$logs"
read -r -a limits <<<"${*:-120 130 120 120 60 40}"
export PYTHONUNBUFFERED=1 PYDEVD_DISABLE_FILE_VALIDATION=1 PYTHONDONTWRITEBYTECODE=1

step() {
    local name=$1 limit=$2 start=$SECONDS
    shift 2
    ((limit > 0)) || return 0
    timeout --signal=INT --kill-after=5 "$limit" "$@" >"$logs/$name.log" 2>&1
    local status=$?
    # Kernels that a stopped step left running (each in a session of its own, out of timeout's
    # reach) would share the GPU and the cores with the next step's timings.
    pkill -KILL -x xflydsl 2>/dev/null
    echo "gpu_quick: $name: exit $status after $((SECONDS - start)) s (limit $limit s); last lines:"
    tail -n 12 "$logs/$name.log"
}

step setup 60 scripts/gpu_setup.sh
source "${FLYRT_GPU_WORK:-/tmp/xflydsl-gpu}/env.sh"
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv >"$logs/gpu.csv" 2>&1
step gpu-tests "${limits[0]}" python -m pytest tests/gpu/test_cuda_pa_decode.py tests/gpu/test_cuda_tuning.py \
    tests/gpu/test_cuda_ops.py --confcutdir=tests/gpu -p no:cacheprovider -q -rs --maxfail=5 \
    -k "variant or flydsls_own or seed_flow or host_function or tuner or do_bench or approximate"
step pa-quick "${limits[1]}" python tests/bench/bench_gpu.py pa-quick
step pa-coverage "${limits[2]}" python tests/bench/bench_gpu.py pa-coverage
step fleet "${limits[3]}" python tests/bench/bench_fleet.py --gpus 0,0 6
ncu=$(command -v ncu || compgen -G "/opt/nvidia/nsight-compute/*/ncu" | head -1)
ncu=${ncu:-ncu}  # none found: the step says "ncu: command not found"
# Tuned first without the profiler (under it the tuner times every choice through ncu's interception, and
# picked a single warp at 8 blocks a multiprocessor where pa-quick picks 8 warps at 2), its choice kept in a
# disk cache of its own for the profiled run, which loads it.
profile_cache=$(mktemp -d)
step profile-tune "${limits[4]}" env FLYDSL_RUNTIME_ENABLE_CACHE=1 FLYDSL_RUNTIME_CACHE_DIR="$profile_cache" \
    python tests/bench/gpu/pa_decode_profile.py 16 16 1 4096 e4m3fn
step profile "${limits[4]}" env FLYDSL_RUNTIME_ENABLE_CACHE=1 FLYDSL_RUNTIME_CACHE_DIR="$profile_cache" \
    "$ncu" --profile-from-start off --clock-control none -k regex:pa_ \
    --section SpeedOfLight --section Occupancy --section WarpStateStats --section LaunchStats \
    python tests/bench/gpu/pa_decode_profile.py 16 16 1 4096 e4m3fn
step launch "${limits[5]}" python tests/bench/bench_gpu.py launch
