"""No crash and no silent wrong result in a plain script: bounds checks are on
by default in every process, a size past what a launch takes is an error
naming it, a helper that recurses without end is an error naming it, and no
size or count is narrowed silently on its way from Python into compiled code.
Each case runs in a child process, so that a crash fails the test instead of
ending the run."""

import os
import subprocess
import sys
import tempfile
import textwrap

import pytest

KERNELS = """
import numpy as np
import flyrt
import flyrt.compiler as flyc
import flyrt.expr as fx

@flyc.kernel
def double(x: fx.Tensor, y: fx.Tensor):
    i = fx.block_idx.x * fx.block_dim.x + fx.thread_idx.x
    y[i] = x[i] * 2.0

@flyc.jit
def run(x: fx.Tensor, y: fx.Tensor, n: fx.Int32):
    double(x, y).launch(grid=((n + 15) // 16,), block=(16,))

def attempt(what, call):
    try:
        call()
        print(what, "ran")
    except Exception as error:
        print(what, type(error).__name__, "|", error)
"""


def script(body, **env):
    """Runs KERNELS + `body` as a script of its own in a new Python; returns
    what it printed. A crash or a non-zero exit fails the test with what it said."""
    source = KERNELS + textwrap.dedent(body)
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "user_script.py")
        with open(path, "w") as f:
            f.write(source)
        environment = {k: v for k, v in os.environ.items() if k != "FLYDSL_DEBUG_BOUNDS"}
        environment.update(env)
        done = subprocess.run([sys.executable, path], capture_output=True, text=True, env=environment, timeout=300)
    assert done.returncode == 0, f"exit {done.returncode}:\n{done.stdout}\n{done.stderr}"
    return done.stdout


def line_of(body, text):
    """The line of the script that `text` is on."""
    source = (KERNELS + textwrap.dedent(body)).splitlines()
    return next(number for number, line in enumerate(source, 1) if text in line)


def lines(printed):
    return dict(line.split(" ", 1) for line in printed.splitlines() if " " in line)


def test_bounds_checks_are_on_in_a_plain_script_short_output_and_short_input():
    said = lines(script("""
        x, y = np.ones(64, np.float32), np.zeros(4, np.float32)
        print("default", flyrt.bounds_checks())
        attempt("short-output", lambda: run(x, y, 64))
        attempt("short-input", lambda: run(np.ones(4, np.float32), np.zeros(64, np.float32), 64))
        attempt("fits", lambda: run(x, np.zeros(64, np.float32), 64))
        """))
    assert said["default"] == "True"
    assert said["short-output"].startswith("IndexError | index (4) is out of bounds for tensor 'y' of shape (4) at ")
    assert said["short-input"].startswith("IndexError | index (4) is out of bounds for tensor 'x' of shape (4) at ")
    assert said["short-output"].endswith(f"user_script.py:{line_of('', 'y[i] = x[i] * 2.0')}")  # the store
    assert said["fits"] == "ran"


@pytest.mark.parametrize("setting, on", [("0", False), ("off", False), ("false", False), ("no", False),
                                         ("1", True), ("on", True)])
def test_one_switch_for_the_fast_mode(setting, on):
    said = lines(script("""
        print("env", flyrt.bounds_checks())
        flyrt.set_bounds_checks(not flyrt.bounds_checks())
        print("flipped", flyrt.bounds_checks())
        flyrt.set_bounds_checks(None)
        print("back", flyrt.bounds_checks())
        """, FLYDSL_DEBUG_BOUNDS=setting))
    assert said == {"env": str(on), "flipped": str(not on), "back": str(on)}


def test_the_switch_flipped_through_os_environ_is_seen_by_the_next_call():
    """The variable is read again only when os.environ changes (a getenv() on every call cost a tenth of a
    CPU launch), and every change through it is seen: a value set, replaced, deleted, set again."""
    said = lines(script("""
        import os
        x, y = np.ones(64, np.float32), np.zeros(64, np.float32)
        for step, value in enumerate(["0", "1", None, "off", "0", "no", None]):
            if value is None:
                del os.environ["FLYDSL_DEBUG_BOUNDS"]
            else:
                os.environ["FLYDSL_DEBUG_BOUNDS"] = value
            os.environ["UNRELATED"] = str(step)  # other writes change nothing
            print(f"mode{step}", flyrt.bounds_checks())
            run(x, y, 64)
        print("compiles", run.cache_info().compiles)  # one a mode: the mode is part of the key
        """, FLYDSL_DEBUG_BOUNDS="1"))
    assert [said[f"mode{step}"] for step in range(7)] == ["False", "True", "True", "False", "False", "False", "True"]
    assert said["compiles"] == "2"


