"""Warm start: a new process gets a launcher's artifact from the disk cache
without tracing it, only while everything the trace read is unchanged; an
edit after it recompiles only the parts it changed."""

import importlib
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from test_invalidation import TWO_KERNELS  # a launcher of two kernels, one inlining `helper`

HELPERS = """
SCALE = 2.0

def helper(v):
    return v * SCALE
"""

KERNELS = """
import flyrt.compiler as flyc
import flyrt.expr as fx
import helpers

class Settings:
    pass

settings = Settings()
settings.shift = 1.0

@flyc.kernel
def _scale(x: fx.Tensor, out: fx.Tensor):
    i = fx.thread_idx.x
    out[i] = helpers.helper(x[i])

@flyc.jit
def scale(x: fx.Tensor, out: fx.Tensor):
    _scale(x, out).launch(block=(x.shape[0],))

@flyc.kernel
def _shifted(x: fx.Tensor, out: fx.Tensor):
    i = fx.thread_idx.x
    out[i] = x[i] + settings.shift  # an object's attribute: known only by identity

@flyc.jit
def shifted(x: fx.Tensor, out: fx.Tensor):
    _shifted(x, out).launch(block=(x.shape[0],))

TABLE = {("fast", 1): {"scale": 2.0, "shift": 0.0}}

@flyc.kernel
def _tabled(x: fx.Tensor, out: fx.Tensor):
    i = fx.thread_idx.x
    row = TABLE["fast", 1]
    total = 0.0
    for _, value in row.items():  # the row read whole
        total = total + value
    out[i] = x[i] * row["scale"] + total

@flyc.jit
def tabled(x: fx.Tensor, out: fx.Tensor):
    _tabled(x, out).launch(block=(x.shape[0],))

def make(offset):
    @flyc.kernel
    def _add(x: fx.Tensor, out: fx.Tensor):
        i = fx.thread_idx.x
        out[i] = helpers.helper(x[i]) + offset

    @flyc.jit
    def add(x: fx.Tensor, out: fx.Tensor):
        _add(x, out).launch(block=(x.shape[0],))
    return add
"""

PROGRAM = """
import sys, warnings
import numpy as np
import flyrt.compiler as flyc
import kernels

launcher = {"scale": kernels.scale, "shifted": kernels.shifted, "made": kernels.make(10.0),
            "tabled": kernels.tabled}[sys.argv[1]]
x, out = np.arange(4, dtype=np.float32), np.zeros(4, np.float32)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    launcher(x, out)
record = flyc.compile_log()[-1]
print(out.tolist())
print(record.source)
print(record.reason)
print(*[str(w.message) for w in caught], sep="\\n")
"""


def child_env(tmp_path):
    """The environment of a process using tmp_path's modules and cache (after
    what PYTHONPATH already names: on the GPU machine, flyrt itself)."""
    path = os.pathsep.join(filter(None, [str(tmp_path), os.environ.get("PYTHONPATH")]))
    return dict(os.environ, FLYDSL_RUNTIME_ENABLE_CACHE="1", FLYDSL_RUNTIME_CACHE_DIR=str(tmp_path / "cache"),
                PYTHONPATH=path, PYTHONDONTWRITEBYTECODE="1")


def setup(tmp_path):
    for name, text in (("helpers.py", HELPERS), ("kernels.py", KERNELS), ("program.py", PROGRAM)):
        (tmp_path / name).write_text(textwrap.dedent(text))


def run(tmp_path, which="scale"):
    """(result, compile source, reason, warnings) of one fresh process."""
    env = child_env(tmp_path)
    done = subprocess.run([sys.executable, str(tmp_path / "program.py"), which], env=env, capture_output=True,
                          text=True, check=True, cwd=tmp_path)
    result, source, reason, *said = done.stdout.splitlines()
    return json.loads(result), source, reason, said


def manifests(tmp_path):
    return sorted((tmp_path / "cache" / "warm").rglob("*.json"))


def test_a_new_process_loads_without_tracing_until_a_helper_file_changes(tmp_path):
    setup(tmp_path)
    assert run(tmp_path)[:2] == ([0.0, 2.0, 4.0, 6.0], "compiled")
    assert run(tmp_path)[:2] == ([0.0, 2.0, 4.0, 6.0], "disk cache, no trace")
    original = (tmp_path / "helpers.py").read_text()
    (tmp_path / "helpers.py").write_text(original.replace("v * SCALE", "v * SCALE + 100.0"))
    assert run(tmp_path)[:2] == ([100.0, 102.0, 104.0, 106.0], "compiled")  # never the old artifact
    (tmp_path / "helpers.py").write_text(original.replace("SCALE = 2.0", "SCALE = 3.0"))
    assert run(tmp_path)[:2] == ([0.0, 3.0, 6.0, 9.0], "compiled")  # a constant it read changed
    (tmp_path / "helpers.py").write_text(original)
    assert run(tmp_path)[:2] == ([0.0, 2.0, 4.0, 6.0], "disk cache, no trace")  # A -> B -> C -> A
    assert len(manifests(tmp_path)) == 1  # one launcher and specialization: its versions in one manifest


