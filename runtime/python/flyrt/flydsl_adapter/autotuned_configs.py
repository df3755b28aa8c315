"""FlyDSL's autotuned configs, each tied to what the code it was tuned for read.

``flydsl.autotune`` keeps the best config per key, in memory and in
``<FLYDSL_AUTOTUNE_CACHE_DIR or ~/.flydsl/autotune>/<name>.json``. Its key
covers shapes, dtypes, strides, the architecture, FlyDSL's own sources and
the environment, not the kernel's code: after a helper edit the config tuned
for the old code would be used again, in this process and in the next.

The adapter ties each config to the engine's dependency record of the tuned
JitFunction as the tuning left it (every trace of every candidate). A call
checks that record's C++ guard, as a launch does; when something it read
changed, the config is dropped from memory and disk, FlyDSL tunes again
(lazily: this call), and the notice says why. Beside FlyDSL's file the
adapter keeps each config's manifest (what the code read, named so another
process can check it), so a new process drops a config whose code changed
since, and one it has no manifest for: tuned without the adapter, or for
code that reads objects known only by identity. An autotuned plain callable
(not a JitFunction) launches through handles of its own: not guarded.
"""

import json
import warnings

from flydsl.compiler.jit_function import JitFunction

from ..invalidation import registry
from ..invalidation.dependencies import DependencyRecord, Recorder
from ..invalidation.manifests import changes, describe, recorder_from
from . import guarded_jit
from .compat import source_function

_TIES = "_flyrt_ties"  # on the Autotuner: {key: _Tie}
_UNKNOWN = ["nothing records what its code read (tuned without flyrt, or its code reads objects known only "
            "by identity)"]


class _Tie:
    """One config and what the code it was tuned for depends on: `record` (this
    process), `specs` (the manifest, None when not portable)."""

    __slots__ = ("config", "record", "specs")

    def __init__(self, config, record, specs):
        self.config, self.record, self.specs = config, record, specs

    def stale(self, name):
        """Why the config no longer fits its code: empty when it does."""
        if self.record is None:  # loaded from disk, first use here
            if self.specs is None:
                return _UNKNOWN
            reasons = changes(self.specs)
            if not reasons:
                self.record = DependencyRecord(recorder_from(self.specs), name)
            return reasons
        reasons = self.record.changes()
        if not reasons:
            self.record.refresh()  # a change that changed nothing it read
        return reasons


def _name(autotuner):
    return source_function(autotuner.fn).__qualname__


def _ties(autotuner):
    ties = autotuner.__dict__.get(_TIES)
    if ties is None:
        ties = autotuner.__dict__[_TIES] = {}
    return ties


def _manifest_file(autotuner):
    return autotuner._cache_file.with_suffix(".flyrt-deps.json")


def check(autotuner, key):
    """Before FlyDSL looks `key` up: drops its config if the code changed."""
    tie = _ties(autotuner).get(key)
    if tie is None or (tie.record is not None and tie.record.guard.holds()):
        return  # untied (nothing tuned yet), or the common case: nothing it read changed
    if autotuner.cache.get(key) is not tie.config:
        return  # FlyDSL replaced it (a forced re-tune): the save ties the new one
    reasons = tie.stale(_name(autotuner))
    if reasons:
        del autotuner.cache[key], _ties(autotuner)[key]
        autotuner._save_disk_cache()
        notice = registry.note_recompile(f"autotuned {_name(autotuner)}", reasons)
        notice.outcome = "re-tuned"  # FlyDSL finds no config for the key now: this call tunes


def loaded(autotuner):
    """After FlyDSL read its file: each config with the manifest kept beside it."""
    if not isinstance(autotuner.fn, JitFunction):
        return
    path = _manifest_file(autotuner)
    try:
        manifests = json.loads(path.read_text())
        if not isinstance(manifests, dict):
            raise ValueError("not an object of manifests")
    except FileNotFoundError:
        manifests = {}
    except (OSError, ValueError) as error:
        warnings.warn(f"flyrt: unreadable autotune manifest {path} ({error}); the configs it covered are "
                      "tuned again", RuntimeWarning, stacklevel=3)
        manifests = {}
    ties = _ties(autotuner)
    for key, config in autotuner.cache.items():
        specs = manifests.get(json.dumps(list(key)))
        ties[key] = _Tie(config, None, specs if isinstance(specs, list) else None)


def saved(autotuner):
    """After FlyDSL wrote its file: ties the configs tuned since (to the tuned
    function's record as the tuning left it), and writes every manifest."""
    ties = _ties(autotuner)
    handle = guarded_jit.handle_of(autotuner.fn)
    record = handle.record if handle is not None else None
    for key, config in autotuner.cache.items():
        tie = ties.get(key)
        if (tie is None or tie.config is not config) and record is not None:
            ties[key] = _Tie(config, record, describe(Recorder.of(record)))
    for key in [key for key in ties if key not in autotuner.cache]:
        del ties[key]
    manifests = {json.dumps(list(key)): tie.specs for key, tie in ties.items()}
    path = _manifest_file(autotuner)
    temporary = path.with_suffix(".tmp")
    temporary.write_text(json.dumps(manifests))
    temporary.replace(path)
