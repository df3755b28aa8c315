"""Regression notebooks through the pytest plugin: serial against two
xdist workers, each run with a fresh shared disk cache. The project's
notebooks plus generated ones that use the project's kernels with
overlapping specializations (what a team's suite looks like: many notebooks,
fewer distinct artifacts). Prints wall time and the compiles summed over
every notebook's kernel (each artifact should compile once in all).

    .venv/bin/python tests/bench/bench_fleet.py [generated notebooks, default 16]
"""

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


def generated(i):
    dtype = DTYPES[i % len(DTYPES)]
    return [
        "import numpy as np\nfrom kernels.vector_add import vector_add",
        f"n = {1000 + 24 * (i % 4)}\na = np.arange(n, dtype=np.{dtype})\nb = np.ones(n, np.{dtype})\n"
        f"c = np.zeros(n, np.{dtype})\nvector_add(a, b, c, n)\nassert (c == a + b).all()",
    ]


def suite(folder, count):
    for notebook in (REPO / "notebooks").glob("*.ipynb"):
        shutil.copy(notebook, folder)
    shutil.copytree(REPO / "notebooks" / "kernels", folder / "kernels")
    for i in range(count):
        nb = nbformat.v4.new_notebook()
        nb.cells = [nbformat.v4.new_code_cell(c) for c in generated(i)]
        nb.metadata["kernelspec"] = {"name": "xflydsl", "display_name": "xflydsl", "language": "python"}
        nbformat.write(nb, folder / f"generated_{i:02d}.ipynb")


def run(folder, workers):
    cache, junit = tempfile.mkdtemp(), folder / f"junit-{workers}.xml"
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "xflydsl.pytest_plugin",
               "--xflydsl", str(folder), "--xflydsl-cache-dir", cache, f"--junitxml={junit}"]
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
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 16
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        suite(folder, count)
        rows = [(workers, *run(folder, workers)) for workers in (1, 2)]
    print(f"{'workers':>7}  {'notebooks':>9}  {'wall s':>7}  {'compiles':>8}  {'from cache':>10}")
    for workers, notebooks, wall, compiles, from_cache in rows:
        print(f"{workers:>7}  {notebooks:>9}  {wall:>7.1f}  {compiles:>8}  {from_cache:>10}")
    print(f"serial / -n 2 wall time: {rows[0][2] / rows[1][2]:.2f}x")


if __name__ == "__main__":
    main()
