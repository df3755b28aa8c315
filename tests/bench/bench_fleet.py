"""Regression notebooks through the pytest plugin: serial against two
xdist workers, each run with a fresh shared disk cache. The project's
notebooks plus generated ones that use the project's kernels with
overlapping specializations (what a team's suite looks like: many notebooks,
fewer distinct artifacts). Prints wall time and the compiles summed over
every notebook's kernel (each artifact should compile once in all).

    .venv/bin/python tests/bench/bench_fleet.py [generated notebooks, default 16]
    python3 tests/bench/bench_fleet.py --gpus 0,0 [count]    on a one-GPU machine

--gpus goes to the plugin (a GPU named twice: both workers share it) and
puts the generated notebooks' arrays on the GPU (the project's notebooks
choose the GPU themselves where torch sees one).
"""

import argparse
import importlib.util
import shutil
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import nbformat

REPO = Path(__file__).resolve().parents[2]
DTYPES = ("float32", "float64", "int32")


def generated(i, gpu):
    dtype = DTYPES[i % len(DTYPES)]
    where = ("from kernels.devices import host, on\ndevice = 'cuda'" if gpu else
             "def on(device, arrays):\n    return arrays\n\n\ndef host(c):\n    return c\n\n\ndevice = 'cpu'")
    return [
        "import numpy as np\nfrom kernels.vector_add import vector_add\n" + where,
        f"n = {1000 + 24 * (i % 4)}\na = np.arange(n, dtype=np.{dtype})\nb = np.ones(n, np.{dtype})\n"
        f"x = on(device, dict(a=a, b=b, c=np.zeros(n, np.{dtype})))\nvector_add(x['a'], x['b'], x['c'], n)\n"
        f"assert (host(x['c']) == a + b).all()",
    ]


def suite(folder, count, gpu):
    # The FlyDSL notebook needs the real flydsl and LLD (the GPU machine has neither).
    flydsl = importlib.util.find_spec("flydsl") is not None and (shutil.which("ld.lld-19") or shutil.which("ld.lld"))
    for notebook in (REPO / "notebooks").glob("*.ipynb"):
        if notebook.name.startswith("flydsl_") and not flydsl:
            print(f"bench_fleet: {notebook.name} left out: it needs flydsl and ld.lld, which this machine lacks")
            continue
        shutil.copy(notebook, folder)
    shutil.copytree(REPO / "notebooks" / "kernels", folder / "kernels")
    for i in range(count):
        nb = nbformat.v4.new_notebook()
        nb.cells = [nbformat.v4.new_code_cell(c) for c in generated(i, gpu)]
        nb.metadata["kernelspec"] = {"name": "xflydsl", "display_name": "xflydsl", "language": "python"}
        nbformat.write(nb, folder / f"generated_{i:02d}.ipynb")


def run(folder, workers, gpus):
    cache, junit = tempfile.mkdtemp(), folder / f"junit-{workers}.xml"
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "xflydsl.pytest_plugin",
               "--xflydsl", str(folder), "--xflydsl-cache-dir", cache, f"--junitxml={junit}"]
    if gpus:
        command += ["--xflydsl-gpus", gpus]
    if workers > 1:
        command += ["-n", str(workers)]
    start = time.perf_counter()
    done = subprocess.run(command, cwd=folder, capture_output=True, text=True)
    wall = time.perf_counter() - start
    shutil.rmtree(cache)
    if done.returncode != 0:
        sys.exit(done.stdout + done.stderr)
    cases = list(ET.parse(junit).getroot().iter("testcase"))
    total = {"compiles": 0, "from_cache": 0}
    for case in cases:
        for prop in case.iter("property"):
            if prop.get("name") in total:
                total[prop.get("name")] += int(prop.get("value"))
    return len(cases), wall, total["compiles"], total["from_cache"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("count", type=int, nargs="?", default=16, help="generated notebooks (default 16)")
    parser.add_argument("--gpus", help="the plugin's --xflydsl-gpus, e.g. 0,0; the generated notebooks on the GPU")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        suite(folder, options.count, bool(options.gpus))
        rows = [(workers, *run(folder, workers, options.gpus and ",".join(options.gpus.split(",")[:workers])))
                for workers in (1, 2)]
    print(f"{'workers':>7}  {'notebooks':>9}  {'wall s':>7}  {'compiles':>8}  {'from cache':>10}")
    for workers, notebooks, wall, compiles, from_cache in rows:
        print(f"{workers:>7}  {notebooks:>9}  {wall:>7.1f}  {compiles:>8}  {from_cache:>10}")
    print(f"serial / -n 2 wall time: {rows[0][2] / rows[1][2]:.2f}x")


if __name__ == "__main__":
    main()
