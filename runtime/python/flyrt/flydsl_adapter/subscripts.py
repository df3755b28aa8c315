"""Which loads of a code object are subscripted right away, and by what key.

The trace recorder sees instructions before they run, never the value
stack; to know that ``W[0]`` or ``cfg.W[i + 1]`` reads an element of the
buffer a load produced, it follows the stack from that load to the
subscript that takes it as its container, through the instructions a key
expression is made of. Anything else (a jump, an instruction not listed)
ends the walk: the load is then not a subscript's container, as far as the
recorder knows.

Instructions are known by name and their stack effect (``dis``), so one
walk serves CPython 3.10 to 3.13; a name a version lacks is never seen.
"""

import dis

# Instructions that push what they load and take nothing (3.13's LOAD_FAST_LOAD_FAST pushes two locals, 3.11+'s
# LOAD_GLOBAL a NULL too: dis.stack_effect says how many).
_LOADS = {"LOAD_CONST", "LOAD_FAST", "LOAD_FAST_CHECK", "LOAD_FAST_LOAD_FAST", "LOAD_DEREF", "LOAD_CLOSURE",
          "LOAD_GLOBAL", "LOAD_NAME", "PUSH_NULL", "KW_NAMES", "NOP", "COPY",
          "PRECALL"}  # 3.11: a call's bookkeeping; its CALL takes the arguments (_effect)
# Instructions whose pushes depend on their arg (a method and its self, or NULL and the attribute): what they take.
_TAKES = {"LOAD_ATTR": 1, "LOAD_METHOD": 1, "LOAD_SUPER_ATTR": 3}
# Instructions that push one result: they take 1 - stack_effect values.
_ONE_RESULT = {
    "UNARY_NEGATIVE", "UNARY_POSITIVE", "UNARY_INVERT", "UNARY_NOT", "TO_BOOL", "CALL_INTRINSIC_1", "CALL_INTRINSIC_2",
    "BINARY_OP", "BINARY_SUBSCR", "BINARY_SLICE", "COMPARE_OP", "IS_OP", "CONTAINS_OP",
    "BUILD_TUPLE", "BUILD_LIST", "BUILD_SET", "BUILD_MAP", "BUILD_CONST_KEY_MAP", "BUILD_SLICE", "BUILD_STRING",
    "LIST_TO_TUPLE", "FORMAT_VALUE", "FORMAT_SIMPLE", "FORMAT_WITH_SPEC", "CONVERT_VALUE",
    "CALL", "CALL_KW", "CALL_FUNCTION", "CALL_METHOD", "CALL_FUNCTION_KW", "CALL_FUNCTION_EX",
    # 3.10's binary operators, one instruction each
    "BINARY_ADD", "BINARY_SUBTRACT", "BINARY_MULTIPLY", "BINARY_TRUE_DIVIDE", "BINARY_FLOOR_DIVIDE", "BINARY_MODULO",
    "BINARY_POWER", "BINARY_MATRIX_MULTIPLY", "BINARY_LSHIFT", "BINARY_RSHIFT", "BINARY_AND", "BINARY_OR",
    "BINARY_XOR",
}
# Instructions that add to a container built below them and push nothing: they take -stack_effect values.
_NO_RESULT = {"LIST_APPEND", "LIST_EXTEND", "SET_ADD", "SET_UPDATE", "MAP_ADD", "DICT_UPDATE", "DICT_MERGE"}
# What takes a container and its key: the container is the deepest value either takes.
_SUBSCRIPTS = {"BINARY_SUBSCR", "BINARY_SLICE"}
_LOCAL_KEYS = {"LOAD_FAST", "LOAD_FAST_CHECK", "LOAD_DEREF"}
_WALK = 32  # instructions at most between a load and its subscript


def subscript_key(instructions, index, first=False):
    """How the value that instructions[index] loads (the one it pushes last;
    `first`: the first of the two locals a LOAD_FAST_LOAD_FAST loads) is
    subscripted at once: ("const", value) or ("local", name) for a key read
    as is, ("computed", None) for any other key; None if the walk finds no
    subscript of it."""
    depth = 2 if first else 1  # values on the stack from ours up; the first local has the second above it
    between = instructions[index + 1:index + 1 + _WALK]
    for position, instruction in enumerate(between):
        pops = _pops(instruction)
        if pops is None:
            return None
        if pops >= depth:  # this instruction takes our value
            if instruction.opname not in _SUBSCRIPTS or pops != depth:
                return None
            key = between[:position]
            if first and not key:  # the second local is the key
                return ("local", instructions[index].argval[1])
            if not first and len(key) == 1 and key[0].opname == "LOAD_CONST":
                return ("const", key[0].argval)
            if not first and len(key) == 1 and key[0].opname in _LOCAL_KEYS:
                return ("local", key[0].argval)
            return ("computed", None)  # a slice's bounds are values of their own: computed too
        depth += _effect(instruction)
    return None


def _pops(instruction):
    """How many values `instruction` takes off the stack; None: not an
    instruction the walk knows (nor then whether it takes ours)."""
    name = instruction.opname
    if name in _LOADS:
        return 0
    if name in _TAKES:
        return _TAKES[name]
    if name in _ONE_RESULT:
        return 1 - _effect(instruction)
    if name in _NO_RESULT:
        return -_effect(instruction)
    return None


def _effect(instruction):
    """The stack effect of `instruction`, a call's charged to its CALL: 3.11's
    dis charges the arguments to the PRECALL before it, which takes none."""
    if instruction.opname == "PRECALL":
        return 0
    if instruction.opname == "CALL":
        return -1 - instruction.arg  # takes the callable, NULL or self, the arguments; pushes the result
    arg = instruction.arg if instruction.opcode >= dis.HAVE_ARGUMENT else None
    return dis.stack_effect(instruction.opcode, arg, jump=False)
