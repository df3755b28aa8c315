"""The picture ``%flydsl graph`` draws, from the runtime's own records.

Launchers (boxes) -> the functions their artifacts ran: kernels, helpers
(ellipses) -> the modules those live in (folders). A launcher whose latest
artifact was evicted is red, with why in its label and tooltip, and its
edges go to what that artifact depended on; a function whose code changed
since, and a binding read that now holds something else (notes), are red
too. Compile factories whose code changed are red components. Node ids are
plain counters: Graphviz reads `a:b` in an id as a port.
"""

import textwrap

import graphviz

from flyrt.fingerprint import fingerprint

RED = "red"


class _Ids:
    def __init__(self):
        self._ids = {}

    def __call__(self, key):
        return self._ids.setdefault(key, f"n{len(self._ids)}")


def build(launchers, factory_links):
    dot = graphviz.Digraph("flyrt", graph_attr={"rankdir": "LR"}, node_attr={"fontsize": "10"})
    node = _Ids()
    for launcher in launchers:
        _launcher(dot, node, launcher)
    for link in factory_links:
        change = link.change()
        attributes = {"color": RED, "fontcolor": RED, "tooltip": change} if change else {}
        label = f"{link.name}\nchanged: {change}" if change else link.name
        dot.node(node(("factory", link.name)), label, shape="component", **attributes)
    return dot


def _launcher(dot, node, launcher):
    name = launcher.__qualname__
    here = node(("launcher", launcher.__module__, name))
    records = launcher.dependency_records()
    evicted = [reasons for _, reasons in records if reasons]
    if evicted:
        why = "; ".join(dict.fromkeys(evicted[0]))
        dot.node(here, f"{name}\nevicted: {_wrapped(why)}", shape="box", color=RED, fontcolor=RED, tooltip=why)
    else:
        dot.node(here, name, shape="box")
    for record, reasons in records:
        edge = {"color": RED} if reasons else {}
        for function, recorded in zip(record.functions, record.function_fingerprints):
            if (function.__module__, function.__qualname__) == (launcher.__module__, name):
                continue  # the launcher's own code: its box
            target = node(("function", function.__module__, function.__qualname__))
            if fingerprint(function) != recorded:
                dot.node(target, f"{function.__qualname__}\n(code changed)", color=RED, fontcolor=RED)
            else:
                dot.node(target, function.__qualname__)
            module = node(("module", function.__module__))
            dot.node(module, function.__module__, shape="folder")
            dot.edge(here, target, **edge)
            dot.edge(target, module, style="dashed")
        for binding in record.bindings:
            change = binding.change()
            if change:
                read = node(("read", id(binding)))
                dot.node(read, _wrapped(change), shape="note", color=RED, fontcolor=RED, tooltip=change)
                dot.edge(here, read, color=RED)


def _wrapped(text, width=44):
    """`text` over lines of about `width` characters, for a node's label."""
    return "\n".join(textwrap.wrap(text, width)) or text
