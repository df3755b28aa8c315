"""The invalidation engine through the real kernel (jupyter_client): each
cell runs as a user's would, and the kernel's notice is checked too."""

import textwrap

import pytest

KERNEL_MODULE = """
import flyrt.compiler as flyc
import flyrt.expr as fx

SCALE = 1.0

def helper(v):
    return v + 1.0

@flyc.kernel
def kernel(x: fx.Tensor, out: fx.Tensor):
    i = fx.thread_idx.x
    out[i] = helper(x[i]) * SCALE

@flyc.jit
def launch(x: fx.Tensor, out: fx.Tensor):
    kernel(x, out).launch(block=(x.shape[0],))
"""


def result(kernel, code):
    reply, outputs = kernel.execute(code)
    assert reply["status"] == "ok", reply
    data = [m["content"]["data"]["text/plain"] for m in outputs if m["msg_type"] == "execute_result"]
    return data[0] if data else None, kernel.stdout(outputs)


@pytest.fixture
def session(kernel, tmp_path, request):
    """The shared kernel, with `tmp_path` importable and a fresh module name."""
    name = "kmod_" + request.node.name.replace("[", "_").replace("]", "_")
    (tmp_path / f"{name}.py").write_text(KERNEL_MODULE)
    result(kernel, f"import sys, numpy as np\nsys.path.insert(0, {str(tmp_path)!r})\n"
                   f"import {name} as m\nx = np.arange(4, dtype=np.float32)\nout = np.zeros(4, np.float32)")
    return kernel, name, tmp_path / f"{name}.py"


def test_helper_redefined_in_a_later_cell(session):
    kernel, name, _ = session
    assert result(kernel, "m.launch(x, out); float(out[2])")[0] == "3.0"
    value, text = result(kernel, "def new_helper(v):\n    return v * 10.0\nm.helper = new_helper")
    assert "flyrt: evicted launcher launch: 'helper' in module" in text and name in text
    assert result(kernel, "m.launch(x, out); float(out[2])")[0] == "20.0"
    assert result(kernel, "m.launch.cache_info().compiles")[0] == "2"


def test_a_change_and_a_call_in_one_cell_are_named_after_it(session):
    kernel, name, _ = session
    result(kernel, "m.launch(x, out)")
    value, text = result(kernel, "m.helper = lambda v: v - 1.0\nm.launch(x, out); float(out[2])")
    assert value == "1.0"
    assert f"flyrt: recompiled launcher launch: 'helper' in module {name} now refers to" in text
    assert "evicted" not in text  # the call already replaced it: nothing left for the sweep
    assert result(kernel, "m.launch(x, out); float(out[2])") == ("1.0", "")


def test_a_trace_error_shows_the_users_frames_and_the_full_traceback_on_request(session):
    kernel, name, path = session
    result(kernel, "m.helper = lambda v: v + undefined_in_a_helper\nm.SCALE = 1.0")
    reply, outputs = kernel.execute("m.launch(x, out)")
    frames = "\n".join(reply["traceback"])
    assert reply["ename"] == "NameError" and "undefined_in_a_helper" in frames
    assert f"{name}.py" in frames and "flyrt/" not in frames, frames  # the kernel's line; none of flyrt's
    result(kernel, "%flydsl traceback full")
    reply, _ = kernel.execute("m.launch(x, out)")
    assert "flyrt/runtime/launcher.py" in "\n".join(reply["traceback"])
    result(kernel, "%flydsl traceback user")
    result(kernel, "m.helper = lambda v: v + 1.0")


def test_a_restored_helper_in_one_cell_is_reported_as_reused_not_recompiled(session):
    kernel, name, _ = session
    result(kernel, "m.launch(x, out)")
    value, text = result(kernel, "original = m.helper\nm.helper = lambda v: v - 1.0\nm.launch(x, out)\n"
                                 "m.helper = original\nm.launch(x, out); float(out[2])")
    assert value == "3.0"
    assert f"flyrt: recompiled launcher launch: 'helper' in module {name} now refers to" in text
    assert "flyrt: re-validated launcher launch: " in text and "nothing recompiled" in text
    assert result(kernel, "m.launch.cache_info().compiles")[0] == "2"


