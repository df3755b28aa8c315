#!/usr/bin/env bash
# Every test: the documentation site (scripts/build_docs.sh: warnings and broken
# links are errors); GoogleTest through ctest; the wheels (scripts/build_wheels.sh);
# pytest on the source build (kernel protocol and conformance, jupyter
# console, notebooks, FlyDSL's adapter on the pinned release, the wheels'
# contents); the adapter's tests again on the release before it
# (requirements-flydsl-previous.txt); the main CPython's wheel in a fresh venv
# (scripts/test_wheel.sh); then the other supported CPythons, each from its
# wheel (scripts/test_pythons.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/.venv/bin:$PATH"
export PYDEVD_DISABLE_FILE_VALIDATION=1

scripts/build_docs.sh
ctest --test-dir build --output-on-failure
scripts/build_wheels.sh
python -m pytest tests -rs "$@"
echo "run_tests: tests/flydsl_adapter on $(cat requirements-flydsl-previous.txt | grep -v '^#')"
PYTHONPATH="$PWD/.flydsl-previous${PYTHONPATH:+:$PYTHONPATH}" python -m pytest tests/flydsl_adapter tests/kernel/test_notebooks.py \
    -k flydsl -rs "$@"
scripts/test_wheel.sh
scripts/test_pythons.sh
