"""Rewrites a kernel's Python so traced values can drive its control flow,
and so every read of Python state it makes is seen.

As FlyDSL does, `if`, `for ... in range(...)`, `while`, `and`/`or`/`not`,
conditional expressions and comparison chains become calls into
`flyrt.control_flow`, which runs them as Python when their conditions are
Python values and emits structured IR ops when they are traced. Branch and
loop bodies become nested functions whose parameters and results are the
variables they assign. Line numbers are kept, so errors and IR locations
name the user's source lines.

Wherever the code touches a Python object (an attribute, an element, a
call, an operand, an iteration or unpacking), a call into `flyrt.reads`
sees the object first, with the source text naming it, so what the trace
compiles in is recorded at its source (language/reads.py says how).

Loops and branches that `return`, `break` or `continue` stay Python (a traced
condition there raises a clear error), except the early-exit pattern
`if cond: return` at function level, which becomes an if/else.

A pure transform of code, importing nothing of flyrt: rewriting.py binds
the rewritten code to the modules its calls reach, and flyrt's package keeps
it in the disk cache (keep_rewrites_in), so that a new process's first trace
of an unedited function skips the rewrite.
"""

import ast
import hashlib
import importlib.util
import inspect
import marshal
import re
import textwrap
import types
from pathlib import Path

RUNTIME = "__flyrt_control_flow__"
READS = "__flyrt_reads__"

# Builtins that must see the caller's frame (super, locals) or read nothing.
_CALLED_DIRECTLY = {"range", "isinstance", "print", "super", "locals", "globals", "type"}


class _Assigned(ast.NodeVisitor):
    """Names a block of statements assigns (not inside nested scopes)."""

    def __init__(self):
        self.names = []

    def _add(self, name):
        if name not in self.names:
            self.names.append(name)

    def visit_Name(self, node):
        if isinstance(node.ctx, ast.Store):
            self._add(node.id)

    def visit_FunctionDef(self, node):
        self._add(node.name)

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_ClassDef(self, node):
        self._add(node.name)

    def visit_Lambda(self, node):
        pass

    def _comprehension(self, node):
        pass

    visit_ListComp = visit_SetComp = visit_DictComp = visit_GeneratorExp = _comprehension


def assigned_names(statements):
    finder = _Assigned()
    for statement in statements:
        finder.visit(statement)
    return [n for n in finder.names if not n.startswith("__fly_")]


class _Escapes(ast.NodeVisitor):
    """Whether statements return, break or continue out of their block."""

    def __init__(self, loop_level):
        self.found = False
        self.loop_level = loop_level

    def visit_Return(self, node):
        self.found = True

    def visit_Break(self, node):
        if self.loop_level == 0:
            self.found = True

    visit_Continue = visit_Break

    def _loop(self, node):
        self.loop_level += 1
        self.generic_visit(node)
        self.loop_level -= 1

    visit_For = visit_While = visit_AsyncFor = _loop

    def visit_FunctionDef(self, node):
        pass

    visit_AsyncFunctionDef = visit_Lambda = visit_ClassDef = visit_FunctionDef


def escapes(statements):
    finder = _Escapes(0)
    for statement in statements:
        finder.visit(statement)
    return finder.found


def _at(new, node):
    """`new` located at the first line of `node` only: CPython reports a
    call's line from its position, and the rewritten call of an `if` or a
    loop should name the statement's first line, not its last."""
    new.lineno, new.col_offset = node.lineno, node.col_offset
    new.end_lineno, new.end_col_offset = node.lineno, node.col_offset + 1
    return new


def _call(name, args, node, keywords=(), runtime=RUNTIME):
    call = ast.Call(
        func=ast.Attribute(value=ast.Name(id=runtime, ctx=ast.Load()), attr=name, ctx=ast.Load()),
        args=list(args),
        keywords=list(keywords),
    )
    return _at(call, node)


def _read(name, args, node, keywords=()):
    return _call(name, args, node, keywords, READS)


def _texts(node, *texts):
    return ast.copy_location(ast.Constant(tuple(texts)), node)


def _used(value, text, expression):
    """`value` (the source `text`) as an operand `expression` consumes (constants need no look)."""
    if isinstance(value, ast.Constant):
        return value
    return _read("used", [value, _texts(value, text, expression)], value)


