#!/usr/bin/env bash
# The main job: execute the notebooks with the xflydsl kernel, on an NVIDIA GPU
# where torch sees one (the notebooks put their tensors there), otherwise on the
# CPU backend; on a GPU, then PA decode's figures there.
set -euo pipefail
cd "$(dirname "$0")/.."
[[ -d .venv ]] && export PATH="$PWD/.venv/bin:$PATH"
export PYDEVD_DISABLE_FILE_VALIDATION=1
python=$(command -v python 2>/dev/null || command -v python3)

# The flagship: the seed bug's regression notebook (paged-attention decode on
# an FP8 KV cache), with the getting-started and helper-editing notebooks, and
# the same bug in the real FlyDSL (compile-only for gfx942) where it is installed.
notebooks=(notebooks/01_getting_started.ipynb notebooks/pa_decode_stale_cache.ipynb
           notebooks/helper_edit_workflow.ipynb)
if "$python" -c "import flydsl" 2>/dev/null; then
    notebooks+=(notebooks/flydsl_stale_cache.ipynb)
else
    echo "main: FlyDSL is not installed here: notebooks/flydsl_stale_cache.ipynb not run"
fi
out=build/executed_notebooks  # not beside the notebooks, where the regression suite collects every .ipynb
for notebook in "${notebooks[@]}"; do
    jupyter nbconvert --to notebook --execute --ExecutePreprocessor.kernel_name=xflydsl \
        --ExecutePreprocessor.timeout=600 --output-dir "$out" "$notebook"
    echo "executed notebook: $(realpath "$out/$(basename "$notebook")")"
done

if "$python" -c "import sys, torch; sys.exit(not torch.cuda.is_available())" 2>/dev/null; then
    echo "main: the notebooks ran on the GPU; PA decode there:"
    "$python" tests/bench/bench_gpu.py pa
else
    echo "main: no CUDA GPU here (torch sees none): the notebooks ran on the CPU backend only"
fi
