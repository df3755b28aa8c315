"""One process compiles a key at a time: a lock per key in the disk cache.

Processes sharing a cache directory (notebook workers, the hosts of a fleet
mounting one directory) that miss the same key at once would each trace and
compile it. Instead the first takes the key's lock, compiles and stores; the
others wait on the lock and then find its result on disk. Correctness never
depends on the lock (entries are written by atomic renames and checked on
load), only the work saved does.

The lock is `flock` on `locks/<key>.lock`: the kernel drops it when its
holder dies, so a killed process never blocks the others. The holder removes
the file before it lets go; a waiter that then holds a file no longer in the
directory locks the new one instead. A file left by a process killed while
holding is unlocked and removed by sweep() (and by the next holder of that
key). Waiting is interruptible: Ctrl-C raises KeyboardInterrupt there, as
anywhere.
"""

import contextlib
import fcntl
import os
import time

from . import cache_trust, disk_cache


def _path(key):
    return os.path.join(disk_cache.directory(), "locks", key + ".lock")


class Held:
    """What taking a lock cost: `waited` seconds behind another process."""

    def __init__(self, waited=0.0):
        self.waited = waited


@contextlib.contextmanager
def held(key):
    """Holds `key`'s lock for the block; yields Held. With no key (nothing
    shared to compile once), the cache off, or a directory that cannot take
    a lock, the block runs unlocked."""
    fd = None
    waited = 0.0
    if key and disk_cache.enabled() and cache_trust.directory_usable(disk_cache.directory()):
        fd, waited = _acquire(_path(key))
    try:
        yield Held(waited)
    finally:
        if fd is not None:
            _release(_path(key), fd)


def _acquire(path):
    """(fd holding the lock at `path`, seconds waited), or (None, 0.0) when no
    lock file can be made (a read-only cache: the compile goes on unlocked)."""
    start = time.perf_counter()
    while True:
        try:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
        except OSError:
            return None, 0.0
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                fcntl.flock(fd, fcntl.LOCK_EX)  # another process compiles this key
            if _still_named(fd, path):
                return fd, time.perf_counter() - start
        except BaseException:
            os.close(fd)
            raise
        os.close(fd)  # its holder removed this file as it let go: lock the one now there


def _still_named(fd, path):
    try:
        return os.fstat(fd).st_ino == os.stat(path).st_ino
    except FileNotFoundError:
        return False


def _release(path, fd):
    with contextlib.suppress(OSError):
        os.unlink(path)
    os.close(fd)


def sweep():
    """Removes lock files no process holds (left by processes killed while
    compiling); returns how many."""
    folder = os.path.join(disk_cache.directory(), "locks")
    removed = 0
    with contextlib.suppress(FileNotFoundError):
        for name in os.listdir(folder):
            path = os.path.join(folder, name)
            try:
                fd = os.open(path, os.O_RDWR)
            except OSError:
                continue
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)  # held: a compile in progress
                continue
            if _still_named(fd, path):
                _release(path, fd)
                removed += 1
            else:
                os.close(fd)
    return removed
