"""The frontend's rewritten code kept in the disk cache: a later process's
first trace of a function it did not edit reuses it; an edited function, a
corrupt entry or a file changed since its import never runs kept code."""

import os
import subprocess
import sys
import textwrap

from kernels_for_tests import HELPER_MODULE_SOURCE

MODULE = HELPER_MODULE_SOURCE

# Imports the module, optionally rewrites its file (argv[1]) before the call,
# and prints how many functions were rewritten, the result and the warnings.
DRIVER = textwrap.dedent("""
    import sys, warnings
    import numpy as np
    from flyrt.frontend import ast_rewrite

    rewrites = []
    compile_rewrite = ast_rewrite._compiled

    def counted(node, source, code):
        rewrites.append(code.co_name)
        return compile_rewrite(node, source, code)

    ast_rewrite._compiled = counted
    sys.path.insert(0, sys.argv[1])
    import kernels_mod
    if len(sys.argv) > 2:
        open(kernels_mod.__file__, "w").write(open(sys.argv[2]).read())
    x, out = np.arange(4, dtype=np.float32), np.zeros(4, np.float32)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            kernels_mod.run(x, out)
        except OSError as error:
            print("OSError", error)
    print(sorted(rewrites), out.tolist())
    print(*[str(w.message) for w in caught], sep="\\n")
""")


def run(tmp_path, replacement=None):
    """(what the process rewrote, its result, the warnings) of one process on the module as it is."""
    (tmp_path / "driver.py").write_text(DRIVER)
    env = dict(os.environ, FLYDSL_RUNTIME_ENABLE_CACHE="1", FLYDSL_RUNTIME_CACHE_DIR=str(tmp_path / "cache"),
               PYTHONDONTWRITEBYTECODE="1")  # a module rewritten within a second must be read again
    args = [sys.executable, str(tmp_path / "driver.py"), str(tmp_path / "module")]
    if replacement is not None:
        args.append(str(replacement))
    done = subprocess.run(args, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout


def write_module(tmp_path, text):
    (tmp_path / "module").mkdir(exist_ok=True)
    (tmp_path / "module" / "kernels_mod.py").write_text(text)


def kept_entries(tmp_path):
    return sorted((tmp_path / "cache").rglob("*.code"))


def forget_compiled(tmp_path):
    """Removes the compiled objects and warm-start manifests: the next process traces again."""
    for entry in [*(tmp_path / "cache").rglob("*.obj"), *(tmp_path / "cache").rglob("*.json")]:
        entry.unlink()


def test_a_later_process_reuses_what_an_earlier_one_rewrote(tmp_path):
    write_module(tmp_path, MODULE)
    assert run(tmp_path).splitlines()[0] == "['_k', 'run', 'twice'] [0.0, 2.0, 4.0, 6.0]"
    assert len(kept_entries(tmp_path)) == 3
    forget_compiled(tmp_path)
    assert run(tmp_path).splitlines()[0] == "[] [0.0, 2.0, 4.0, 6.0]"  # traced, nothing rewritten


def test_an_edited_function_is_rewritten_and_runs_as_edited(tmp_path):
    write_module(tmp_path, MODULE)
    run(tmp_path)
    forget_compiled(tmp_path)
    write_module(tmp_path, MODULE.replace("v * 2.0", "v * 3.0"))
    assert run(tmp_path).splitlines()[0] == "['twice'] [0.0, 3.0, 6.0, 9.0]"
    forget_compiled(tmp_path)
    write_module(tmp_path, MODULE)  # back as it was: both versions are kept
    assert run(tmp_path).splitlines()[0] == "[] [0.0, 2.0, 4.0, 6.0]"


def test_a_corrupt_entry_is_reported_and_rewritten(tmp_path):
    write_module(tmp_path, MODULE)
    run(tmp_path)
    forget_compiled(tmp_path)
    for entry in kept_entries(tmp_path):
        entry.write_bytes(entry.read_bytes()[:-7])
    first, *warnings = run(tmp_path).splitlines()
    assert first == "['_k', 'run', 'twice'] [0.0, 2.0, 4.0, 6.0]"
    assert sum("corrupt cache entry" in w for w in warnings) == 3
    forget_compiled(tmp_path)
    assert run(tmp_path).splitlines()[0] == "[] [0.0, 2.0, 4.0, 6.0]"


def test_a_helper_changed_on_disk_since_its_import_runs_as_loaded_not_as_the_kept_new_text(tmp_path):
    # The helper's parameters changed in place: the text at its line is not the code Python runs,
    # and another process rewrote that text already. A helper whose source is not its code runs
    # as loaded (test_errors: a kernel's is an error).
    changed = MODULE.replace("def twice(v):\n    return v * 2.0", "def twice(v, by=3.0):\n    return v * by")
    write_module(tmp_path, changed)
    assert run(tmp_path).splitlines()[0] == "['_k', 'run', 'twice'] [0.0, 3.0, 6.0, 9.0]"
    forget_compiled(tmp_path)
    write_module(tmp_path, MODULE)
    (tmp_path / "changed.py").write_text(changed)
    assert run(tmp_path, replacement=tmp_path / "changed.py").splitlines()[0] == "[] [0.0, 2.0, 4.0, 6.0]"
