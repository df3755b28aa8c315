#!/usr/bin/env bash
# The pure-Python packages flyrt's tests need that the GPU machine lacks
# (IPython, for reloading edited modules in place), as wheels in .gpu/wheels,
# at the versions requirements.txt pins; scripts/gpu_tests.sh installs them there.
set -euo pipefail
cd "$(dirname "$0")/.."
packages=(ipython ipython_pygments_lexers jedi parso matplotlib-inline traitlets pexpect ptyprocess
          prompt_toolkit wcwidth stack-data executing asttokens pure_eval)
pins=()
for package in "${packages[@]}"; do
    pin=$(grep -i -E "^${package//[-_]/[-_]}==" requirements.txt) || { echo "gpu_wheels: $package is not pinned" >&2; exit 1; }
    pins+=("$pin")
done
mkdir -p .gpu/wheels
.venv/bin/python -m pip download -q --disable-pip-version-check --no-deps --only-binary=:all: \
    --python-version 3.12 -d .gpu/wheels "${pins[@]}"
ls .gpu/wheels
