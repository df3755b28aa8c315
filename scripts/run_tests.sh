#!/usr/bin/env bash
# Every test: GoogleTest through ctest, then pytest (kernel protocol and
# conformance, jupyter console, notebooks), then the runtime's tests on the
# other supported CPythons.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/.venv/bin:$PATH"
export PYDEVD_DISABLE_FILE_VALIDATION=1

ctest --test-dir build --output-on-failure
python -m pytest tests -rs "$@"
scripts/test_pythons.sh
