#!/usr/bin/env bash
# On a machine with an NVIDIA GPU and no package access (the lent H200), from
# what scripts/gpu_bundle.sh packed into .gpu/ here: pip installs xeus-flydsl's
# wheel (no build, no LLVM) into a venv over the machine's Python (its torch
# and Triton stay visible), with the packages it lacks; unpacks Graphviz's dot;
# writes $work/env.sh, which puts the venv and dot on the paths:
#   scripts/gpu_setup.sh && source /tmp/xflydsl-gpu/env.sh
# Idempotent: a second run reinstalls only a changed wheel.
set -euo pipefail
cd "$(dirname "$0")/.."
work=${FLYRT_GPU_WORK:-/tmp/xflydsl-gpu}
python=$(command -v "${PYTHON:-python3}")
arch_libs=usr/lib/x86_64-linux-gnu
mkdir -p "$work"
SECONDS=0

# The machine's python3 is itself a venv (torch, Triton, numpy in it), whose
# packages --system-site-packages would not show: a .pth file adds them.
venv=$work/venv
if [[ ! -x $venv/bin/python ]]; then
    "$python" -m venv "$venv"
    "$python" -c "import site; print('\n'.join(site.getsitepackages()))" \
        >"$("$venv/bin/python" -c "import sysconfig; print(sysconfig.get_path('purelib'))")/machine-packages.pth"
fi
wheel=$(compgen -G ".gpu/wheels/xeus_flydsl-*.whl" | head -1)
if [[ $(cat "$venv/.installed" 2>/dev/null) != "$(sha256sum "$wheel")" ]]; then
    "$venv/bin/python" -m pip install -q --no-index --find-links .gpu/wheels --disable-pip-version-check \
        --force-reinstall --no-deps "$wheel"
    "$venv/bin/python" -m pip install -q --no-index --find-links .gpu/wheels --disable-pip-version-check \
        "$wheel" jupyter_client nbconvert nbclient ipywidgets
    sha256sum "$wheel" >"$venv/.installed"
fi

graphviz=""
if ! command -v dot >/dev/null; then
    [[ -d $work/graphviz ]] || for deb in .gpu/debs/*.deb; do dpkg-deb -x "$deb" "$work/graphviz"; done
    # SVG needs only its core and dot-layout plugins (the others link libraries this machine may lack).
    find "$work/graphviz/$arch_libs/graphviz" -name 'libgvplugin_*' ! -name '*_core.*' ! -name '*_dot_layout.*' -delete
    graphviz="export PATH=\"\$PATH:$work/graphviz/usr/bin\" GVBINDIR=$work/graphviz/$arch_libs/graphviz
export LD_LIBRARY_PATH=\"\${LD_LIBRARY_PATH:+\$LD_LIBRARY_PATH:}$work/graphviz/$arch_libs\""
    (eval "$graphviz"; dot -c)  # its plugin list
fi
cat >"$work/env.sh" <<ENV
export PATH="$venv/bin:\$PATH"
$graphviz
ENV
printf "gpu_setup: %s installed for %s in %d s; source %s\n" \
    "$(basename "$wheel")" "$("$venv/bin/python" --version)" "$SECONDS" "$work/env.sh"
