"""Warm start on the GPU: a new process loads a launcher's PTX image from the
disk cache without tracing and runs it right; an edited helper file is
never served the old image; PA decode's launcher and tuned split both come
from disk."""

import json
import subprocess
import sys
import textwrap
from pathlib import Path

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


PA_PROGRAM = textwrap.dedent("""
    import json, sys
    sys.path.insert(0, {notebooks!r})
    import flyrt.compiler as flyc
    import kernels.pa_decode_fp8 as pa
    from kernels.devices import on
    from kernels.pa_reference import check, make_case, pa_decode_reference
    case = make_case(seed=4, num_seqs=3, context_length=300)
    out = pa.pa_decode_ps_launch(**on("cuda", case))
    ok, _, _ = check(out.float().cpu().numpy(), pa_decode_reference(**case), True)
    log = flyc.compile_log()
    print(json.dumps([bool(ok), sorted({{r.source for r in log if r.launcher.startswith("autotuned")}}),
                      sorted({{r.source for r in log if r.launcher.endswith("launch_pa_decode_ps")}})]))
""")


def test_pa_decode_starts_warm_with_its_tuned_split(tmp_path):
    """Its launcher reads the occupancy table by key, and its kernels are a compile factory's: neither
    kept it from disk before 2026-12-07 (it was traced and tuned again in every process)."""
    notebooks = str(Path(__file__).resolve().parents[2] / "notebooks")
    (tmp_path / "pa_program.py").write_text(PA_PROGRAM.format(notebooks=notebooks))

    def run_pa():
        done = subprocess.run([sys.executable, str(tmp_path / "pa_program.py")], env=child_env(tmp_path),
                              capture_output=True, text=True, cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout.splitlines()[-1])

    ok, tunings, launches = run_pa()
    assert ok and tunings == ["tuned"] and "compiled" in launches
    assert run_pa() == [True, ["tuning from disk"], ["disk cache, no trace"]]
