"""What rewritten control flow calls (see ast_rewrite): Python semantics for
Python conditions, structured IR ops for traced ones."""

from ..core import dtypes
from .reads import truth
from .tracing import current, interpreting, line
from .values import Value, convert, logical_not


class Unavailable:
    """A variable that has no value after a traced branch or loop."""

    def __init__(self, name, reason):
        self._name = name
        self._reason = reason

    def _fail(self, *args, **kwargs):
        raise NameError(f"variable '{self._name}' {self._reason}")

    __bool__ = __call__ = __getattr__ = __getitem__ = __add__ = __radd__ = __sub__ = __rsub__ = _fail
    __mul__ = __rmul__ = __lt__ = __gt__ = __le__ = __ge__ = __index__ = __float__ = __int__ = _fail

    def __repr__(self):
        return f"<unavailable '{self._name}': {self._reason}>"


UNDEFINED = Unavailable("?", "is not defined yet")


def maybe(thunk):
    """The value of a variable, or UNDEFINED when it is not bound yet."""
    try:
        return thunk()
    except NameError:
        return UNDEFINED


def _is_scalar(value):
    return isinstance(value, (bool, int, float)) and not isinstance(value, Value)


# -- if ------------------------------------------------------------------------


def if_(cond, then_fn, else_fn, values, names):
    if not isinstance(cond, Value) or interpreting():  # interpreted values have a truth value
        return then_fn(*values) if truth(cond) else else_fn(*values)
    where = line()
    builder = current().builder
    op = builder.begin_if(convert(cond, dtypes.Boolean).id, where)
    builder.enter(op, 0)
    then_out = then_fn(*values)
    builder.leave()
    builder.enter(op, 1)
    else_out = else_fn(*values)
    builder.leave()
    # a list or tuple of DSL values that enters the branch leaves it element by element, as a loop's does
    shapes = _Leaves(values, names)
    merged = _merge(op, shapes.names, shapes.leaves(then_out, where, "if"), shapes.leaves(else_out, where, "if"),
                    where, "if")
    return shapes.variables(merged)


def _merge(op, names, then_out, else_out, where, what):
    """Results of a traced if: values that differ between the branches
    leave through the op; the rest stay as they are."""
    builder = current().builder
    merged, then_yield, else_yield, slots = list(then_out), [], [], []
    for i, (name, a, b) in enumerate(zip(names, then_out, else_out)):
        if a is b:
            continue
        if isinstance(a, Unavailable) or isinstance(b, Unavailable):
            merged[i] = Unavailable(name, f"is assigned in only one branch of the {what} at line {where}")
            continue
        if not (isinstance(a, Value) or _is_scalar(a)) or not (isinstance(b, Value) or _is_scalar(b)):
            if _same_objects(a, b):
                continue
            raise TypeError(
                f"line {where}: variable '{name}' holds different Python objects in the two branches of a "
                f"traced {what}; only DSL scalars can differ between branches"
            )
        if _is_scalar(a) and _is_scalar(b) and type(a) is type(b) and a == b:
            continue
        common = _common_dtype(a, b)
        slots.append((i, common))
        then_yield.append(a)
        else_yield.append(b)
    for region, outs in ((0, then_yield), (1, else_yield)):
        builder.enter(op, region)
        builder.yield_([convert(v, common).id for v, (_, common) in zip(outs, slots)], where)
        builder.leave()
    results = builder.finish(op)
    for (i, common), result in zip(slots, results):
        merged[i] = Value(result, common)
    return tuple(merged)


def _same_objects(a, b):
    """Whether two branches left a variable the same: equal Python values, or
    sequences of the same objects (DSL values have no truth value to compare
    by)."""
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(x is y or _same_objects(x, y) for x, y in zip(a, b))
    if isinstance(a, Value) or isinstance(b, Value):
        return a is b
    return a == b


def _common_dtype(a, b):
    da = a.dtype if isinstance(a, Value) else None
    db = b.dtype if isinstance(b, Value) else None
    if da and db:
        return dtypes.promote(da, db)
    if da or db:
        known, other = (da, b) if da else (db, a)
        return known if not (isinstance(other, float) and not known.is_float) else dtypes.Float32
    return dtypes.promote(dtypes.default_for(a), dtypes.default_for(b))


