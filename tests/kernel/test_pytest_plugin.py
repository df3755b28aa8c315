"""The pytest plugin that runs regression notebooks on the xflydsl kernel
(xflydsl/pytest_plugin.py), driven through pytest's own pytester: reports,
figures, xdist workers sharing one disk cache, GPU pinning, faults."""

import os
import signal
import subprocess
import sys
import textwrap
import time
import xml.etree.ElementTree as ET

import nbformat
import pytest

pytest_plugins = ("pytester",)

SLOW_KERNELS = """
import time
import flyrt.compiler as flyc
import flyrt.expr as fx

def helper(v):
    time.sleep(TRACE_SECONDS)  # at trace time: the other worker misses while this one compiles
    return v * 2.0

TRACE_SECONDS = 1.0

@flyc.kernel
def _double(x: fx.Tensor, out: fx.Tensor):
    i = fx.thread_idx.x
    out[i] = helper(x[i])

@flyc.jit
def double(x: fx.Tensor, out: fx.Tensor):
    _double(x, out).launch(block=(x.shape[0],))
"""

USES_KERNELS = ["import numpy as np\nimport slow_kernels",
                "x, out = np.arange(4, dtype=np.float32), np.zeros(4, np.float32)\nslow_kernels.double(x, out)\n"
                "assert out.tolist() == [0.0, 2.0, 4.0, 6.0]"]


def notebook(path, *cells):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(textwrap.dedent(c)) for c in cells]
    nb.metadata["kernelspec"] = {"name": "xflydsl", "display_name": "xflydsl", "language": "python"}
    nbformat.write(nb, path)


def run(pytester, *args):
    """pytest in a new process on pytester's folder, the plugin on."""
    return pytester.runpytest_subprocess("-p", "xflydsl.pytest_plugin", "--xflydsl", "-p", "no:cacheprovider",
                                         *args, timeout=600)


def figures(pytester, junit="junit.xml"):
    """{notebook file: {property: value}} from the JUnit XML report."""
    found = {}
    for case in ET.parse(pytester.path / junit).getroot().iter("testcase"):
        found[case.get("classname").rsplit(".", 1)[0].split(".")[-1] + ".ipynb"] = {
            p.get("name"): p.get("value") for p in case.iter("property")}
    return found


@pytest.fixture
def folder(pytester, monkeypatch):
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(pytester.path), os.environ.get("PYTHONPATH")])))
    monkeypatch.setenv("FLYDSL_RUNTIME_ENABLE_CACHE", "0")  # only --xflydsl-cache-dir turns it on
    return pytester.path


def test_pass_and_failure_reports_show_the_cell_its_error_and_the_notices(pytester, folder):
    notebook(folder / "good.ipynb", "answer = 6 * 7", "assert answer == 42")
    notebook(folder / "bad.ipynb",
             """
             import numpy as np
             import flyrt.compiler as flyc, flyrt.expr as fx

             def helper(v):
                 return v + 1.0

             @flyc.kernel
             def _k(x: fx.Tensor):
                 x[fx.thread_idx.x] = helper(x[fx.thread_idx.x])

             @flyc.jit
             def bump(x: fx.Tensor):
                 _k(x).launch(block=(4,))

             x = np.zeros(4, np.float32)
             bump(x)
             """,
             "def helper(v):\n    return v + 2.0",  # the kernel evicts bump's artifact and says why
             "bump(x)\nassert x.tolist() == [1.0] * 4, x.tolist()")
    result = run(pytester, "--junitxml=junit.xml")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*bad.ipynb: code cell 3 failed (an error)*", "--- the cell ---",
                                 "bump(x)", "assert x.tolist() == [1.0] * 4, x.tolist()", "*AssertionError*[3.0, 3.0*",
                                 "--- the kernel's notices ---", "flyrt: evicted launcher bump*'helper'*"])
    result.stdout.fnmatch_lines(["*xflydsl notebooks*", "notebook*outcome*cells*compiles*from_cache*seconds*device",
                                 "bad.ipynb*failed*3*2*0*cpu", "good.ipynb*passed*2*0*0*cpu"])
    found = figures(pytester)
    assert found["bad.ipynb"]["compiles"] == "2" and found["good.ipynb"]["cells"] == "2"


def test_a_kernel_that_dies_fails_its_notebook_and_the_next_gets_a_fresh_kernel(pytester, folder):
    notebook(folder / "a_dies.ipynb", "print('before the crash', flush=True)",
             # the pause lets the output leave the kernel: a message queued for iopub dies with the process
             "import os, signal, time\nprint('crashing', flush=True)\ntime.sleep(1)\n"
             "os.kill(os.getpid(), signal.SIGSEGV)",
             "1 + 1")
    notebook(folder / "b_runs.ipynb", "import os\nassert 'crashing' not in globals()", "print(os.getpid())")
    result = run(pytester)
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*a_dies.ipynb: code cell 2 failed (the kernel died)*", "*os.kill(os.getpid()*",
                                 "*DeadKernelError*", "*the cell's last output:*", "crashing"])


