"""@flyc.autotune on the CPU target: the fastest config is kept per key, tied
to the code it was timed with (tuned again when that changes, an earlier
result back for code changed back, a new process's disk result only while
its manifest holds), and bad input gets a clear error."""

import importlib
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import flyrt.compiler as flyc
import flyrt.expr as fx
from flyrt.invalidation import registry

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: run alone (--confcutdir) too
from kernel_cells import AUTOTUNED as MODULE  # noqa: E402

pytestmark = pytest.mark.compiled_for()  # CPU behaviour; the GPU targets' code is tested elsewhere


@pytest.fixture
def tuned(tmp_path, monkeypatch, request):
    """A fresh module holding an autotuned launcher, its disk cache in tmp_path."""
    name = "tuned_" + request.node.name.replace("[", "_").replace("]", "_")
    (tmp_path / f"{name}.py").write_text(MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("FLYDSL_RUNTIME_ENABLE_CACHE", "1")
    monkeypatch.setenv("FLYDSL_RUNTIME_CACHE_DIR", str(tmp_path / "cache"))
    registry.collect_recompiles()
    registry.drain_recompiles()
    yield importlib.import_module(name)
    sys.modules.pop(name, None)


def call(module, n=4096):
    x = np.ones(n, np.float32)
    module.work(x, n)
    return x


def timings(module):
    return len(module.TIMED)


def test_the_truly_faster_config_is_kept_and_the_next_call_times_nothing(tuned):
    x = call(tuned)
    assert tuned.work.best_config == flyc.Config({"REPS": 3})
    assert np.allclose(x, 1.875)  # restored after tuning, then one call of the best: 1 -> 1.5 -> 1.75 -> 1.875
    assert timings(tuned) == 2
    times = tuned.work.configs_timings
    assert times[flyc.Config({"REPS": 3000})] > 20 * times[flyc.Config({"REPS": 3})]
    call(tuned)
    info = tuned.work.cache_info()
    assert (info.hits, info.misses, info.compiles, info.size) == (1, 1, 1, 1) and timings(tuned) == 2
    text = repr(tuned.work.trials())
    assert "REPS=3000" in text and "REPS=3 " in text and "best" in text and "[n=4096]" in text
    assert "<table>" in tuned.work.trials()._repr_html_()


def test_each_key_is_tuned_once(tuned):
    call(tuned, 4096)
    call(tuned, 1024)
    call(tuned, 4096)
    assert tuned.work.cache_info().size == 2 and timings(tuned) == 4


def test_a_helper_edit_re_tunes_and_says_why(tuned):
    call(tuned)
    tuned.OFFSET = 2.0
    x = call(tuned)
    assert np.allclose(x, 1.0 * 0.125 + 2.0 * (0.25 + 0.5 + 1.0))  # the new code ran
    assert timings(tuned) == 4 and tuned.work.cache_info().evictions == 1
    notices = registry.drain_recompiles()
    text = registry.format_notice([], notices)
    assert "flyrt: re-tuned autotuned work" in text and "'OFFSET'" in text and "best REPS=3" in text, text
    log = [r for r in flyc.compile_log() if r.launcher == "autotuned work"]
    assert "'OFFSET'" in log[-1].reason and log[-1].source == "tuned"


def kept_across_edits(module):
    """The module's `work` launcher under a second autotuner that keeps its config across edits."""
    return flyc.autotune(configs=[flyc.Config({"REPS": 3000}), flyc.Config({"REPS": 3})], key=["n"],
                         restore_value=["x"], do_bench=module.timed, on_edit="keep")(module.work.fn)


def test_on_edit_keep_compiles_the_kept_config_for_the_edited_code_untimed_until_retune(tuned):
    kept = kept_across_edits(tuned)
    x = np.ones(4096, np.float32)
    kept(x, 4096)
    assert kept.best_config == flyc.Config({"REPS": 3}) and timings(tuned) == 2
    registry.drain_recompiles()
    tuned.OFFSET = 2.0
    x[:] = 1
    kept(x, 4096)
    assert np.allclose(x, 0.125 + 2.0 * 1.75)  # the edited code ran once: the recording call was undone
    assert timings(tuned) == 2 and kept.best_config == flyc.Config({"REPS": 3})
    assert kept.configs_timings == {flyc.Config({"REPS": 3}): None}
    text = registry.format_notice([], registry.drain_recompiles())
    assert "flyrt: recompiled autotuned work" in text and "'OFFSET'" in text, text
    assert "kept REPS=3, the config tuned before the edit" in text and "work.retune()" in text, text
    assert [r.source for r in flyc.compile_log() if r.launcher == "autotuned work"][-1] == "tuning kept"
    tuned.OFFSET = 3.0  # the kept result is tied to the edited code: a later edit is seen too
    x[:] = 1
    kept(x, 4096)
    assert np.allclose(x, 0.125 + 3.0 * 1.75) and timings(tuned) == 2
    assert kept.retune() == 1 and kept.retune() == 0
    x[:] = 1
    kept(x, 4096)
    assert timings(tuned) == 4 and np.allclose(x, 0.125 + 3.0 * 1.75)
    assert kept.configs_timings[flyc.Config({"REPS": 3})] is not None
    tuned.OFFSET = 1.0  # back to the first code: its timed result returns
    kept(x, 4096)
    assert timings(tuned) == 4 and kept.cache_info().compiles == 2


def test_on_edit_keep_raises_the_edited_codes_error_and_keeps_trying_it(tuned):
    kept = kept_across_edits(tuned)
    x = np.ones(4096, np.float32)
    kept(x, 4096)
    original = tuned.helper
    tuned.helper = lambda v: v.no_such_attribute
    x[:] = 1
    with pytest.raises(AttributeError, match="no_such_attribute"):
        kept(x, 4096)
    assert np.allclose(x, 1.0) and timings(tuned) == 2  # the arguments as they were; nothing timed
    tuned.helper = lambda v: original(v) * 2.0
    kept(x, 4096)
    assert np.allclose(x, 7.0) and timings(tuned) == 2  # v -> v + 2, three times
    with pytest.raises(ValueError, match="on_edit is 'retune' or 'keep', not 'never'"):
        flyc.autotune(configs=[flyc.Config({"REPS": 3})], key=["n"], on_edit="never")(tuned.work.fn)


def test_an_unrelated_edit_times_nothing(tuned):
    call(tuned)
    tuned.UNRELATED = 5
    tuned.unused = lambda: 0
    call(tuned)
    assert timings(tuned) == 2 and tuned.work.cache_info().hits == 1
    assert registry.drain_recompiles() == []


def test_code_changed_back_brings_the_earlier_result_back_without_timing(tuned):
    original = tuned.helper
    call(tuned)
    tuned.helper = lambda v: v * 0.25
    call(tuned)
    assert timings(tuned) == 4
    tuned.helper = original
    x = call(tuned)
    assert timings(tuned) == 4 and np.allclose(x, 1.875)
    text = registry.format_notice([], registry.drain_recompiles())
    assert "flyrt: re-validated autotuned work" in text and "nothing timed" in text, text


def test_a_host_function_is_re_tuned_when_a_launcher_it_ran_or_a_name_it_uses_changes(tuned):
    x = np.ones(4096, np.float32)
    tuned.repeated(x, 4096)
    assert tuned.repeated.best_config == flyc.Config({"calls": 1}) and np.allclose(x, 1.875) and timings(tuned) == 2
    tuned.OFFSET = 2.0  # read by the kernel the launcher `once` ran
    x[:] = 1
    tuned.repeated(x, 4096)
    assert timings(tuned) == 4 and np.allclose(x, 3.625)
    tuned.UNRELATED = 3
    tuned.repeated(x, 4096)
    assert timings(tuned) == 4
    tuned.once = tuned.work.fn  # a name the host code uses, rebound
    with pytest.raises(flyc.AutotuneError, match="missing the required argument 'REPS'"):
        tuned.repeated(x, 4096)  # tuned again: each config's call of the new launcher says what it lacks
    assert timings(tuned) == 6
    text = registry.format_notice([], registry.drain_recompiles())
    assert "re-tuned autotuned calls_of_once" in text and "'OFFSET'" in text and "'once'" in text, text


def run_again(module, source):
    """The module's definitions run again from `source`, as a notebook re-runs a cell."""
    Path(module.__file__).write_text(source)
    exec(compile(source, module.__file__, "exec"), module.__dict__)


def test_a_definition_run_again_keeps_its_results_unless_its_code_changed(tuned):
    call(tuned)
    run_again(tuned, MODULE)  # a new autotuner, the same code
    x = call(tuned)
    assert timings(tuned) == 0 and np.allclose(x, 1.875)
    run_again(tuned, MODULE.replace("(n + 63) // 64,), block=(64,)", "(n + 31) // 32,), block=(32,)"))
    call(tuned)
    assert timings(tuned) == 2


PROGRAM = """
import sys, json
sys.path.insert(0, {folder!r})
import numpy as np
import flyrt.compiler as flyc
import {name} as m
{edit}
x = np.ones(4096, np.float32)
m.{call}(x, 4096)
log = [r for r in flyc.compile_log() if r.launcher == "autotuned " + m.{call}.__qualname__]
print(json.dumps([len(m.TIMED), log[-1].source, float(x[0])]))
"""


def run_process(tmp_path, name, edit="", call="work"):
    program = PROGRAM.format(folder=str(tmp_path), name=name, edit=edit, call=call)
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_a_new_process_reuses_a_result_whose_manifest_holds_and_re_tunes_otherwise(tuned, tmp_path):
    name = tuned.__name__
    assert run_process(tmp_path, name) == [2, "tuned", 1.875]
    assert run_process(tmp_path, name) == [0, "tuning from disk", 1.875]
    path = tmp_path / f"{name}.py"
    path.write_text(path.read_text().replace("OFFSET = 1.0", "OFFSET = 2.0"))
    assert run_process(tmp_path, name)[:2] == [2, "tuned"]
    path.write_text(path.read_text().replace("OFFSET = 2.0", "OFFSET = 1.0"))
    assert run_process(tmp_path, name) == [0, "tuning from disk", 1.875]  # A -> B -> A across processes
    assert run_process(tmp_path, name, edit="m.helper = lambda v: v * 0.25")[:2] == [2, "tuned"]


def test_a_new_process_reuses_the_result_of_launchers_a_compile_factory_built(tuned, tmp_path):
    """Kernels and launchers a factory defines are nested functions, which another process cannot name:
    on disk the factory stands for them (its code covers theirs). PA decode's tuned split was timed again
    in every process before."""
    name = tuned.__name__
    assert run_process(tmp_path, name, call="scaled") == [2, "tuned", 1.5]
    assert run_process(tmp_path, name, call="scaled") == [0, "tuning from disk", 1.5]
    path = tmp_path / f"{name}.py"
    path.write_text(path.read_text().replace("x[i] = helper(x[i])", "x[i] = helper(x[i]) * 1.0"))  # its kernel
    assert run_process(tmp_path, name, call="scaled") == [2, "tuned", 1.5]
    assert run_process(tmp_path, name, call="scaled") == [0, "tuning from disk", 1.5]


def test_a_tampered_results_file_is_not_used(tuned, tmp_path):
    name = tuned.__name__
    run_process(tmp_path, name)
    [path] = (tmp_path / "cache" / "tuned").rglob("*.json")
    stored = json.loads(path.read_text())
    stored["entries"][0]["best"] = 0  # the slow config, without a matching seal
    path.write_text(json.dumps(stored))
    assert run_process(tmp_path, name) == [2, "tuned", 1.875]
    path.write_text("{not json")
    assert run_process(tmp_path, name)[:2] == [2, "tuned"]


def test_an_interrupted_sweep_keeps_the_arguments_and_writes_nothing(tuned, tmp_path):
    timed = []

    def interrupted(fn, quantiles=None):
        timed.append(fn)
        if len(timed) == 2:
            raise KeyboardInterrupt
        return tuned.timed(fn, quantiles)

    launcher = flyc.autotune(configs=[flyc.Config({"REPS": 3000}), flyc.Config({"REPS": 3})], key=["n"],
                             restore_value=["x"], do_bench=interrupted)(tuned.work.fn)
    x = np.ones(4096, np.float32)
    with pytest.raises(KeyboardInterrupt):
        launcher(x, 4096)
    assert np.all(x == 1.0)  # restored after the config that ran
    assert not list((tmp_path / "cache").rglob("tuned/*/*.json")) and launcher.cache_info().size == 0
    launcher(x, 4096)
    assert launcher.best_config == flyc.Config({"REPS": 3}) and len(timed) == 4
    assert list((tmp_path / "cache").rglob("tuned/*/*.json"))


@flyc.kernel
def _count(out: fx.Tensor, n: fx.Int32, STEP: fx.Constexpr[int]):
    i = fx.block_idx.x * fx.block_dim.x + fx.thread_idx.x
    if i < n:
        out[i] = out[i] + 1.0


@flyc.jit
def count(out: fx.Tensor, n: fx.Int32, STEP: fx.Constexpr[int]):
    assert STEP not in (7, 8), f"STEP {STEP} is not supported"
    _count(out, n, STEP).launch(grid=((n + 63) // 64,), block=(64,))


def quick(fn, quantiles=None):
    from flyrt.testing import do_bench

    return do_bench(fn, warmup=1, rep=2, quantiles=quantiles, device="cpu")


def test_reset_to_zero_and_restore_value_leave_the_call_its_arguments():
    seen = []
    configs = [flyc.Config({"STEP": s}, pre_hook=lambda named: seen.append(float(named["out"][0]))) for s in (1, 2)]
    zeroed = flyc.autotune(configs=configs, key=["n"], reset_to_zero=["out"], do_bench=quick)(count)
    out = np.full(256, 5.0, np.float32)
    zeroed(out, 256)
    assert seen[:-1] and set(seen[:-1]) == {0.0}  # every timed call started from zeros
    assert seen[-1] == 5.0 and np.all(out == 6.0)  # the call itself, from the values it was given
    restored = flyc.autotune(configs=configs, key=["n"], restore_value=["out"], do_bench=quick)(count)
    out = np.full(256, 5.0, np.float32)
    restored(out, 256)
    assert np.all(out == 6.0)


def test_pruning_limits_what_is_timed():
    configs = [flyc.Config({"STEP": s}) for s in (1, 2, 3, 4)]
    seen = []

    def bench(fn, quantiles=None):
        seen.append(fn)
        return quick(fn, quantiles)

    early = flyc.autotune(configs=configs, key=["n"], do_bench=bench,
                          prune_configs_by={"early_config_prune": lambda cs, named: [c for c in cs
                                                                                     if c.kwargs["STEP"] % 2]})(count)
    early(np.zeros(64, np.float32), 64)
    assert len(seen) == 2 and [t.config.kwargs["STEP"] for t in early._latest[1].trials] == [1, 3]
    modelled = flyc.autotune(configs=configs, key=["n"], do_bench=bench,
                             prune_configs_by={"perf_model": lambda n, STEP, **_: abs(STEP - 3), "top_k": 1})(count)
    modelled(np.zeros(64, np.float32), 64)
    assert len(seen) == 2 and modelled.best_config == flyc.Config({"STEP": 3})  # one left: nothing timed


def test_every_config_is_compiled_before_the_first_is_timed():
    """The tuner compiles its configs' kernels first, on threads at once (their traces take turns, LLVM's
    work runs side by side), so no timed call compiles: compiles never land inside a timing."""
    count.cache_clear()
    before = count.cache_info().compiles
    compiled_when_timed = []

    def bench(fn, quantiles=None):
        compiled_when_timed.append(count.cache_info().compiles - before)
        return quick(fn, quantiles)

    tuner = flyc.autotune(configs=[flyc.Config({"STEP": s}) for s in (1, 2, 3, 4)], key=["n"], do_bench=bench)(count)
    out = np.zeros(256, np.float32)
    tuner(out, 256)
    assert compiled_when_timed == [4, 4, 4, 4]
    assert count.cache_info().compiles - before == 4


def test_a_host_function_compiles_ahead_through_its_precompile():
    count.cache_clear()
    before = count.cache_info().compiles
    order = []

    def precompile(out, n, STEP):
        order.append(("compiled", STEP))
        count.warmup(out, n, STEP)

    def bench(fn, quantiles=None):
        order.append(("timed", count.cache_info().compiles - before))
        return quick(fn, quantiles)

    @flyc.autotune(configs=[flyc.Config({"STEP": s}) for s in (1, 2, 3)], key=["n"], do_bench=bench,
                   precompile=precompile)
    def host(out, n, STEP):
        count(out, n, STEP)

    host(np.zeros(64, np.float32), 64)
    assert sorted(order[:3]) == [("compiled", 1), ("compiled", 2), ("compiled", 3)]
    assert order[3:] == [("timed", 3)] * 3
    with pytest.raises(ValueError, match="precompile is for host functions"):
        flyc.autotune(configs=[flyc.Config({"STEP": 1})], key=["n"], precompile=precompile)(count)


def test_warmup_compiles_what_a_call_runs_without_running_it():
    count.cache_clear()
    before = count.cache_info().compiles
    out = np.zeros(64, np.float32)
    count.warmup(out, 64, 5)
    assert count.cache_info().compiles - before == 1 and np.all(out == 0.0)
    count(out, 64, 5)
    assert count.cache_info().compiles - before == 1 and np.all(out == 1.0)
    with pytest.raises(AssertionError, match="STEP 7 is not supported"):  # the trace's own error
        count.warmup(out, 64, 7)


def test_a_config_that_fails_is_skipped_with_its_reason_and_all_failing_is_one_error():
    mixed = flyc.autotune(configs=[flyc.Config({"STEP": 7}), flyc.Config({"STEP": 1})], key=["n"],
                          do_bench=quick)(count)
    mixed(np.zeros(64, np.float32), 64)
    assert mixed.best_config == flyc.Config({"STEP": 1})
    text = repr(mixed.trials())
    assert "AssertionError at " in text and "test_autotune.py:" in text and "STEP 7 is not supported" in text
    failing = flyc.autotune(configs=[flyc.Config({"STEP": 7}), flyc.Config({"STEP": 8})], key=["n"],
                            do_bench=quick)(count)
    with pytest.raises(flyc.AutotuneError) as raised:
        failing(np.zeros(64, np.float32), 64)
    message = str(raised.value)
    assert "'count' [n=64]: no config could run" in message, message
    assert "STEP=7: AssertionError at " in message and "STEP=8: AssertionError at " in message
    assert message.count("is not supported") == 2


def test_bad_declarations_are_errors_naming_the_launcher():
    with pytest.raises(ValueError, match=r"launcher 'count': key 'm' names no parameter; its parameters are out, n"):
        flyc.autotune(configs=[flyc.Config({"STEP": 1})], key=["m"])(count)
    with pytest.raises(ValueError, match=r"config BLOCK=1 sets 'BLOCK' names no parameter"):
        flyc.autotune(configs=[flyc.Config({"BLOCK": 1})], key=["n"])(count)
    with pytest.raises(ValueError, match="is both tuned and in the key"):
        flyc.autotune(configs=[flyc.Config({"STEP": 1})], key=["STEP"])(count)
    with pytest.raises(ValueError, match="no configs"):
        flyc.autotune(configs=[], key=["n"])(count)
    with pytest.raises(TypeError, match="decorates a @flyc.jit launcher or a Python function, not 42"):
        flyc.autotune(configs=[flyc.Config({"STEP": 1})], key=["n"])(42)
    tuned = flyc.autotune(configs=[flyc.Config({"STEP": 1})], key=["n"])(count)
    with pytest.raises(TypeError, match="STEP is set by its configs, not by the call"):
        tuned(np.zeros(4, np.float32), 4, STEP=2)


def test_do_bench_figures_as_triton_returns_them():
    from flyrt.testing import do_bench
    from flyrt.tuning.timing import summarize

    times = [1.0, 2.0, 3.0, 4.0, 10.0]
    assert summarize(times) == 4.0 and summarize(times, return_mode="median") == 3.0
    assert summarize(times, quantiles=[0.5]) == 3.0 and summarize(times, quantiles=[0.25, 0.75]) == [2.0, 4.0]
    assert summarize(times, return_mode="all") == times and summarize(times, return_mode="min") == 1.0
    out = np.zeros(4096, np.float32)
    slow = do_bench(lambda: count(out, 4096, 1) or [count(out, 4096, 1) for _ in range(20)], warmup=1, rep=20,
                    return_mode="median", device="cpu")
    fast = do_bench(lambda: count(out, 4096, 1), warmup=1, rep=20, return_mode="median", device="cpu")
    assert slow > 5 * fast > 0
    with pytest.raises(ValueError, match="return_mode must be one of"):
        do_bench(lambda: None, return_mode="average", device="cpu")
    with pytest.raises(ValueError, match="device is 'gpu', 'cpu' or None"):
        do_bench(lambda: None, device="tpu")


def test_do_bench_times_where_the_first_call_launched(monkeypatch):
    """device=None: a function whose launches ran on the CPU is timed by the
    wall clock even where GPU events would be the default (a GPU machine)."""
    from flyrt.testing import do_bench
    from flyrt.tuning import timing

    def gpu_times(*_):
        raise RuntimeError("timed by GPU events")

    monkeypatch.setattr(timing, "default_device", lambda: "gpu")  # as with a GPU torch reaches
    monkeypatch.setattr(timing, "_gpu_times", gpu_times)
    out = np.zeros(4096, np.float32)
    slow = do_bench(lambda: [count(out, 4096, 1) for _ in range(20)], warmup=1, rep=20, return_mode="median")
    fast = do_bench(lambda: count(out, 4096, 1), warmup=1, rep=20, return_mode="median")
    assert slow > 5 * fast > 0
    with pytest.raises(RuntimeError, match="by GPU events"):  # no launch: the default decides
        do_bench(lambda: None)


def test_do_bench_on_a_gpu_without_one_says_what_it_needs(monkeypatch):
    from flyrt.testing import do_bench

    import torch  # in requirements.txt

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)  # as on a machine without a GPU
    with pytest.raises(RuntimeError, match="torch with a GPU is needed"):
        do_bench(lambda: None, device="gpu")


def test_the_interpreter_runs_the_first_config_untimed(monkeypatch):
    import flyrt

    flyrt.set_interpret(True)
    try:
        tuned = flyc.autotune(configs=[flyc.Config({"STEP": 2}), flyc.Config({"STEP": 1})], key=["n"],
                              do_bench=lambda fn, quantiles=None: pytest.fail("timed while interpreted"))(count)
        out = np.zeros(8, np.float32)
        tuned(out, 8)
        assert tuned.best_config == flyc.Config({"STEP": 2}) and np.all(out == 1.0)
    finally:
        flyrt.set_interpret(None)
