"""Who may have written a disk-cache entry: loading one runs its code.

A cache directory is a code-execution path: whoever can write an entry runs
native code in every process that loads it, and an entry's checksum is
written by the same writer. So by default a cache is used only when this
user owns its directory and no other user can write to it, and an entry
only when this user owns it and no one else can write it;
FLYDSL_RUNTIME_CACHE_SHARED=1 accepts a shared directory, which is then as
trusted as everyone who can write it. Entries can be signed, as Jupyter signs
its messages: with a key in FLYDSL_RUNTIME_CACHE_KEY (or in the file
FLYDSL_RUNTIME_CACHE_KEY_FILE names) each entry carries the HMAC-SHA256 of its
contents in place of their SHA-256, and one whose HMAC does not verify
(tampered, unsigned, or signed with another key) is rebuilt, never run.
Everyone sharing a signed cache needs the key.
"""

import functools
import hashlib
import hmac
import os
import stat
import warnings

from ..core import settings


class UntrustedCacheWarning(UserWarning):
    """A cache directory or entry others could have written was not used."""


_said = set()


def _warn_once(what, message):
    if what not in _said:
        _said.add(what)
        warnings.warn(message, UntrustedCacheWarning, stacklevel=4)


def shared():
    return settings.disk_cache_shared()


@functools.lru_cache(maxsize=8)
def _key_file(path):
    """(key, problem) of a key file, read once: every seal and check asks."""
    try:
        with open(path, "rb") as f:
            secret = f.read().strip()
    except OSError as error:
        return None, f"cannot read the cache key file {path} ({error})"
    return (secret, None) if secret else (None, f"the cache key file {path} is empty")


def key():
    """The signing key, or None (entries then carry a plain SHA-256)."""
    value = settings.disk_cache_key()
    if value:
        return value.encode()
    path = settings.disk_cache_key_file()
    return _key_file(path)[0] if path else None


def seal(data):
    """What an entry carries to be checked: HMAC-SHA256 under the key, else SHA-256."""
    secret = key()
    return hmac.new(secret, data, hashlib.sha256).digest() if secret is not None else hashlib.sha256(data).digest()


def sealed(data, mark):
    return hmac.compare_digest(seal(data), mark)


def _others_write(info):
    return info.st_uid != os.getuid() or info.st_mode & (stat.S_IWGRP | stat.S_IWOTH)


def directory_usable(path):
    """Whether the cache at `path` may be used (absent: it will be made, ours);
    not with a key file named that gives no key (never unsigned instead)."""
    key_path = settings.disk_cache_key_file()
    if key_path and not settings.disk_cache_key():
        problem = _key_file(key_path)[1]
        if problem:
            _warn_once(("key file", key_path), f"flyrt: not using the disk cache at {path}: {problem}")
            return False
    try:
        info = os.stat(path)
    except OSError:
        return True
    if _others_write(info) and not shared():
        _warn_once(("directory", path),
                   f"flyrt: not using the disk cache at {path}: other users can write to it (owner uid {info.st_uid}, "
                   f"mode {stat.filemode(info.st_mode)}), and its entries run as code here; set "
                   "FLYDSL_RUNTIME_CACHE_SHARED=1 to trust everyone who can write it (and sign its entries with "
                   "FLYDSL_RUNTIME_CACHE_KEY)")
        return False
    return True


def entry_usable(path, info):
    """Whether the entry at `path` (its fstat `info`) may be loaded."""
    if _others_write(info) and not shared():
        _warn_once(("entry", os.path.dirname(path)),
                   f"flyrt: not loading {path}: another user owns it or can write it (owner uid {info.st_uid}, "
                   f"mode {stat.filemode(info.st_mode)}); it is rebuilt (FLYDSL_RUNTIME_CACHE_SHARED=1 trusts "
                   "them)")
        return False
    return True
