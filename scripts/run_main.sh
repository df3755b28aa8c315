#!/usr/bin/env bash
# The main job: execute the notebooks with the xflydsl kernel on the CPU backend.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/.venv/bin:$PATH"
export PYDEVD_DISABLE_FILE_VALIDATION=1

# The flagship: the seed bug's regression notebook (paged-attention decode on
# an FP8 KV cache), with the getting-started and helper-editing notebooks, and
# the same bug in the real FlyDSL (compile-only for gfx942).
out=notebooks/_executed
for notebook in notebooks/01_getting_started.ipynb notebooks/pa_decode_stale_cache.ipynb \
                notebooks/helper_edit_workflow.ipynb notebooks/flydsl_stale_cache.ipynb; do
    jupyter nbconvert --to notebook --execute --ExecutePreprocessor.kernel_name=xflydsl \
        --ExecutePreprocessor.timeout=600 --output-dir "$out" "$notebook"
    echo "executed notebook: $(realpath "$out/$(basename "$notebook")")"
done