def _iterated(value, text, statement):
    return _read("iterate", [value, _texts(value, text, statement)], value)


def _names_tuple(names, node, ctx):
    return _at(
        ast.Tuple(elts=[ast.Name(id=n, ctx=ctx()) for n in names], ctx=ctx()), node
    )


def _string_tuple(names, node):
    return _at(ast.Tuple(elts=[ast.Constant(n) for n in names], ctx=ast.Load()), node)


def _lambda(body, node):
    args = ast.arguments(posonlyargs=[], args=[], kwonlyargs=[], kw_defaults=[], defaults=[])
    return _at(ast.Lambda(args=args, body=body), node)


def _current_values(names, node):
    """(maybe(lambda: x), ...): the variables' values, or UNDEFINED."""
    return _at(
        ast.Tuple(elts=[_call("maybe", [_lambda(ast.Name(id=n, ctx=ast.Load()), node)], node) for n in names],
                  ctx=ast.Load()),
        node,
    )


def _function(name, params, body, returns, node):
    args = ast.arguments(
        posonlyargs=[], args=[ast.arg(arg=p) for p in params], kwonlyargs=[], kw_defaults=[], defaults=[]
    )
    result = ast.Return(value=_names_tuple(returns, node, ast.Load))
    body = list(body) + [ast.copy_location(result, node)]
    fn = ast.FunctionDef(name=name, args=args, body=body, decorator_list=[], returns=None)
    return ast.copy_location(fn, node)  # its parts' places: rewritten_code's one pass over the whole tree


def _assign(names, value, node):
    target = _names_tuple(names, node, ast.Store)
    return _at(ast.Assign(targets=[target], value=value), node)


_LINE_END = re.compile(r"\r\n|\r|\n")  # the line ends the tokenizer (and ast's positions) count


def _utf8_lines(source):
    """`source`'s lines, each with its end, as UTF-8 (column offsets count its bytes)."""
    lines, start = [], 0
    for end in _LINE_END.finditer(source):
        lines.append(source[start:end.end()].encode())
        start = end.end()
    lines.append(source[start:].encode())
    return lines


def _source_segment(lines, node):
    """ast.get_source_segment on lines split once: it splits the whole source
    again on every call, which made rewriting a kernel of a long file take
    half a second."""
    end_line, end_col = getattr(node, "end_lineno", None), getattr(node, "end_col_offset", None)
    if end_line is None or end_col is None or not 1 <= node.lineno <= end_line <= len(lines):
        return None
    first, last = node.lineno - 1, end_line - 1
    if first == last:
        return lines[first][node.col_offset:end_col].decode()
    return b"".join([lines[first][node.col_offset:], *lines[first + 1:last], lines[last][:end_col]]).decode()


