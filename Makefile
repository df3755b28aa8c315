# Thin front door; the scripts do the work.
.PHONY: setup build wheels main test bench docs format

setup:
	@scripts/setup.sh

build: setup
	@scripts/build.sh

wheels: setup
	@scripts/build_wheels.sh

main: build
	@scripts/run_main.sh

test: build
	@scripts/run_tests.sh

bench: build
	@.venv/bin/python tests/bench/bench_kernel_roundtrip.py
	@.venv/bin/python tests/bench/bench_runtime.py
	@.venv/bin/python tests/bench/bench_tuning.py
	@.venv/bin/python tests/bench/bench_invalidation.py
	@.venv/bin/python tests/bench/bench_block.py
	@.venv/bin/python tests/bench/bench_pa_decode.py
	@.venv/bin/python tests/bench/bench_bounds.py
	@.venv/bin/python tests/bench/bench_warm_start.py
	@.venv/bin/python tests/bench/bench_memory.py
	@.venv/bin/python tests/bench/bench_flydsl_adapter.py
	@scripts/test_wheel.sh --install-only
	@.venv/bin/python tests/bench/bench_wheel.py

docs: setup
	@scripts/build_docs.sh

format:
	@clang-format-19 -i $$(git ls-files '*.cpp' '*.hpp')
