"""Lists of JSON records in the disk cache, sealed as its objects are.

Warm-start manifests and tuned configs are JSON beside the compiled
objects, and they decide what runs: one names the object a launch loads,
the other the config it compiles. So they are read under the same trust
rules as objects (cache_trust: whose directory and file) and carry the same
seal (SHA-256, or an HMAC under the cache's key) over their records.
Writes are atomic; a failure to write is returned, never raised.
"""

import json
import os
import tempfile
import warnings

from . import cache_trust, disk_cache


def _canonical(records):
    return json.dumps(records, sort_keys=True).encode()


def read(path, what, warn=True):
    """The records stored at `path` ([] when absent, untrusted or unreadable:
    said once, as `what`, when `warn`)."""
    data = disk_cache.read_trusted(path, warn)
    if data is None:
        return []
    try:
        stored = json.loads(data)
        records = stored["entries"]
        if not isinstance(records, list) or not all(isinstance(r, dict) for r in records):
            raise ValueError("not a list of entries")
        if not cache_trust.sealed(_canonical(records), bytes.fromhex(stored["seal"])):
            raise ValueError("its seal does not match its entries: tampered, unsigned or signed with another key")
        return records
    except (ValueError, KeyError, TypeError) as error:
        if warn:
            warnings.warn(f"flyrt: unreadable {what} {path} ({error}); not used, and rewritten by the next "
                          "write", disk_cache.CorruptEntryWarning, stacklevel=3)
        return []


def write(path, records, what):
    """Replaces the records at `path`; returns None, or why they (the `what`)
    could not be written."""
    if not cache_trust.directory_usable(disk_cache.directory()):
        return "the disk cache's directory is not trusted"
    temporary = None
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        fd, temporary = tempfile.mkstemp(dir=os.path.dirname(path), prefix=".tmp-")
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump({"entries": records, "seal": cache_trust.seal(_canonical(records)).hex()}, f)
        os.replace(temporary, path)
        temporary = None
    except OSError as error:
        return f"the {what} could not be written ({error})"
    finally:
        if temporary is not None:
            try:
                os.unlink(temporary)
            except OSError:
                pass
    return None