class _Rewriter(ast.NodeTransformer):
    def __init__(self, source):
        self.counter = 0
        self.loop_depth = 0
        self.lines = _utf8_lines(source)  # what the positions of the tree being rewritten point into

    _LONGEST = 100  # a read's text in messages, at most

    def _text(self, node):
        """`node`'s source as the user wrote it (read before rewriting: texts stay linear in the source)."""
        text = _source_segment(self.lines, node) or ast.unparse(node)
        text = " ".join(text.split())
        return text if len(text) <= self._LONGEST else text[: self._LONGEST - 3] + "..."

    def _fresh(self, kind):
        self.counter += 1
        return f"__fly_{kind}_{self.counter}"

    # -- returns inside ifs: one exit, through a variable -------------------

    def _returns_to_assignments(self, statements, node):
        """`statements` with each return turned into `__flyrt_result__ = value`,
        when every return sits at the end of an if-chain at this level;
        None when a return hides elsewhere (e.g. in a loop)."""
        out = []
        for i, statement in enumerate(statements):
            if isinstance(statement, ast.Return):
                out.append(self._result(statement.value, statement))
                return out
            if isinstance(statement, ast.If) and escapes([statement]):
                body, orelse = statement.body, statement.orelse
                if not (body and isinstance(body[-1], ast.Return)) or escapes(body[:-1]):
                    return None
                then_part = body[:-1] + [self._result(body[-1].value, body[-1])]
                else_returns = orelse and isinstance(orelse[-1], ast.Return) and not escapes(orelse[:-1])
                if else_returns:
                    else_part = orelse[:-1] + [self._result(orelse[-1].value, orelse[-1])]
                elif escapes(orelse):
                    return None
                else:
                    else_part = self._returns_to_assignments(orelse + statements[i + 1 :], node)
                    if else_part is None:
                        return None
                out.append(ast.copy_location(ast.If(test=statement.test, body=then_part, orelse=else_part), statement))
                return out
            if escapes([statement]):
                return None
            out.append(statement)
        out.append(self._result(None, node))
        return out

    @staticmethod
    def _result(value, node):
        value = value if value is not None else ast.Constant(None)
        target = ast.Name(id="__flyrt_result__", ctx=ast.Store())
        return _at(ast.Assign(targets=[target], value=value), node)

    def visit_FunctionDef(self, node):
        saved = self.loop_depth
        self.loop_depth = 0
        has_early_return = any(isinstance(s, ast.If) and escapes([s]) for s in node.body)
        if has_early_return:
            single_exit = self._returns_to_assignments(node.body, node)
            if single_exit is not None:
                result = ast.Return(value=ast.Name(id="__flyrt_result__", ctx=ast.Load()))
                node.body = single_exit + [ast.copy_location(result, node.body[-1])]
        self.generic_visit(node)
        self.loop_depth = saved
        return node

    # -- statements -------------------------------------------------------------

    def visit_If(self, node):
        self.generic_visit(node)
        if escapes(node.body) or escapes(node.orelse):
            return node
        names = assigned_names(node.body + node.orelse)
        then_name, else_name = self._fresh("then"), self._fresh("else")
        then_fn = _function(then_name, names, node.body, names, node)
        else_fn = _function(else_name, names, node.orelse or [ast.Pass()], names, node)
        call = _call(
            "if_",
            [node.test, ast.Name(id=then_name, ctx=ast.Load()), ast.Name(id=else_name, ctx=ast.Load()),
             _current_values(names, node), _string_tuple(names, node)],
            node,
        )
        return [then_fn, else_fn, _assign(names, call, node)]

    def visit_For(self, node):
        iterable = self._text(node.iter)
        texts = f"for {self._text(node.target)} in {iterable}"
        self.loop_depth += 1
        self.generic_visit(node)
        self.loop_depth -= 1
        is_range = (
            isinstance(node.iter, ast.Call)
            and isinstance(node.iter.func, ast.Name)
            and node.iter.func.id == "range"
            and not node.iter.keywords
            and isinstance(node.target, ast.Name)
            and not node.orelse
        )
        if not is_range or escapes(node.body):
            node.iter = _iterated(node.iter, iterable, texts)  # a Python loop over what the iterable holds
            return node
        names = [n for n in assigned_names(node.body) if n != node.target.id]
        body_name = self._fresh("for")
        body_fn = _function(body_name, [node.target.id] + names, node.body, names, node)
        bounds = _at(ast.Tuple(elts=node.iter.args, ctx=ast.Load()), node)
        call = _call(
            "for_range",
            [bounds, ast.Name(id=body_name, ctx=ast.Load()), _current_values(names, node),
             _string_tuple(names, node)],
            node,
        )
        return [body_fn, _assign(names, call, node)]

    def visit_While(self, node):
        self.loop_depth += 1
        self.generic_visit(node)
        self.loop_depth -= 1
        if node.orelse or escapes(node.body):
            return node
        names = assigned_names(node.body)
        cond_name, body_name = self._fresh("cond"), self._fresh("while")
        cond_args = ast.arguments(
            posonlyargs=[], args=[ast.arg(arg=n) for n in names], kwonlyargs=[], kw_defaults=[], defaults=[]
        )
        cond_fn = ast.copy_location(
            ast.FunctionDef(name=cond_name, args=cond_args,
                            body=[ast.copy_location(ast.Return(value=node.test), node)],
                            decorator_list=[], returns=None),
            node)
        body_fn = _function(body_name, names, node.body, names, node)
        call = _call(
            "while_",
            [ast.Name(id=cond_name, ctx=ast.Load()), ast.Name(id=body_name, ctx=ast.Load()),
             _current_values(names, node), _string_tuple(names, node)],
            node,
        )
        return [cond_fn, body_fn, _assign(names, call, node)]

    # -- expressions ------------------------------------------------------------

    def visit_BoolOp(self, node):
        self.generic_visit(node)
        name = "and_" if isinstance(node.op, ast.And) else "or_"
        result = node.values[-1]
        for value in reversed(node.values[:-1]):
            result = _call(name, [_lambda(value, node), _lambda(result, node)], node)
        return result

    def visit_UnaryOp(self, node):
        texts, operand = self._text(node), self._text(node.operand)
        self.generic_visit(node)
        if isinstance(node.op, ast.Not):
            return _call("not_", [node.operand], node)
        node.operand = _used(node.operand, operand, texts)
        return node

    def visit_IfExp(self, node):
        self.generic_visit(node)
        return _call("ifexp", [node.test, _lambda(node.body, node), _lambda(node.orelse, node)], node)

    def visit_Compare(self, node):
        texts = self._text(node)
        operands = [self._text(n) for n in [node.left] + node.comparators]
        self.generic_visit(node)
        node.left = _used(node.left, operands[0], texts)
        node.comparators = [_used(c, text, texts) for c, text in zip(node.comparators, operands[1:])]
        if len(node.ops) == 1:
            return node
        pairs = []
        left = node.left
        for op, right in zip(node.ops, node.comparators):
            pairs.append(ast.copy_location(ast.Compare(left=left, ops=[op], comparators=[right]), node))
            left = right
        result = pairs[-1]
        for pair in reversed(pairs[:-1]):
            result = _call("and_", [_lambda(pair, node), _lambda(result, node)], node)
        return result

    def visit_BinOp(self, node):
        texts, left, right = self._text(node), self._text(node.left), self._text(node.right)
        self.generic_visit(node)
        node.left, node.right = _used(node.left, left, texts), _used(node.right, right, texts)
        return node

    def visit_AugAssign(self, node):
        texts, value = self._text(node), self._text(node.value)
        self.generic_visit(node)
        node.value = _used(node.value, value, texts)
        return node

    def visit_FormattedValue(self, node):
        value = self._text(node.value)
        self.generic_visit(node)
        node.value = _used(node.value, value, f"f'{{{value}}}'")
        return node

    def visit_comprehension(self, node):
        iterable = self._text(node.iter)
        texts = f"for {self._text(node.target)} in {iterable}"
        self.generic_visit(node)
        node.iter = _iterated(node.iter, iterable, texts)
        return node

    def visit_Assign(self, node):
        texts, value = self._text(node), self._text(node.value)
        self.generic_visit(node)
        if any(isinstance(t, (ast.Tuple, ast.List)) for t in node.targets):
            node.value = _iterated(node.value, value, texts)  # unpacking reads the items
        return node

    def visit_Attribute(self, node):
        source = self._text(node.value)  # as the user wrote it, before rewriting
        self.generic_visit(node)
        if not isinstance(node.ctx, ast.Load):
            return node
        # Attributes read while tracing are dependencies; messages name them by their source.
        text = ast.copy_location(ast.Constant(source), node)
        return _read("attr", [node.value, ast.copy_location(ast.Constant(node.attr), node), text], node)

    def visit_Subscript(self, node):
        source = self._text(node.value)
        self.generic_visit(node)
        index = node.slice
        if not isinstance(node.ctx, ast.Load) or isinstance(index, ast.Slice) or (
                isinstance(index, ast.Tuple) and any(isinstance(e, ast.Slice) for e in index.elts)):
            return node
        # Elements of host buffers read while tracing are dependencies too (flyrt.reads.item).
        text = ast.copy_location(ast.Constant(source), node)
        return _read("item", [node.value, index, text], node)

    def visit_Call(self, node):
        texts = [self._text(node)] + [self._text(a) for a in node.args]
        self.generic_visit(node)
        if isinstance(node.func, ast.Name) and (node.func.id in _CALLED_DIRECTLY or (
                node.func.id == "vars" and not node.args)):
            return node
        args = [ast.Starred(value=_iterated(a.value, text[1:], texts[0]), ctx=ast.Load())
                if isinstance(a, ast.Starred) else a for a, text in zip(node.args, texts[1:])]
        # Helpers called while tracing are rewritten too; builtins and libraries read what they are handed.
        return _read("call", [_texts(node, *texts), node.func] + args, node, node.keywords)


