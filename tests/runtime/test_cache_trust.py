"""A disk cache is a code-execution path: a directory or entry other users
can write is not used unless trusted explicitly, and with a key every entry
is signed and one that does not verify is rebuilt, never run."""

import os
import subprocess
import sys
import textwrap

import pytest

PROGRAM = textwrap.dedent("""
    import warnings
    import numpy as np
    import flyrt.compiler as flyc
    import flyrt.expr as fx

    @flyc.kernel
    def _twice(x: fx.Tensor, out: fx.Tensor):
        i = fx.thread_idx.x
        out[i] = x[i] * 2.0

    @flyc.jit
    def twice(x: fx.Tensor, out: fx.Tensor):
        _twice(x, out).launch(block=(x.shape[0],))

    x, out = np.arange(8, dtype=np.float32), np.zeros(8, np.float32)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        twice(x, out)
    assert np.array_equal(out, 2 * x), "wrong result"
    print(flyc.compile_log()[-1].source)
    print(*[str(w.message) for w in caught], sep="\\n")
""")


def run(tmp_path, **env):
    """(compile source, warnings) of one fresh process using the cache in tmp_path/cache."""
    (tmp_path / "program.py").write_text(PROGRAM)
    env = dict(os.environ, FLYDSL_RUNTIME_ENABLE_CACHE="1", FLYDSL_RUNTIME_CACHE_DIR=str(tmp_path / "cache"), **env)
    for name in ("FLYDSL_RUNTIME_CACHE_KEY", "FLYDSL_RUNTIME_CACHE_KEY_FILE", "FLYDSL_RUNTIME_CACHE_SHARED"):
        if name not in env or env[name] is None:
            env.pop(name, None)
    out = subprocess.run([sys.executable, str(tmp_path / "program.py")], env=env, capture_output=True, text=True,
                         check=True).stdout.splitlines()
    return out[0], [line for line in out[1:] if line]


def objects(tmp_path):
    return sorted((tmp_path / "cache").rglob("*.obj"))


def test_a_directory_others_can_write_is_not_used_unless_shared_on_purpose(tmp_path):
    (tmp_path / "cache").mkdir()
    os.chmod(tmp_path / "cache", 0o777)
    source, said = run(tmp_path)
    assert source == "compiled" and not objects(tmp_path)
    assert len(said) == 1 and "other users can write to it" in said[0] and "FLYDSL_RUNTIME_CACHE_SHARED=1" in said[0]
    assert run(tmp_path, FLYDSL_RUNTIME_CACHE_SHARED="1") == ("compiled", [])
    assert run(tmp_path, FLYDSL_RUNTIME_CACHE_SHARED="1") == ("disk cache, no trace", [])


@pytest.mark.skipif(os.getuid() != 0, reason="giving a file to another user needs root")
def test_an_entry_another_user_owns_is_rebuilt(tmp_path):
    run(tmp_path)
    for path in (tmp_path / "cache").rglob("*.*"):
        os.chown(path, 65534, 65534)
    source, said = run(tmp_path)
    assert source == "compiled"
    assert any("another user owns it or can write it" in line for line in said)


def test_signed_entries_verify_and_a_tampered_one_is_rebuilt_never_run(tmp_path):
    key = "team-secret"
    assert run(tmp_path, FLYDSL_RUNTIME_CACHE_KEY=key) == ("compiled", [])
    assert run(tmp_path, FLYDSL_RUNTIME_CACHE_KEY=key) == ("disk cache, no trace", [])
    # someone who can write the cache but has no key: valid framing, a plain checksum
    import hashlib
    (entry,) = objects(tmp_path)
    data = entry.read_bytes()
    magic = b"FLYRT-OBJ-1\n"
    payload = data[len(magic) + 32:]
    entry.write_bytes(magic + hashlib.sha256(payload).digest() + payload)
    source, said = run(tmp_path, FLYDSL_RUNTIME_CACHE_KEY=key)
    assert source == "compiled"
    assert len(said) == 1 and "failed its signature check" in said[0]
    assert run(tmp_path, FLYDSL_RUNTIME_CACHE_KEY=key) == ("disk cache, no trace", [])  # rebuilt, signed
    key_file = tmp_path / "key"
    key_file.write_text(key + "\n")
    assert run(tmp_path, FLYDSL_RUNTIME_CACHE_KEY_FILE=str(key_file)) == ("disk cache, no trace", [])


def test_a_manifest_edited_without_the_key_is_not_trusted(tmp_path):
    import json
    key = "team-secret"
    run(tmp_path, FLYDSL_RUNTIME_CACHE_KEY=key)
    (manifest,) = (tmp_path / "cache" / "warm").rglob("*.json")
    stored = json.loads(manifest.read_text())
    stored["entries"][0]["deps"] = []  # would skip every dependency check
    manifest.write_text(json.dumps(stored))
    source, said = run(tmp_path, FLYDSL_RUNTIME_CACHE_KEY=key)
    assert source == "disk cache"  # traced: the object is found by its IR, the manifest was not believed
    assert len(said) == 1 and "its seal does not match its entries" in said[0]


def test_a_key_file_that_gives_no_key_turns_the_cache_off_never_unsigned(tmp_path):
    for problem, key_file in (("cannot read the cache key file", tmp_path / "missing"),
                              ("is empty", tmp_path / "empty")):
        if key_file.name == "empty":
            key_file.write_text("\n")
        source, said = run(tmp_path, FLYDSL_RUNTIME_CACHE_KEY_FILE=str(key_file))
        assert source == "compiled" and not objects(tmp_path)
        assert len(said) == 1 and "not using the disk cache" in said[0] and problem in said[0]
