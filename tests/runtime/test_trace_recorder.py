"""The trace recorder on the running CPython (3.10 to 3.13), without FlyDSL:
a user module's function runs inside ``TraceRecorder`` and what it read must
be in the ``Recorder``, whichever instructions this version compiled it to.
A read the recorder misses here is a dependency a compiled kernel would not
be invalidated by."""

import dis
import importlib
import itertools
import os
import subprocess
import sys
import textwrap

import pytest

from flyrt.invalidation.dependencies import WHOLE, Recorder
from flyrt.flydsl_adapter.subscripts import subscript_key
from flyrt.flydsl_adapter.trace_recorder import TraceRecorder

_counter = itertools.count()

HELPERS = """
scale = 2.0
other = 5.0
"""

USER = """
import numpy
import {helpers} as helpers

W = numpy.array([2.0, 5.0, 7.0], dtype=numpy.float32)


def helper(v):
    return v + 1.0


def calls_helper(x):
    return helper(x)


def module_attribute():
    return helpers.scale


def branch(flag):
    if flag:
        return helpers.scale
    return helpers.other


class Config:
    def __init__(self):
        self.scale = 3.0
        self.factor = 4.0

    def twice(self, x):
        return x * self.factor


cfg = Config()


def object_attribute():
    return cfg.scale


def method_call(x):
    return cfg.twice(x)


def local_then_attribute():
    c = cfg
    return c.scale


def stored_then_loaded():
    c = cfg; return c.scale  # noqa: E702  one line: 3.13 stores and loads c in one STORE_FAST_LOAD_FAST


def pair_then_attribute(a, c):
    return a + c.scale  # 3.13: LOAD_FAST_LOAD_FAST (a, c), then c.scale


def element():
    return float(W[0])


def computed_element(i):
    return float(W[i + 1])


def local_element(w, k):
    return float(w[k])  # 3.13: LOAD_FAST_LOAD_FAST (w, k), w subscripted by the second
"""


@pytest.fixture
def make_module(tmp_path, monkeypatch):
    """Writes and imports a fresh user module; returns it."""
    monkeypatch.syspath_prepend(str(tmp_path))

    def make(body, name=None):
        name = name or f"recorder_mod_{next(_counter)}"
        (tmp_path / f"{name}.py").write_text(textwrap.dedent(body))
        importlib.invalidate_caches()
        return importlib.import_module(name)

    yield make


@pytest.fixture
def user(make_module):
    helpers = make_module(HELPERS)
    return make_module(USER.format(helpers=helpers.__name__))


def record(fn, *args):
    recorder = Recorder()
    with TraceRecorder(recorder):
        fn(*args)
    return recorder


def names(recorder, owner):
    """The names the trace read out of `owner` (a namespace dict, an instance dict, a class)."""
    return {name for key, name in recorder.bindings if key == id(owner)}


def elements(recorder, buffer):
    """The keys of `buffer` the trace read (a list: slices are unhashable before 3.12)."""
    assert id(buffer) in recorder.buffers, "the buffer read was not recorded"
    return [key for key, _, _ in recorder.buffers[id(buffer)][2].values()]


def opcodes(fn):
    return {(i.opname, i.argval) for i in dis.get_instructions(fn)}


def test_a_global_helper_is_read_and_followed(user):
    recorder = record(user.calls_helper, 1.0)
    assert "helper" in names(recorder, vars(user))
    assert id(user.helper) in recorder.functions


def test_the_first_trace_of_a_process_records(user):
    # 3.12 sends opcode events only to a sys.settrace made after some frame
    # asked for them: in a process's first trace, nothing would be recorded.
    script = textwrap.dedent(f"""
        import sys
        import {user.__name__} as user
        from flyrt.invalidation.dependencies import Recorder
        from flyrt.flydsl_adapter.trace_recorder import TraceRecorder
        recorder = Recorder()
        with TraceRecorder(recorder):
            user.module_attribute()
        sys.exit(0 if (id(vars(user.helpers)), "scale") in recorder.bindings else 3)
    """)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr or "helpers.scale was not recorded"


def test_a_module_attribute_is_read_from_the_module(user):
    recorder = record(user.module_attribute)
    assert "helpers" in names(recorder, vars(user))
    assert names(recorder, vars(user.helpers)) == {"scale"}


def test_only_the_branch_that_ran_is_read(user):
    assert names(record(user.branch, True), vars(user.helpers)) == {"scale"}
    assert names(record(user.branch, False), vars(user.helpers)) == {"other"}


def test_an_attribute_through_an_object_is_its_instance_dict_binding(user):
    recorder = record(user.object_attribute)
    assert "cfg" in names(recorder, vars(user))
    assert "scale" in names(recorder, vars(user.cfg))
    assert recorder.bindings[(id(vars(user.cfg)), "scale")].label == "cfg.scale"


def test_a_method_call_reads_the_method_and_what_it_reads_of_self(user):
    recorder = record(user.method_call, 2.0)
    assert "twice" in names(recorder, user.Config)
    assert id(user.Config.twice) in recorder.functions
    assert "factor" in names(recorder, vars(user.cfg))
    assert recorder.bindings[(id(vars(user.cfg)), "factor")].label == "self.factor of a Config"


