"""Processes sharing a disk cache compile a key once: the others wait on the
key's lock and load what the first stored. A killed or interrupted process
leaves nothing that blocks the others."""

import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time

import pytest

from flyrt.runtime import compile_lock
from test_warm_start import child_env

KERNELS = """
import time
import flyrt.compiler as flyc
import flyrt.expr as fx

def slow_helper(v):
    time.sleep(0.5)  # at trace time: the first process is still compiling when the others miss
    return v * 3.0

@flyc.kernel
def _triple(x: fx.Tensor, out: fx.Tensor):
    i = fx.thread_idx.x
    out[i] = slow_helper(x[i])

@flyc.jit
def triple(x: fx.Tensor, out: fx.Tensor):
    _triple(x, out).launch(block=(x.shape[0],))
"""

PROGRAM = """
import json, os, sys, time
import numpy as np
import flyrt.compiler as flyc
import kernels

while not os.path.exists(sys.argv[1]):  # every process imported: go at once
    time.sleep(0.005)
x, out = np.arange(4, dtype=np.float32), np.zeros(4, np.float32)
kernels.triple(x, out)
record = flyc.compile_log()[-1]
print(json.dumps([out.tolist(), record.source, record.reason]))
"""

HOLDER = """
import sys, time
from flyrt.runtime import compile_lock

with compile_lock.held(sys.argv[1]):
    print("holding", flush=True)
    time.sleep(60)
"""


def test_processes_missing_one_key_at_once_compile_it_once(tmp_path):
    (tmp_path / "kernels.py").write_text(textwrap.dedent(KERNELS))
    (tmp_path / "program.py").write_text(textwrap.dedent(PROGRAM))
    go = tmp_path / "go"
    children = [subprocess.Popen([sys.executable, str(tmp_path / "program.py"), str(go)], env=child_env(tmp_path),
                                 cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                for _ in range(3)]
    time.sleep(1.0)  # imports done (they wait for `go`)
    go.touch()
    results = []
    for child in children:
        out, err = child.communicate(timeout=120)
        assert child.returncode == 0, err
        results.append(json.loads(out))
    assert all(values == [0.0, 3.0, 6.0, 9.0] for values, _, _ in results)
    sources = sorted(source for _, source, _ in results)
    assert sources == ["compiled", "disk cache, no trace", "disk cache, no trace"], results
    waiters = [reason for _, source, reason in results if source != "compiled"]
    assert all("ms for another process compiling it" in reason for reason in waiters), waiters
    assert not list((tmp_path / "cache" / "locks").iterdir())  # each holder removed its lock file


def interruptible():
    """In a child: Ctrl-C raises KeyboardInterrupt even where the test runs
    with SIGINT ignored (a background job, as CI may run it)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _holder(tmp_path, key):
    """A process holding `key`'s lock (it says so on its first line)."""
    holder = subprocess.Popen([sys.executable, "-c", textwrap.dedent(HOLDER), key], env=child_env(tmp_path),
                              stdout=subprocess.PIPE, text=True, preexec_fn=interruptible)
    assert holder.stdout.readline() == "holding\n"
    return holder


@pytest.fixture
def shared_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("FLYDSL_RUNTIME_ENABLE_CACHE", "1")
    monkeypatch.setenv("FLYDSL_RUNTIME_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache" / "locks"


def test_a_process_killed_while_compiling_blocks_no_one(tmp_path, shared_cache):
    holder = _holder(tmp_path, "k1")
    assert compile_lock.sweep() == 0  # held: not removed
    holder.send_signal(signal.SIGKILL)
    holder.wait()
    assert [p.name for p in shared_cache.iterdir()] == ["k1.lock"]  # left behind, but not held
    with compile_lock.held("k1") as lock:
        assert lock.waited < 1.0
    assert not list(shared_cache.iterdir())

    killed_again = _holder(tmp_path, "k2")
    killed_again.kill()
    killed_again.wait()
    assert compile_lock.sweep() == 1 and not list(shared_cache.iterdir())


def test_an_interrupted_wait_and_an_interrupted_holder_leave_no_lock_file(tmp_path, shared_cache, request):
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)  # even where SIGINT was ignored
    request.addfinalizer(lambda: signal.signal(signal.SIGINT, previous))
    holder = _holder(tmp_path, "k")
    threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGINT)).start()
    start = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        with compile_lock.held("k"):
            pytest.fail("the lock was taken while another process held it")
    assert 0.2 < time.monotonic() - start < 30
    holder.send_signal(signal.SIGINT)  # Ctrl-C in the holder: its block unwinds
    holder.wait(timeout=30)
    assert not list(shared_cache.iterdir())


def test_without_a_disk_cache_nothing_is_locked(tmp_path, monkeypatch):
    monkeypatch.setenv("FLYDSL_RUNTIME_ENABLE_CACHE", "0")
    monkeypatch.setenv("FLYDSL_RUNTIME_CACHE_DIR", str(tmp_path / "cache"))
    with compile_lock.held("k") as lock:
        assert lock.waited == 0.0
    assert not (tmp_path / "cache").exists()