def test_a_launcher_a_factory_made_starts_warm(tmp_path):
    setup(tmp_path)
    assert run(tmp_path, "made")[:2] == ([10.0, 12.0, 14.0, 16.0], "compiled")
    assert run(tmp_path, "made")[:2] == ([10.0, 12.0, 14.0, 16.0], "disk cache, no trace")
    (tmp_path / "kernels.py").write_text(textwrap.dedent(KERNELS).replace("+ offset", "- offset"))
    assert run(tmp_path, "made")[:2] == ([-10.0, -8.0, -6.0, -4.0], "compiled")  # the factory's code changed


def test_a_module_level_table_read_by_its_keys_starts_warm_and_is_guarded(tmp_path):
    """A dict a module binds, read item by item (TABLE[k], TABLE[k][j]) and whole (.items()): the
    manifest names each read by its path of keys, and what a warm start loads is guarded by them."""
    setup(tmp_path)
    assert run(tmp_path, "tabled")[:2] == ([2.0, 4.0, 6.0, 8.0], "compiled")
    assert run(tmp_path, "tabled")[:2] == ([2.0, 4.0, 6.0, 8.0], "disk cache, no trace")
    kernels = tmp_path / "kernels.py"
    kernels.write_text(kernels.read_text().replace('"shift": 0.0', '"shift": 1.0'))
    assert run(tmp_path, "tabled")[:2] == ([3.0, 5.0, 7.0, 9.0], "compiled")  # an item of the row read whole
    (tmp_path / "mutate.py").write_text(textwrap.dedent("""
        import numpy as np
        import flyrt.compiler as flyc
        import kernels
        x, out = np.arange(4, dtype=np.float32), np.zeros(4, np.float32)
        for change in ("nothing", "scale", "other row"):
            if change == "scale":
                kernels.TABLE["fast", 1]["scale"] = 3.0  # in place, after the warm start
            elif change == "other row":
                kernels.TABLE["slow", 2] = {}  # a key the trace never read
            kernels.tabled(x, out)
            print(flyc.compile_log()[-1].source, out.tolist())
    """))
    lines = subprocess.run([sys.executable, str(tmp_path / "mutate.py")], env=child_env(tmp_path),
                           capture_output=True, text=True, check=True, cwd=tmp_path).stdout.splitlines()
    # (the table changed: traced again, and its code found by its IR, the same)
    assert lines == ["disk cache, no trace [3.0, 5.0, 7.0, 9.0]", "compiled [4.0, 7.0, 10.0, 13.0]",
                     "disk cache [4.0, 7.0, 10.0, 13.0]"]


def test_a_trace_that_read_an_object_is_not_kept_and_says_why(tmp_path):
    setup(tmp_path)
    result, source, reason, _ = run(tmp_path, "shifted")
    assert (result, source) == ([1.0, 2.0, 3.0, 4.0], "compiled")
    assert "not kept for warm starts: it read something known only by identity" in reason
    assert run(tmp_path, "shifted")[1] == "disk cache"  # traced again; the object file is still shared


def test_a_corrupt_manifest_is_rebuilt_with_one_warning(tmp_path):
    setup(tmp_path)
    run(tmp_path)
    (manifest,) = manifests(tmp_path)
    manifest.write_text("{ not json")
    result, source, _, said = run(tmp_path)
    assert (result, source) == ([0.0, 2.0, 4.0, 6.0], "disk cache")  # traced; the object found by its IR
    assert len(said) == 1 and "unreadable warm-start manifest" in said[0]
    assert run(tmp_path)[1] == "disk cache, no trace"  # rewritten


def test_processes_racing_on_one_manifest_all_succeed(tmp_path):
    setup(tmp_path)
    env = child_env(tmp_path)
    procs = [subprocess.Popen([sys.executable, str(tmp_path / "program.py"), "scale"], env=env, cwd=tmp_path,
                              stdout=subprocess.PIPE, text=True) for _ in range(4)]
    outputs = [p.communicate()[0].splitlines() for p in procs]
    assert all(p.returncode == 0 for p in procs)
    assert all(json.loads(out[0]) == [0.0, 2.0, 4.0, 6.0] for out in outputs)
    assert not list(Path(tmp_path).rglob(".tmp-*"))
    assert run(tmp_path)[1] == "disk cache, no trace"


