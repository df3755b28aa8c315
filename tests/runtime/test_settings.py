"""flyrt's settings (core/settings.py) are read when first needed, never at
import: importing flyrt with a bad FLYDSL_* value works, and the first line
that depends on it gets the error; a program that never compiles for NVIDIA
never searches for libdevice."""

import os
import subprocess
import sys
import textwrap

import pytest


def run(code, **env):
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          env={**os.environ, **env})
    return done.returncode, done.stdout + done.stderr


LAUNCHER = """
    import flyrt.compiler as flyc
    import flyrt.expr as fx
    print("imported")
    try:
        flyc.jit(lambda a: None)
    except ValueError as error:
        print("ValueError:", error)
"""


@pytest.mark.parametrize("variable, value, message", [
    ("FLYDSL_TARGET", "tpu", "FLYDSL_TARGET='tpu': unknown target 'tpu'"),
    ("FLYDSL_COMPILE_ONLY", "1", "FLYDSL_COMPILE_ONLY: 'gfx1337'"),
])
def test_a_bad_target_setting_is_an_error_where_the_first_launcher_is_made(variable, value, message):
    rc, out = run(LAUNCHER, **{variable: value, "FLYDSL_ARCH": "gfx1337"})
    assert rc == 0 and out.startswith("imported\n"), out
    assert "ValueError: " + message in out, out


def test_a_bad_cpu_warp_size_is_an_error_at_its_first_use():
    rc, out = run("""
        import flyrt.expr as fx
        print("imported")
        fx.warp_size()
    """, FLYDSL_CPU_WARP_SIZE="48")
    assert rc == 1 and out.startswith("imported\n"), out
    assert "ValueError: FLYDSL_CPU_WARP_SIZE='48': the CPU target's warp size is 32 or 64" in out, out


def test_libdevice_is_searched_for_when_the_first_cuda_target_is_made():
    rc, out = run("""
        import flyrt, flyrt.compiler, flyrt.expr
        from flyrt.drivers import cuda, device_libraries
        print(device_libraries.libdevice.cache_info().currsize)
        cuda.arch_target("sm_90")
        print(device_libraries.libdevice.cache_info().currsize, repr(device_libraries.libdevice()))
    """, FLYDSL_LIBDEVICE="/nonexistent/libdevice.10.bc")
    lines = out.splitlines()
    assert rc == 0 and lines[0] == "0" and lines[1].startswith("1 '"), out


def test_a_changed_warp_size_drops_compiled_artifacts():
    rc, out = run("""
        import flyrt.expr as fx
        from flyrt.invalidation import registry

        class Launcher:  # stands for a JitFunction: the registry asks only cache_clear
            cleared = 0
            __qualname__ = "launcher"

            def cache_clear(self):
                Launcher.cleared += 1

        held = Launcher()
        registry.register(held)
        fx.set_warp_size(32)  # no change
        fx.set_warp_size(64)
        print(Launcher.cleared, fx.warp_size())
    """)
    assert rc == 0 and out.split() == ["1", "64"], out
