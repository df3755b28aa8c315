"""What the documentation promises and `mkdocs build --strict` cannot check
(scripts/build_docs.sh checks the links between the pages of docs/): the
README's links, which live outside docs/, and an API reference that names
every public name of flyrt, flyrt.compiler and flyrt.expr."""

import ast
import re
from pathlib import Path

import griffe
import pytest
from markdown.extensions.toc import slugify

REPO = Path(__file__).resolve().parents[2]
FLYRT = REPO / "runtime" / "python" / "flyrt"
REFERENCE = REPO / "docs" / "reference"

# Names the public modules bind that are not the DSL's: the standard library,
# flyrt's own modules and helpers the module uses.
NOT_PUBLIC = {
    "compiler": {
        "KernelFunction": "the class @kernel returns, documented with kernel",
    },
    "expr": {
        "builtins": "the standard library",
        "operator": "the standard library",
        "dtypes": "flyrt's own module",
        "values": "flyrt's own module",
        "number": "a helper expr uses",
        "current": "a helper expr uses",
        "is_constexpr": "what the launcher asks of an annotation",
        "A": "shorthand for flyrt._core.Arith",
    },
}


def _links(markdown_text):
    """(target, anchor) of every relative link, code blocks left out."""
    text = re.sub(r"```.*?```", "", markdown_text, flags=re.S)
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"[a-z]+:", target):
            continue  # external: not reachable from here
        path, _, anchor = target.partition("#")
        yield path, anchor


def _headings(page):
    text = re.sub(r"```.*?```", "", page.read_text(), flags=re.S)
    return {slugify(h.strip(), "-") for h in re.findall(r"^#{1,6} (.+)$", text, flags=re.M)}


def test_every_code_block_is_closed():
    """An unclosed fence turns the rest of a page into code, links and all."""
    for page in [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]:
        fences = re.findall(r"^ *```", page.read_text(), flags=re.M)
        assert len(fences) % 2 == 0, f"{page.relative_to(REPO)}: a code block is not closed"


def test_the_readme_links_to_pages_and_headings_that_exist():
    readme = (REPO / "README.md").read_text()
    links = list(_links(readme))
    assert any(path.startswith("docs/") for path, _ in links), "the README links to no page of docs/"
    for path, anchor in links:
        target = REPO / path
        assert path and target.exists(), f"README.md links to {path}, which does not exist"
        if anchor:
            assert anchor in _headings(target), f"README.md links to {path}#{anchor}: no such heading"


def _bound_names(module_file):
    """The names a module binds at its top level, as written (no import)."""
    names = set()
    for node in ast.parse(module_file.read_text()).body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
    return {n for n in names if not n.startswith("_")}


def _documented(page_text, dotted, name):
    """Drawn from the docstrings (a `::: flyrt.x.name` entry), or written on
    the page by hand: `name` or `fx.name` in backticks."""
    return f"::: {dotted}.{name}\n" in page_text or re.search(rf"`(fx\.|flyc\.)?{re.escape(name)}[`(\[]", page_text)


@pytest.mark.parametrize("module", ["compiler", "expr"])
def test_every_public_name_is_in_the_api_reference(module):
    page = (REFERENCE / f"{module}.md").read_text()
    public = _bound_names(FLYRT / f"{module}.py") - set(NOT_PUBLIC[module])
    missing = sorted(n for n in public if not _documented(page, f"flyrt.{module}", n))
    assert not missing, (f"flyrt.{module} binds {missing}, which docs/reference/{module}.md does not document: "
                         f"add them there, or to NOT_PUBLIC in {Path(__file__).name} with the reason")


def test_the_flyrt_page_draws_what_static_analysis_can_read_and_writes_the_rest():
    """Each name of flyrt.__all__ is a `::: flyrt.name` entry when griffe can
    follow it from the sources, else an entry written by hand (a `### name`
    heading): so the page changes when the code moves."""
    page = (REFERENCE / "flyrt.md").read_text()
    package = griffe.load("flyrt", search_paths=[str(FLYRT.parent)], allow_inspection=False)
    exported = ast.literal_eval(next(
        node.value for node in ast.parse((FLYRT / "__init__.py").read_text()).body
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "__all__" for t in node.targets)))
    for name in exported:
        try:
            member = package.members[name]
            visible = (member.final_target if member.is_alias else member) is not None
        except (KeyError, griffe.AliasResolutionError, griffe.CyclicAliasError):
            visible = False
        drawn = f"::: flyrt.{name}\n" in page
        by_hand = f"### `{name}`\n" in page
        if visible and member.docstring is not None:
            assert drawn and not by_hand, f"flyrt.{name} has a docstring griffe reads: make it `::: flyrt.{name}`"
        else:
            assert by_hand and not drawn, f"griffe cannot read flyrt.{name}'s docstring: document it by hand"
