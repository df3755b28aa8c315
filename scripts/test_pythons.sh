#!/usr/bin/env bash
# The runtime's, the FlyDSL adapter's and the kernel's protocol tests on the
# other CPythons flyrt supports, each from its wheel (scripts/build_wheels.sh
# builds them): the versions given, else $FLYRT_TEST_PYTHONS, else 3.10, 3.12
# and 3.13 (the main venv is 3.11; FlyDSL ships wheels for all four). The
# dependency guard reads dicts through another mechanism from 3.12 on (dict
# watchers), and the adapter's trace recorder reads each version's bytecode.
# Each version's venv (scripts/python_envs.sh) gets its wheel installed over
# the last one. The main venv supplies ptxas and libdevice. A version not
# found is an error on CI (CI=true), a notice elsewhere.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/python_envs.sh
versions=("$@")
((${#versions[@]})) || read -ra versions <<<"${FLYRT_TEST_PYTHONS-3.10 3.12 3.13}"

export_main_venv_toolchain
export PYDEVD_DISABLE_FILE_VALIDATION=1
on_ci=0
[[ ${CI:-} =~ ^(1|true|yes)$ ]] && on_ci=1

status=0
for version in "${versions[@]}"; do
    venv=$(version_venv "$version") || {
        (($? == 2 || on_ci)) && status=1  # an install that failed, or a version CI must have
        continue
    }
    wheel=$(wheel_for "$version") || {
        echo "test_pythons: no wheel for $version in dist/ (scripts/build_wheels.sh $version)" >&2
        status=1
        continue
    }
    constraints=$(venv_constraints "$venv")
    # FlyDSL imports torch, and PyPI's torch for x86_64 is a CUDA build (about 4.5 GB in the venv, no
    # cache kept), which imports and lets FlyDSL compile without a GPU (the runtime's torch tests run too).
    flydsl_pins=$(grep -E '^(torch|flydsl)==' "$constraints" | sort | paste -sd' ')
    if [[ $(cat "$venv/.flydsl-installed" 2>/dev/null) != "$flydsl_pins" ]]; then
        "$venv/bin/python" -m pip install -q --no-cache-dir --disable-pip-version-check -c "$constraints" torch flydsl
        echo "$flydsl_pins" >"$venv/.flydsl-installed"
    fi
    pip=("$venv/bin/python" -m pip install -q --disable-pip-version-check -c "$constraints")
    "${pip[@]}" --force-reinstall --no-deps "$wheel"
    "${pip[@]}" "$wheel"  # its dependencies
    python=$venv/bin/python
    echo "test_pythons: $(basename "$wheel") on $("$python" --version): tests/runtime"
    "$python" -m pytest tests/runtime --confcutdir=tests/runtime -p no:cacheprovider -q -rs || status=1
    echo "test_pythons: tests/flydsl_adapter/test_adapter.py on $("$python" --version), $flydsl_pins"
    FLYDSL_RUNTIME_ENABLE_CACHE=0 "$python" -m pytest tests/flydsl_adapter/test_adapter.py \
        --confcutdir=tests/flydsl_adapter -p no:cacheprovider -q -rs || status=1
    echo "test_pythons: the kernel from the wheel on $("$python" --version): tests/kernel/test_protocol.py"
    PATH="$PWD/$venv/bin:$PATH" "$python" -m pytest tests/kernel/test_protocol.py -p no:cacheprovider -q -rs || status=1
done
exit $status
