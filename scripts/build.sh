#!/usr/bin/env bash
# Configures (once), builds incrementally and installs into .venv: the
# xflydsl executable, its Python packages and its kernelspec.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/.venv/bin:$PATH"
source scripts/compiler_cache.sh

if [[ ! -f build/build.ninja ]]; then
    cmake -S . -B build -G Ninja \
        -DPython3_EXECUTABLE="$PWD/.venv/bin/python" \
        -DCMAKE_INSTALL_PREFIX="$PWD/.venv" >/dev/null
fi
cmake --build build -- --quiet
# A fresh copy of the Python packages: a module moved or removed in the tree
# must not linger in the venv's.
site=$(.venv/bin/python -c 'import sysconfig; print(sysconfig.get_path("platlib"))')
rm -rf "$site/flyrt" "$site/xflydsl" "$site/xflydsl_shell"
cmake --install build >/dev/null
