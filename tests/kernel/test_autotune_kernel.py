"""Tuning and measuring through the real kernel (jupyter_client): with
@flyc.autotune the faster config is kept, the sweep's progress and its
table show as a notebook shows them, a helper edited (in a cell, or in its
file on disk) re-tunes with a notice, and an unrelated cell times nothing;
`%flydsl bench` times an expression against the device's limit, and
perfwatch times it again when what it ran recompiles."""

import pytest

from kernel_cells import AUTOTUNED as MODULE


def result(kernel, code):
    reply, outputs = kernel.execute(code)
    assert reply["status"] == "ok", reply
    data = [m["content"]["data"]["text/plain"] for m in outputs if m["msg_type"] == "execute_result"]
    return data[0] if data else None, kernel.stdout(outputs), outputs


@pytest.fixture
def session(kernel, tmp_path, request):
    name = "tmod_" + request.node.name
    (tmp_path / f"{name}.py").write_text(MODULE)
    result(kernel, f"import sys, numpy as np\nsys.path.insert(0, {str(tmp_path)!r})\nimport {name} as m\n"
                   "x = np.ones(4096, np.float32)")
    return kernel, name, tmp_path / f"{name}.py"


def test_tuning_shows_its_progress_and_table_and_keeps_the_faster_config(session):
    kernel, _, _ = session
    value, text, outputs = result(kernel, "m.work(x, 4096); m.work.best_config, float(x[0]), len(m.TIMED)")
    assert value == "(Config(REPS=3), 1.875, 2)"
    bars = [m for m in outputs if m["msg_type"] in ("display_data", "update_display_data")]
    assert bars and "<progress" in bars[-1]["content"]["data"]["text/html"]
    assert "2/2 configs timed (best REPS=3" in bars[-1]["content"]["data"]["text/plain"]
    _, _, outputs = result(kernel, "m.work.trials()")
    [shown] = [m for m in outputs if m["msg_type"] == "execute_result"]
    assert "<table>" in shown["content"]["data"]["text/html"] and "REPS=3000" in shown["content"]["data"]["text/plain"]


def test_a_helper_edit_re_tunes_with_a_notice_and_an_unrelated_cell_times_nothing(session):
    kernel, name, path = session
    result(kernel, "m.work(x, 4096)")
    value, text, _ = result(kernel, "m.UNRELATED = 1\nm.work(x, 4096); len(m.TIMED)")
    assert value == "2" and "re-tuned" not in text
    value, text, _ = result(kernel, "m.OFFSET = 2.0\nx[:] = 1\nm.work(x, 4096); float(x[0]), len(m.TIMED)")
    assert value == "(3.625, 4)"
    assert f"flyrt: re-tuned autotuned work: 'OFFSET' in module {name}" in text and "best REPS=3" in text, text
    result(kernel, f"from pathlib import Path\np = Path({str(path)!r})\n"
                   "p.write_text(p.read_text().replace('v * 0.5 + OFFSET', 'v * 0.25 + OFFSET'))")
    value, text, _ = result(kernel, "x[:] = 1\nm.work(x, 4096); len(m.TIMED)")
    assert f"reloaded edited module {name}" in text and "re-tuned autotuned work" in text, text
    assert value == "2"  # timed again (the reload made TIMED a new list)


def test_bench_and_perfwatch_say_how_a_change_moved_the_time(session):
    kernel, name, _ = session
    result(kernel, "%flydsl perfwatch on")
    _, text, _ = result(kernel, "%flydsl bench bytes=8*4096 m.once(x, 4096)")
    assert text.startswith("flyrt: m.once(x, 4096): ") and "% of the copy bandwidth measured on" in text, text
    _, text, _ = result(kernel, "m.UNRELATED = 2")
    assert "flyrt perfwatch" not in text
    _, text, _ = result(kernel, "m.OFFSET = 3.0")
    assert "flyrt perfwatch: m.once(x, 4096): " in text and " -> " in text, text
    assert f"after 'OFFSET' in module {name}" in text and ("slower" in text or "faster" in text), text
    result(kernel, "%flydsl perfwatch off")
    _, text, _ = result(kernel, "m.OFFSET = 1.0")
    assert "flyrt perfwatch" not in text
    for line, said in (("%flydsl bench", "%flydsl bench [bytes=N|flops=N] <expression>"),
                       ("%flydsl bench m.once(x,", "not an expression"),
                       ("%flydsl bench bytes=lots m.once(x, 4096)", "bytes=lots is not a number"),
                       ("%flydsl perfwatch maybe", "%flydsl perfwatch on|off")):
        reply, _ = kernel.execute(line)
        assert reply["status"] == "error" and said in reply["evalue"], (line, reply["evalue"])
