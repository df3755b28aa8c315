"""The picture ``%flydsl graph`` draws, from the runtime's own records.

Launchers (boxes) -> the functions their artifacts ran: kernels, helpers
(ellipses) -> the modules those live in (folders). A launcher whose latest
artifact was evicted is red, with why in its label and tooltip, and its
edges go to what that artifact depended on; a function whose code changed
since, and a binding read that now holds something else (notes), are red
too. Compile factories whose code changed are red components. Node ids are
plain counters: Graphviz reads `a:b` in an id as a port.
"""

import functools
import textwrap
import xml.etree.ElementTree as ElementTree

import graphviz

from flyrt.fingerprint import fingerprint

RED = "red"


class _Ids:
    def __init__(self):
        self._ids = {}

    def __call__(self, key):
        return self._ids.setdefault(key, f"n{len(self._ids)}")


class Picture:
    """The drawn graph: SVG in a notebook, its edges as text in a console,
    and what the SVG shows (`nodes`, `edges`) for a notebook to assert on."""

    def __init__(self, dot):
        self.dot = dot

    @functools.cached_property
    def svg(self):
        return self.dot.pipe(format="svg", encoding="utf-8")

    @functools.cached_property
    def _drawn(self):
        return read_svg(self.svg)

    @property
    def nodes(self):
        return self._drawn[0]

    @property
    def edges(self):
        return self._drawn[1]

    def red(self):
        """Labels of the nodes drawn red: what changed, what it evicted."""
        return {label for label, (_, stroke) in self.nodes.items() if stroke == RED}

    def _repr_mimebundle_(self, include=None, exclude=None):
        return {"image/svg+xml": self.svg, "text/plain": repr(self)}

    def __repr__(self):
        lines = [f"{tail} -> {head}" for tail, head in sorted(self.edges)]
        red = sorted(self.red())
        return "\n".join(lines + ([f"red: {', '.join(red)}"] if red else [])) or "(no launchers)"


_SVG = "{http://www.w3.org/2000/svg}"


def read_svg(svg):
    """({label: (shape, stroke colour)}, {(tail label, head label)}) of an
    SVG Graphviz drew; a label's lines are joined by spaces."""
    root = ElementTree.fromstring(svg)
    groups = list(root.iter(f"{_SVG}g"))
    labels, nodes = {}, {}
    for group in (g for g in groups if g.get("class") == "node"):
        label = " ".join(text.text or "" for text in group.iter(f"{_SVG}text"))
        shape = next(e for e in group.iter() if e.tag[len(_SVG):] in ("polygon", "ellipse", "path"))
        labels[group.find(f"{_SVG}title").text] = label
        nodes[label] = (shape.tag[len(_SVG):], shape.get("stroke"))
    edges = set()
    for group in (g for g in groups if g.get("class") == "edge"):
        tail, head = group.find(f"{_SVG}title").text.split("->")
        edges.add((labels[tail], labels[head]))
    return nodes, edges


def build(launchers, factory_links):
    dot = graphviz.Digraph("flyrt", graph_attr={"rankdir": "LR"}, node_attr={"fontsize": "10"})
    node = _Ids()
    for launcher in launchers:
        _launcher(dot, node, launcher)
    for link in factory_links:
        change = link.change()
        attributes = {"color": RED, "fontcolor": RED, "tooltip": change} if change else {}
        label = f"{link.name}\n(compile factory)" + (f"\nchanged: {change}" if change else "")
        dot.node(node(("factory", link.name)), label, shape="component", **attributes)
    return Picture(dot)


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