class SourceChangedError(OSError):
    """The source found for a function is not the code Python runs (its file edited since it was loaded). An
    OSError, as no source at all is: a helper called while tracing then runs as loaded, not rewritten."""


def _source(fn):
    """The text of `fn`'s definition, blank lines before it so that it parses at its own line:
    (source, first line, line count)."""
    try:
        # The code object, not the function: inspect would follow __wrapped__
        # (functools.wraps) to another function's source.
        lines, first_line = inspect.getsourcelines(fn.__code__)
    except OSError as error:
        raise OSError(f"flyrt needs the source of {fn.__qualname__} ({fn.__code__.co_filename}) to trace it: "
                      "define kernels in a file or a notebook cell") from error
    if fn.__code__.co_name == "<lambda>":
        raise TypeError(f"{fn.__qualname__} is not a plain function definition")
    # Parsed at its own line (blank lines before it): the tree's lines are the file's, with no pass over
    # the tree to shift them after.
    return "\n" * (first_line - 1) + textwrap.dedent("".join(lines)), first_line, len(lines)


def _definition(fn, source):
    """The definition's tree, and what ties it to the code Python runs (_signature)."""
    try:
        node = ast.parse(source).body[0]
    except SyntaxError:
        node = None
    if isinstance(node, ast.AsyncFunctionDef):
        raise TypeError(f"{fn.__qualname__} is not a plain function definition")
    signature = _signature(node)
    if signature is not None:
        node.decorator_list = []
    return node, signature


