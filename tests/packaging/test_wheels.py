"""The wheels scripts/build_wheels.sh leaves in dist/: what each holds agrees
with the source build (the same Python files, a kernelspec that runs the
launcher), they need nothing from this machine beyond what their manylinux
policy allows, flyrt's LLVM stays inside _core, and a Python they cannot
serve is told so in one message.

A wheel, the sdist or an interpreter missing here skips with the command
or version that would supply it; on CI (tests/conftest.py) such a skip is a
failure, since make test builds every wheel first."""

import hashlib
import html
import json
import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from elftools.elf.elffile import ELFFile

REPO = Path(__file__).resolve().parents[2]
DIST = REPO / "dist"
SUPPORTED = ["3.10", "3.11", "3.12", "3.13"]
WHEEL = re.compile(r"xeus_flydsl-(?P<version>[^-]+)-cp(?P<py>\d+)-cp\d+-(?P<platform>manylinux_\d+_\d+_x86_64)\.whl")
# What a manylinux policy lets a wheel take from the system (auditwheel's
# list for every manylinux policy, less the X11/GL ones nothing here needs).
SYSTEM_LIBRARIES = {"libc.so.6", "libm.so.6", "libdl.so.2", "librt.so.1", "libpthread.so.0", "libresolv.so.2",
                    "libnsl.so.1", "libutil.so.1", "libgcc_s.so.1", "libstdc++.so.6", "libz.so.1",
                    "ld-linux-x86-64.so.2", "linux-vdso.so.1"}
SOURCE_PACKAGES = {"flyrt": REPO / "runtime/python/flyrt",
                   "xflydsl_shell": REPO / "xeus_flydsl/python/xflydsl_shell",
                   "xflydsl": REPO / "xeus_flydsl/python/xflydsl"}


def wheels():
    found = {f"{m['py'][0]}.{m['py'][1:]}": DIST / m.group(0)
             for m in (WHEEL.fullmatch(p.name) for p in DIST.glob("*.whl")) if m}
    return found


def wheel_of(version):
    wheel = wheels().get(version)
    if wheel is None:
        pytest.skip(f"no wheel for CPython {version} in dist/: run scripts/build_wheels.sh")
    return wheel


@pytest.fixture(scope="module", params=SUPPORTED)
def unpacked(request, tmp_path_factory):
    wheel = wheel_of(request.param)
    where = tmp_path_factory.mktemp(f"cp{request.param}")
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(where)
    return request.param, wheel, where


def test_the_python_files_are_the_source_trees(unpacked):
    _, _, where = unpacked
    for package, source in SOURCE_PACKAGES.items():
        expected = {p.relative_to(source): p for p in source.rglob("*.py") if "__pycache__" not in p.parts}
        shipped = {p.relative_to(where / package): p for p in (where / package).rglob("*.py")}
        assert set(shipped) - {Path("_build.py")} == set(expected), package
        for name, path in expected.items():
            assert shipped[name].read_bytes() == path.read_bytes(), f"{package}/{name} differs from the source"


def test_the_launcher_knows_the_python_it_was_built_for(unpacked):
    version, _, where = unpacked
    text = (where / "xflydsl" / "_build.py").read_text()
    assert f"PYTHON_VERSION = ({version.replace('.', ', ')})" in text
    tag = version.replace(".", "")
    assert (where / "xflydsl" / f"_launcher.cpython-{tag}-x86_64-linux-gnu.so").is_file()
    assert (where / "flyrt" / f"_core.cpython-{tag}-x86_64-linux-gnu.so").is_file()


def test_the_kernelspec_runs_the_launcher_of_the_installing_python(unpacked):
    version, wheel, where = unpacked
    spec_dir = where / f"xeus_flydsl-{WHEEL.fullmatch(wheel.name)['version']}.data/data/share/jupyter/kernels/xflydsl"
    spec = json.loads((spec_dir / "kernel.json").read_text())
    # jupyter_client reads "python" as its own interpreter, the one pip installed the wheel into.
    assert spec["argv"] == ["python", "-m", "xflydsl", "-f", "{connection_file}"]
    assert spec["display_name"] == f"Python {version} (xflydsl)"
    assert spec["interrupt_mode"] == "signal" and spec["metadata"] == {"debugger": True}
    assert {p.name for p in spec_dir.iterdir()} >= {"logo-32x32.png", "logo-64x64.png", "logo-svg.svg"}


def test_the_metadata_states_the_pythons_and_the_command(unpacked):
    _, wheel, where = unpacked
    (info,) = where.glob("*.dist-info")
    metadata = (info / "METADATA").read_text()
    assert "Requires-Python: <3.14,>=3.10" in metadata or "Requires-Python: >=3.10,<3.14" in metadata
    requires = re.findall(r"^Requires-Dist: ([A-Za-z0-9_.-]+)(.*)$", metadata, re.M)
    assert {name for name, rest in requires if "extra ==" not in rest} == {
        "numpy", "ipython", "xeus-python-shell", "debugpy", "comm", "graphviz"}
    # pytest --xflydsl: the plugin every pytest run loads needs none of them until asked
    assert {name for name, rest in requires if re.search(r"extra == .notebooks.", rest)} == {
        "nbclient", "nbformat", "pytest"}
    assert "Provides-Extra: notebooks" in metadata
    assert "xflydsl = xflydsl.__main__:main" in (info / "entry_points.txt").read_text()


def _needed(path):
    with open(path, "rb") as f:
        dynamic = ELFFile(f).get_section_by_name(".dynamic")
        return {tag.needed for tag in dynamic.iter_tags() if tag.entry.d_tag == "DT_NEEDED"}