def ifexp(cond, then_thunk, else_thunk):
    if not isinstance(cond, Value):
        return then_thunk() if truth(cond) else else_thunk()
    (result,) = if_(cond, lambda _: (then_thunk(),), lambda _: (else_thunk(),), (UNDEFINED,), ("value",))
    return result


def and_(first, second):
    a = first()
    if not isinstance(a, Value):
        return a if not truth(a) else second()
    (result,) = if_(a, lambda _: (convert(second(), dtypes.Boolean),), lambda _: (False,), (UNDEFINED,), ("and",))
    return convert(result, dtypes.Boolean)


def or_(first, second):
    a = first()
    if not isinstance(a, Value):
        return a if truth(a) else second()
    (result,) = if_(a, lambda _: (True,), lambda _: (convert(second(), dtypes.Boolean),), (UNDEFINED,), ("or",))
    return convert(result, dtypes.Boolean)


def not_(value):
    return logical_not(value) if isinstance(value, Value) else not truth(value)


# -- loops ---------------------------------------------------------------------


def _carried(values):
    """Which incoming values a loop carries, and their types."""
    carried = {}
    for i, v in enumerate(values):
        if isinstance(v, Value):
            carried[i] = v.dtype
        elif _is_scalar(v):
            carried[i] = dtypes.default_for(v)
    return carried


class _Leaves:
    """A loop's variables as the values it carries: a list or tuple of DSL
    values (fragments, accumulators) is carried element by element and
    comes back as the same kind of sequence."""

    def __init__(self, values, names):
        self.shapes, self.values, self.names = [], [], []
        for value, name in zip(values, names):
            if self._is_sequence(value):
                self.shapes.append((type(value), len(value)))
                self.values.extend(value)
                self.names.extend(f"{name}[{i}]" for i in range(len(value)))
            else:
                self.shapes.append(None)
                self.values.append(value)
                self.names.append(name)
        self.variable_names = list(names)

    @staticmethod
    def _is_sequence(value):
        return isinstance(value, (list, tuple)) and value and all(
            isinstance(v, Value) or _is_scalar(v) for v in value)

    def variables(self, leaves):
        out, pos = [], 0
        for shape in self.shapes:
            if shape is None:
                out.append(leaves[pos])
                pos += 1
            else:
                kind, count = shape
                out.append(kind(leaves[pos : pos + count]))
                pos += count
        return tuple(out)

    def leaves(self, variables, where, what):
        out = []
        for shape, value, name in zip(self.shapes, variables, self.variable_names):
            if shape is None:
                out.append(value)
            elif isinstance(value, (list, tuple)) and len(value) == shape[1]:
                out.extend(value)
            else:
                raise TypeError(f"line {where}: '{name}' enters the {what} as a sequence of {shape[1]} values and "
                                "must stay one")
        return out


def _loop(begin, values, names, where, what):
    """Traces a loop op, widening carried types the body changes (a carried
    `acc = 0` that the body makes Float32 restarts the trace as Float32)."""
    builder = current().builder
    carried = _carried(values)
    while True:
        inits = [convert(values[i], carried[i]) for i in sorted(carried)]
        op, outs, arguments = begin(inits)
        widened = False
        for slot, i in enumerate(sorted(carried)):
            out = outs[i]
            if isinstance(out, Value) and out.dtype is not carried[i]:
                wider = dtypes.promote(carried[i], out.dtype)
                if isinstance(values[i], Value) or wider is carried[i]:
                    if wider is not carried[i]:
                        builder.leave()
                        raise TypeError(
                            f"line {where}: '{names[i]}' enters the {what} as {carried[i].name} but the body "
                            f"makes it {out.dtype.name}; convert it before the loop"
                        )
                else:
                    carried[i] = wider
                    widened = True
            elif not (isinstance(out, Value) or _is_scalar(out)):
                builder.leave()
                raise TypeError(f"line {where}: '{names[i]}' becomes a {type(out).__name__} inside a traced {what}")
        if widened:
            builder.leave()
            builder.discard(op)
            continue
        builder.yield_([convert(outs[i], carried[i]).id for i in sorted(carried)], where)
        builder.leave()
        results = dict(zip(sorted(carried), builder.finish(op)))
        merged = []
        for i, (name, before, after) in enumerate(zip(names, values, outs)):
            if i in results:
                merged.append(Value(results[i], carried[i]))
            elif before is after:
                merged.append(before)
            elif isinstance(before, Unavailable):
                merged.append(Unavailable(name, f"is only defined inside the traced {what} at line {where}"))
            else:
                raise TypeError(
                    f"line {where}: '{name}' is reassigned to a different {type(after).__name__} inside a traced "
                    f"{what}; only DSL scalars can change in dynamic loops"
                )
        return tuple(merged)


