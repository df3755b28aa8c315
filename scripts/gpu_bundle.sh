#!/usr/bin/env bash
# Here (a machine with package access): packs what the GPU machine lacks into
# .gpu/ (ignored by git), to travel with the working tree (64 MiB in all):
#   .gpu/llvm.tar.xz  LLVM 19, by ../shared/tools/gpu-llvm-bundle
#   .gpu/debs/        Debian's xeus 2.4.1 and its libraries, headers and CMake
#                     files; Graphviz's dot (for %flydsl graph)
#   .gpu/wheels/      the kernel's and nbconvert's Python packages, for CPython
#                     3.12 there, at the versions requirements.txt pins
# and into .gpu-flydsl/ the pinned FlyDSL's cp312 wheel, unpacked and
# recompressed (its wheel is 77 MB, this 54): it travels in a call of its own.
# scripts/gpu_setup.sh unpacks and builds from them there. Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p .gpu/debs .gpu/wheels .gpu-flydsl
for folder in /.gpu/ /.gpu-flydsl/; do
    grep -qx "$folder" .git/info/exclude 2>/dev/null || echo "$folder" >>.git/info/exclude
done
[[ -f .gpu/llvm.tar.xz ]] || ../shared/tools/gpu-llvm-bundle .gpu/llvm.tar.xz

# xeus, ZeroMQ, and what they link, for building the kernel there; the
# Kerberos and BSD libraries in case the image lacks them (gpu_setup.sh keeps
# only the libraries the machine does not have itself).
debs=(libxeus6 xeus-dev libzmq5 libzmq3-dev cppzmq-dev nlohmann-json3-dev xtl-dev pybind11-json-dev
      libsodium23 libpgm-5.3-0 libnorm1 libbsd0 libmd0 libgssapi-krb5-2 libkrb5-3 libk5crypto3
      libkrb5support0 libkeyutils1 uuid-dev libuuid1 libssl-dev
      graphviz libgvc6 libcgraph6 libcdt5 libpathplan4 libltdl7 libxdot4
      rocm-device-libs)  # ocml/ockl bitcode: FlyDSL's compile-only kernels that call ROCm's device library
missing=()
for deb in "${debs[@]}"; do
    compgen -G ".gpu/debs/${deb}_*.deb" >/dev/null || missing+=("$deb")
done
if ((${#missing[@]})); then
    (cd .gpu/debs && apt-get download "${missing[@]}" 2>&1 | grep -v '^W: Download is performed unsandboxed')
fi

packages=(ipython ipython_pygments_lexers jedi parso matplotlib-inline traitlets pexpect ptyprocess
          prompt_toolkit wcwidth stack-data executing asttokens pure_eval comm xeus-python-shell graphviz
          jupyter_client jupyter_core pyzmq tornado nbformat nbclient nbconvert fastjsonschema jsonschema
          jsonschema-specifications referencing rpds-py mistune bleach webencodings tinycss2 pandocfilters
          beautifulsoup4 soupsieve defusedxml jupyterlab_pygments platformdirs)
pins=()
for package in "${packages[@]}"; do
    pin=$(grep -i -E "^${package//[-_]/[-_]}==" requirements.txt) || { echo "gpu_bundle: $package is not pinned" >&2; exit 1; }
    pins+=("$pin")
done
platforms=()
for tag in manylinux_2_28 manylinux_2_27 manylinux_2_17 manylinux2014 manylinux_2_5 manylinux1; do
    platforms+=(--platform "${tag}_x86_64")
done
.venv/bin/python -m pip download -q --disable-pip-version-check --no-deps --only-binary=:all: \
    --python-version 3.12 --implementation cp "${platforms[@]}" -d .gpu/wheels "${pins[@]}"
flydsl=$(grep -E '^flydsl==' requirements.txt)
bundle=.gpu-flydsl/${flydsl/==/-}-cp312.tar.xz
if [[ ! -f $bundle ]]; then
    rm -rf .gpu-flydsl/*
    unpacked=$(mktemp -d)
    .venv/bin/python -m pip download -q --disable-pip-version-check --no-deps --only-binary=:all: \
        --python-version 3.12 --implementation cp "${platforms[@]}" -d "$unpacked" "$flydsl"
    (cd "$unpacked" && python3 -m zipfile -e ./*.whl . && rm ./*.whl && tar cf - . | xz -T0 -6) >"$bundle.tmp"
    mv "$bundle.tmp" "$bundle"
    rm -rf "$unpacked"
fi
du -sh .gpu/llvm.tar.xz .gpu/debs .gpu/wheels "$bundle"
