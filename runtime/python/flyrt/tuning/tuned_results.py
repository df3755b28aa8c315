"""What an autotuner decided, and the code it decided for.

A config is the fastest for the code it was timed with. So a tuned result
is tied, as an artifact is, to what every config's artifact was built from
(the launcher, its kernels and helpers, the bindings and constants their
traces read): one DependencyRecord over all of them, whose C++ guard each
call checks. When something in it changes, the result no longer fits and
the key is tuned again, lazily, by the call that finds it; earlier results
stay, so changing the code back (A -> B -> A) brings A's result back
without timing anything.

On disk, beside the compiled objects and under the same trust and seal
(sealed_json), each launcher has one file of results, named by the
launcher's module, name and code and by its configs; each result names its
key (argument values, dtypes, the device) and the manifest of what its
artifacts read (invalidation/manifests.py). A new process takes a result
only while every dependency in its manifest still has its fingerprint; a
result whose code read something known only by identity is kept in memory
only.
"""

import hashlib
import json
import os
import types
from collections import namedtuple

from ..core.fingerprint import filled, fingerprint
from ..core.user_code import is_user_file, is_user_module
from ..invalidation import manifests
from ..invalidation.dependencies import DependencyRecord, Recorder
from ..runtime import disk_cache, sealed_json, warm_start

_KEPT_PER_KEY = 8  # versions of one key's result (A -> B -> A across processes)
_KEPT = 256  # results per launcher file

# One config's timing: milliseconds (None when it could not run) and why not.
Trial = namedtuple("Trial", "config ms problem")


class TunedResult:
    """The best config of one key, every config's trial, and what they were
    timed with: `record` (None when nothing was timed: one config), `specs`
    (its manifest, None when not portable)."""

    __slots__ = ("config", "trials", "record", "specs")

    def __init__(self, config, trials, record, specs):
        self.config, self.trials, self.record, self.specs = config, trials, record, specs

    def changes(self):
        """Why the result no longer fits its code: empty when it does (a
        change that touched nothing it read is forgotten)."""
        if self.record is None or self.record.guard.holds():
            return []
        reasons = self.record.changes()
        if not reasons:
            self.record.refresh()
        return reasons


def _names(code):
    """Every global or attribute name `code` and the code nested in it use."""
    yield from code.co_names
    for constant in code.co_consts:
        if isinstance(constant, types.CodeType):
            yield from _names(constant)


def read_by_host_code(recorder, function):
    """Records what a host function (not traced: no launcher runs it as
    device code) may read: itself, the module-level names its code uses,
    and so on through the user's functions and modules those name. More
    than it reads, never less, but for objects reached by computed names."""
    seen, stack = set(), [(function, ())]
    while stack:
        value, used = stack.pop()
        if isinstance(value, types.FunctionType) and is_user_file(value.__code__.co_filename):
            if id(value) in seen:
                continue
            seen.add(id(value))
            recorder.function(value)
            namespace, names = value.__globals__, tuple(dict.fromkeys(_names(value.__code__)))
            stack.extend((cell.cell_contents, names) for cell in value.__closure__ or () if filled(cell))
        elif isinstance(value, types.ModuleType) and is_user_module(value) and (id(value), used) not in seen:
            seen.add((id(value), used))
            namespace, names = value.__dict__, used  # `module.name`: the names its user's code uses
        else:
            continue
        for name in names:
            if name in namespace:
                recorder.read(namespace, namespace, name, namespace[name])
                stack.append((namespace[name], names))


def tie(records, code, name, host):
    """(record, manifest) over every artifact record in `records` and the
    tuned function's own `code` (a launcher's function, whose traces record
    what it reads, or a `host` function, whose reads are read_by_host_code's)."""
    merged = Recorder()
    for record in records:
        merged.merge(Recorder.of(record))
    closure = warm_start.closure_functions(code)
    for function in closure.values():
        merged.function(function)
    if host:
        read_by_host_code(merged, code)
    # A compile factory's kernels and launchers (nested functions, which another process cannot
    # name) stand for the factory on disk: its code covers theirs, and what it builds them from is
    # the key's and the host code's. (A config is a choice of speed, never of results.)
    for function, _ in list(merged.functions.values()):
        factory = manifests.defining_function(function)
        if factory is not None:
            merged.function(factory)
            closure[id(function)] = function
    return DependencyRecord(merged, f"autotuned {name}"), manifests.describe(merged, closure)


