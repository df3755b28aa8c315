"""The disk cache across processes: reuse, corrupt-entry recovery, and
several processes filling one cache at once."""

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

PROGRAM = textwrap.dedent("""
    import warnings
    import numpy as np
    import flyrt.compiler as flyc
    import flyrt.expr as fx

    @flyc.kernel
    def _axpy(x: fx.Tensor, y: fx.Tensor, a: fx.Float32, n: fx.Int32):
        i = fx.block_idx.x * fx.block_dim.x + fx.thread_idx.x
        if i < n:
            y[i] = a * x[i] + y[i]

    @flyc.jit
    def axpy(x: fx.Tensor, y: fx.Tensor, a: fx.Float32, n: fx.Int32):
        _axpy(x, y, a, n).launch(grid=((n + 127) // 128,), block=(128,))

    x = np.arange(1000, dtype=np.float32)
    y = np.ones(1000, np.float32)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        axpy(x, y, 2.0, 1000)
    assert np.array_equal(y, 2 * x + 1), "wrong result"
    info = axpy.cache_info()
    print(info.compiles, info.misses, sum("corrupt cache entry" in str(w.message) for w in caught))
    print(*sorted(str(w.message) for w in caught if "cannot" in str(w.message)), sep="\\n")
""")


def program(directory):
    path = Path(directory) / "axpy_program.py"
    if not path.exists():
        path.write_text(PROGRAM)
    return str(path)


def run(cache_dir, enabled="1", limits=None):
    """(compiles, misses, corrupt-entry warnings) of one process; with `limits`, also its
    cache-unavailable warnings. `limits`: a function run in the child before it starts."""
    env = dict(os.environ, FLYDSL_RUNTIME_ENABLE_CACHE=enabled, FLYDSL_RUNTIME_CACHE_DIR=str(cache_dir / "cache"))
    if enabled is None:  # the default
        del env["FLYDSL_RUNTIME_ENABLE_CACHE"]
    done = subprocess.run([sys.executable, program(cache_dir)], env=env, capture_output=True, text=True,
                          preexec_fn=limits)
    assert done.returncode == 0, done.stderr
    counts, *unavailable = done.stdout.splitlines()
    compiles, misses, corrupt = map(int, counts.split())
    return (compiles, misses, corrupt, unavailable) if limits else (compiles, misses, corrupt)


def entries(cache_dir):
    return sorted((Path(cache_dir) / "cache").rglob("*.obj"))


def test_second_process_loads_instead_of_compiling(tmp_path):
    assert run(tmp_path, enabled=None) == (1, 1, 0)  # on by default, as FlyDSL's
    assert len(entries(tmp_path)) == 1
    assert run(tmp_path) == (0, 1, 0)
    assert run(tmp_path, enabled="0") == (1, 1, 0)  # off: always compiles


def test_corrupt_or_truncated_entry_is_reported_and_rebuilt(tmp_path):
    run(tmp_path)
    (entry,) = entries(tmp_path)
    good = entry.read_bytes()
    entry.write_bytes(good[: len(good) // 2])
    assert run(tmp_path) == (1, 1, 1)
    assert entry.read_bytes() == good  # rebuilt, identical
    entry.write_bytes(good[:-1] + bytes([good[-1] ^ 0xFF]))
    assert run(tmp_path) == (1, 1, 1)
    assert run(tmp_path) == (0, 1, 0)


def test_processes_filling_one_cache_at_once(tmp_path):
    env = dict(os.environ, FLYDSL_RUNTIME_ENABLE_CACHE="1", FLYDSL_RUNTIME_CACHE_DIR=str(tmp_path / "cache"))
    procs = [subprocess.Popen([sys.executable, program(tmp_path)], env=env, stdout=subprocess.PIPE, text=True)
             for _ in range(4)]
    outputs = [p.communicate()[0] for p in procs]
    assert all(p.returncode == 0 for p in procs)
    assert all(out.split()[2] == "0" for out in outputs)
    assert len(entries(tmp_path)) == 1
    assert not list(Path(tmp_path).rglob(".tmp-*"))


def test_a_cache_that_cannot_be_written_or_read_never_fails_a_launch(tmp_path):
    import resource

    def full_disk():  # files may not grow past 100 bytes: every entry's write fails (EFBIG)
        resource.setrlimit(resource.RLIMIT_FSIZE, (100, 100))

    compiles, misses, corrupt, said = run(tmp_path, limits=full_disk)
    assert (compiles, misses, corrupt) == (1, 1, 0) and not entries(tmp_path)
    assert len(said) == 1 and "cannot write the disk cache" in said[0] and "File too large" in said[0]
    assert not list(Path(tmp_path).rglob(".tmp-*"))

    shutil.rmtree(tmp_path / "cache")
    (tmp_path / "cache").write_text("a file where the cache directory should be")  # unwritable, unreadable
    compiles, misses, corrupt, said = run(tmp_path, limits=lambda: None)
    assert (compiles, misses, corrupt) == (1, 1, 0)
    assert len(said) == 2 and "cannot read the disk cache" in said[0] and "cannot write the disk cache" in said[1]

    (tmp_path / "cache").unlink()
    run(tmp_path)
    (entry,) = entries(tmp_path)
    entry.unlink()
    entry.mkdir()  # an entry that cannot be read (gone, a directory in its place)
    compiles, misses, corrupt, said = run(tmp_path, limits=lambda: None)
    assert (compiles, misses, corrupt) == (1, 1, 0)
    assert any("cannot read the disk cache" in line for line in said)


def test_the_size_cap_evicts_the_least_recently_used_first(tmp_path, monkeypatch):
    from flyrt.runtime import disk_cache

    monkeypatch.setenv("FLYDSL_RUNTIME_CACHE_DIR", str(tmp_path / "cache"))
    keys = [f"{c}" * 64 for c in "abcd"]
    for age, key in enumerate(keys[:3]):
        disk_cache.store(key, bytes(1000))
        os.utime(disk_cache._path(key), (1000 + age, 1000 + age))  # a oldest, then b, then c
    assert disk_cache.load(keys[0]) == bytes(1000)  # a used again: now the most recent
    monkeypatch.setenv("FLYDSL_RUNTIME_CACHE_MAX_BYTES", "2500")
    disk_cache.store(keys[3], bytes(1000))  # over the cap: b and c go, oldest first, down to 9/10 of it
    assert [disk_cache.load(k) is not None for k in keys] == [True, False, False, True]
    info = disk_cache.stats()
    assert (info.entries, info.max_bytes) == (2, 2500) and info.bytes <= 2250
    disk_cache.clear()
    assert disk_cache.stats().entries == 0 and disk_cache.load(keys[0]) is None
