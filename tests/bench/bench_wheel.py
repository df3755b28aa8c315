"""The wheel next to the source build, in one run: kernel start to ready,
and flyrt's cache-hit launch, each measured inside its own environment
(.venv: `make build`'s executable embedding CPython; .venv-wheel: the
wheel pip installed, its kernel run by `python -m xflydsl`), the two
interleaved round by round. Prints medians and the wheel's ratio to the
source build. Needs .venv-wheel (scripts/test_wheel.sh makes it).

    .venv/bin/python tests/bench/bench_wheel.py [--rounds N]
"""

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
ENVIRONMENTS = {"source build (.venv)": REPO / ".venv", "wheel (.venv-wheel)": REPO / ".venv-wheel"}


def measure(starts):
    """In the environment being measured: `starts` kernel starts, then the cache-hit launch."""
    sys.path[:0] = [str(REPO / "notebooks"), str(Path(__file__).parent)]
    import numpy as np
    from bench_kernel_roundtrip import time_start
    from kernels.vector_add import vector_add
    from timing import per_call

    start_seconds = []
    for _ in range(starts):
        elapsed, km, kc = time_start("xflydsl")
        start_seconds.append(elapsed)
        kc.stop_channels()
        km.shutdown_kernel(now=True)
    a, b, c = (np.ones(16, np.float32) for _ in range(3))
    launch = per_call(vector_add, a, b, c, 16, calls=100_000, repeats=3)
    print(json.dumps({"starts": start_seconds, "launch": launch}))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--starts", type=int, default=3, help="kernel starts per round")
    parser.add_argument("--measure", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        return measure(args.starts)
    missing = [str(env) for env in ENVIRONMENTS.values() if not (env / "bin" / "python").exists()]
    if missing:
        sys.exit(f"bench_wheel: {', '.join(missing)} missing: run scripts/test_wheel.sh first")

    results = {name: {"starts": [], "launch": []} for name in ENVIRONMENTS}
    for _ in range(args.rounds):
        for name, env in ENVIRONMENTS.items():
            done = subprocess.run([env / "bin" / "python", __file__, "--measure", "--starts", str(args.starts)],
                                  capture_output=True, text=True, check=True,
                                  env={"PATH": f"{env / 'bin'}:/usr/bin:/bin", "PYDEVD_DISABLE_FILE_VALIDATION": "1",
                                       "FLYDSL_RUNTIME_ENABLE_CACHE": "0", "HOME": str(Path.home())})
            got = json.loads(done.stdout.strip().splitlines()[-1])
            results[name]["starts"] += got["starts"]
            results[name]["launch"].append(got["launch"])

    print(f"xflydsl from the wheel and from the source build, {args.rounds} interleaved rounds "
          f"({args.rounds * args.starts} kernel starts each; launch: median of {args.rounds} round medians)")
    print(f"{'':24} {'start -> ready (ms)':>20} {'cache-hit launch (us)':>22}")
    medians = {}
    for name, got in results.items():
        medians[name] = (statistics.median(got["starts"]) * 1e3, statistics.median(got["launch"]) * 1e6)
        print(f"{name:24} {medians[name][0]:20.1f} {medians[name][1]:22.2f}")
    (source, wheel) = medians.values()
    print(f"{'wheel / source':24} {wheel[0] / source[0]:19.2f}x {wheel[1] / source[1]:21.2f}x")
    sizes = sorted((REPO / "dist").glob("xeus_flydsl-*.whl"))
    for wheel_file in sizes:
        print(f"{wheel_file.name}: {wheel_file.stat().st_size / 2**20:.1f} MiB")


if __name__ == "__main__":
    main()
