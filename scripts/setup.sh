#!/usr/bin/env bash
# Sets up a fresh machine for xeus-flydsl, and does nothing (quietly) when it
# is set up already: Debian packages for the C/C++ side, then the project's
# virtual environment (.venv) with the pinned PyPI packages of requirements.txt.
set -euo pipefail
cd "$(dirname "$0")/.."

DEBIAN_PACKAGES=(
    # the kernel: a C++ compiler, xeus 2.4.1 and what it is built with
    g++ xeus-dev xtl-dev libzmq3-dev cppzmq-dev nlohmann-json3-dev uuid-dev libssl-dev
    pybind11-json-dev libgtest-dev
    # the runtime's compiler, dependency pictures, and ROCm's device library
    # (ocml/ockl bitcode) for compiling FlyDSL's kernels without ROCm
    llvm-19-dev lld-19 graphviz rocm-device-libs
    # DLPack's C types (torch tensors described by torch's C exchange table)
    libdlpack-dev
    # the wheels: LLVM's static libraries link zstd (auditwheel bundles it); ccache, so that
    # what does not depend on the CPython compiles once for all of them (scripts/compiler_cache.sh)
    libzstd-dev ccache
    # tests (jupyter console in a real terminal, JupyterLab and Notebook in a browser, perf
    # annotating JIT-compiled kernels) and style
    tmux chromium chromium-driver linux-perf clang-format-19
)

missing=()
for package in "${DEBIAN_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" \
        || missing+=("$package")
done
if ((${#missing[@]})); then
    echo "setup: installing Debian packages: ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# The kernel embeds this environment's interpreter, so its base Python must
# come with a shared libpython.
if [[ ! -x .venv/bin/python ]]; then
    base=${XFLYDSL_BASE_PYTHON:-python3.11}
    shared=$("$base" -c 'import sysconfig; print(sysconfig.get_config_var("Py_ENABLE_SHARED"))')
    if [[ "$shared" != 1 ]]; then
        echo "setup: $base has no shared libpython; set XFLYDSL_BASE_PYTHON to one that does" >&2
        exit 1
    fi
    echo "setup: creating .venv from $("$base" -c 'import sys; print(sys.executable)')"
    "$base" -m venv .venv
fi

# Reinstall only when the pins changed since the last successful install.
stamp=.venv/.requirements.installed
if ! cmp -s requirements.txt "$stamp"; then
    echo "setup: installing Python packages from requirements.txt"
    .venv/bin/python -m pip install -q --disable-pip-version-check -r requirements.txt
    cp requirements.txt "$stamp"
fi

# The FlyDSL release before the pinned one, which users still have: its own
# folder, put first on PYTHONPATH when the adapter's tests run against it
# (scripts/run_tests.sh); FlyDSL needs nothing the venv lacks.
previous=.flydsl-previous
if ! cmp -s requirements-flydsl-previous.txt "$previous/.installed" 2>/dev/null; then
    echo "setup: installing $(grep -v "^#" requirements-flydsl-previous.txt) into $previous"
    rm -rf "$previous"
    .venv/bin/python -m pip install -q --disable-pip-version-check --no-deps --target "$previous" \
        -r requirements-flydsl-previous.txt
    cp requirements-flydsl-previous.txt "$previous/.installed"
fi