def test_an_unrelated_cell_evicts_nothing_and_prints_nothing(session):
    kernel, _, _ = session
    result(kernel, "m.launch(x, out)")
    value, text = result(kernel, "unrelated = [1, 2, 3]\nm.OTHER = 5\nlen(unrelated)")
    assert value == "3" and text == ""
    assert result(kernel, "m.launch(x, out); m.launch.cache_info().compiles, m.launch.cache_info().evictions")[0] \
        == "(1, 0)"


def test_module_file_edited_on_disk_without_reload(session):
    kernel, name, path = session
    assert result(kernel, "held = m.launch; held(x, out); float(out[1])")[0] == "2.0"
    result(kernel, f"from pathlib import Path\np = Path({str(path)!r})\n"
                   "p.write_text(p.read_text().replace('v + 1.0', 'v + 40.0'))")
    value, text = result(kernel, "m.launch(x, out); first = float(out[1]); held(x, out); first, float(out[1])")
    assert value == "(41.0, 41.0)"  # the module's launcher and the one the user held
    assert f"reloaded edited module {name}" in text
    assert "evicted launcher launch" in text and "function helper" in text
    result(kernel, "p.write_text(p.read_text().replace('v + 40.0', 'v + 1.0'))")
    assert result(kernel, "held(x, out); float(out[1])")[0] == "2.0"
    assert result(kernel, "held.cache_info().compiles")[0] == "2"  # the restore reused the first artifact


def test_from_import_then_module_patch_recompiles_nothing(session):
    kernel, name, _ = session
    result(kernel, textwrap.dedent(f"""
        from {name} import helper as imported
        import flyrt.compiler as flyc, flyrt.expr as fx

        @flyc.kernel
        def mine(x: fx.Tensor, out: fx.Tensor):
            out[fx.thread_idx.x] = imported(x[fx.thread_idx.x])

        @flyc.jit
        def run_mine(x: fx.Tensor, out: fx.Tensor):
            mine(x, out).launch(block=(4,))

        run_mine(x, out)
    """))
    value, text = result(kernel, "m.helper = lambda v: v * 0.0\nrun_mine(x, out); float(out[3])")
    assert value == "4.0"
    assert result(kernel, "run_mine.cache_info().compiles")[0] == "1"


SEED_CELL = """
import functools

@functools.lru_cache(maxsize=256)
def compile_decode(group=1):
    @flyc.kernel
    def decode_kernel(q: fx.Tensor, out: fx.Tensor):
        i = fx.thread_idx.x
        out[i] = _load_q_fragments(q, i) + group

    @flyc.jit
    def launch_decode(q: fx.Tensor, out: fx.Tensor):
        decode_kernel(q, out).launch(block=(q.shape[0],))

    return {"launch": launch_decode, "kernel": decode_kernel}

def _load_q_fragments(q, i):
    return q[i] * 2.0

compile_decode()["launch"](x, out)
assert out[3] == 7.0
original = _load_q_fragments

def _load_q_fragments(q, i):
    raise RuntimeError("sentinel traced")

try:
    compile_decode()["launch"](x, out)
    raise AssertionError("stale code ran")
except RuntimeError as error:
    assert "sentinel traced" in str(error)

_load_q_fragments = original
compile_decode()["launch"](x, out)
assert out[3] == 7.0
assert compile_decode()["launch"].cache_info().compiles == 1
"""


def test_the_seed_flow_inside_one_cell(session):
    kernel, _, _ = session
    result(kernel, "import flyrt.compiler as flyc, flyrt.expr as fx")
    reply, outputs = kernel.execute(SEED_CELL)
    assert reply["status"] == "ok", reply


def graph_of(kernel, magic):
    """{label: (shape, stroke)} and {(from label, to label)} of the SVG the magic shows."""
    from xflydsl_shell.dependency_graph import read_svg

    reply, outputs = kernel.execute(magic)
    assert reply["status"] == "ok", reply
    svg = [m for m in outputs if m["msg_type"] == "execute_result"][0]["content"]["data"]["image/svg+xml"]
    assert "Warning" not in kernel.stdout(outputs, "stderr")
    return read_svg(svg)