def _signature(node):
    """(name, first line with its decorators, parameter names) of a definition; None if it is not one."""
    if not isinstance(node, ast.FunctionDef):
        return None
    arguments = node.args
    names = [a.arg for a in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs)]
    names += [a.arg for a in (arguments.vararg, arguments.kwarg) if a is not None]
    return node.name, min([node.lineno] + [d.lineno for d in node.decorator_list]), tuple(names)


def _check_is_the_definition_of(fn, signature, first_line, line_count):
    """A SourceChangedError unless the definition found is the one `fn`'s code was compiled from: its name,
    parameters and lines. inspect reads the file as it is now: one edited since its module was imported
    would be traced in place of the code Python runs (lines added or removed above shift the definition;
    the text found at its old line may still parse). A body edited in place, its lines and parameters
    kept, is not seen here."""
    code = fn.__code__
    # (3.13's inspect skips blank lines)
    same = signature is not None and signature[:2] == (code.co_name, first_line) and (
        signature[2] == code.co_varnames[:len(signature[2])])
    # (Not the names the code reads: import hooks such as pytest's assertion rewriting compile other text
    # than the file's.)
    lines = [line for *_, line in code.co_lines() if line is not None]
    if not same or lines and not first_line <= min(lines) <= max(lines) < first_line + line_count:
        raise SourceChangedError(
            f"flyrt: the source of {fn.__qualname__} in {code.co_filename} changed on disk since it was "
            f"loaded (line {first_line} no longer holds the definition Python runs): reload its module "
            "(importlib.reload, or re-run its cell) and call again")


_DEFINED = "__fly_function"  # what the rewritten definition is called in its factory

# (original code, its file) -> rewritten code. Code objects compare equal
# across files (CPython leaves co_filename out of code equality): the same
# function in two modules must not get one's file and lines in errors.
_rewritten = {}
_REWRITTEN_KEPT = 4096  # the latest; a session's edits stay bounded

# How rewritten code is kept across processes (keep_rewrites_in), and what
# makes one rewrite differ from another besides the function: this file's
# text and the bytecode's format.
_kept_in = None
_REWRITER = hashlib.sha256(Path(__file__).read_bytes() + importlib.util.MAGIC_NUMBER).hexdigest()


