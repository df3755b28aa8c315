#!/usr/bin/env bash
# Configures (once), builds incrementally and installs into .venv: the
# xflydsl executable, its Python packages and its kernelspec.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/.venv/bin:$PATH"

if [[ ! -f build/build.ninja ]]; then
    cmake -S . -B build -G Ninja \
        -DPython3_EXECUTABLE="$PWD/.venv/bin/python" \
        -DCMAKE_INSTALL_PREFIX="$PWD/.venv" >/dev/null
fi
cmake --build build -- --quiet
cmake --install build >/dev/null