def test_flydsl_magics(session):
    kernel, name, _ = session
    result(kernel, "m.launch(x, out); m.launch(x, out)")
    reply, outputs = kernel.execute("%flydsl status")
    (table,) = [m["content"]["data"] for m in outputs if m["msg_type"] == "display_data"]
    assert "<table>" in table["text/html"] and f"<td>{name}.launch</td>" in table["text/html"]
    assert f"{name}.launch" in table["text/plain"] and "compiles" in table["text/plain"]  # the console's
    assert "autoreload of edited modules: on" in kernel.stdout(outputs)
    reply, outputs = kernel.execute("m.launch.cache_info()")
    info = [m["content"]["data"] for m in outputs if m["msg_type"] == "execute_result"][0]
    assert "<th>compiles</th>" in info["text/html"] and info["text/plain"].startswith("CacheInfo(hits=")
    reply, outputs = kernel.execute("import flyrt.compiler as flyc\nflyc.compile_log()")
    log = [m["content"]["data"] for m in outputs if m["msg_type"] == "execute_result"][0]
    assert "<th>specialization</th>" in log["text/html"] and "launch" in log["text/html"]
    reply, outputs = kernel.execute("%flydsl?")
    assert "%flydsl graph [launcher]" in str(outputs) + str(reply.get("payload"))
    _, text = result(kernel, f"%flydsl why {name}.launch")
    assert f"{name}.helper" in text and "reads:" in text and "SCALE" in text
    nodes, edges = graph_of(kernel, "%flydsl graph")
    assert ("launch", "kernel") in edges and ("kernel", "helper") in edges and ("helper", name) in edges
    assert not any(color == "red" for _, color in nodes.values())
    reply, outputs = kernel.execute("%flydsl graph")  # a console gets the edges as text
    plain = [m for m in outputs if m["msg_type"] == "execute_result"][0]["content"]["data"]["text/plain"]
    assert {"launch -> kernel", "kernel -> helper"} <= set(plain.splitlines()) and "red:" not in plain
    result(kernel, "m.helper = lambda v: v * 2.0")  # evicted after this cell
    nodes, edges = graph_of(kernel, f"%flydsl graph {name}.launch")
    (launcher,) = [label for label in nodes if label.startswith("launch") and "evicted" in label]
    assert nodes[launcher][1] == "red" and "'helper' in module" in launcher
    # the helper that was rebound says so, and the path to it is red: launcher -> kernel -> helper
    (helper,) = [label for label in nodes if label.startswith("helper ") and "now refers to a different" in label]
    assert nodes[helper][1] == "red" and nodes["kernel"][1] != "red"
    assert {edge for edge, colour in edges.items() if colour == "red"} == {(launcher, "kernel"), ("kernel", helper)}
    assert (helper, name) in edges and edges[helper, name] != "red"
    reply, outputs = kernel.execute("%flydsl graph one two")
    shown = kernel.stdout(outputs, "stderr") + str(reply)
    assert "wrong arguments 'one two'" in shown and "TypeError" not in shown
    _, text = result(kernel, "%flydsl autoreload off")
    assert "is off" in text
    result(kernel, "%flydsl autoreload on")
    _, text = result(kernel, "%flydsl clear")
    assert "cleared" in text
    assert result(kernel, "m.launch.cache_info().size")[0] == "0"
    reply, outputs = kernel.execute("%flydsl frobnicate")
    assert "unknown %flydsl command" in kernel.stdout(outputs, "stderr")


OPS = "class Ops:\n    def scale(self, v):\n        return v * 2.0\nops = Ops()\nKERNEL_BODY = 'ops.scale(x[i])'"

