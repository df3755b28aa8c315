#!/usr/bin/env bash
# On a machine with an NVIDIA GPU and no package access (the lent H200), from
# what scripts/gpu_bundle.sh packed into .gpu/ here: unpacks LLVM, Debian's
# xeus and its libraries into a private prefix and the Python packages into a
# private site; builds flyrt and the xflydsl kernel for that machine's Python
# and installs them with the kernelspec; writes $work/env.sh, which puts the
# kernel, `jupyter` and the packages on the paths:
#   scripts/gpu_setup.sh && source /tmp/xflydsl-gpu/env.sh
# With .gpu-flydsl/ brought along (a call of its own: .gpu/ and it are each
# near the 64 MiB one call carries), FlyDSL too, and a ROCm-shaped directory
# for its compile-only builds (the bundle's ld.lld, Debian's device library).
# Idempotent: a second run rebuilds only what changed.
set -euo pipefail
cd "$(dirname "$0")/.."
work=${FLYRT_GPU_WORK:-/tmp/xflydsl-gpu}
python=$(command -v "${PYTHON:-python3}")
arch_libs=usr/lib/x86_64-linux-gnu
sysroot=$work/sysroot
mkdir -p "$work"
SECONDS=0

[[ -f $work/llvm/setup.sh ]] || tar xf .gpu/llvm.tar.xz -C "$work"
source "$work/llvm/setup.sh"

if [[ ! -d $sysroot ]]; then
    for deb in .gpu/debs/*.deb; do dpkg-deb -x "$deb" "$sysroot.new"; done
    # Keep only the libraries this machine lacks: one copy of each in the
    # process, the machine's own where it has one (a link for building then
    # points at it).
    known=$(ldconfig -p)
    for lib in "$sysroot.new/$arch_libs"/lib*.so.[0-9]*; do
        soname=$(basename "$lib" | sed -E 's/(\.so\.[0-9]+).*/\1/')
        if grep -q "^[[:space:]]$soname " <<<"$known"; then rm -f "$lib"; fi
    done
    for link in "$sysroot.new/$arch_libs"/lib*.so; do
        [[ -e $link ]] && continue
        own=$(grep -m1 "^[[:space:]]$(basename "$link")\.[0-9]* " <<<"$known" | sed 's/.*=> //') || true
        if [[ -n $own ]]; then ln -sf "$own" "$link"; else rm -f "$link"; fi
    done
    # Debian's pybind11_json names bookworm's Python headers; this Python's instead.
    include=$("$python" -c "import sysconfig; print(sysconfig.get_paths()['include'])")
    sed -i "s#/usr/include/python3\.[0-9]*#$include#" "$sysroot.new"/usr/share/cmake/pybind11_json/*.cmake
    # Graphviz: SVG needs only its core and dot-layout plugins (the others link
    # libraries this machine may lack, and `dot -c` would warn about each).
    find "$sysroot.new/$arch_libs/graphviz" -name 'libgvplugin_*' ! -name '*_core.*' ! -name '*_dot_layout.*' -delete
    mv "$sysroot.new" "$sysroot"
fi
if [[ ! -d $work/site ]]; then
    "$python" -m pip install -q --no-index --no-deps --no-compile --disable-pip-version-check \
        --target "$work/site.new" .gpu/wheels/*.whl
    mv "$work/site.new" "$work/site"
fi

# The default c++ there (and $CXX) is a wrapper that links libstdc++
# statically into shared objects: name the system's g++.
cxx=${FLYRT_GPU_CXX:-/usr/bin/x86_64-linux-gnu-g++-13}
if [[ ! -f $work/build/build.ninja ]]; then
    cmake -S . -B "$work/build" -G Ninja -DLLVM_DIR="$LLVM_DIR" -DCMAKE_CXX_COMPILER="$cxx" \
        -DCMAKE_PREFIX_PATH="$sysroot/usr" -DXFLYDSL_BUILD_TESTS=OFF \
        -DPython3_EXECUTABLE="$python" -DCMAKE_INSTALL_PREFIX="$work/install" >/dev/null
fi
cmake --build "$work/build" -- --quiet
cmake --install "$work/build" >/dev/null
site=$("$python" -c "import sys; print('$work/install/lib/python%d.%d/site-packages' % sys.version_info[:2])")

flydsl_site=""
bundle=$(compgen -G ".gpu-flydsl/flydsl-*-cp312.tar.xz" | head -1) || true
if [[ -n $bundle && ! -d $work/flydsl ]]; then
    mkdir -p "$work/flydsl.new"
    tar xJf "$bundle" -C "$work/flydsl.new"
    mv "$work/flydsl.new" "$work/flydsl"
fi
[[ -d $work/flydsl ]] && flydsl_site=":$work/flydsl"
mkdir -p "$work/rocm/llvm/bin"
ln -sfn "$work/llvm/bin/ld.lld" "$work/rocm/llvm/bin/ld.lld"
ln -sfn "$sysroot/$arch_libs/amdgcn" "$work/rocm/amdgcn"

graphviz=""
if ! command -v dot >/dev/null; then
    graphviz="export PATH=\"\$PATH:$sysroot/usr/bin\" GVBINDIR=$sysroot/$arch_libs/graphviz"
    (eval "$graphviz"; LD_LIBRARY_PATH="${LD_LIBRARY_PATH:-}:$sysroot/$arch_libs" dot -c)  # its plugin list
fi
cat >"$work/env.sh" <<ENV
source "$work/llvm/setup.sh"
export FLYRT_LLVM_BIN="\$LLVM_ROOT/bin"  # the bundle's readelf/objdump, for the AMD code-object checks
export PATH="$work/install/bin:$work/site/bin:\$PATH"
export PYTHONPATH="$site:$work/site$flydsl_site\${PYTHONPATH:+:\$PYTHONPATH}"
export ROCM_PATH="$work/rocm"  # FlyDSL's compile-only link (no ROCm here)
export JUPYTER_PATH="$work/install/share/jupyter" JUPYTER_PLATFORM_DIRS=1
export LD_LIBRARY_PATH="\${LD_LIBRARY_PATH:+\$LD_LIBRARY_PATH:}$sysroot/$arch_libs"
$graphviz
ENV
printf "gpu_setup: flyrt and xflydsl built for %s in %d s; source %s\n" \
    "$("$python" --version)" "$SECONDS" "$work/env.sh"
