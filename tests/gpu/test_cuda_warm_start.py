"""Warm start on the GPU: a new process loads a launcher's PTX image from the
disk cache without tracing and runs it right; an edited helper file is
never served the old image."""

import json
import subprocess
import sys
import textwrap

from test_warm_start import child_env, setup

PROGRAM = textwrap.dedent("""
    import torch
    import flyrt.compiler as flyc
    import kernels
    x = torch.arange(4, dtype=torch.float32, device="cuda")
    out = torch.zeros_like(x)
    kernels.scale(x, out)
    print(out.tolist())
    print(flyc.compile_log()[-1].source)
""")


def run(tmp_path):
    done = subprocess.run([sys.executable, str(tmp_path / "gpu_program.py")], env=child_env(tmp_path),
                          capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    out = done.stdout.splitlines()
    return json.loads(out[0]), out[1]


def test_a_new_process_loads_the_gpu_image_without_tracing(tmp_path):
    setup(tmp_path)
    (tmp_path / "gpu_program.py").write_text(PROGRAM)
    assert run(tmp_path) == ([0.0, 2.0, 4.0, 6.0], "compiled")
    assert run(tmp_path) == ([0.0, 2.0, 4.0, 6.0], "disk cache, no trace")
    helpers = tmp_path / "helpers.py"
    helpers.write_text(helpers.read_text().replace("v * SCALE", "v * SCALE + 1.0"))
    assert run(tmp_path) == ([1.0, 3.0, 5.0, 7.0], "compiled")