def test_setting_back_what_set_bounds_checks_returned_follows_the_variable_again():
    """Restoring the switch the usual way must not pin it: bounds_checks() gives the mode, not the setting,
    and set back it would outvote the variable for the rest of the process."""
    said = lines(script("""
        import os
        before = flyrt.set_bounds_checks(False)
        print("before", before, flyrt.set_bounds_checks(True))
        os.environ["FLYDSL_DEBUG_BOUNDS"] = "0"
        print("set", flyrt.bounds_checks())
        flyrt.set_bounds_checks(before)
        print("restored", flyrt.bounds_checks())
        os.environ["FLYDSL_DEBUG_BOUNDS"] = "on"
        print("flipped", flyrt.bounds_checks())
        """, FLYDSL_DEBUG_BOUNDS="1"))
    assert said == {"before": "None False", "set": "True", "restored": "False", "flipped": "True"}


def test_sizes_a_launch_cannot_take_are_errors_naming_them():
    said = lines(script("""
        @flyc.kernel
        def one(x: fx.Tensor):
            x[0] = 1.0

        @flyc.jit
        def huge_grid(x: fx.Tensor):
            one(x).launch(grid=(1 << 40,), block=(1,))

        @flyc.jit
        def traced_grid(x: fx.Tensor, n: fx.Int64):
            one(x).launch(grid=(1, n), block=(1,))

        @flyc.jit
        def wide_block(x: fx.Tensor):
            one(x).launch(block=(2048,))

        @flyc.jit
        def traced_smem(x: fx.Tensor, n: fx.Int64):
            one(x).launch(block=(1,), smem=n)

        @flyc.jit
        def huge_stream(x: fx.Tensor):
            one(x).launch(block=(1,), stream=1 << 70)

        x = np.zeros(4, np.float32)
        attempt("python-grid", lambda: huge_grid(x))
        attempt("traced-grid", lambda: traced_grid(x, 1 << 40))
        attempt("negative-grid", lambda: traced_grid(x, -3))
        attempt("block", lambda: wide_block(x))
        attempt("smem", lambda: traced_smem(x, 1 << 33))
        attempt("stream", lambda: huge_stream(x))
        print("untouched", float(x.sum()))
        flyrt.set_interpret(True)
        attempt("interpreted-grid", lambda: huge_grid(x))
        """))
    assert said["python-grid"].startswith("KernelError | ")
    assert said["python-grid"].endswith(": launcher huge_grid: kernel one: grid size x = 1099511627776 does not fit "
                                        "in 32 bits (a launch takes at most 2147483647)")
    assert said["traced-grid"] == ("RuntimeError | launcher traced_grid: grid size y does not fit in 32 bits (a "
                                   "launch takes at most 2147483647)")
    assert "grid sizes must be >= 0" in said["negative-grid"]
    assert said["block"] == "RuntimeError | launcher wide_block: block size x = 2048 exceeds the limit of 1024"
    assert said["smem"] == "RuntimeError | launcher traced_smem: smem= does not fit in 32 bits"
    assert said["stream"].startswith("ValueError | stream=1180591620717411303424: a stream handle is an address")
    assert said["untouched"] == "0.0"
    assert said["interpreted-grid"].endswith("grid size x = 1099511627776 does not fit in 32 bits (a launch takes "
                                             "at most 2147483647)")


