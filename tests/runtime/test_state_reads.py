"""Every way a trace reads Python state is watched (flyrt/reads.py): the same
compiled-in value read through syntax, builtins, conversion protocols and
descriptors; after a change of what was read the next call recompiles (or
raises, naming the read), after an unrelated change nothing recompiles."""

import textwrap
import traceback

import numpy as np
import pytest

import flyrt.compiler as flyc
from test_invalidation import compiles, elementwise, make_module, run  # noqa: F401  (make_module: a fixture)

# What every module below defines: the objects the reads go through. Each
# holds 2.0 where the kernel reads it; `.other` and friends are not read.
STATE = textwrap.dedent("""
    import operator
    import numpy as np

    class Config:
        pass

    cfg = Config()
    cfg.scale, cfg.other = 2.0, 1.0

    class Slotted:
        __slots__ = ("scale", "other")

    slotted = Slotted()
    slotted.scale, slotted.other = 2.0, 1.0

    class Converts:
        def __init__(self):
            self.value, self.other = 2.0, 1.0

        def __float__(self):
            return self.value

        def __index__(self):
            return int(self.value)

        def __array__(self, dtype=None, copy=None):
            return np.array([self.value], dtype=dtype)

    converts = Converts()

    class Scale:  # a descriptor of the user's
        def __get__(self, obj, kind):
            return obj._scale

    class Described:
        scale = Scale()

        def __init__(self):
            self._scale, self.other = 2.0, 1.0

    described = Described()

    class Lazy:  # attributes computed by __getattr__
        def __init__(self):
            self._values = {"scale": 2.0}
            self.other = 1.0

        def __getattr__(self, name):
            return self._values[name]

    lazy = Lazy()

    class Property:
        def __init__(self):
            self._scale, self.other = 2.0, 1.0

        @property
        def scale(self):
            return self._scale

    prop = Property()

    S0 = np.array(2.0)
    W = np.array([2.0, 5.0])
    TABLE = np.array([2.0, 4.0, 6.0])
    INDEX = np.array(0)
    WIDE = np.zeros((2, 3))
    UNRELATED = np.array([1.0])
    """)

# (path, how the kernel reads the value, the change (it becomes 3.0, or the
# kernel's result 9.0 at x = 3), a change of something the read did not see)
READS = [
    ("syntax: attribute", "cfg.scale", "cfg.scale = 3.0", "cfg.other = 7.0"),
    ("syntax: element", "float(W[0])", "W[0] = 3.0", "W[1] = 7.0"),
    ("syntax: element, its index from state", "float(TABLE[INDEX])", "INDEX[...] = 1; TABLE[1] = 3.0",
     "TABLE[2] = 7.0"),
    ("builtin: getattr", 'getattr(cfg, "scale")', "cfg.scale = 3.0", "cfg.other = 7.0"),
    ("builtin: getattr with a default", 'getattr(cfg, "missing", 2.0)', "cfg.missing = 3.0", "cfg.other = 7.0"),
    ("builtin: hasattr", '2.0 + hasattr(cfg, "flag")', "cfg.flag = True", "cfg.other = 7.0"),
    ("builtin: operator.attrgetter", 'operator.attrgetter("scale")(cfg)', "cfg.scale = 3.0", "cfg.other = 7.0"),
    ("builtin: operator.itemgetter", "float(operator.itemgetter(0)(W))", "W[0] = 3.0", "W[1] = 7.0"),
    ("builtin: vars()[...]", 'vars(cfg)["scale"]', "cfg.scale = 3.0", "cfg.other = 7.0"),
    ("builtin: __dict__[...]", 'cfg.__dict__["scale"]', "cfg.scale = 3.0", "cfg.other = 7.0"),
    ("builtin: float() of a 0-d array", "float(S0)", "S0[...] = 3.0", "S0[...] = 2.0"),
    ("builtin: int() of a 0-d array", "float(int(S0))", "S0[...] = 3.0", "UNRELATED[0] = 7.0"),
    ("builtin: .item()", "S0.item()", "S0[...] = 3.0", "UNRELATED[0] = 7.0"),
    ("builtin: .tolist()", "W.tolist()[0]", "W[0] = 3.0", "UNRELATED[0] = 7.0"),
    ("builtin: numpy reduction", "float(np.min(W))", "W[0] = 3.0", "UNRELATED[0] = 7.0"),
    ("builtin: len()", "float(len(TABLE)) - 1.0", "globals()['TABLE'] = np.zeros(4)", "TABLE[0] = 7.0"),
    ("protocol: __float__", "float(converts)", "converts.value = 3.0", "converts.other = 7.0"),
    ("protocol: __index__", "float(operator.index(converts))", "converts.value = 3.0", "converts.other = 7.0"),
    ("protocol: __array__", "float(np.asarray(converts)[0])", "converts.value = 3.0", "converts.other = 7.0"),
    ("protocol: an operator", "float(S0 * 1.0)", "S0[...] = 3.0", "UNRELATED[0] = 7.0"),
    ("protocol: a comparison", "(2.0 if S0 < 2.5 else 3.0)", "S0[...] = 3.0", "UNRELATED[0] = 7.0"),
    ("protocol: iteration", "[float(v) for v in W][0]", "W[0] = 3.0", "UNRELATED[0] = 7.0"),
    ("protocol: unpacking into arguments", "float((lambda first, second: first)(*W))", "W[0] = 3.0",
     "UNRELATED[0] = 7.0"),
    ("descriptor: __slots__", "slotted.scale", "slotted.scale = 3.0", "slotted.other = 7.0"),
    ("descriptor: the user's __get__", "described.scale", "described._scale = 3.0", "described.other = 7.0"),
    ("descriptor: property", "prop.scale", "prop._scale = 3.0", "prop.other = 7.0"),
    ("descriptor: __getattr__", "lazy.scale", 'lazy._values["scale"] = 3.0', "lazy.other = 7.0"),
    ("descriptor: a library's (ndarray.shape)", "float(WIDE.shape[0])",
     "WIDE.resize((3, 3), refcheck=False)", "WIDE[0, 0] = 7.0"),
]


