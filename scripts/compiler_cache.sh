# Sourced by the scripts that compile (build.sh, build_wheels.sh): ccache in
# front of the compilers, its cache in build/ccache. The compiler library and
# the kernel do not depend on which CPython builds them, so the source build
# and the four wheels compile them once: the commands match across build
# folders because CMake names sources and include paths absolutely.
# shellcheck shell=bash
if command -v ccache >/dev/null; then
    export CMAKE_C_COMPILER_LAUNCHER=ccache CMAKE_CXX_COMPILER_LAUNCHER=ccache
    export CCACHE_DIR=${CCACHE_DIR:-$PWD/build/ccache} CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-2G}
fi