@pytest.mark.parametrize("function", ["local_then_attribute", "stored_then_loaded"])
def test_an_attribute_of_a_local_is_read(user, function):
    fn = getattr(user, function)
    if function == "stored_then_loaded" and sys.version_info >= (3, 13):
        assert ("STORE_FAST_LOAD_FAST", ("c", "c")) in opcodes(fn)
    recorder = record(fn)
    assert "scale" in names(recorder, vars(user.cfg))
    assert recorder.bindings[(id(vars(user.cfg)), "scale")].label == "c.scale"


def test_an_attribute_of_the_second_of_two_locals_loaded_together_is_read(user):
    if sys.version_info >= (3, 13):
        assert ("LOAD_FAST_LOAD_FAST", ("a", "c")) in opcodes(user.pair_then_attribute)
    recorder = record(user.pair_then_attribute, 1.0, user.cfg)
    assert "scale" in names(recorder, vars(user.cfg))
    assert recorder.bindings[(id(vars(user.cfg)), "scale")].label == "c.scale"


def test_an_element_of_a_buffer_is_read(user):
    assert elements(record(user.element), user.W) == [0]


def test_a_computed_key_reads_the_whole_buffer(user):
    assert elements(record(user.computed_element, 0), user.W) == [WHOLE]


def test_a_local_buffer_subscripted_by_a_local_reads_that_element(user):
    if sys.version_info >= (3, 13):
        assert ("LOAD_FAST_LOAD_FAST", ("w", "k")) in opcodes(user.local_element)
    assert elements(record(user.local_element, user.W, 2), user.W) == [2]


def test_loads_with_an_extended_arg_prefix_are_read(make_module):
    # 300 names: a load's arg needs an EXTENDED_ARG prefix; 3.10 and 3.11 send
    # the load's opcode event at the prefix, 3.12+ at the prefix and the load.
    many = [f"g{n}" for n in range(300)]
    helpers = make_module(HELPERS)
    module = make_module("\n".join(f"{name} = {n}" for n, name in enumerate(many)) + f"""
import {helpers.__name__} as helpers


def many_names():
    return {" + ".join(many)} + helpers.scale
""")
    instructions = list(dis.get_instructions(module.many_names))
    load = next(n for n, i in enumerate(instructions) if i.argval == "helpers")
    assert instructions[load - 1].opname == "EXTENDED_ARG"
    recorder = record(module.many_names)
    assert {"g0", "g299", "helpers"} <= names(recorder, vars(module))
    assert names(recorder, vars(helpers)) == {"scale"}


@pytest.mark.parametrize("source, loaded, expected", [
    ("W[0]", "W", ("const", 0)),
    ("W[-1]", "W", ("const", -1)),
    ("W[k]", "W", ("local", "k")),
    ("cfg.W[k + 1]", "W", ("computed", None)),
    ("W[idx[0]]", "W", ("computed", None)),
    ("W[idx[0]]", "idx", ("const", 0)),
    ("W.shape[0]", "W", None),  # the subscript takes W.shape, not W
    ("g(W)[0]", "W", None),
    ("g(W[0])", "W", ("const", 0)),
    ("g(k)[0]", "g", None),
    ("W[k, 0]", "W", ("computed", None)),
    ("W[1:2]", "W", ("computed", None)),  # 3.12+: BINARY_SLICE
    ("W[k:]", "W", ("computed", None)),
    ("W[g(k)]", "W", ("computed", None)),  # 3.11: PRECALL and CALL
    ("W[g(k, n=1)]", "W", ("computed", None)),  # KW_NAMES / CALL_KW
    ("W[g(*k)]", "W", ("computed", None)),  # CALL_FUNCTION_EX
    ("W[not k]", "W", ("computed", None)),  # 3.13: TO_BOOL
    ("W[-k]", "W", ("computed", None)),
    ("W[cfg.n]", "W", ("computed", None)),
    ("W[f'{k}']", "W", ("computed", None)),
    ("W[[k, 1]]", "W", ("computed", None)),
    ("W[k if k else 0]", "W", None),  # a jump: the walk does not know
    ("w[0]", "w", ("const", 0)),
    ("w[k]", "w", ("local", "k")),  # 3.13: LOAD_FAST_LOAD_FAST (w, k)
    ("w[k + 1]", "w", ("computed", None)),
    ("w[k][0]", "w", ("local", "k")),
    ("w.shape[k]", "w", None),
    ("W[w]", "w", None),  # w is the key, not a container
    ("k[w]", "w", None),
    ("W[k] + w[0]", "w", ("const", 0)),
])
def test_the_recorder_finds_which_load_a_subscript_reads_from(source, loaded, expected):
    code = compile(f"def f(k, w):\n    return {source}\n", "<test>", "exec").co_consts[0]
    instructions = [i for i in dis.get_instructions(code) if i.opname not in ("CACHE", "EXTENDED_ARG")]
    index, first = loading(instructions, loaded)
    assert subscript_key(instructions, index, first=first) == expected


def loading(instructions, name):
    """Where `name` is first loaded, and whether as the first of two locals (3.13's LOAD_FAST_LOAD_FAST)."""
    for index, instruction in enumerate(instructions):
        if instruction.opname.startswith("LOAD") and instruction.opname != "LOAD_CONST":
            names = instruction.argval if isinstance(instruction.argval, tuple) else (instruction.argval,)
            if name in names:
                return index, len(names) == 2 and names[0] == name
    raise AssertionError(f"nothing loads {name}")