RECURSION = """
        def h(v):
            return h(v) + 1.0

        def halves(v, n):
            return v if n == 1 else halves(v, n // 2) + halves(v, n // 2)

        @flyc.kernel
        def endless(x: fx.Tensor):
            x[0] = h(x[0])

        @flyc.kernel
        def finite(x: fx.Tensor):
            x[0] = halves(x[0], 8)

        @flyc.jit
        def run_endless(x: fx.Tensor):
            endless(x).launch(block=(1,))

        @flyc.jit
        def run_finite(x: fx.Tensor):
            finite(x).launch(block=(1,))

        x = np.ones(4, np.float32)
        try:
            run_endless(x)
        except RecursionError as error:
            print("recursion", type(error).__name__, isinstance(error, flyc.KernelError), "|", error)
        run_finite(x)
        print("finite", float(x[0]))
        attempt("again", lambda: run_endless(x))
        """


def test_a_helper_that_recurses_without_end_is_an_error_naming_it_and_others_run_on():
    said = lines(script(RECURSION))
    assert said["recursion"].startswith("EndlessRecursion True | ")
    assert said["recursion"].endswith(f":{line_of(RECURSION, 'x[0] = h(x[0])')}: h calls itself without end while tracing: flyrt inlines every call it "
                                      "traces, so a recursion must stop on Python values (a depth, a size), not on "
                                      "traced ones")
    assert said["finite"] == "8.0"  # a recursion that ends on Python values is inlined as ever
    assert said["again"].startswith("EndlessRecursion | ")


def test_no_number_narrows_silently_on_its_way_into_compiled_code():
    said = lines(script("""
        @flyc.kernel
        def add_wide(x: fx.Tensor, n: fx.Int32):
            x[0] = (n + (1 << 40)).to(fx.Float32)

        @flyc.kernel
        def wide_loop(x: fx.Tensor):
            total = fx.Int64(0)
            for j in range(1 << 33, (1 << 33) + 3):
                total = total + j
            x[0] = total

        @flyc.kernel
        def big_shared(x: fx.Tensor):
            s = fx.shared((1 << 33,), fx.Float32)
            s[0] = 1.0
            x[0] = s[0]

        @flyc.kernel
        def big_dynamic(x: fx.Tensor):
            s = fx.dynamic_shared(fx.Float32, 1 << 40)
            x[0] = s[0]

        @flyc.kernel
        def store64(x: fx.Tensor, n: fx.Int64):
            x[0] = n.to(fx.Float32)

        @flyc.jit
        def launch_add(x: fx.Tensor, n: fx.Int32):
            add_wide(x, n).launch(block=(1,))

        @flyc.jit
        def launch_loop(x: fx.Tensor):
            wide_loop(x).launch(block=(1,))

        @flyc.jit
        def launch_shared(x: fx.Tensor):
            big_shared(x).launch(block=(1,))

        @flyc.jit
        def launch_dynamic(x: fx.Tensor):
            big_dynamic(x).launch(block=(1,))

        @flyc.jit
        def launch64(x: fx.Tensor, n: fx.Int64):
            store64(x, n).launch(block=(1,))

        x = np.zeros(4, np.float32)
        attempt("int32-argument", lambda: run(x, x, 1 << 40))
        attempt("int64-argument", lambda: launch64(x, 1 << 70))
        attempt("literal", lambda: launch_add(x, 1))
        wide = np.zeros(1, np.int64)
        launch_loop(wide)
        print("loop", int(wide[0]) == 3 * (1 << 33) + 3)
        attempt("shared", lambda: launch_shared(x))
        attempt("dynamic-shared", lambda: launch_dynamic(x))
        """))
    assert said["int32-argument"] == "ValueError | argument 'n' = 1099511627776 does not fit in Int32"
    assert said["int64-argument"] == "ValueError | argument 'n' = 1180591620717411303424 does not fit in Int64"
    assert said["literal"].startswith("OverflowError | 1099511627776 does not fit in the traced Int32 it meets")
    assert said["loop"] == "True"  # a Python bound past 32 bits makes a 64-bit loop, not a wrapped one
    assert said["shared"].endswith("fx.shared((8589934592,), Float32) is 34359738368 bytes of shared memory; a "
                                   "block has at most 65536 on this target")
    assert said["dynamic-shared"].endswith("fx.dynamic_shared(Float32, 1099511627776): a size from 0 to 2**31 - 1 "
                                           "elements")
