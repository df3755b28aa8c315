"""``fx.printf``: formatted output from a kernel's threads, as C's printf.

The format takes C's conversions ``d i u o x X`` (integers), ``e E f F g G``
(floats) and ``%%``, with flags, width and precision; a Python value (a
number, a string for ``%s``) is formatted while tracing. A traced value
supplies its own width: Int64 and Float64 travel to the target, an integer
shown by ``u o x X`` as the bits of its own type (``-1`` of an Int32 is
``ffffffff``), an unsigned one by ``d`` as unsigned. A length modifier
(``%ld``), a traced value for ``%c`` or ``%s``, and the wrong number of values
are errors at the user's line.

Each thread's lines come out in its program order; threads' lines
interleave. On the CPU target the text goes to Python's ``sys.stdout``
when the launcher returns (where ``print()`` would write: a notebook cell,
pytest's capture); on NVIDIA GPUs through CUDA's device printf, flushed
when the launch completes (the launcher waits for a kernel that prints);
on AMD GPUs through ROCm's hostcall printf; in interpreter mode through
Python, the same text.
"""

import re

from ..core import dtypes
from ..core.errors import KernelError
from ..core.user_code import user_line
from .tracing import current, line
from .values import Value, convert

_SPEC = re.compile(r"%(?P<body>[-+ #0]*\d*(?:\.\d*)?)(?P<length>hh|h|ll|l|L|j|z|t)?(?P<kind>.?)", re.S)
_INTEGER = "diuoxX"
_FLOAT = "eEfFgG"


def _fail(message):
    raise KernelError("fx.printf: " + message, *user_line())


def printf(format, *values):  # noqa: A002  (C's name)
    """Prints ``format`` with ``values`` (C's printf conversions) from each
    thread that reaches it: ``fx.printf("block %d: %.3f\\n", fx.block_idx.x, v)``.

    Integers take ``d i u o x X``, floats ``e E f F g G``, Python values any
    conversion Python's ``%`` takes. Where the text goes on each target: the
    guide's "Printing from kernels"."""
    if not isinstance(format, str):
        _fail(f"the format is a Python str, not {type(format).__name__}")
    pieces, traced, remaining = [], [], list(values)
    position = 0
    for match in re.finditer("%", format):
        start = match.start()
        if start < position:
            continue  # the second % of a %%
        pieces.append(format[position:start])
        spec = _SPEC.match(format, start)
        position = spec.end()
        kind, body = spec["kind"], spec["body"]
        if kind == "%" and not body:
            pieces.append("%%")
            continue
        if spec["length"]:
            _fail(f"'{spec.group()}': drop the length modifier '{spec['length']}'; a value's type sets its width")
        if kind not in _INTEGER + _FLOAT + "cs":
            _fail(f"'{spec.group()}' is not a conversion fx.printf takes (d i u o x X e E f F g G, c and s of "
                  "Python values, %%)")
        if not remaining:
            _fail(f"{len(values)} value(s) for a format of more conversions: {format!r}")
        value = remaining.pop(0)
        if isinstance(value, Value):
            pieces.append(_traced(value, body, kind, traced))
        else:
            try:
                pieces.append(("%" + body + kind) % value)
            except (TypeError, ValueError) as error:
                _fail(f"'%{body}{kind}' of {value!r}: {error}")
            pieces[-1] = pieces[-1].replace("%", "%%")
    pieces.append(format[position:])
    if remaining:
        _fail(f"{len(values)} values for {len(values) - len(remaining)} conversion(s) in {format!r}")
    current().builder.print("".join(pieces), [v.id for v in traced], line())


def _traced(value, body, kind, traced):
    """The C conversion for traced `value`, which joins `traced` as Int64 or Float64."""
    dtype = value.dtype
    if value.lanes != 1:
        _fail(f"a {value.lanes}-lane vector: print its lanes, v[0], v[1], ...")
    if getattr(dtype, "is_fp8", False):
        _fail(f"{dtype.name} values are storage: convert them with .to(fx.Float32) first")
    if kind in "cs":
        _fail(f"'%{kind}' takes Python values; print a traced {dtype.name} with %d, %x or %f")
    if kind in _FLOAT:
        if not dtype.is_float:
            _fail(f"'%{body}{kind}' needs a float, and the value is {dtype.name}: convert it with .to(fx.Float64)")
        traced.append(convert(value, dtypes.Float64))
        return "%" + body + kind
    if dtype.is_float:
        _fail(f"'%{body}{kind}' needs an integer, and the value is {dtype.name}: use %f, or .to(fx.Int64)")
    if dtype.is_bool:
        value, dtype = convert(value, dtypes.Int32), dtypes.Int32
    if kind in "di" and not dtype.is_unsigned:
        traced.append(convert(value, dtypes.Int64))
        return "%" + body + "ll" + kind
    # Unsigned, or the bits of a signed value: zero-extended from its own width.
    unsigned = value if dtype.is_unsigned else value.bitcast(dtypes.by_name(f"UInt{dtype.bits}"))
    traced.append(convert(unsigned, dtypes.UInt64).bitcast(dtypes.Int64))
    return "%" + body + "ll" + ("u" if kind in "di" else kind)
