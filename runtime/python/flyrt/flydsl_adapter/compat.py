"""Which FlyDSL releases the adapter knows, checked before anything is patched.

The adapter reaches into FlyDSL's ``JitFunction`` (its cache attributes and
private methods) and ``CompiledFunction`` (its call and slots), so it only patches a release whose layout was read and
tested here; any other release keeps FlyDSL's own caching, with one clear
message instead of a breakage.
"""

KNOWN_VERSIONS = ("0.4.2",)

# What the adapter touches on flydsl.compiler.jit_function.JitFunction.
PATCHED_METHODS = ("__init__", "_compile_or_execute", "_trace_and_compile", "_ensure_cache_manager",
                   "_make_compiled_function")
CALLED_METHODS = ("_compile_only", "_check_globals_drift")
# What it touches on CompiledFunction: __call__ is wrapped, these slots rebound.
COMPILED_FUNCTION_SLOTS = ("_keepalive", "_call_lock", "_call_state")
INSTANCE_CACHES = (
    "_mem_cache",
    "_call_state_cache",
    "_last_compiled",
    "_extern_linkage_keys",
    "manager_key",
    "_manager_owner_cls",
    "cache_manager",
    "_used_global_vals",
    "_global_refs_cache",
    "_globals_prefix_cache",
)


class UnsupportedFlyDSL(RuntimeError):
    """The installed FlyDSL is not one the adapter knows."""


def check(flydsl, jit_function_module):
    """Raises UnsupportedFlyDSL saying why, unless this FlyDSL is known."""
    version = getattr(flydsl, "__version__", "unknown")
    if version not in KNOWN_VERSIONS:
        raise UnsupportedFlyDSL(
            f"flyrt's FlyDSL adapter knows flydsl {', '.join(KNOWN_VERSIONS)}, not {version}: FlyDSL's "
            "compiled-artifact caches are NOT guarded in this process (FlyDSL's own caching applies; "
            "re-run a factory's cache_clear() or restart after editing helpers)")
    cls = getattr(jit_function_module, "JitFunction", None)
    compiled = getattr(jit_function_module, "CompiledFunction", None)
    missing = [f"JitFunction.{name}" for name in PATCHED_METHODS + CALLED_METHODS if not hasattr(cls, name)]
    missing += [f"CompiledFunction.{name}" for name in COMPILED_FUNCTION_SLOTS
                if name not in getattr(compiled, "__slots__", ())]
    if cls is None or compiled is None or missing:
        raise UnsupportedFlyDSL(f"flydsl {version} lacks {', '.join(missing) or 'JitFunction or CompiledFunction'}; "
                                "the adapter is not installed")