def test_workers_share_one_cache_and_compile_a_key_once(pytester, folder):
    (folder / "slow_kernels.py").write_text(textwrap.dedent(SLOW_KERNELS))
    for name in ("one.ipynb", "two.ipynb"):
        notebook(folder / name, *USES_KERNELS)
    result = run(pytester, "-n", "2", "--xflydsl-gpus", "none", "--xflydsl-cache-dir", "cache", "--junitxml=junit.xml")
    result.assert_outcomes(passed=2)
    found = figures(pytester)
    assert sorted((f["compiles"], f["from_cache"]) for f in found.values()) == [("0", "1"), ("1", "0")], found
    assert not list((folder / "cache" / "locks").iterdir())

    again = run(pytester, "-n", "2", "--xflydsl-gpus", "none", "--xflydsl-cache-dir", "cache",
                "--junitxml=again.xml")
    again.assert_outcomes(passed=2)
    assert {(f["compiles"], f["from_cache"]) for f in figures(pytester, "again.xml").values()} == {("0", "1")}


def test_each_worker_takes_its_own_gpu(pytester, folder):
    check = ("import os\ndevice = {'gw0': '3', 'gw1': '5'}[os.environ['PYTEST_XDIST_WORKER']]\n"
             "assert os.environ['CUDA_VISIBLE_DEVICES'] == os.environ['HIP_VISIBLE_DEVICES'] == device")
    for name in ("one.ipynb", "two.ipynb", "three.ipynb"):
        notebook(folder / name, check)
    result = run(pytester, "-n", "2", "--xflydsl-gpus", "3,5", "--junitxml=junit.xml")
    result.assert_outcomes(passed=3)
    assert {f["device"] for f in figures(pytester).values()} <= {"3", "5"}

    too_many = run(pytester, "-n", "2", "--xflydsl-gpus", "0")
    assert too_many.ret == pytest.ExitCode.USAGE_ERROR
    too_many.stderr.fnmatch_lines(["*2 workers for 1 GPUs (0): each worker takes one GPU; run with -n 1 or fewer, "
                                   "or name a GPU once per worker that shares it (--xflydsl-gpus 0,0)*"])


def test_two_workers_share_a_gpu_named_twice_and_a_serial_run_takes_the_first(pytester, folder):
    check = "import os\nassert os.environ['CUDA_VISIBLE_DEVICES'] == os.environ['HIP_VISIBLE_DEVICES'] == '4'"
    for name in ("one.ipynb", "two.ipynb"):
        notebook(folder / name, check)
    result = run(pytester, "-n", "2", "--xflydsl-gpus", "4,4", "--junitxml=junit.xml")
    result.assert_outcomes(passed=2)
    assert {f["device"] for f in figures(pytester).values()} == {"4"}
    serial = run(pytester, "--xflydsl-gpus", "4", "--junitxml=junit.xml")  # no xdist: the first GPU
    serial.assert_outcomes(passed=2)
    assert {f["device"] for f in figures(pytester).values()} == {"4"}


def test_a_cache_directory_others_can_write_is_refused(pytester, folder):
    notebook(folder / "one.ipynb", "1")
    shared = folder / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    result = run(pytester, "--xflydsl-cache-dir", str(shared))
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*FLYDSL_RUNTIME_CACHE_SHARED=1*"])


def test_without_nbclient_plain_runs_pass_and_xflydsl_says_what_to_install(pytester, folder):
    # The wheel registers the plugin for every pytest run: one where the
    # notebook packages are missing must still collect and pass.
    for name in ("nbformat", "nbclient"):
        (folder / name).mkdir()
        (folder / name / "__init__.py").write_text(f"raise ImportError('no {name} here (hidden by the test)')\n")
    pytester.makepyfile(test_plain="def test_plain():\n    assert 1 + 1 == 2\n")
    plain = pytester.runpytest_subprocess("-p", "xflydsl.pytest_plugin", "-p", "no:cacheprovider", "test_plain.py")
    plain.assert_outcomes(passed=1)
    notebook_run = run(pytester)
    assert notebook_run.ret == pytest.ExitCode.USAGE_ERROR
    notebook_run.stderr.fnmatch_lines(["*pip install 'xeus-flydsl?notebooks?'*no nbformat here*"])


