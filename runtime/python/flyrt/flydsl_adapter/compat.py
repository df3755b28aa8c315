"""What the installed FlyDSL offers the adapter, found by probing its hooks.

The adapter reaches into FlyDSL's ``JitFunction`` (its caches and some
private methods) and ``CompiledFunction`` (its call and slots). Two kinds of
release are known, told apart by what they do, not by their version:

- PER_SIGNATURE (0.4.2): artifacts keyed by the arguments' signature and a
  snapshot of the globals the first compile used; a call that hits them runs
  no trace, so a changed helper would run stale. The adapter records what
  each trace reads (``_trace_and_compile``), validates before every call and
  evicts; it folds those dependencies into the disk keys and keeps FlyDSL's
  "a global changed: restart" contract (``_check_globals_drift``) if asked.
- TRACE_PER_CALL (0.5.0): every ``__call__`` traces the launcher again and
  keys its artifacts by the traced IR: fresh, but a trace per call. The
  adapter skips that trace while nothing the last one read has changed
  (``fast_path``), and guards what FlyDSL itself does not re-check: the
  ``CompiledFunction`` of ``flyc.compile``.

Both have ``flydsl.autotune``, whose configs the adapter ties to what the code
they were tuned for read (``autotuned_configs``).

A release whose version was not tested here but which has the hooks of one
kind is guarded as that kind, with a warning; a hook missing leaves out what
needs it (the message names it), or, for the core hooks, the whole adapter.
"""

from dataclasses import dataclass, field

PER_SIGNATURE, TRACE_PER_CALL = "per-signature caches", "a trace per call"
TESTED = {"0.4.2": PER_SIGNATURE, "0.5.0": TRACE_PER_CALL}

# Hooks on flydsl.compiler.jit_function.JitFunction each kind needs, and
# what is guarded without the optional ones.
_CORE = {
    PER_SIGNATURE: ("__init__", "_compile_or_execute", "_trace_and_compile", "_make_compiled_function",
                    "_compile_only", "_effective_compile_hints", "_resolve_and_make_cache_key", "_build_full_cache_key"),
    TRACE_PER_CALL: ("__init__", "_compile_or_execute", "_trace", "_make_compiled_function", "_compile_only",
                     "_split_self", "_resolve_arguments", "_effective_compile_hints"),
}
_OPTIONAL = {
    PER_SIGNATURE: {"_ensure_cache_manager": "disk-cache keys that name what a trace read",
                    "_check_globals_drift": "FlyDSL's own 'a global changed: restart' contract"},
    TRACE_PER_CALL: {},
}
# What each kind keeps per JitFunction for one version of the code (jit_caches).
INSTANCE_CACHES = {
    PER_SIGNATURE: ("_mem_cache", "_call_state_cache", "_last_compiled", "_extern_linkage_keys", "manager_key",
                    "_manager_owner_cls", "cache_manager", "_used_global_vals", "_global_refs_cache",
                    "_globals_prefix_cache"),
    # Artifacts keyed by traced IR stay valid across versions of the code:
    # only the adapter's own calls-without-a-trace belong to one version.
    TRACE_PER_CALL: ("_flyrt_calls",),
}
COMPILED_FUNCTION_SLOTS = ("_keepalive", "_call_lock", "_call_state")
_AUTOTUNE = "autotuned configs dropped when the code they were tuned for changes"
AUTOTUNER_HOOKS = ("_make_key", "_load_disk_cache", "_save_disk_cache")
# Module functions of flydsl.compiler.jit_function the fast path calls.
_TRACE_PER_CALL_FUNCTIONS = ("_build_call_state",)


def _autotuner_lacks():
    try:
        from flydsl.autotune import Autotuner
    except ImportError:
        return ["flydsl.autotune"]
    return [f"Autotuner.{hook}" for hook in AUTOTUNER_HOOKS if not hasattr(Autotuner, hook)]


class UnsupportedFlyDSL(RuntimeError):
    """The installed FlyDSL lacks a hook the adapter cannot guard without."""


@dataclass
class Release:
    version: str
    kind: str
    tested: bool
    missing: list = field(default_factory=list)  # optional hooks absent: what is not guarded

    def has(self, hook):
        return hook not in self.missing

    def notice(self):
        """What a user should know about this release's guard, or None."""
        parts = []
        if not self.tested:
            parts.append(f"flyrt's FlyDSL adapter was tested with flydsl {', '.join(TESTED)}, not {self.version}; "
                         f"guarding it as a release with {self.kind}")
        if self.missing:
            lacking = "; ".join(f"{_OPTIONAL[self.kind].get(hook, _AUTOTUNE)} (it lacks "
                                f"{hook if '.' in hook else 'JitFunction.' + hook})" for hook in self.missing)
            parts.append(f"flydsl {self.version} is guarded except for {lacking}")
        return ". ".join(parts) or None


def probe(flydsl, jit_function_module):
    """The Release the installed FlyDSL is; raises UnsupportedFlyDSL naming
    the hook it lacks when no kind's core hooks are all there."""
    version = getattr(flydsl, "__version__", "unknown")
    cls = getattr(jit_function_module, "JitFunction", None)
    compiled = getattr(jit_function_module, "CompiledFunction", None)
    if cls is None or compiled is None:
        raise UnsupportedFlyDSL(f"flydsl {version} has no JitFunction or CompiledFunction: the adapter is not "
                                "installed, and FlyDSL's own caching applies")
    slots = [f"CompiledFunction.{name}" for name in COMPILED_FUNCTION_SLOTS
             if name not in getattr(compiled, "__slots__", ())]
    kinds = [TESTED[version]] if version in TESTED else [TRACE_PER_CALL, PER_SIGNATURE]
    lacking = {}
    for kind in kinds:
        missing = [f"JitFunction.{hook}" for hook in _CORE[kind] if not hasattr(cls, hook)]
        if kind == TRACE_PER_CALL:
            missing += [name for name in _TRACE_PER_CALL_FUNCTIONS if not hasattr(jit_function_module, name)]
        if not missing and not slots:
            optional = [hook for hook in _OPTIONAL[kind] if not hasattr(cls, hook)]
            optional += _autotuner_lacks()
            return Release(version, kind, version in TESTED, optional)
        lacking[kind] = missing + slots
    named = "; ".join(f"as a release with {kind} it lacks {', '.join(missing)}" for kind, missing in lacking.items())
    raise UnsupportedFlyDSL(f"flydsl {version} is not guarded: {named}. FlyDSL's own caching applies (re-run a "
                            "factory's cache_clear() or restart after editing helpers)")


def source_function(jit_or_kernel):
    """The function a FlyDSL JitFunction or KernelFunction was written as: 0.4.2
    keeps it aside; 0.5.0 rewrites it in place (the same source gives the same code)."""
    kept = getattr(jit_or_kernel, "_original_func", None)
    return kept if kept is not None else getattr(jit_or_kernel, "func", None) or jit_or_kernel._func