def for_range(bounds, body_fn, values, names):
    if len(bounds) == 1:
        start, stop, step = 0, bounds[0], 1
    elif len(bounds) == 2:
        (start, stop), step = bounds, 1
    elif len(bounds) == 3:
        start, stop, step = bounds
    else:
        raise TypeError(f"range expected 1 to 3 arguments, got {len(bounds)}")
    if isinstance(step, int) and not isinstance(step, Value) and step == 0:
        raise ValueError("range() arg 3 must not be zero")
    where = line()
    builder = current().builder
    index_type = dtypes.Int32
    for bound in (start, stop, step):
        if isinstance(bound, Value):
            if not bound.dtype.is_integer:
                raise TypeError(f"line {where}: range bounds must be integers, got {bound.dtype.name}")
            index_type = dtypes.promote(index_type, bound.dtype)
        elif isinstance(bound, float):
            raise TypeError(f"line {where}: range bounds must be integers, got a float")
        elif isinstance(bound, int) and not -(2**31) <= bound < 2**31:
            index_type = dtypes.promote(index_type, dtypes.Int64)  # a Python bound past 32 bits: a 64-bit loop
    lower, upper, stride = (convert(b, index_type) for b in (start, stop, step))
    carried = _Leaves(values, names)

    def begin(inits):
        op = builder.begin_for(lower.id, upper.id, stride.id, [v.id for v in inits], where)
        arguments = builder.region_arguments(op, 0)
        builder.enter(op, 0)
        incoming = list(carried.values)
        for slot, i in enumerate(sorted(_carried(carried.values))):
            incoming[i] = Value(arguments[slot + 1], inits[slot].dtype)
        outs = body_fn(Value(arguments[0], index_type), *carried.variables(incoming))
        return op, carried.leaves(outs, where, "for loop"), arguments

    return carried.variables(_loop(begin, carried.values, carried.names, where, "for loop"))


def while_(cond_fn, body_fn, values, names):
    first = cond_fn(*values)
    if not isinstance(first, Value):
        condition = first
        while truth(condition):
            values = body_fn(*values)
            condition = cond_fn(*values)
            if isinstance(condition, Value):
                raise TypeError(
                    f"line {line()}: this while loop started on a Python condition that became traced; "
                    "make the condition traced from the start (e.g. with fx.Int32(...))"
                )
        return values
    where = line()
    builder = current().builder
    carried = _Leaves(values, names)

    def begin(inits):
        op = builder.begin_while([v.id for v in inits], where)
        order = sorted(_carried(carried.values))
        before = list(carried.values)
        arguments = builder.region_arguments(op, 0)
        for slot, i in enumerate(order):
            before[i] = Value(arguments[slot], inits[slot].dtype)
        builder.enter(op, 0)
        condition = convert(cond_fn(*carried.variables(before)), dtypes.Boolean)
        builder.condition(condition.id, list(arguments), where)
        builder.leave()
        after = list(carried.values)
        arguments = builder.region_arguments(op, 1)
        for slot, i in enumerate(order):
            after[i] = Value(arguments[slot], inits[slot].dtype)
        builder.enter(op, 1)
        return op, carried.leaves(body_fn(*carried.variables(after)), where, "while loop"), arguments

    return carried.variables(_loop(begin, carried.values, carried.names, where, "while loop"))
