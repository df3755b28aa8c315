"""Compiled objects on disk, shared by processes (FLYDSL_RUNTIME_ENABLE_CACHE=1).

Content-addressed: an entry's name is the SHA-256 of what produced it (the
module's IR text, the CPU target and the compiler build), so no process can be
served code compiled from anything else. Writes are atomic (a temporary file
renamed into place) and every entry carries a checksum of its payload; a
corrupt or truncated entry is reported, removed and rebuilt. A cache that
cannot be read or written (a read-only or missing directory, a full disk, an
entry gone mid-read) never fails a launch: the code runs from memory and one
warning per problem says why. Who may have written an entry (a loaded entry
runs as code) and signed entries: cache_trust.py.
"""

import contextlib
import hashlib
import os
import tempfile
import warnings

from . import cache_trust

_MAGIC = b"FLYRT-OBJ-1\n"
_DIGEST = hashlib.sha256().digest_size


def enabled():
    return os.environ.get("FLYDSL_RUNTIME_ENABLE_CACHE", "0").lower() in ("1", "true", "yes", "on")


def directory():
    return os.environ.get("FLYDSL_RUNTIME_CACHE_DIR") or os.path.join(
        os.path.expanduser("~"), ".cache", "flyrt")


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


def _path(key):
    return os.path.join(directory(), key[:2], key + ".obj")


def load(key):
    """The payload stored under `key`, or None (absent, corrupt or not trusted)."""
    if not cache_trust.directory_usable(directory()):
        return None
    path = _path(key)
    try:
        with open(path, "rb") as f:
            if not cache_trust.entry_usable(path, os.fstat(f.fileno())):
                return None
            data = f.read()
    except FileNotFoundError:
        return None
    except OSError as error:
        unavailable("read", path, error)
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


def store(key, payload):
    """Stores `payload` under `key`; a failure is a warning, never an error."""
    if not cache_trust.directory_usable(directory()):
        return
    path = _path(key)
    temporary = None
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        fd, temporary = tempfile.mkstemp(dir=os.path.dirname(path), prefix=".tmp-")
        with os.fdopen(fd, "wb") as f:
            f.write(_MAGIC + cache_trust.seal(payload) + payload)
        os.replace(temporary, path)
    except BaseException as error:  # an interrupt too: no temporary file left behind
        if temporary is not None:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
        if not isinstance(error, OSError):
            raise
        unavailable("write", path, error)
