"""flyrt's layers (.importlinter): core, then invalidation and drivers, the
language, the front end, interpreter mode, the runtime and the FlyDSL adapter
on top; a module imports only the layers below its own. import-linter checks
the contract (imports inside functions count, as a newcomer would read them);
these tests run it, show that it catches an in-function import that climbs,
and check the two rules it cannot: functions import only optional packages
(torch, IPython, flydsl, matplotlib, or an adapter module that imports flydsl itself),
and nothing but the compiled _core is taken from flyrt's root."""

import ast
import os
import shutil
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SOURCE = REPO / "runtime/python"
OPTIONAL_PACKAGES = {"torch", "IPython", "flydsl", "matplotlib"}  # imported where used: a program may lack them


def lint_imports(python_path):
    env = dict(os.environ, PYTHONPATH=str(python_path))
    lint = shutil.which("lint-imports") or str(Path(os.sys.executable).with_name("lint-imports"))
    return subprocess.run([lint, "--no-cache"], cwd=REPO, env=env, capture_output=True, text=True)


def test_flyrt_keeps_its_layers():
    done = lint_imports(SOURCE)
    assert done.returncode == 0 and "flyrt in layers KEPT" in done.stdout, done.stdout + done.stderr


def test_an_import_inside_a_function_that_climbs_a_layer_breaks_the_contract(tmp_path):
    shutil.copytree(SOURCE / "flyrt", tmp_path / "flyrt", ignore=shutil.ignore_patterns("__pycache__", "*.so"))
    with open(tmp_path / "flyrt/core/settings.py", "a") as f:
        f.write("\n\ndef _climbs():\n    from ..runtime import launcher\n\n    return launcher\n")
    done = lint_imports(tmp_path)
    assert done.returncode != 0
    assert "flyrt.core is not allowed to import flyrt.runtime" in done.stdout, done.stdout


def modules():
    for path in sorted((SOURCE / "flyrt").rglob("*.py")):
        yield path.relative_to(SOURCE), ast.parse(path.read_text(), str(path))


def imports_optional_package(tree):
    return any(isinstance(node, ast.ImportFrom) and not node.level and node.module.split(".")[0] in OPTIONAL_PACKAGES
               for node in tree.body)


def optional(path, node):
    """Whether an import inside a function takes an optional package: itself,
    or a sibling module that needs one at its top (flydsl_adapter's)."""
    if isinstance(node, ast.Import):
        return all(a.name.split(".")[0] in OPTIONAL_PACKAGES for a in node.names)
    if not node.level:
        return node.module.split(".")[0] in OPTIONAL_PACKAGES
    siblings = [SOURCE / path.parent / f"{a.name}.py" for a in node.names] if node.level == 1 and not node.module \
        else []
    return bool(siblings) and all(s.exists() and imports_optional_package(ast.parse(s.read_text())) for s in siblings)


def test_functions_import_only_optional_packages():
    found = []
    for path, tree in modules():
        top = set(map(id, tree.body))
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)) and id(node) not in top and not optional(path, node):
                found.append(f"{path}:{node.lineno}: {ast.unparse(node)}")
    assert not found, "imports inside functions (only optional packages belong there):\n" + "\n".join(found)


def test_only_the_compiled_core_comes_from_flyrts_root():
    found = []
    for path, tree in modules():
        package = list(path.parent.parts)  # a module's package; an __init__'s own
        for node in ast.walk(tree):
            if isinstance(node, ast.Import) and any(a.name == "flyrt" for a in node.names):
                found.append(f"{path}:{node.lineno}: {ast.unparse(node)}")
            if isinstance(node, ast.ImportFrom) and node.level and not node.module:
                root = len(package) - (node.level - 1) == 1
                if root and any(a.name != "_core" for a in node.names):
                    found.append(f"{path}:{node.lineno}: {ast.unparse(node)}")
    assert not found, "imports of flyrt's root, which the layers contract cannot see:\n" + "\n".join(found)
