"""The xflydsl kernel guards real FlyDSL from the moment a cell imports it:
a helper edited in its module file is reloaded, the launcher built from the
old helper is evicted with a notice, and the next launch traces the new code."""

import textwrap

import pytest

pytest.importorskip("flydsl", reason="the real FlyDSL is not installed")

from autotuned_source import AUTOTUNED  # noqa: E402

HELPERS = """
import flydsl.compiler as flyc


@flyc.jit
def scale(x):
    return x * 2.0
"""

FACTORY = """
import functools
import flydsl.compiler as flyc
import flydsl.expr as fx
import {helpers}


@functools.lru_cache(maxsize=None)
def compile_launch(block: int):
    @flyc.kernel
    def kernel(A: fx.Tensor, C: fx.Tensor):
        i = fx.block_idx.x * block + fx.thread_idx.x
        C[i] = {helpers}.scale(A[i])

    @flyc.jit
    def launch(A: fx.Tensor, C: fx.Tensor, n: fx.Constexpr[int]):
        kernel(A, C).launch(grid=(n // block, 1, 1), block=(block, 1, 1))

    return launch
"""

LAUNCH = "m.compile_launch(64)(torch.ones(256), torch.empty(256), 256)"


def run(kernel, code, status="ok"):
    reply, outputs = kernel.execute(code)
    assert reply["status"] == status, reply
    return reply, kernel.stdout(outputs)


def test_helper_edited_in_its_file_is_reloaded_evicted_and_traced_again(kernel, tmp_path):
    helpers = tmp_path / "kflydsl_helpers.py"
    helpers.write_text(HELPERS)
    (tmp_path / "kflydsl_factory.py").write_text(FACTORY.format(helpers="kflydsl_helpers"))
    run(kernel, textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(tmp_path)!r})
        import flyrt.flydsl_adapter as adapter
        adapter.use_compile_only("gfx942")
        import os; os.environ["FLYDSL_RUNTIME_CACHE_DIR"] = {str(tmp_path / "cache")!r}
        import torch
        import kflydsl_factory as m
        {LAUNCH}
        print("guarded:", adapter.installed())"""))
    reply, outputs = kernel.execute("%flydsl status")
    assert reply["status"] == "ok", reply
    assert "compile_launch.<locals>.launch" in kernel.displayed(outputs)
    _, text = run(kernel, "%flydsl why compile_launch.<locals>.launch")
    assert "runs:  kflydsl_factory.compile_launch" in text  # the factory whose code built it
    assert "module kflydsl_helpers: scale" in text  # read as kflydsl_helpers.scale while tracing
    assert "compiled in" in text and "(first call)" in text
    run(kernel, "%flydsl graph")
    _, text = run(kernel, "%flydsl drift raise\n%flydsl drift recompile")
    assert "now makes it raise" in text and "now makes it recompile" in text

    helpers.write_text(HELPERS.replace("return x * 2.0", 'raise RuntimeError("SENTINEL traced")'))
    reply, text = run(kernel, LAUNCH, status="error")
    assert "flyrt: reloaded edited module kflydsl_helpers" in text
    assert "flyrt: evicted launcher compile_launch.<locals>.launch: 'scale' in module kflydsl_helpers" in text
    assert reply["ename"] == "RuntimeError" and "SENTINEL traced" in reply["evalue"]

    helpers.write_text(HELPERS.replace("2.0", "4.0"))
    _, text = run(kernel, LAUNCH + "\nprint(adapter.handle_of(m.compile_launch(64)).cache_info())")
    assert "compiles=2" in text  # the baseline and the 4.0 version; the sentinel's trace failed

    _, text = run(kernel, textwrap.dedent(f"""
        import flydsl.compiler as flyc, kflydsl_helpers
        @flyc.jit
        def tripled(x):
            return x * 3.0
        kflydsl_helpers.scale = tripled
        {LAUNCH}"""))
    assert "flyrt: recompiled launcher compile_launch.<locals>.launch: 'scale' in module kflydsl_helpers" in text


RESOLVE = "TIMES[:] = {times}\nprint('BLOCK', tuned.resolve_config(torch.ones(256), torch.empty(256), 256).kwargs['BLOCK'])"


def test_an_autotuned_config_is_dropped_and_tuned_again_when_a_cell_edits_its_helper(fresh_kernel, tmp_path):
    run(fresh_kernel, textwrap.dedent(f"""
        import os, torch
        os.environ["FLYDSL_AUTOTUNE_CACHE_DIR"] = {str(tmp_path / "autotune")!r}
        import flyrt.flydsl_adapter as adapter
        adapter.use_compile_only("gfx942")"""))
    run(fresh_kernel, AUTOTUNED)
    _, text = run(fresh_kernel, RESOLVE.format(times=[2.0, 1.0]))
    assert "[autotune] tuning 2 configs" in text and "BLOCK 128" in text
    _, text = run(fresh_kernel, RESOLVE.format(times=[]))
    assert text.strip() == "BLOCK 128"  # the tuned config, nothing said

    run(fresh_kernel, "def offset(x):\n    return x + 2.0")
    _, text = run(fresh_kernel, RESOLVE.format(times=[0.5, 1.0]))
    assert "[autotune] tuning 2 configs" in text and "BLOCK 64" in text
    assert ("flyrt: re-tuned autotuned tuned: 'offset' in module __main__ now refers to a different function" in text
            and "the config tuned for the code before was dropped (memory and disk)" in text), text


def test_a_helper_defined_in_a_cell_and_edited_in_another_is_traced_again(fresh_kernel):
    """xeus names a cell after a file its debugger would write, which is not
    on disk: the recorder still follows the cell's code (its source is in
    linecache), so a helper redefined in a later cell evicts the launcher."""
    run(fresh_kernel, textwrap.dedent("""
        import torch
        import flyrt.flydsl_adapter as adapter
        adapter.use_compile_only("gfx942")
        import flydsl.compiler as flyc, flydsl.expr as fx"""))
    run(fresh_kernel, textwrap.dedent("""
        def offset(x):
            return x + 1.0

        @flyc.kernel
        def cell_kernel(A: fx.Tensor, C: fx.Tensor):
            i = fx.block_idx.x * 64 + fx.thread_idx.x
            C[i] = offset(A[i])

        @flyc.jit
        def cell_launch(A: fx.Tensor, C: fx.Tensor):
            cell_kernel(A, C).launch(grid=(4, 1, 1), block=(64, 1, 1))

        cell_launch(torch.ones(256), torch.empty(256))"""))
    _, text = run(fresh_kernel, "def offset(x):\n    return x + 2.0")
    assert "flyrt: evicted launcher cell_launch: 'offset' in module __main__" in text, text
    _, text = run(fresh_kernel, "cell_launch(torch.ones(256), torch.empty(256))\n"
                                "print(adapter.handle_of(cell_launch).cache_info())")
    assert "misses=2" in text, text
