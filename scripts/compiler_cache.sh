# Sourced by the scripts that compile (build.sh, build_wheels.sh): ccache in
# front of the compilers, its cache in build/ccache. The compiler library
# does not depend on the CPython, so it compiles once for the source build
# and the four wheels, and what embeds or binds Python once per CPython (the
# source build's serves the cp311 wheel). The commands match across build
# folders because CMake names sources and include paths absolutely; the
# compiler is named once here, since the wheels' builds get g++ where plain
# CMake would pick c++, and ccache tells the two apart.
# shellcheck shell=bash
if command -v ccache >/dev/null; then
    export CC=${CC:-gcc} CXX=${CXX:-g++}
    export CMAKE_C_COMPILER_LAUNCHER=ccache CMAKE_CXX_COMPILER_LAUNCHER=ccache
    export CCACHE_DIR=${CCACHE_DIR:-$PWD/build/ccache} CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-2G}
fi