# Each scenario through the kernel, cell by cell: the module as written, the
# change a later cell makes, out[2] before and after, the compiles, and (for
# reads through objects and buffers) how the notice names what changed.
SCENARIOS = {
    "module_attribute": (
        "import {helpers} as helpers\nKERNEL_BODY = 'helpers.helper(x[i])'",
        "helpers.helper = lambda v: v * 100.0", "3.0", "200.0", 2),
    "global_scalar": (
        "SCALE2 = 2.0\nKERNEL_BODY = 'x[i] * SCALE2'", "m.SCALE2 = 4.0", "4.0", "8.0", 2),
    "dict_constant_in_place": (
        "CONFIG = {{'k': 2.0}}\nKERNEL_BODY = 'x[i] * CONFIG[\"k\"]'", "m.CONFIG['k'] = 3.0", "4.0", "6.0", 2),
    "code_swapped_in_place": (
        "def h(v):\n    return v + 1.0\nKERNEL_BODY = 'h(x[i])'",
        "def other(v):\n    return v + 7.0\nm.h.__code__ = other.__code__", "3.0", "9.0", 2),
    "defaults_changed": (
        "def h(v, k=1.0):\n    return v + k\nKERNEL_BODY = 'h(x[i])'", "m.h.__defaults__ = (5.0,)", "3.0", "7.0", 2),
    "closure_cell_changed": (
        "def make():\n    k = 1.0\n    def h(v):\n        return v + k\n    return h\n"
        "h = make()\nKERNEL_BODY = 'h(x[i])'",
        "m.h.__closure__[0].cell_contents = 9.0", "3.0", "11.0", 2),
    "transitive_helper": (
        "def inner(v):\n    return v + 1.0\ndef outer(v):\n    return inner(v)\nKERNEL_BODY = 'outer(x[i])'",
        "m.inner = lambda v: v + 3.0", "3.0", "5.0", 2),
    "jit_device_helper": (
        "@flyc.jit\ndef dev(v):\n    return v + 1.0\nKERNEL_BODY = 'dev(x[i])'",
        "m.dev = flyc.jit(lambda v: v + 2.0)", "3.0", "4.0", 2),
    "decorated_helper": (
        "import functools\ndef deco(f):\n    @functools.wraps(f)\n    def w(*a):\n        return f(*a)\n    return w\n"
        "@deco\ndef h(v):\n    return v + 1.0\nKERNEL_BODY = 'h(x[i])'",
        "def other(v):\n    return v + 6.0\nm.h.__wrapped__.__code__ = other.__code__", "3.0", "8.0", 2),
    "staticmethod_on_class": (
        "class Ops:\n    @staticmethod\n    def h(v):\n        return v + 1.0\nKERNEL_BODY = 'Ops.h(x[i])'",
        "m.Ops.h = staticmethod(lambda v: v + 4.0)", "3.0", "6.0", 2),
    "instance_attribute": (
        "class Cfg:\n    pass\ncfg = Cfg()\ncfg.scale = 2.0\nKERNEL_BODY = 'x[i] * cfg.scale'",
        "m.cfg.scale = 3.0", "4.0", "6.0", 2, "cfg.scale changed from 2.0 to 3.0"),
    "class_attribute_through_an_instance": (
        "class K:\n    scale = 2.0\nk = K()\nKERNEL_BODY = 'x[i] * k.scale'",
        "m.K.scale = 5.0", "4.0", "10.0", 2, "K.scale changed from 2.0 to 5.0"),
    "method_patched_on_the_class": (
        OPS,
        "m.Ops.scale = lambda self, v: v * 7.0", "4.0", "14.0", 2, "Ops.scale now refers to a different function"),
    "method_shadowed_on_the_instance": (
        OPS,
        "m.ops.scale = lambda v: v * 3.0", "4.0", "6.0", 2, "ops.scale is now set on the object"),
    "array_element": (
        "import numpy\nW = numpy.array([2.0, 5.0], dtype=numpy.float32)\nKERNEL_BODY = 'x[i] * float(W[0])'",
        "m.W[0] = 3.0", "4.0", "6.0", 2, "W[0] changed"),
    # every way a trace reads state is watched, not only the syntax the rewrite sees (tests/runtime/test_state_reads.py)
    "getattr_with_a_constant_name": (
        "class Cfg:\n    pass\ncfg = Cfg()\ncfg.scale = 2.0\nKERNEL_BODY = 'x[i] * getattr(cfg, \"scale\")'",
        "m.cfg.scale = 3.0", "4.0", "6.0", 2, "cfg.scale changed from 2.0 to 3.0"),
    "zero_d_array_as_float": (
        "import numpy\nS0 = numpy.array(2.0)\nKERNEL_BODY = 'x[i] * float(S0)'",
        "m.S0[...] = 10.0", "4.0", "20.0", 2, "S0 (read whole by float(S0)) changed"),
    "item_of_an_array": (
        "import numpy\nS0 = numpy.array(2.0)\nKERNEL_BODY = 'x[i] * S0.item()'",
        "m.S0[...] = 3.0", "4.0", "6.0", 2, "S0 (read whole by S0.item()) changed"),
    "slots_attribute": (
        "class S:\n    __slots__ = ('scale',)\ns = S()\ns.scale = 2.0\nKERNEL_BODY = 'x[i] * s.scale'",
        "m.s.scale = 4.0", "4.0", "8.0", 2, "s.scale changed from 2.0 to 4.0"),
    "vars_of_an_object": (
        "class Cfg:\n    pass\ncfg = Cfg()\ncfg.scale = 2.0\nKERNEL_BODY = 'x[i] * vars(cfg)[\"scale\"]'",
        "m.cfg.scale = 3.0", "4.0", "6.0", 2, "vars(cfg)['scale'] changed from 2.0 to 3.0"),
    "float_protocol": (
        "class Conv:\n    def __init__(self):\n        self.value = 2.0\n    def __float__(self):\n"
        "        return self.value\nconv = Conv()\nKERNEL_BODY = 'x[i] * float(conv)'",
        "m.conv.value = 3.0", "4.0", "6.0", 2, "self.value of a Conv changed from 2.0 to 3.0"),
    "users_descriptor": (
        "class D:\n    def __get__(self, obj, kind):\n        return obj._scale\nclass Holder:\n    scale = D()\n"
        "holder = Holder()\nholder._scale = 2.0\nKERNEL_BODY = 'x[i] * holder.scale'",
        "m.holder._scale = 5.0", "4.0", "10.0", 2, "obj._scale changed from 2.0 to 5.0"),
    "getattr_method_of_the_user": (
        "class Lazy:\n    def __init__(self):\n        self._values = {{'scale': 2.0}}\n"
        "    def __getattr__(self, name):\n        return self._values[name]\nlazy = Lazy()\n"
        "KERNEL_BODY = 'x[i] * lazy.scale'",
        "m.lazy._values['scale'] = 3.0", "4.0", "6.0", 2, "self._values['scale'] changed from 2.0 to 3.0"),
    "library_computed_attribute": (
        "import numpy\nWIDE = numpy.zeros((2, 3))\nKERNEL_BODY = 'x[i] * float(WIDE.shape[0])'",
        "m.WIDE.resize((3, 3), refcheck=False)", "4.0", "6.0", 2, "WIDE.shape changed from (2, 3) to (3, 3)"),
}

