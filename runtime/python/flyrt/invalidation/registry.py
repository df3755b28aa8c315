"""The process-wide view: every launcher, what went stale, and edited modules.

Launchers check their own dependencies on every call (no cell boundary is
needed). A kernel, a notebook or a test can also `sweep()` at a boundary, to
evict stale artifacts and factory entries eagerly and say what changed; and
`reload_edited_modules()` brings in module files edited on disk, updating
functions and classes in place (IPython's superreload), so the objects the
user holds run the new code.
"""

import hashlib
import os
import sys
import weakref

from ..core import settings
from ..core.user_code import is_user_module, probe
from . import factories

_launchers = weakref.WeakSet()
_recompiles = None  # [(what, reasons)] of artifacts a call found stale, while someone collects them


def collect_recompiles():
    """From now on, remember what calls found stale (and recompiled), for `drain_recompiles`."""
    global _recompiles
    if _recompiles is None:
        _recompiles = []


class StaleCall:
    """A call found `what` stale; `outcome` is what replaced its artifact, set
    once known: "compiled", "disk cache", "reused" (an earlier artifact
    whose dependencies match again, A -> B -> A) or "re-tuned" (an autotuned
    config, dropped for the code it was tuned for); `where`, a GPU's name when
    the artifact is for one; `detail`, when set, what the notice says after
    the reasons in place of the outcome's usual words."""

    __slots__ = ("what", "reasons", "outcome", "where", "detail")

    def __init__(self, what, reasons):
        self.what, self.reasons, self.outcome, self.where, self.detail = what, reasons, "compiled", None, None


def note_recompile(what, reasons):
    """A call found `what` stale (a change made since the last sweep); the
    caller sets the returned notice's `outcome`."""
    notice = StaleCall(what, reasons)
    if _recompiles is not None:
        _recompiles.append(notice)
    return notice


def drain_recompiles():
    """What calls found stale since the last drain."""
    if not _recompiles:
        return []
    drained = list(_recompiles)
    _recompiles.clear()
    return drained


def register(launcher):
    _launchers.add(launcher)


def launchers():
    return sorted(_launchers, key=lambda launcher: launcher.__qualname__)


def artifact_calls():
    """{id: (artifact, its calls, its key)} of every live launcher's
    artifacts (each held, so no id is reused while compared)."""
    found = {}
    for launcher in launchers():
        for key, artifact in launcher._entries():
            hits = getattr(artifact, "hits", None)  # the FlyDSL adapter's entries count no calls
            if hits is not None:
                found[id(artifact)] = (artifact, hits, key)
    return found


def ran_since(before):
    """[(key, artifact)] of the artifacts called (or made) since `before`, an
    artifact_calls() snapshot: what a stretch of code ran."""
    return [(key, artifact) for found, (artifact, hits, key) in artifact_calls().items()
            if found not in before or hits > before[found][1]]


def clear_all(setting=None):
    """Drops every launcher's compiled artifacts: a setting that changes
    what compiles changed (the CPU's warp size, compile-only mode)."""
    for launcher in list(_launchers):
        launcher.cache_clear()


settings.on_change(clear_all)


def sweep():
    """Evicts what changed since the last look. Returns [(what, reasons)]."""
    notices = []
    for link in factories.registered():
        change = link.change()
        if change:
            link.wrapper.cache_clear()
            notices.append((f"compile factory {link.name}", [change]))
            factories.relink(link.wrapper)
    for cache in _compile_caches():
        reasons = cache.sweep()
        if reasons:
            notices.append((f"compile factory {cache.__qualname__}", reasons))
    for launcher in launchers():
        reasons = launcher.sweep()
        if reasons:
            notices.append((f"launcher {launcher.__qualname__}", reasons))
    return notices


def _compile_caches():
    seen = {}
    for launcher in launchers():
        link = launcher._factory
        if link is not None and isinstance(link.wrapper, factories.CompileCache):
            seen[id(link.wrapper)] = link.wrapper
    return list(seen.values())


def format_notice(notices, recompiled=()):
    """One short paragraph: what was evicted (and what a call already
    replaced, and how), and why."""
    lines = []
    for what, reasons in notices:
        unique = list(dict.fromkeys(reasons))
        lines.append(f"flyrt: evicted {what}: {'; '.join(unique)} (recompiles on next call)")
    for notice in recompiled:
        why = "; ".join(dict.fromkeys(notice.reasons))
        what = f"{notice.what} for {notice.where}" if notice.where else notice.what
        if notice.detail:
            lines.append(f"flyrt: {notice.outcome} {what}: {why}; {notice.detail}")
        elif notice.outcome == "reused":
            lines.append(f"flyrt: re-validated {what}: {why}; reused the artifact built earlier for what "
                         "it reads now (nothing recompiled)")
        elif notice.outcome == "re-tuned":
            lines.append(f"flyrt: re-tuned {what}: {why}; the config tuned for the code before was dropped "
                         "(memory and disk)")
        elif notice.outcome == "disk cache":
            lines.append(f"flyrt: reloaded {what} from the disk cache: {why}")
        else:
            lines.append(f"flyrt: recompiled {what}: {why}")
    return "\n".join(lines)


class _ModuleFiles:
    """Stat (then content hash) of the user's module files, to spot edits."""

    def __init__(self):
        self.seen = {}  # module name -> (mtime_ns, size, sha256)
        self.classified = {}  # module name -> (module, filename, is a user module)
        self.enabled = True
        # Every object reloading replaced, per (module, name): a later reload
        # updates them all in place again (as IPython's autoreload keeps them).
        self.old_objects = {}

    def _user_modules(self):
        for name, module in list(sys.modules.items()):
            known = self.classified.get(name)
            if known is None or known[0] is not module:
                filename = probe(module, "__file__")
                user = bool(filename) and filename.endswith(".py") and name != "__main__" and is_user_module(module)
                known = self.classified[name] = (module, filename, user)
            if known[2]:
                yield name, module, known[1]

    def changed(self):
        edited = []
        for name, module, filename in self._user_modules():
            try:
                stat = os.stat(filename)
            except OSError:
                continue
            known = self.seen.get(name)
            if known is not None and known[:2] == (stat.st_mtime_ns, stat.st_size):
                continue
            with open(filename, "rb") as f:
                digest = hashlib.sha256(f.read()).hexdigest()
            self.seen[name] = (stat.st_mtime_ns, stat.st_size, digest)
            if known is not None and known[2] != digest:
                edited.append(module)
        return edited


_module_files = _ModuleFiles()


def set_autoreload(enabled):
    _module_files.enabled = enabled


def autoreload_enabled():
    return _module_files.enabled


def reload_edited_modules():
    """Reloads user modules whose file content changed, in place. Returns their names."""
    if not _module_files.enabled:
        return []
    from IPython.extensions.autoreload import superreload

    reloaded = []
    for module in _module_files.changed():
        superreload(module, old_objects=_module_files.old_objects)
        reloaded.append(module.__name__)
    return reloaded
