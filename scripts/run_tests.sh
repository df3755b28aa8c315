#!/usr/bin/env bash
# Every test: GoogleTest through ctest, then pytest (kernel protocol and
# conformance, jupyter console, notebooks; FlyDSL's adapter on the pinned
# release), the adapter's tests again on the release before it
# (requirements-flydsl-previous.txt), then the runtime's tests on the other
# supported CPythons.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/.venv/bin:$PATH"
export PYDEVD_DISABLE_FILE_VALIDATION=1

ctest --test-dir build --output-on-failure
python -m pytest tests -rs "$@"
echo "run_tests: tests/flydsl_adapter on $(cat requirements-flydsl-previous.txt | grep -v '^#')"
PYTHONPATH="$PWD/.flydsl-previous${PYTHONPATH:+:$PYTHONPATH}" python -m pytest tests/flydsl_adapter tests/kernel/test_notebooks.py \
    -k flydsl -rs "$@"
scripts/test_pythons.sh
