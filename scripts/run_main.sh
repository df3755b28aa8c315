#!/usr/bin/env bash
# The main job: execute the flagship notebook with the xflydsl kernel.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/.venv/bin:$PATH"
export PYDEVD_DISABLE_FILE_VALIDATION=1

notebook=notebooks/01_getting_started.ipynb
out=notebooks/_executed
jupyter nbconvert --to notebook --execute --ExecutePreprocessor.kernel_name=xflydsl \
    --output-dir "$out" "$notebook"
echo "executed notebook: $(realpath "$out/$(basename "$notebook")")"
