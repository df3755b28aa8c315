#!/usr/bin/env bash
# The runtime's and the FlyDSL adapter's tests on the other CPythons flyrt
# supports: the versions given, else $FLYRT_TEST_PYTHONS, else 3.10, 3.12 and
# 3.13 (the main venv is 3.11; FlyDSL ships wheels for all four), from pyenv's
# versions or python3.X on PATH. The dependency guard reads dicts through
# another mechanism from 3.12 on (dict watchers), and the adapter's trace
# recorder reads each version's bytecode. Each gets a venv .venv-pyX.Y with
# the pins of requirements.txt (requirements-pyX.Y.txt: the ones it takes
# instead) and a runtime build build-pyX.Y, both incremental. The main venv
# (scripts/setup.sh) supplies ptxas and libdevice. A version not found is an
# error on CI (CI=true), a notice elsewhere.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/.venv/bin:$PATH"  # cmake and ninja, pinned in the main venv
versions=("$@")
((${#versions[@]})) || read -ra versions <<<"${FLYRT_TEST_PYTHONS-3.10 3.12 3.13}"

ptxas=$(.venv/bin/python -c "import sys; sys.path.insert(0, 'tests/runtime'); import ptxas; print(ptxas.find())")
libdevice=$(.venv/bin/python -c "from flyrt.drivers import cuda; print(cuda.LIBDEVICE or '')")
on_ci=0
[[ ${CI:-} =~ ^(1|true|yes)$ ]] && on_ci=1

interpreter() {
    local candidate
    for candidate in $(ls -d "${PYENV_ROOT:-$HOME/.pyenv}/versions/$1".*/bin/python 2>/dev/null | sort -rV) \
        "python$1"; do
        if "$candidate" -c pass 2>/dev/null; then
            echo "$candidate"
            return
        fi
    done
    return 1
}

status=0
for version in "${versions[@]}"; do
    base=$(interpreter "$version") || {
        echo "test_pythons: no CPython $version here (pyenv install $version, or FLYRT_TEST_PYTHONS lists" \
             "the ones to test): not tested" >&2
        ((on_ci)) && status=1
        continue
    }
    venv=.venv-py$version build=build-py$version
    if [[ ! -x $venv/bin/python ]]; then
        "$base" -m venv "$venv"
    fi
    packages="numpy pybind11 pytest ipython PyYAML"  # PyYAML: the AMD code-object checks read llvm-readelf's YAML
    constraints=requirements.txt override=requirements-py$version.txt
    if [[ -f $override ]]; then  # pins this version takes instead
        constraints=$venv/constraints.txt
        overridden=$(grep -oE '^[A-Za-z0-9_.-]+==' "$override" | paste -sd'|')
        { grep -viE "^($overridden)" requirements.txt; grep -v '^#' "$override"; } >"$constraints"
    else
        override=
    fi
    pins="$(sha256sum requirements.txt $override) $packages"
    if [[ $(cat "$venv/.installed" 2>/dev/null) != "$pins" ]]; then
        # shellcheck disable=SC2086  # one word per package
        "$venv/bin/python" -m pip install -q --disable-pip-version-check -c "$constraints" $packages
        echo "$pins" >"$venv/.installed"
    fi
    # FlyDSL imports torch, and PyPI's torch for x86_64 is a CUDA build (about 4.5 GB in the venv, no
    # cache kept), which imports and lets FlyDSL compile without a GPU (the runtime's torch tests run too).
    flydsl_pins=$(grep -E '^(torch|flydsl)==' "$constraints" | sort | paste -sd' ')
    if [[ $(cat "$venv/.flydsl-installed" 2>/dev/null) != "$flydsl_pins" ]]; then
        "$venv/bin/python" -m pip install -q --no-cache-dir --disable-pip-version-check -c "$constraints" torch flydsl
        echo "$flydsl_pins" >"$venv/.flydsl-installed"
    fi
    if [[ ! -f $build/build.ninja ]]; then
        cmake -S runtime -B "$build" -G Ninja -DPython3_EXECUTABLE="$PWD/$venv/bin/python" \
            -DCMAKE_INSTALL_PREFIX="$PWD/$venv" >/dev/null
    fi
    cmake --build "$build" -- --quiet
    cmake --install "$build" >/dev/null
    echo "test_pythons: tests/runtime on $("$venv/bin/python" --version)"
    FLYRT_PTXAS=$ptxas FLYDSL_LIBDEVICE=$libdevice "$venv/bin/python" -m pytest tests/runtime --confcutdir=tests/runtime \
        -p no:cacheprovider -q -rs || status=1

    # The adapter's own tests, not the kernel's: xflydsl is built for the main venv's Python.
    echo "test_pythons: tests/flydsl_adapter/test_adapter.py on $("$venv/bin/python" --version), $flydsl_pins"
    FLYDSL_RUNTIME_ENABLE_CACHE=0 "$venv/bin/python" -m pytest tests/flydsl_adapter/test_adapter.py \
        --confcutdir=tests/flydsl_adapter -p no:cacheprovider -q -rs || status=1
done
exit $status
