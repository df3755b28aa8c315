# Sourced by the scripts that build or test on a CPython other than the main
# venv's: finds an interpreter and keeps a venv of it at the project's pins.
#   find_python VERSION        the path of a CPython VERSION (pyenv's, else python3.X on PATH)
#   ensure_venv VENV BASE PACKAGE...
#                              VENV from BASE (created once), PACKAGE... installed at the pins
#                              of requirements.txt, with requirements-pyX.Y.txt's instead where
#                              that version has some; reinstalled only when the pins change
#   ensure_flydsl VENV         torch and FlyDSL in VENV at its pins, the CUDA libraries they share
#                              with the other versions' venvs in .venv-cuda-libs; prints the pins
# shellcheck shell=bash

find_python() {
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

# The constraints file for VENV's Python: requirements.txt, overridden by requirements-pyX.Y.txt.
venv_constraints() {
    local venv=$1 version override overridden
    version=$("$venv/bin/python" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
    override=requirements-py$version.txt
    if [[ ! -f $override ]]; then
        echo requirements.txt
        return
    fi
    overridden=$(grep -oE '^[A-Za-z0-9_.-]+==' "$override" | paste -sd'|')
    { grep -viE "^($overridden)" requirements.txt; grep -v '^#' "$override"; } >"$venv/constraints.txt"
    echo "$venv/constraints.txt"
}

ensure_venv() {
    local venv=$1 base=$2 constraints pins
    shift 2
    [[ -x $venv/bin/python ]] || "$base" -m venv "$venv"
    constraints=$(venv_constraints "$venv")
    pins="$(sha256sum "$constraints" | cut -d' ' -f1) $*"
    if [[ $(cat "$venv/.installed" 2>/dev/null) != "$pins" ]]; then
        "$venv/bin/python" -m pip install -q --disable-pip-version-check -c "$constraints" "$@" || return 1
        echo "$pins" >"$venv/.installed"
    fi
}

# What every version's venv holds besides the wheel and its dependencies: the
# wheel's build requirements and the tools of the tests run there.
VERSION_VENV_PACKAGES=(numpy pybind11 scikit-build-core pytest pytest-xdist ipython PyYAML jupyter_client
                       jupyter_kernel_test matplotlib ipywidgets)

# The venv of CPython VERSION: the main one (scripts/setup.sh) for its
# version, else .venv-pyVERSION, made and kept at the pins here. Status 1,
# saying so, when no such CPython is here; 2 when its install failed.
version_venv() {
    local version=$1 base
    if [[ $(.venv/bin/python -c 'import sys; print("%d.%d" % sys.version_info[:2])') == "$version" ]]; then
        echo .venv
        return
    fi
    base=$(find_python "$version") || {
        echo "no CPython $version here (pyenv install $version, or name the versions to use)" >&2
        return 1
    }
    ensure_venv ".venv-py$version" "$base" "${VERSION_VENV_PACKAGES[@]}" >&2 || return 2
    echo ".venv-py$version"
}

# The CUDA wheels every CPython shares (requirements-torch-cuda.txt's "every
# CPython" pins) in .venv-cuda-libs, reinstalled only when those pins change.
CUDA_LIBS=.venv-cuda-libs
ensure_cuda_libs() {
    local pins
    pins=$(grep -E '# every CPython$' requirements-torch-cuda.txt | cut -d' ' -f1)
    if [[ $(cat "$CUDA_LIBS/.installed" 2>/dev/null) != "$pins" ]]; then
        rm -rf "$CUDA_LIBS"
        # shellcheck disable=SC2086  # one argument per pin
        .venv/bin/python -m pip install -q --no-cache-dir --disable-pip-version-check --no-deps \
            --target "$CUDA_LIBS" $pins || return 1
        echo "$pins" >"$CUDA_LIBS/.installed"
    fi
}

# FlyDSL and the torch it imports into VENV, at its pins, reinstalled only when
# those pins change. PyPI's torch for x86_64 is a CUDA build, which imports and
# lets FlyDSL compile without a GPU: its CUDA libraries come from
# .venv-cuda-libs, on VENV's path through cuda-libs.pth, which pip counts as
# installed (torch finds them on sys.path); the rest (torch, triton, FlyDSL:
# 2.3 GB, no cache kept) goes into VENV.
ensure_flydsl() {
    local venv=$1 constraints pins stamp site
    constraints=$(venv_constraints "$venv")
    ensure_cuda_libs || return 1
    site=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_path("purelib"))')
    realpath "$CUDA_LIBS" >"$site/cuda-libs.pth"
    pins=$(grep -E '^(torch|flydsl)==' "$constraints" | sort | paste -sd' ')
    stamp="$pins $(sha256sum requirements-torch-cuda.txt | cut -d' ' -f1)"
    if [[ $(cat "$venv/.flydsl-installed" 2>/dev/null) != "$stamp" ]]; then
        "$venv/bin/python" -m pip install -q --no-cache-dir --disable-pip-version-check -c "$constraints" \
            -c requirements-torch-cuda.txt torch flydsl || return 1
        echo "$stamp" >"$venv/.flydsl-installed"
    fi
    echo "$pins"
}

# The repaired wheel of CPython VERSION in dist/ (scripts/build_wheels.sh).
wheel_for() {
    local tag="cp${1/./}"
    compgen -G "dist/xeus_flydsl-*-$tag-$tag-manylinux_*.whl" | head -1
}

# Points the tests of another venv at the main venv's ptxas and libdevice
# (FLYRT_PTXAS, FLYDSL_LIBDEVICE): the NVIDIA checks need them on every version.
export_main_venv_toolchain() {
    FLYRT_PTXAS=$(.venv/bin/python -c "import sys; sys.path.insert(0, 'tests/runtime'); import ptxas; print(ptxas.find())")
    FLYDSL_LIBDEVICE=$(.venv/bin/python -c "from flyrt.drivers import device_libraries; print(device_libraries.libdevice())")
    export FLYRT_PTXAS FLYDSL_LIBDEVICE
}