def test_an_artifact_loaded_without_a_trace_is_guarded_like_a_traced_one(tmp_path):
    setup(tmp_path)
    (tmp_path / "rebind.py").write_text(textwrap.dedent("""
        import numpy as np
        import flyrt.compiler as flyc
        import helpers, kernels
        x, out = np.arange(4, dtype=np.float32), np.zeros(4, np.float32)
        kernels.scale(x, out)
        print(flyc.compile_log()[-1].source, out.tolist())
        helpers.helper = lambda v: v - 1.0  # rebound after the warm start
        kernels.scale(x, out)
        print(flyc.compile_log()[-1].source, out.tolist())
    """))
    run(tmp_path)
    env = child_env(tmp_path)
    lines = subprocess.run([sys.executable, str(tmp_path / "rebind.py")], env=env, capture_output=True, text=True,
                           check=True, cwd=tmp_path).stdout.splitlines()
    assert lines == ["disk cache, no trace [0.0, 2.0, 4.0, 6.0]", "compiled [-1.0, 0.0, 1.0, 2.0]"]



EDIT = """
import json, sys
import numpy as np
import flyrt.compiler as flyc
from flyrt import _core
import two_kernels

x, out = np.arange(4, dtype=np.float32), np.zeros(4, np.float32)
two_kernels.launch(x, out)
print(json.dumps([flyc.compile_log()[-1].source, out.tolist()]))
compiled, reused = _core.compiled_part_counts()
step = float(sys.argv[1])
two_kernels.helper = lambda v: v - step  # reaches one kernel of the two, as no process compiled it before
two_kernels.launch(x, out)
after = _core.compiled_part_counts()
print(json.dumps([flyc.compile_log()[-1].source, out.tolist(), after[0] - compiled, after[1] - reused]))
"""


def test_an_edit_after_a_warm_start_recompiles_only_the_kernel_it_changed(tmp_path):
    """The payload a warm start loads keeps each part's digest: the launcher and the kernel the edit does not
    reach are reused, as in the process that compiled them, not compiled again."""
    setup(tmp_path)
    (tmp_path / "two_kernels.py").write_text("import flyrt.compiler as flyc\nimport flyrt.expr as fx\n" + TWO_KERNELS)
    (tmp_path / "edit.py").write_text(textwrap.dedent(EDIT))
    env = child_env(tmp_path)

    def edit(step):
        done = subprocess.run([sys.executable, str(tmp_path / "edit.py"), str(step)], env=env, capture_output=True,
                              text=True, cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        return [json.loads(line) for line in done.stdout.splitlines()]

    first, then = edit(1)
    assert first == ["compiled", [2.0, 4.0, 6.0, 8.0]]
    assert then[:3] == ["compiled", [-2.0, 0.0, 2.0, 4.0], 1] and then[3] >= 2  # the kernel the edit reached
    warm, edited = edit(2)
    assert warm == ["disk cache, no trace", [2.0, 4.0, 6.0, 8.0]]
    assert edited == ["compiled", [-4.0, -2.0, 0.0, 2.0], *then[2:]]  # the warm start's parts reused


def test_a_manifest_names_an_item_recorded_before_the_binding_that_reached_it(tmp_path, monkeypatch):
    """A trace may record TABLE[k] before TABLE itself (PA decode's occupancy table did): the item is
    still named by its path, checked in another process's terms and watched again when loaded."""
    from flyrt.invalidation import manifests
    from flyrt.invalidation.dependencies import Recorder

    (tmp_path / "manifest_tables.py").write_text('TABLE = {("e4m3fn", 1): {"nvptx": 16}}\n')
    monkeypatch.syspath_prepend(str(tmp_path))
    tables = importlib.import_module("manifest_tables")
    monkeypatch.delitem(sys.modules, "manifest_tables")  # (after the test: gone)
    monkeypatch.setitem(sys.modules, "manifest_tables", tables)

    row = tables.TABLE["e4m3fn", 1]
    recorder = Recorder()
    recorder.read(tables.TABLE, tables.TABLE, ("e4m3fn", 1), row)
    recorder.read(tables.__dict__, tables.__dict__, "TABLE", tables.TABLE)
    recorder.read_whole(row, "row", "row.items()")
    specs = manifests.describe(recorder)
    assert ["binding", ["item", "manifest_tables", "TABLE"], "('e4m3fn', 1)", manifests.portable_fingerprint(row)] in specs
    assert ["whole", ["item", "manifest_tables", "TABLE"], "('e4m3fn', 1)", manifests.portable_fingerprint(row)] in specs
    assert manifests.holds(specs)
    assert len(manifests.recorder_from(specs).reads) == 1
    row["nvptx"] = 12
    assert manifests.changes(specs) == ["[('e4m3fn', 1)] in TABLE (module manifest_tables) changed",
                                        "'TABLE' in module manifest_tables changed",
                                        "[('e4m3fn', 1)] in TABLE (module manifest_tables) changed (read whole)"]
