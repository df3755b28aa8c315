#!/usr/bin/env bash
# Every test: the documentation site (scripts/build_docs.sh: warnings and broken
# links are errors); GoogleTest through ctest; the wheels (scripts/build_wheels.sh);
# pytest on the source build (kernel protocol and conformance, jupyter
# console, notebooks, then the notebooks through the pytest plugin with two
# workers, FlyDSL's adapter on the pinned release, the wheels'
# contents); the adapter's tests again on the release before it
# (requirements-flydsl-previous.txt); the main CPython's wheel in a fresh venv
# (scripts/test_wheel.sh); then the other supported CPythons, each from its
# wheel (scripts/test_pythons.sh), whose venvs take torch and FlyDSL from
# PyPI while the wheels compile (downloads beside compiles; not beside the
# tests, whose kernels' timing a loaded machine upsets). Each step says how
# long it took.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/.venv/bin:$PATH"
export PYDEVD_DISABLE_FILE_VALIDATION=1

step() {
    local start=$SECONDS
    "$@"
    echo "run_tests: $* took $((SECONDS - start)) s"
}

step scripts/build_docs.sh
step ctest --test-dir build --output-on-failure
step scripts/test_pythons.sh --venvs-only  # the wheels build in them
mkdir -p build
scripts/test_pythons.sh --install-only >build/test_pythons-install.log 2>&1 &
installing=$!
trap 'kill $installing 2>/dev/null || true' EXIT
step scripts/build_wheels.sh
wait $installing || { cat build/test_pythons-install.log; exit 1; }
# The runtime's tests (most of the suite's time: compiling) two at a time; the
# kernel's, the browser's and the packaging's one at a time, since each drives
# processes of its own whose timeouts a loaded machine upsets.
step python -m pytest tests/runtime -n 2 -rs "$@"
step python -m pytest tests --ignore=tests/runtime -rs "$@"
# The regression notebooks as a team runs them: two workers, one shared cache.
notebook_cache=$(mktemp -d)
step python -m pytest -p xflydsl.pytest_plugin --xflydsl notebooks -n 2 -p no:cacheprovider \
    --xflydsl-cache-dir "$notebook_cache" "$@"
rm -rf "$notebook_cache"
echo "run_tests: tests/flydsl_adapter on $(cat requirements-flydsl-previous.txt | grep -v '^#')"
PYTHONPATH="$PWD/.flydsl-previous${PYTHONPATH:+:$PYTHONPATH}" step python -m pytest tests/flydsl_adapter \
    tests/kernel/test_notebooks.py -k flydsl -rs "$@"
step scripts/test_wheel.sh
step scripts/test_pythons.sh