SCENARIO_KERNEL = """
import flyrt.compiler as flyc
import flyrt.expr as fx
{setup}

@flyc.kernel
def kernel(x: fx.Tensor, out: fx.Tensor):
    i = fx.thread_idx.x
    out[i] = BODY

@flyc.jit
def launch(x: fx.Tensor, out: fx.Tensor):
    kernel(x, out).launch(block=(x.shape[0],))
"""


@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_scenario_through_the_kernel(kernel, tmp_path, scenario):
    setup, change, before, after, compiles, *named = SCENARIOS[scenario]
    helpers = f"khelpers_{scenario}"
    (tmp_path / f"{helpers}.py").write_text("def helper(v):\n    return v + 1.0\n")
    body = setup.format(helpers=helpers).rsplit("KERNEL_BODY = ", 1)
    source = SCENARIO_KERNEL.format(setup=body[0]).replace("BODY", eval(body[1]))
    name = f"kscen_{scenario}"
    (tmp_path / f"{name}.py").write_text(source)
    result(kernel, f"import sys, numpy as np\nsys.path.insert(0, {str(tmp_path)!r})\nimport {name} as m\n"
                   f"import {helpers} as helpers\nimport flyrt.compiler as flyc\n"
                   "x = np.arange(4, dtype=np.float32)\nout = np.zeros(4, np.float32)")
    assert result(kernel, "m.launch(x, out); float(out[2])")[0] == before
    _, text = result(kernel, change)
    assert "flyrt: evicted launcher launch" in text  # the notice, right after the change
    assert all(what in text for what in named), text
    assert result(kernel, "m.launch(x, out); float(out[2])")[0] == after
    assert result(kernel, "m.launch.cache_info().compiles")[0] == str(compiles)


