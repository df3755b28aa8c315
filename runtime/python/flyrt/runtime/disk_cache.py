"""Compiled objects on disk, shared by processes: on unless
FLYDSL_RUNTIME_ENABLE_CACHE=0 (FlyDSL's variable, with FlyDSL's default).

Content-addressed: an entry's name is the SHA-256 of what produced it (the
module's IR text, the CPU target and the compiler build), so no process can be
served code compiled from anything else. Writes are atomic (a temporary file
renamed into place) and every entry carries a checksum of its payload; a
corrupt or truncated entry is reported, removed and rebuilt. A cache that
cannot be read or written (a read-only or missing directory, a full disk, an
entry gone mid-read) never fails a launch: the code runs from memory and one
warning per problem says why. Who may have written an entry (a loaded entry
runs as code) and signed entries: cache_trust.py.

Bounded: FLYDSL_RUNTIME_CACHE_MAX_BYTES (default 4 GiB; K, M, G suffixes)
caps the directory, least recently used entries first out. A load touches
its entry's modification time, so recency is shared by every process using
the directory; a store that takes the cache past its cap removes the oldest
entries until it is back under nine tenths of it (a reader whose entry went
meanwhile just misses).
"""

import contextlib
import hashlib
import os
import tempfile
import warnings
from collections import namedtuple

from ..core import settings
from . import cache_trust

_MAGIC = b"FLYRT-OBJ-1\n"
_DIGEST = hashlib.sha256().digest_size


def enabled():
    return settings.disk_cache_enabled()


_DEFAULT_MAX_BYTES = 4 << 30
_SUFFIXES = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
_counts = {"hits": 0, "misses": 0}  # this process's lookups


def max_bytes():
    text = settings.disk_cache_max_bytes_text().strip().upper().removesuffix("B")
    if not text:
        return _DEFAULT_MAX_BYTES
    try:
        return int(float(text[:-1]) * _SUFFIXES[text[-1]]) if text[-1] in _SUFFIXES else int(text)
    except ValueError:
        warnings.warn(f"flyrt: FLYDSL_RUNTIME_CACHE_MAX_BYTES={text!r} is not a size; using 4 GiB", stacklevel=2)
        return _DEFAULT_MAX_BYTES


def directory():
    return settings.disk_cache_directory()


class CorruptEntryWarning(UserWarning):
    """A cache entry failed its checksum and was removed."""


class CacheUnavailableWarning(UserWarning):
    """The cache could not be read or written; compiled code stays in memory."""


_reported = set()  # (what, error kind) already said


def unavailable(what, path, error):
    """One warning per kind of failure: the cache at `path` could not be used."""
    key = (what, type(error).__name__, getattr(error, "errno", None))
    if key not in _reported:
        _reported.add(key)
        warnings.warn(f"flyrt: cannot {what} the disk cache at {path} ({error}); the compiled code is kept in "
                      "memory for this process", CacheUnavailableWarning, stacklevel=3)


_OBJECT = ".obj"
_CODE = ".code"  # Python code the frontend rewrote (frontend/ast_rewrite.py), beside the objects compiled from it


def _path(key, kind=_OBJECT):
    return os.path.join(directory(), key[:2], key + kind)


def load(key):
    """The payload stored under `key`, or None (absent, corrupt or not trusted)."""
    payload = _read(key)
    _counts["hits" if payload is not None else "misses"] += 1
    return payload


def load_rewritten_code(key):
    """The frontend's rewritten code stored under `key` while the cache is on
    (frontend/ast_rewrite.keep_rewrites_in), or None; not a compiled object's lookup."""
    return _read(key, _CODE) if enabled() else None


def store_rewritten_code(key, payload):
    if enabled():
        store(key, payload, _CODE)


def read_trusted(path, warn=True):
    """The bytes of the cache file at `path` (marked recently used), or None:
    absent, unreadable (said once, when `warn`), or in a directory or file
    that someone the cache does not trust could have written."""
    if not cache_trust.directory_usable(directory()):
        return None
    try:
        with open(path, "rb") as f:
            if not cache_trust.entry_usable(path, os.fstat(f.fileno())):
                return None
            data = f.read()
    except FileNotFoundError:
        return None
    except OSError as error:
        if warn:
            unavailable("read", path, error)
        return None
    _touch(path)
    return data


def _read(key, kind=_OBJECT):
    path = _path(key, kind)
    data = read_trusted(path)
    if data is None:
        return None
    header = len(_MAGIC) + _DIGEST
    payload = data[header:]
    if data[: len(_MAGIC)] != _MAGIC or not cache_trust.sealed(payload, data[len(_MAGIC) : header]):
        if cache_trust.key() is not None:
            warnings.warn(f"flyrt: cache entry {path} failed its signature check (tampered, unsigned or signed with "
                          "another key); removed, recompiling", cache_trust.UntrustedCacheWarning, stacklevel=2)
        else:
            warnings.warn(f"flyrt: corrupt cache entry {path} removed; recompiling", CorruptEntryWarning,
                          stacklevel=2)
        try:
            os.remove(path)
        except FileNotFoundError:
            pass  # another process removed it first
        except OSError as error:
            unavailable("remove a corrupt entry from", path, error)
        return None
    return payload


def store(key, payload, kind=_OBJECT):
    """Stores `payload` under `key`; a failure is a warning, never an error."""
    if not cache_trust.directory_usable(directory()):
        return
    path = _path(key, kind)
    temporary = None
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        fd, temporary = tempfile.mkstemp(dir=os.path.dirname(path), prefix=".tmp-")
        with os.fdopen(fd, "wb") as f:
            f.write(_MAGIC + cache_trust.seal(payload) + payload)
        os.replace(temporary, path)
        temporary = None
        if kind == _OBJECT:  # (a trace stores a function's code at a time: the next object's store bounds them too)
            _bound(max_bytes())
    except BaseException as error:  # an interrupt too: no temporary file left behind
        if temporary is not None:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
        if not isinstance(error, OSError):
            raise
        unavailable("write", path, error)


def _touch(path):
    """Marks `path` recently used, for every process's eviction order (a
    read-only shared cache keeps its order)."""
    with contextlib.suppress(OSError):
        os.utime(path)


def _files():
    """(mtime, bytes, path) of every entry and manifest in the cache."""
    found = []
    for folder, _, names in os.walk(directory()):
        for name in names:
            if name.endswith((_OBJECT, _CODE, ".json")):
                path = os.path.join(folder, name)
                with contextlib.suppress(OSError):
                    info = os.stat(path)
                    found.append((info.st_mtime, info.st_size, path))
    return found


def _bound(limit):
    files = _files()
    total = sum(size for _, size, _ in files)
    if total <= limit:
        return
    for _, size, path in sorted(files):  # least recently used first
        with contextlib.suppress(OSError):
            os.remove(path)
            total -= size
        if total <= limit * 9 // 10:
            return


CacheStats = namedtuple("CacheStats", "directory enabled entries bytes max_bytes hits misses")


def stats():
    """The cache as this process sees it: where, whether on, what it holds, and
    this process's hits and misses."""
    files = _files()
    return CacheStats(directory(), enabled(), sum(1 for *_, p in files if p.endswith(_OBJECT)),
                      sum(size for _, size, _ in files), max_bytes(), _counts["hits"], _counts["misses"])


def clear():
    """Removes every entry and manifest (another process's next lookup misses)."""
    for _, _, path in _files():
        with contextlib.suppress(OSError):
            os.remove(path)
