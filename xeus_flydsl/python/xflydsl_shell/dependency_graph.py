"""The picture ``%flydsl graph`` draws, from the runtime's own records.

Launchers (boxes) -> the kernels and helpers their artifacts ran (ellipses),
each under the function that called it -> the modules those live in
(folders); a compile factory (component) -> the launchers it built. What
changed since an artifact was built stands out in red, with the path from
the launcher to it: a function whose code changed, a binding that now holds
another function (merged into that function's node), any other read that
changed (a note under the function that read it). A launcher whose latest
artifact was evicted is red, with why in its label and tooltip; the rest of
what it depended on is drawn as it was. Node ids are plain counters:
Graphviz reads `a:b` in an id as a port.
"""

import functools
import textwrap
import types
import xml.etree.ElementTree as ElementTree

import graphviz

from flyrt.core.fingerprint import fingerprint
from flyrt.core.user_code import probe

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
        return set(self._drawn[1])

    def red(self):
        """Labels of the nodes drawn red: what changed, what it evicted."""
        return {label for label, (_, stroke) in self.nodes.items() if stroke == RED}

    def red_edges(self):
        """The edges drawn red: the paths from evicted launchers to what changed."""
        return {edge for edge, stroke in self._drawn[1].items() if stroke == RED}

    def _repr_mimebundle_(self, include=None, exclude=None):
        return {"image/svg+xml": self.svg, "text/plain": repr(self)}

    def __repr__(self):
        lines = [f"{tail} -> {head}" for tail, head in sorted(self.edges)]
        red = sorted(self.red())
        return "\n".join(lines + ([f"red: {', '.join(red)}"] if red else [])) or "(no launchers)"


_SVG = "{http://www.w3.org/2000/svg}"


def read_svg(svg):
    """({label: (shape, stroke colour)}, {(tail label, head label): stroke
    colour}) of an SVG Graphviz drew; a label's lines are joined by spaces."""
    root = ElementTree.fromstring(svg)
    groups = list(root.iter(f"{_SVG}g"))
    labels, nodes = {}, {}
    for group in (g for g in groups if g.get("class") == "node"):
        label = " ".join(text.text or "" for text in group.iter(f"{_SVG}text"))
        shape = next(e for e in group.iter() if e.tag[len(_SVG):] in ("polygon", "ellipse", "path"))
        labels[group.find(f"{_SVG}title").text] = label
        nodes[label] = (shape.tag[len(_SVG):], shape.get("stroke"))
    edges = {}
    for group in (g for g in groups if g.get("class") == "edge"):
        tail, head = group.find(f"{_SVG}title").text.split("->")
        edges[labels[tail], labels[head]] = next(e for e in group.iter(f"{_SVG}path")).get("stroke")
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
    records = launcher.dependency_records()
    if not records:
        return  # never compiled on its own (a device helper inlined into others): nothing of its own to draw
    name = launcher.__qualname__
    here = node(("launcher", launcher.__module__, name))
    evicted = [reasons for _, reasons in records if reasons]
    if evicted:
        why = "; ".join(dict.fromkeys(evicted[0]))
        dot.node(here, f"{name}\nevicted: {_wrapped(why)}", shape="box", color=RED, fontcolor=RED, tooltip=why)
    else:
        dot.node(here, name, shape="box")
    factory = launcher._factory
    if factory is not None:
        dot.edge(node(("factory", factory.name)), here, style="dashed", label="built")
    for record, _ in records:
        _record(dot, node, launcher, here, record, factory.function if factory is not None else None)


def _record(dot, node, launcher, here, record, factory_function):
    """One artifact's dependencies, each under what reached it."""
    own = {id(probe(launcher, "fn")), id(factory_function)}  # the launcher's box and its factory's stand for them
    functions = {id(f): f for f in record.functions if id(f) not in own}
    ids, parents, changes = {}, {}, {}
    for fn in functions.values():
        ids[id(fn)] = node(("function", fn.__module__, fn.__qualname__))
    for fn, recorded in zip(record.functions, record.function_fingerprints):
        if id(fn) in functions and fingerprint(fn) != recorded:
            changes[id(fn)] = "code changed"
    for read, change in record.watched():
        if not change:
            continue
        old = _function_of(getattr(read, "value", None))
        if id(old) in functions:  # a binding that now holds another function: that function's node says so
            changes[id(old)] = change
        else:
            ids[id(read)] = node(("read", id(read)))
            dot.node(ids[id(read)], _wrapped(change), shape="note", color=RED, fontcolor=RED, tooltip=change)
            changes[id(read)] = change
            parents[id(read)] = _parent(record, read, ids)
    for key, fn in functions.items():
        parents[key] = _parent(record, fn, ids)
        change = changes.get(key)
        label = fn.__qualname__ + (f"\n{_wrapped(change)}" if change else "")
        dot.node(ids[key], label, **({"color": RED, "fontcolor": RED, "tooltip": change} if change else {}))
        module = node(("module", fn.__module__))
        dot.node(module, fn.__module__, shape="folder")
        dot.edge(ids[key], module, style="dashed")
    on_path = set()  # what lies between the launcher and a change
    for key in changes:
        while key is not None and key not in on_path:
            on_path.add(key)
            key = parents.get(key)
    for key, parent in parents.items():
        tail = ids.get(parent, here) if parent is not None else here
        dot.edge(tail, ids[key], **({"color": RED} if key in on_path else {}))


def _function_of(value):
    """The Python function a binding's value runs (a launcher or kernel: the one it wraps)."""
    for name in ("__wrapped__", "fn"):
        inner = probe(value, name)
        if isinstance(inner, types.FunctionType):
            return inner
    return value


def _parent(record, dependency, ids):
    """The id of the recorded function that reached `dependency`, if drawn."""
    reader = record.readers.get(id(dependency))
    return id(reader) if reader is not None and id(reader) in ids else None


def _wrapped(text, width=44):
    """`text` over lines of about `width` characters, for a node's label."""
    return "\n".join(textwrap.wrap(text, width)) or text