def keep_rewrites_in(load, store):
    """Keep rewritten code across processes through ``load(key)`` (bytes or
    None) and ``store(key, bytes)``: a process's first trace of a function
    rewritten before skips the parse, the rewrite and the compile."""
    global _kept_in
    _kept_in = (load, store)


def rewritten_code(fn):
    code = fn.__code__
    cached = _rewritten.get((code, code.co_filename))
    if cached is not None:
        return cached
    source, first_line, line_count = _source(fn)
    new_code, key = None, None
    if _kept_in is not None:
        key = _key(code, source)
        new_code, signature = _unpacked(_kept_in[0](key))
    if new_code is None:
        node, signature = _definition(fn, source)
        _check_is_the_definition_of(fn, signature, first_line, line_count)
        new_code = _compiled(node, source, code)
        if key is not None:
            _kept_in[1](key, marshal.dumps((signature, new_code)))
    else:
        _check_is_the_definition_of(fn, signature, first_line, line_count)
    if len(_rewritten) >= _REWRITTEN_KEPT:
        del _rewritten[next(iter(_rewritten))]
    _rewritten[code, code.co_filename] = new_code
    return new_code


def _key(code, source):
    """What the rewrite of `code` from `source` depends on: the text, the file and names it is compiled
    under, the free variables its factory declares (the same text closes over other names in another
    scope), the rewriter and the bytecode's format."""
    parts = (_REWRITER, code.co_filename, code.co_name, getattr(code, "co_qualname", ""),
             " ".join(code.co_freevars), source)
    return hashlib.sha256("\0".join(parts).encode("utf-8", "surrogatepass")).hexdigest()


def _unpacked(payload):
    """(rewritten code, signature) from a kept entry; (None, None) if there is none or it is not one
    (the store checks its entries' integrity; this, that they hold what this code stores)."""
    if payload is None:
        return None, None
    try:
        signature, new_code = marshal.loads(payload)
    except (EOFError, ValueError, TypeError):
        return None, None
    if not isinstance(new_code, types.CodeType):
        return None, None
    return new_code, signature


def _compiled(node, source, code):
    node = _Rewriter(source).visit(node)
    # Wrap in a factory whose locals stand for the original free variables,
    # so the new code's free variables resolve to the original cells. The
    # definition takes a name of its own there: under the user's, a function
    # that calls itself would close over the factory's local instead of
    # reading its global.
    node.name = _DEFINED
    free = list(code.co_freevars)
    factory_body = [ast.Assign(targets=[ast.Name(id=n, ctx=ast.Store())], value=ast.Constant(None)) for n in free]
    factory_body += [node, ast.Return(value=ast.Name(id=_DEFINED, ctx=ast.Load()))]
    factory = ast.FunctionDef(
        name="__fly_factory",
        args=ast.arguments(posonlyargs=[], args=[], kwonlyargs=[], kw_defaults=[], defaults=[]),
        body=factory_body, decorator_list=[], returns=None,
    )
    module = ast.Module(body=[factory], type_ignores=[])
    ast.fix_missing_locations(module)
    compiled = compile(module, code.co_filename, "exec")
    factory_code = next(c for c in compiled.co_consts if isinstance(c, types.CodeType))
    new_code = next(c for c in factory_code.co_consts if isinstance(c, types.CodeType) and c.co_name == _DEFINED)
    # Code objects carry a qualified name from CPython 3.11 on; 3.10's tracebacks show co_name alone.
    return _renamed(new_code, getattr(new_code, "co_qualname", None), getattr(code, "co_qualname", None),
                    code.co_name)


def _renamed(code, old, new, name):
    """`code` (and the code nested in it) named as the user named the
    function (`name`, qualified `new`; None where code has no qualified
    name): tracebacks show `run`, not `__fly_factory.<locals>.run`, and a
    branch or loop body the rewrite made is named after its function."""
    changes = {"co_consts": tuple(_renamed(c, old, new, name) if isinstance(c, types.CodeType) else c
                                  for c in code.co_consts)}
    if code.co_name.startswith("__fly_"):
        changes["co_name"] = name
        if new is not None:
            changes["co_qualname"] = new
    elif new is not None and code.co_qualname.startswith(old):
        changes["co_qualname"] = new + code.co_qualname[len(old):]
    return code.replace(**changes)
