"""Which loads of a code object are subscripted right away, and by what key.

The trace recorder sees instructions before they run, never the value
stack; to know that ``W[0]`` or ``cfg.W[i + 1]`` reads an element of the
buffer a load produced, it follows the stack from that load to the
subscript that takes it as its container, through the instructions a key
expression is made of. Anything else (a jump, an instruction not listed)
ends the walk: the load is then not a subscript's container, as far as the
recorder knows.
"""

import dis

# Instructions a key expression may contain, by how many values they pop (CPython 3.11).
_POPS = {
    **dict.fromkeys(("LOAD_CONST", "LOAD_FAST", "LOAD_DEREF", "LOAD_CLOSURE", "LOAD_GLOBAL", "LOAD_NAME",
                     "PUSH_NULL", "PRECALL", "KW_NAMES", "NOP", "COPY"), 0),
    **dict.fromkeys(("LOAD_ATTR", "LOAD_METHOD", "UNARY_NEGATIVE", "UNARY_POSITIVE", "UNARY_INVERT", "UNARY_NOT"), 1),
    **dict.fromkeys(("BINARY_OP", "BINARY_SUBSCR", "COMPARE_OP", "IS_OP", "CONTAINS_OP"), 2),
}
_POPS_ARG = {"BUILD_TUPLE": 0, "BUILD_LIST": 0, "BUILD_SLICE": 0, "CALL": 2}  # pops arg + this
_WALK = 32  # instructions at most between a load and its subscript


def subscript_key(instructions, index):
    """How the value that instructions[index] loads is subscripted at once:
    ("const", value) or ("local", name) for a key read as is, ("computed",
    None) for any other key; None if the walk finds no subscript of it."""
    depth = 1  # values on the stack from ours up
    between = instructions[index + 1:index + 1 + _WALK]
    for position, instruction in enumerate(between):
        name = instruction.opname
        if name in _POPS:
            pops = _POPS[name]
        elif name in _POPS_ARG:
            pops = instruction.arg + _POPS_ARG[name]
        else:
            return None
        if pops >= depth:  # this instruction takes our value
            if name != "BINARY_SUBSCR" or depth != 2:
                return None
            key = between[:position]
            if len(key) == 1 and key[0].opname == "LOAD_CONST":
                return ("const", key[0].argval)
            if len(key) == 1 and key[0].opname in ("LOAD_FAST", "LOAD_DEREF"):
                return ("local", key[0].argval)
            return ("computed", None)
        depth += dis.stack_effect(instruction.opcode, instruction.arg if instruction.opcode >= dis.HAVE_ARGUMENT
                                  else None, jump=False)
    return None
