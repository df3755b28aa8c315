"""Memory over a long editing session: 2,000 edit -> recompile cycles of one
small kernel in one process (after 100 to warm up), the RSS growth per cycle.
The program is tests/runtime/test_memory.py's, which asserts a bound on fewer cycles.

    .venv/bin/python tests/bench/bench_memory.py
"""

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("FLYDSL_RUNTIME_ENABLE_CACHE", "0")  # cold compiles: no earlier run's code from disk

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "runtime"))
from test_memory import SOAK  # noqa: E402
from timing import mode_line  # noqa: E402

WARM, CYCLES = 100, 2000


def main():
    print(mode_line())
    with tempfile.TemporaryDirectory() as folder:
        script = Path(folder) / "soak.py"
        script.write_text(SOAK)
        done = subprocess.run([sys.executable, str(script), str(WARM), str(CYCLES)], capture_output=True,
                              text=True, check=True)
    result = json.loads(done.stdout)
    print(f"{CYCLES} edit -> recompile cycles after {WARM}: RSS {result['kb_per_cycle'] * CYCLES / 1024:+.1f} MB "
          f"({result['kb_per_cycle']:.1f} KB per cycle), {result['records']} dependency records alive, "
          f"results {'right' if result['right'] else 'WRONG'}")


if __name__ == "__main__":
    main()
