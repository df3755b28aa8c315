#!/usr/bin/env bash
# Here (a machine with package access): packs into .gpu/ (ignored by git) what
# the GPU machine lacks, to travel with the working tree (64 MiB in all):
#   .gpu/wheels/  xeus-flydsl's wheel for CPython 3.12 (scripts/build_wheels.sh),
#                 and the Python packages it and the tests need that the
#                 machine's image lacks, at the versions requirements.txt pins
#   .gpu/debs/    Graphviz's dot, which `%flydsl graph` draws with (a system
#                 package, as users install it: the PA notebook draws one)
# scripts/gpu_setup.sh installs them there with pip alone. Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p .gpu/debs .gpu/wheels
grep -qx /.gpu/ .git/info/exclude 2>/dev/null || echo /.gpu/ >>.git/info/exclude

scripts/build_wheels.sh 3.12
source scripts/python_envs.sh
rm -f .gpu/wheels/xeus_flydsl-*.whl
cp "$(wheel_for 3.12)" .gpu/wheels/

debs=(graphviz libgvc6 libcgraph6 libcdt5 libpathplan4 libltdl7 libxdot4)
missing=()
for deb in "${debs[@]}"; do
    compgen -G ".gpu/debs/${deb}_*.deb" >/dev/null || missing+=("$deb")
done
if ((${#missing[@]})); then
    (cd .gpu/debs && apt-get download "${missing[@]}" 2>&1 | grep -v '^W: Download is performed unsandboxed')
fi

# The wheel's dependencies, then the kernel tests' and nbconvert's.
packages=(ipython ipython_pygments_lexers jedi parso matplotlib-inline traitlets pexpect ptyprocess
          prompt_toolkit wcwidth stack-data executing asttokens pure_eval comm xeus-python-shell debugpy graphviz
          jupyter_client jupyter_core pyzmq tornado nbformat nbclient nbconvert fastjsonschema jsonschema
          jsonschema-specifications referencing rpds-py mistune bleach webencodings tinycss2 pandocfilters
          beautifulsoup4 soupsieve defusedxml jupyterlab_pygments platformdirs
          ipywidgets widgetsnbextension jupyterlab_widgets)
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
du -sh .gpu/wheels .gpu/debs