def portable_key(key):
    """A key's text for the disk, or None when a part has no stable text."""
    if key is None:
        return None

    def plain(value):
        if value is None or isinstance(value, (bool, int, float, str)):
            return value
        if isinstance(value, (tuple, list)):
            return [plain(v) for v in value]
        raise TypeError(type(value).__name__)

    try:
        return json.dumps(plain(key))
    except TypeError:
        return None


class TunedStore:
    """One autotuned launcher's results on disk (nothing when the disk cache
    is off or the launcher's code names objects known only by identity)."""

    def __init__(self, code, name, configs, choice):
        """`choice`: texts of what decides a result besides the code (the
        configs, the key, the pruning)."""
        self.configs = configs
        printed = [fingerprint(code)] + choice
        self.name = None
        if all(manifests.portable(text) for text in printed):
            text = "\n".join(["flyrt tuned results 1", f"{code.__module__}.{name}", *printed])
            self.name = hashlib.sha256(text.encode()).hexdigest()

    def _path(self):
        return os.path.join(disk_cache.directory(), "tuned", self.name[:2], self.name + ".json")

    def _usable(self, key_text):
        return self.name is not None and key_text is not None and disk_cache.enabled()

    def load(self, key_text, code, name):
        """The newest stored result for `key_text` whose dependencies all
        hold here, guarded from now on, or None."""
        if not self._usable(key_text):
            return None
        for entry in reversed(sealed_json.read(self._path(), "tuned-results file")):
            if entry.get("key") != key_text or not self._well_formed(entry) or not manifests.holds(entry["deps"]):
                continue
            recorder = manifests.recorder_from(entry["deps"])
            for function in warm_start.closure_functions(code).values():
                recorder.function(function)
            record = DependencyRecord(recorder, f"autotuned {name}")
            trials = [Trial(self.configs[i], ms, problem) for i, ms, problem in entry["trials"]]
            return TunedResult(self.configs[entry["best"]], trials, record, entry["deps"])
        return None

    def _well_formed(self, entry):
        count = len(self.configs)
        trials = entry.get("trials")
        return (isinstance(entry.get("deps"), list) and isinstance(entry.get("best"), int)
                and 0 <= entry["best"] < count and isinstance(trials, list)
                and all(isinstance(t, list) and len(t) == 3 and isinstance(t[0], int) and 0 <= t[0] < count
                        and (t[1] is None or isinstance(t[1], (int, float))) and isinstance(t[2], str)
                        for t in trials))

    def save(self, key_text, result):
        """Writes `result` for `key_text`; returns None, or why it is kept in
        memory only (nothing raised: a call never depends on it)."""
        if self.name is None or key_text is None:
            return "its code or its key names an object known only by identity"
        if not disk_cache.enabled():
            return None
        if result.specs is None:
            return "its code read something known only by identity (an object, a buffer or a nested function)"
        try:
            best = self.configs.index(result.config)
            trials = [[self.configs.index(t.config), t.ms, t.problem or ""] for t in result.trials]
        except ValueError:
            return "a config the pruning made is not one of the configs"
        entries = [e for e in sealed_json.read(self._path(), "tuned-results file", warn=False)
                   if not (e.get("key") == key_text and e.get("deps") == result.specs)]
        entries.append({"key": key_text, "deps": result.specs, "best": best, "trials": trials})
        same_key = [e for e in entries if e.get("key") == key_text]
        dropped = {id(e) for e in same_key[:-_KEPT_PER_KEY]}
        kept = [e for e in entries if id(e) not in dropped][-_KEPT:]
        return sealed_json.write(self._path(), kept, "tuned-results file")