def test_a_module_getattr_read_is_not_evicted_after_every_cell(kernel, tmp_path):
    """PEP 562: a name the module's __getattr__ computes is compared by what it
    computes, not reported deleted (and recompiled) after every cell."""
    (tmp_path / "klazy.py").write_text("_CONFIG = {'scale': 2.0}\n\ndef __getattr__(name):\n    return _CONFIG[name]\n")
    (tmp_path / "kreads_lazy.py").write_text(SCENARIO_KERNEL.format(setup="import klazy").replace(
        "BODY", "x[i] * klazy.scale"))
    result(kernel, f"import sys, numpy as np\nsys.path.insert(0, {str(tmp_path)!r})\nimport kreads_lazy as m\n"
                   "import klazy\nx = np.arange(4, dtype=np.float32)\nout = np.zeros(4, np.float32)")
    assert result(kernel, "m.launch(x, out); float(out[2])")[0] == "4.0"
    for _ in range(3):
        assert result(kernel, "klazy.unrelated = 1\nm.launch(x, out); float(out[2])") == ("4.0", "")
    assert result(kernel, "m.launch.cache_info().compiles")[0] == "1"
    _, text = result(kernel, "klazy._CONFIG['scale'] = 3.0")
    assert "flyrt: evicted launcher launch: the contents of '_CONFIG' in module klazy changed" in text, text
    assert result(kernel, "m.launch(x, out); float(out[2])")[0] == "6.0"


def test_a_getattr_raising_keyerror_does_not_break_defining_a_kernel(kernel):
    """The engine looks at every global of the cell (the factory search, the
    fingerprints, the diff after the cell): a quick config class whose
    __getattr__ raises KeyError survives it, and its reads are watched."""
    cell = textwrap.dedent("""
        import numpy as np
        import flyrt.compiler as flyc
        import flyrt.expr as fx

        class Quick:
            def __init__(self, **values):
                self.__dict__["_d"] = dict(values)

            def __getattr__(self, name):
                return self._d[name]

        quick = Quick(scale=2.0)

        @flyc.kernel
        def quick_kernel(x: fx.Tensor, out: fx.Tensor):
            out[fx.thread_idx.x] = x[fx.thread_idx.x] * quick.scale

        @flyc.jit
        def quick_launch(x: fx.Tensor, out: fx.Tensor):
            quick_kernel(x, out).launch(block=(x.shape[0],))

        qx, qout = np.arange(4, dtype=np.float32), np.zeros(4, np.float32)
        quick_launch(qx, qout)
        float(qout[2])
        """)
    assert result(kernel, cell)[0] == "4.0"
    _, text = result(kernel, "quick._d['scale'] = 3.0")
    assert "self._d['scale'] changed from 2.0 to 3.0" in text, text
    assert result(kernel, "quick_launch(qx, qout); float(qout[2])")[0] == "6.0"


def test_shared_helper_recompiles_only_its_launchers_and_a_b_a(kernel, tmp_path):
    (tmp_path / "kshared.py").write_text(textwrap.dedent("""
        import flyrt.compiler as flyc
        import flyrt.expr as fx

        def shared(v):
            return v + 1.0

        @flyc.kernel
        def k1(x: fx.Tensor, out: fx.Tensor):
            out[fx.thread_idx.x] = shared(x[fx.thread_idx.x])

        @flyc.kernel
        def k3(x: fx.Tensor, out: fx.Tensor):
            out[fx.thread_idx.x] = x[fx.thread_idx.x]

        @flyc.jit
        def l1(x: fx.Tensor, out: fx.Tensor):
            k1(x, out).launch(block=(4,))

        @flyc.jit
        def l2(x: fx.Tensor, out: fx.Tensor):
            k1(x, out).launch(block=(4,))

        @flyc.jit
        def l3(x: fx.Tensor, out: fx.Tensor):
            k3(x, out).launch(block=(4,))
    """))
    result(kernel, f"import sys, numpy as np\nsys.path.insert(0, {str(tmp_path)!r})\nimport kshared as s\n"
                   "x = np.arange(4, dtype=np.float32)\nout = np.zeros(4, np.float32)\n"
                   "s.l1(x, out); s.l2(x, out); s.l3(x, out)")
    _, text = result(kernel, "original = s.shared\ns.shared = lambda v: v + 2.0")
    assert "launcher l1" in text and "launcher l2" in text and "launcher l3" not in text
    assert result(kernel, "s.l1(x, out); s.l2(x, out); s.l3(x, out)\n"
                          "[l.cache_info().compiles for l in (s.l1, s.l2, s.l3)]")[0] == "[2, 2, 1]"
    result(kernel, "s.shared = original")
    assert result(kernel, "s.l1(x, out); float(out[1]), s.l1.cache_info().compiles")[0] == "(2.0, 2)"