@pytest.mark.parametrize("path, read, change, unrelated", READS, ids=[r[0] for r in READS])
def test_a_read_recompiles_when_what_it_read_changes_and_only_then(make_module, path, read, change, unrelated):
    mod = make_module(elementwise(f"x[i] * ({read})", STATE))
    assert run(mod.launch)[3] == 6.0
    exec(unrelated, mod.__dict__)
    assert run(mod.launch)[3] == 6.0, f"{path}: an unrelated change changed the result"
    assert compiles(mod.launch) == 1, f"{path}: an unrelated change recompiled ({mod.launch.last_reasons})"
    exec(change, mod.__dict__)
    assert run(mod.launch)[3] == 9.0, f"{path}: the old value ran after a change of what it read"
    assert compiles(mod.launch) == 2
    assert run(mod.launch)[3] == 9.0 and compiles(mod.launch) == 2  # and then it holds


def test_what_changed_is_named_as_the_user_wrote_it(make_module):
    mod = make_module(elementwise('x[i] * getattr(cfg, "scale") * float(S0) * slotted.scale', STATE))
    run(mod.launch)
    mod.cfg.scale, mod.S0[...], mod.slotted.scale = 3.0, 4.0, 5.0
    run(mod.launch)
    assert mod.launch.last_reasons == ["cfg.scale changed from 2.0 to 3.0", "slotted.scale changed from 2.0 to 5.0",
                                       "S0 (read whole by float(S0)) changed"]


def test_the_same_value_rebound_recompiles_nothing(make_module):
    mod = make_module(elementwise("x[i] * slotted.scale * getattr(cfg, 'scale')", STATE))
    run(mod.launch)
    mod.slotted.scale = float("2.0")  # another float object, the same value
    mod.cfg.scale = 1.0 + 1.0
    assert run(mod.launch)[3] == 12.0
    assert compiles(mod.launch) == 1


def test_a_buffer_too_large_to_watch_is_refused_naming_the_read(make_module):
    mod = make_module(elementwise("x[i] * float(BIG.sum())", "import numpy as np\nBIG = np.ones(10_000)\n"))
    with pytest.raises(flyc.KernelError, match=r"BIG\.sum\(\) reads a ndarray of 80000 bytes while tracing.*"
                                               r"pass BIG as an fx\.Tensor argument, or the value as an fx\.Constexpr"):
        run(mod.launch)
    small = make_module(elementwise("x[i] * float(len(BIG))", "import numpy as np\nBIG = np.ones(10_000)\n"))
    assert run(small.launch)[3] == 30000.0  # a length reads the shape, not the contents


def test_a_class_that_computes_every_attribute_is_refused_naming_the_read(make_module):
    mod = make_module(elementwise("x[i] * anything.scale", """
class Anything:
    def __getattribute__(self, name):
        return 2.0

anything = Anything()
"""))
    with pytest.raises(flyc.KernelError, match=r"anything\.scale is read through Anything\.__getattribute__"):
        run(mod.launch)


def test_an_object_made_while_tracing_is_no_dependency(make_module):
    mod = make_module(elementwise("x[i] * helper()", STATE + textwrap.dedent("""
        def helper():
            made = np.array([2.0, 1.0])
            return float(made.sum()) - 1.0 + float(np.ones(100_000).sum()) * 0.0
        """)))
    assert run(mod.launch)[3] == 6.0
    (record,) = [a.record for _, a in mod.launch._entries()]
    assert not record.buffers and not record.reads