def test_ctrl_c_stops_the_run_and_leaves_no_lock_file(pytester, folder):
    (folder / "slow_kernels.py").write_text(textwrap.dedent(SLOW_KERNELS).replace("TRACE_SECONDS = 1.0",
                                                                                 "TRACE_SECONDS = 60.0"))
    notebook(folder / "slow.ipynb", *USES_KERNELS)
    locks = folder / "cache" / "locks"
    command = [sys.executable, "-m", "pytest", "-p", "xflydsl.pytest_plugin", "--xflydsl", "-p", "no:cacheprovider",
               "--xflydsl-cache-dir", "cache", str(folder)]
    run_ = subprocess.Popen(command, cwd=folder, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))  # as in a terminal
    deadline = time.monotonic() + 120
    while not (locks.is_dir() and list(locks.iterdir())):  # the kernel holds the key's lock while it traces
        assert time.monotonic() < deadline and run_.poll() is None, run_.communicate()[0]
        time.sleep(0.1)
    run_.send_signal(signal.SIGINT)
    output, _ = run_.communicate(timeout=120)
    assert run_.returncode == pytest.ExitCode.INTERRUPTED, output
    assert "KeyboardInterrupt" in output
    assert not list(locks.iterdir()), output


def test_the_gpus_to_give_out_come_from_the_visible_devices(monkeypatch):
    from xflydsl import worker_devices

    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "2, 7")
    assert worker_devices.visible_devices() == ["2", "7"]
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "-1")  # CUDA's way of hiding every GPU
    assert worker_devices.visible_devices() == []
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES")
    monkeypatch.setenv("HIP_VISIBLE_DEVICES", "1")
    assert worker_devices.visible_devices() == ["1"]
    worker_devices.check_workers(4, [])  # no GPU: every worker on the CPU
    with pytest.raises(worker_devices.TooManyWorkers, match="3 workers for 2 GPUs"):
        worker_devices.check_workers(3, ["0", "1"])


def test_each_worker_starts_its_kernels_on_ports_of_its_own(pytester, folder):
    # the kernel's own connection file, from its command line (-f FILE)
    check = ("import json, os\nfrom xflydsl import worker_ports\n"
             "argv = open('/proc/self/cmdline').read().split('\\0')\n"
             "ports = json.load(open(argv[argv.index('-f') + 1]))\n"
             "mine = worker_ports.worker_slice(int(os.environ['PYTEST_XDIST_WORKER'].removeprefix('gw')), 2)\n"
             "assert all(ports[name] in mine for name in worker_ports.KERNEL_PORTS), (ports, mine)")
    for name in ("one.ipynb", "two.ipynb", "three.ipynb", "four.ipynb"):
        notebook(folder / name, check)
    run(pytester, "-n", "2", "--xflydsl-gpus", "none").assert_outcomes(passed=4)


def test_a_kernel_that_cannot_start_fails_its_notebook_with_the_kernels_stderr(pytester, folder):
    # a port another process holds: the kernel dies binding it, as in a port race
    (folder / "conftest.py").write_text(textwrap.dedent("""
        import socket
        from xflydsl import worker_ports

        held = socket.socket()
        held.bind(("127.0.0.1", 0))
        held.listen()
        take = worker_ports.WorkerPorts.take
        worker_ports.WorkerPorts.take = lambda self: {**take(self), "shell_port": held.getsockname()[1]}
        """))
    notebook(folder / "never_runs.ipynb", "1 + 1")
    result = run(pytester)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*never_runs.ipynb: the kernel did not start*", "--- what went wrong ---",
                                 "RuntimeError: Kernel died before replying to kernel_info",
                                 "--- the kernel's stderr (last lines) ---", "xflydsl: Address already in use*"])


def test_worker_port_slices_lie_apart_below_the_ephemeral_ports_and_skip_taken_ones():
    import socket

    from xflydsl import worker_ports

    slices = [worker_ports.worker_slice(i, 8) for i in range(8)]
    assert slices[0].start == worker_ports.FIRST_PORT and slices[-1].stop <= worker_ports.ephemeral_start()
    assert all(a.stop <= b.start and len(a) == len(b) > 100 for a, b in zip(slices, slices[1:]))
    assert worker_ports.worker_slice(0, 10 ** 6) is None  # too many workers to share out: jupyter_client picks

    six = range(slices[3].start, slices[3].start + 6)
    with socket.socket() as held:
        held.bind(("127.0.0.1", six[2]))
        given = worker_ports.WorkerPorts(six).take()
        assert sorted(given.values()) == [p for p in six if p != six[2]]
        assert set(given) == set(worker_ports.KERNEL_PORTS)
        with pytest.raises(OSError, match=f"fewer than 5 free ports on 127.0.0.1 in {six[0]}..{six[4]}"):
            worker_ports.WorkerPorts(six[:5]).take()