def test_native_code_needs_only_the_bundled_libraries_and_the_policys(unpacked):
    _, _, where = unpacked
    objects = [p for p in where.rglob("*.so*") if p.is_file()]
    bundled = {p.name for p in (where / "xeus_flydsl.libs").iterdir()}
    for path in objects:
        for needed in _needed(path):
            assert needed in bundled or needed in SYSTEM_LIBRARIES, f"{path.name} needs {needed}"
            assert not needed.startswith(("libpython", "libLLVM", "libxeus.so", "libzmq.so")), needed
        # ldd resolves each to the wheel's own copy or to the system's allowed one.
        for line in subprocess.run(["ldd", path], capture_output=True, text=True, check=True).stdout.splitlines():
            name, _, target = line.strip().partition(" => ")
            if target:
                assert "not found" not in target, f"{path.name}: {line.strip()}"
                resolved = target.split(" (")[0]
                assert resolved.startswith(str(where)) or name in SYSTEM_LIBRARIES, f"{path.name}: {line.strip()}"


def test_flyrts_llvm_stays_inside_core(unpacked):
    """Another LLVM in the process (Triton's, FlyDSL's MLIR) must never bind to ours."""
    version, _, where = unpacked
    core = where / "flyrt" / f"_core.cpython-{version.replace('.', '')}-x86_64-linux-gnu.so"
    with open(core, "rb") as f:
        symbols = ELFFile(f).get_section_by_name(".dynsym")
        exported = [s.name for s in symbols.iter_symbols()
                    if s["st_shndx"] != "SHN_UNDEF" and s["st_info"]["bind"] != "STB_LOCAL"]
    assert "PyInit__core" in exported
    assert [name for name in exported if "4llvm" in name or name.startswith("LLVM")] == []


def test_auditwheel_agrees_with_the_tag(unpacked):
    _, wheel, _ = unpacked
    shown = subprocess.run([sys.executable, "-m", "auditwheel", "show", wheel],
                           capture_output=True, text=True, check=True).stdout
    platform = WHEEL.fullmatch(wheel.name)["platform"]
    assert f'consistent with the following platform tag: "{platform}"' in " ".join(shown.split()), shown


def test_the_build_pins_are_the_environments():
    pyproject = (REPO / "pyproject.toml").read_text()
    pins = dict(line.split("==") for line in (REPO / "requirements.txt").read_text().splitlines()
                if "==" in line and not line.startswith("#"))
    older = dict(line.split("==") for line in (REPO / "requirements-py3.10.txt").read_text().splitlines()
                 if "==" in line and not line.startswith("#"))
    requires = re.search(r"requires = \[(.*?)\]", pyproject, re.S).group(1)
    assert f'"scikit-build-core=={pins["scikit-build-core"]}"' in requires
    assert f'"pybind11=={pins["pybind11"]}"' in requires
    assert f"\"numpy=={pins['numpy']}; python_version >= '3.11'\"" in requires
    assert f"\"numpy=={older['numpy']}; python_version < '3.11'\"" in requires


def _interpreter(version):
    for candidate in sorted(Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv"), "versions")
                            .glob(f"{version}.*/bin/python"), reverse=True):
        return str(candidate)
    pytest.skip(f"no CPython {version} here to try the wheels with")


def test_an_unsupported_python_is_told_which_it_needs(tmp_path):
    """What pip says to a Python 3.9 asking an index for xeus-flydsl, served as
    PyPI serves it (the wheels and the sdist, with data-requires-python): the
    versions it needs, in one line, before it downloads or builds anything."""
    index = tmp_path / "simple" / "xeus-flydsl"
    index.mkdir(parents=True)
    links = []
    for wheel in [*wheels().values(), *DIST.glob("xeus_flydsl-*.tar.gz")]:
        digest = hashlib.sha256(wheel.read_bytes()).hexdigest()
        links.append(f'<a href="{wheel.as_uri()}#sha256={digest}" '
                     f'data-requires-python="{html.escape(">=3.10,<3.14")}">{wheel.name}</a>')
    if not list(DIST.glob("xeus_flydsl-*.tar.gz")):
        pytest.skip("no sdist in dist/: run scripts/build_wheels.sh")
    (index / "index.html").write_text("<html><body>" + "".join(links) + "</body></html>")
    done = subprocess.run([_interpreter("3.9"), "-m", "pip", "download", "--isolated", "--no-deps",
                           "--index-url", (tmp_path / "simple").as_uri(), "-d", tmp_path / "got", "xeus-flydsl"],
                          capture_output=True, text=True)
    assert done.returncode != 0
    assert "Requires-Python >=3.10,<3.14" in done.stderr, done.stderr
    assert not list((tmp_path / "got").glob("*"))


def test_a_kernel_started_by_another_python_says_which_it_was_built_for(tmp_path):
    """The 3.11 wheel's packages on a 3.12's path (an environment copied, a
    PYTHONPATH left over): one line naming both, no traceback, exit status 1."""
    with zipfile.ZipFile(wheel_of("3.11")) as archive:
        archive.extractall(tmp_path)
    done = subprocess.run([_interpreter("3.12"), "-m", "xflydsl", "-f", str(tmp_path / "kernel.json")],
                          capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(tmp_path)}, timeout=60)
    assert done.returncode == 1
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr, done.stderr
    assert "built for CPython 3.11" in done.stderr and "CPython 3.12" in done.stderr, done.stderr
