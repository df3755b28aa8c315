#!/usr/bin/env bash
# The tests that depend on the CPython, on the other CPythons flyrt supports,
# each from its wheel (scripts/build_wheels.sh builds them): the versions
# given, else $FLYRT_TEST_PYTHONS, else 3.10, 3.12 and 3.13 (the main venv is
# 3.11; FlyDSL ships wheels for all four). What depends on the version: the
# frontend reads each version's AST, the dependency guard watches dicts through
# another mechanism from 3.12 on (dict watchers), and the adapter's trace
# recorder reads each version's bytecode. So tests/runtime runs there without
# the files that check the numbers of generated code, and without compiling
# each test's traces for sm_90 and gfx942 (the main suite does both once: the
# code is the same whichever Python traced it), then the adapter's and the
# kernel's protocol tests.
# Each version's venv (scripts/python_envs.sh) gets its wheel installed over
# the last one. The main venv supplies ptxas and libdevice. A version not
# found is an error on CI (CI=true), a notice elsewhere.
#   scripts/test_pythons.sh [--venvs-only | --install-only] [VERSION...]
# --venvs-only makes each version's venv and stops; --install-only also
# installs torch and FlyDSL there (scripts/run_tests.sh runs it beside the
# wheels' compiles: it mostly downloads).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/python_envs.sh
venvs_only=0 install_only=0
[[ ${1:-} == --venvs-only ]] && venvs_only=1 install_only=1 && shift
[[ ${1:-} == --install-only ]] && install_only=1 && shift
versions=("$@")
((${#versions[@]})) || read -ra versions <<<"${FLYRT_TEST_PYTHONS-3.10 3.12 3.13}"

# Their results do not depend on the Python that traced the kernel.
GENERATED_CODE_TESTS=(test_amdgpu test_atomics test_block test_fp8_mma test_fragments test_math test_memory
                      test_nvptx test_ops test_pa_decode test_pa_decode_matrix)

on_ci=0
[[ ${CI:-} =~ ^(1|true|yes)$ ]] && on_ci=1
((install_only)) || export_main_venv_toolchain
export PYDEVD_DISABLE_FILE_VALIDATION=1

status=0
for version in "${versions[@]}"; do
    venv=$(version_venv "$version") || {
        (($? == 2 || on_ci)) && status=1  # an install that failed, or a version CI must have
        continue
    }
    ((venvs_only)) && continue
    flydsl_pins=$(ensure_flydsl "$venv") || { status=1; continue; }
    ((install_only)) && continue
    wheel=$(wheel_for "$version") || {
        echo "test_pythons: no wheel for $version in dist/ (scripts/build_wheels.sh $version)" >&2
        status=1
        continue
    }
    pip=("$venv/bin/python" -m pip install -q --disable-pip-version-check -c "$(venv_constraints "$venv")")
    "${pip[@]}" --force-reinstall --no-deps "$wheel"
    "${pip[@]}" "$wheel"  # its dependencies
    python=$venv/bin/python
    ignored=()
    for name in "${GENERATED_CODE_TESTS[@]}"; do ignored+=(--ignore "tests/runtime/$name.py"); done
    echo "test_pythons: $(basename "$wheel") on $("$python" --version): tests/runtime but ${GENERATED_CODE_TESTS[*]}"
    "$python" -m pytest tests/runtime "${ignored[@]}" --no-gpu-code-checks --confcutdir=tests/runtime -n 2 \
        -p no:cacheprovider -q -rs || status=1
    echo "test_pythons: tests/flydsl_adapter/test_adapter.py on $("$python" --version), $flydsl_pins"
    FLYDSL_RUNTIME_ENABLE_CACHE=0 "$python" -m pytest tests/flydsl_adapter/test_adapter.py \
        --confcutdir=tests/flydsl_adapter -p no:cacheprovider -q -rs || status=1
    echo "test_pythons: the kernel from the wheel on $("$python" --version): tests/kernel/test_protocol.py"
    PATH="$PWD/$venv/bin:$PATH" "$python" -m pytest tests/kernel/test_protocol.py -p no:cacheprovider -q -rs || status=1
done
exit $status