def test_state_a_helper_returns_and_a_constexpr_object_are_state_too(make_module):
    mod = make_module(STATE + """
def table():
    return W

@flyc.kernel
def kernel(x: fx.Tensor, out: fx.Tensor, holder: fx.Constexpr[object]):
    i = fx.thread_idx.x
    out[i] = x[i] * float(np.max(table())) * float(holder)

@flyc.jit
def launch(x: fx.Tensor, out: fx.Tensor, holder: fx.Constexpr[object]):
    kernel(x, out, holder).launch(block=(x.shape[0],))
""")
    x, out = np.arange(8, dtype=np.float32), np.zeros(8, np.float32)
    mod.launch(x, out, mod.converts)
    assert out[3] == 3.0 * 5.0 * 2.0
    mod.W[1], mod.converts.value = 6.0, 3.0
    mod.launch(x, out, mod.converts)
    assert out[3] == 3.0 * 6.0 * 3.0 and compiles(mod.launch) == 2


def test_a_module_getattr_is_compared_by_what_it_computes(make_module):
    """PEP 562: a name the module's __getattr__ makes is not 'deleted' after
    every cell, and what it reads is watched."""
    lazy = make_module("_CONFIG = {'scale': 2.0}\n\ndef __getattr__(name):\n    return _CONFIG[name]\n")
    mod = make_module(elementwise(f"x[i] * {lazy.__name__}.scale", f"import {lazy.__name__}\n"))
    assert run(mod.launch)[3] == 6.0
    lazy.unrelated = 1  # the module's dict changes, what the read computes does not
    assert mod.launch.sweep() == [] and run(mod.launch)[3] == 6.0  # what the kernel does after a cell
    assert compiles(mod.launch) == 1
    lazy._CONFIG["scale"] = 3.0
    assert run(mod.launch)[3] == 9.0
    lazy.scale = 4.0  # defined on the module now, over its __getattr__
    assert run(mod.launch)[3] == 12.0
    assert f"'scale' is now defined in module {lazy.__name__}" in mod.launch.last_reasons
    assert compiles(mod.launch) == 3


def test_a_getattr_that_raises_keyerror_never_breaks_the_users_code(make_module):
    """The engine probes the module's globals (a factory's search, fingerprints,
    the cell diff): an object whose __getattr__ raises anything must survive it."""
    mod = make_module(elementwise("x[i] * quick.scale", """
class Quick:
    def __init__(self):
        self.__dict__["_d"] = {"scale": 2.0}

    def __getattr__(self, name):
        return self._d[name]  # a KeyError, not an AttributeError, for a name it lacks

quick = Quick()
"""))
    assert run(mod.launch)[3] == 6.0
    mod.quick._d["scale"] = 3.0
    assert run(mod.launch)[3] == 9.0


def test_traced_functions_keep_their_qualified_names_in_tracebacks(make_module):
    """IPython names a frame by its code's qualified name: the user's, not the rewrite's factory's."""
    mod = make_module(elementwise("x[i] if i < 2 else x[i] + undefined_name", ""))
    with pytest.raises(NameError) as info:
        run(mod.launch)
    names = [getattr(frame.f_code, "co_qualname", frame.f_code.co_name)  # 3.10: co_name alone
             for frame, _ in traceback.walk_tb(info.value.__traceback__)]
    assert "kernel" in names and "launch" in names, names
    assert not any("__fly" in name for name in names), names  # the else branch is named after its kernel


def test_the_texts_of_reads_grow_with_the_source_not_faster(make_module):
    """Each operand's text is read from the source before rewriting (a chain
    of 200 additions once made texts that nested each other's, exponentially)."""
    from flyrt.frontend import ast_rewrite
    from flyrt.core.fingerprint import code_tree

    mod = make_module(elementwise(" + ".join(["x[i]"] * 200), ""))
    assert run(mod.launch)[3] == 600.0
    code = ast_rewrite.rewritten_code(mod.kernel.fn)
    texts = [c for inner in code_tree(code) for c in inner.co_consts if isinstance(c, tuple)]
    characters = sum(len(t) for text in texts for t in text if isinstance(t, str))
    assert characters < 100 * 200 * 3, characters  # each of 400 texts at most a line long


@pytest.mark.parametrize("line_end", ["\n", "\r\n", "\r"])
def test_the_text_a_read_is_named_by_is_the_source_as_written(line_end):
    # What error messages quote (the rewriter's own segment reader): the same
    # as ast.get_source_segment for every node, non-ASCII, tabs and
    # multi-line expressions included.
    import ast

    from flyrt.frontend import ast_rewrite

    source = line_end.join([
        "def kernel(x, çà):",
        "\ty = çà.scale *  (x +",
        "\t     2.0)  # ünïcode",
        "\treturn {'k': [y, çà.other]}['k']",
        ""])
    lines = ast_rewrite._utf8_lines(source)
    nodes = list(ast.walk(ast.parse(source)))
    assert len(nodes) > 20
    for node in nodes:
        assert ast_rewrite._source_segment(lines, node) == ast.get_source_segment(source, node), ast.dump(node)
