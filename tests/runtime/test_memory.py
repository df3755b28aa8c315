"""Evicted code is freed: a process that edits a helper and recompiles over
and over stays bounded (in its own process, so nothing else grows with it)."""

import json
import subprocess
import sys
import textwrap

SOAK = textwrap.dedent("""
    import gc, json, os, sys
    import numpy as np
    import flyrt.compiler as flyc
    import flyrt.expr as fx
    from flyrt.invalidation.dependencies import DependencyRecord

    def offset():
        return 1.0

    @flyc.kernel
    def add_offset(x: fx.Tensor, out: fx.Tensor):
        out[fx.thread_idx.x] = x[fx.thread_idx.x] + offset()

    @flyc.jit
    def launch(x: fx.Tensor, out: fx.Tensor):
        add_offset(x, out).launch(block=(4,))

    def rss_kb():
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1024

    x, out = np.arange(4, dtype=np.float32), np.zeros(4, np.float32)
    warm, cycles = int(sys.argv[1]), int(sys.argv[2])
    right = True
    for cycle in range(warm + cycles):
        if cycle == warm:
            gc.collect()
            start = rss_kb()
        constant = float(cycle + 2)  # new code every cycle: an edit, a recompile
        globals()["offset"] = eval(f"lambda: {constant}")
        launch(x, out)
        right = right and out[1] == 1.0 + constant
    gc.collect()
    print(json.dumps({"kb_per_cycle": (rss_kb() - start) / cycles, "right": bool(right),
                      "compiles": launch.cache_info().compiles,
                      "records": sum(isinstance(o, DependencyRecord) for o in gc.get_objects())}))
""")


def test_edit_recompile_cycles_free_what_eviction_drops(tmp_path):
    script = tmp_path / "soak.py"
    script.write_text(SOAK)
    warm, cycles = 100, 300
    done = subprocess.run([sys.executable, str(script), str(warm), str(cycles)], capture_output=True, text=True,
                          check=True)
    result = json.loads(done.stdout)
    assert result["right"] and result["compiles"] == warm + cycles
    assert result["records"] <= 8  # the launcher's A -> B -> A history, nothing more
    # 55 KB per cycle before evicted artifacts were freed; a little remains while bounded caches fill
    assert result["kb_per_cycle"] < 16, result
