"""``%flydsl``: what the runtime compiled, why, and what depends on what.

    %flydsl status            launchers, artifacts, hits, compiles, evictions; GPU kernels loaded
                              (registers, shared, local, device memory)
    %flydsl why <launcher>    its dependencies and why it last recompiled
    %flydsl graph [launcher]  launchers -> kernels, helpers -> modules (SVG); evicted ones red, with why
    %flydsl clear             drop every compiled artifact and factory entry
    %flydsl autoreload on|off reload edited module files before each cell (default on)
    %flydsl cache [clear]     the disk cache: directory, on or off, entries, size and cap, this
                              process's hits and misses; `clear` removes every entry
    %flydsl bounds on|off     check every tensor access of kernels compiled from now on (the kernel's
                              default: an out-of-bounds index is an IndexError at its line), or not
                              (fast mode, for benchmarks: an out-of-bounds store may kill the kernel)
    %flydsl traceback user|full
                              errors raised while tracing show the user's frames (default),
                              or flyrt's too (FLYDSL_FULL_TRACEBACK=1 does the same)
    %flydsl drift raise|recompile
                              real FlyDSL: when a global its first compile captured changes,
                              raise as FlyDSL does, or recompile (the kernel's default)
    %flydsl bench [bytes=N|flops=N] <expression>
                              time the expression (flyrt.testing.do_bench's median); with the work
                              it does (N: Python, no spaces), its rate and fraction of this device's
                              measured limit
    %flydsl perfwatch on|off  after a cell that made something a bench ran recompile, time that
                              bench again and say how its time moved and why
"""

import inspect

from IPython.core.magic import Magics, line_magic, magics_class
from IPython.core.error import UsageError


COMMANDS = ("status", "why", "graph", "clear", "autoreload", "cache", "bounds", "traceback", "drift", "perfwatch")


def _runtime():
    import flyrt.compiler as flyc
    from flyrt.invalidation import factories, registry

    return flyc, factories, registry


def _gpu_kernels(launchers):
    """Shows the GPU kernels the launchers' cached artifacts hold loaded, as a table."""
    from IPython.display import display
    from flyrt.core.tables import Table

    kernels = [(launcher.__qualname__, k) for launcher in launchers
               for k in getattr(launcher, "device_kernels", list)()]
    if not kernels:
        return
    headers = ("launcher", "kernel", "device", "registers", "shared B", "local B", "code B", "device memory")
    rows = [(name, k.kernel, f"cuda:{k.device}", k.registers, k.static_shared_bytes, k.local_bytes, k.image_bytes,
             f"{k.device_bytes / 2**20:.1f} MiB") for name, k in kernels]
    total = sum(k.device_bytes for _, k in kernels) / 2**20
    text = "\n".join([f"GPU kernels loaded: {len(kernels)}, {total:.1f} MiB of device memory taken by loading"] +
                     [f"  {r[0]} / {r[1]} on {r[2]}: {r[3]} registers, {r[4]} B shared, {r[5]} B local, "
                      f"{r[6]} B code, {r[7]}" for r in rows])
    display(Table(headers, rows, text))


@magics_class
class FlydslMagics(Magics):
    @line_magic
    def flydsl(self, line):
        words = line.split()
        command, args = (words[0], words[1:]) if words else ("status", [])
        if command == "bench":  # the rest of the line is Python, spaces and all
            return self._bench(line.strip()[len("bench"):].strip())
        handler = getattr(self, f"_{command}", None) if command in COMMANDS else None
        if handler is None:
            raise UsageError(f"unknown %flydsl command {command!r}\n{__doc__}")
        try:
            inspect.signature(handler).bind(*args)
        except TypeError:
            raise UsageError(f"%flydsl {command}: wrong arguments {' '.join(args)!r}\n{__doc__}") from None
        return handler(*args)

    def _status(self):
        from IPython.display import display
        import flyrt
        from flyrt.core.tables import Table

        flyc, factories, registry = _runtime()
        launchers = registry.launchers()
        if not launchers:
            print("flyrt: no launchers yet")
            return
        headers = ("launcher", "artifacts", "hits", "misses", "compiles", "evictions")
        rows = []
        for launcher in launchers:
            info = launcher.cache_info()
            rows.append((f"{launcher.__module__}.{launcher.__qualname__}", info.size, info.hits, info.misses,
                         info.compiles, info.evictions))
        text = "\n".join([f"{headers[0]:<48} {headers[1]:>9} {headers[2]:>8} {headers[3]:>7} {headers[4]:>9} "
                          f"{headers[5]:>10}"] +
                         [f"{r[0]:<48} {r[1]:>9} {r[2]:>8} {r[3]:>7} {r[4]:>9} {r[5]:>10}" for r in rows])
        display(Table(headers, rows, text))
        _gpu_kernels(launchers)
        links = factories.registered()
        if links:
            print("compile factories: " + ", ".join(link.name for link in links))
        print(f"autoreload of edited modules: {'on' if registry.autoreload_enabled() else 'off'}")
        print(f"bounds checks: {'on' if flyrt.bounds_checks() else 'off (fast mode)'}")

    def _find(self, name):
        _, _, registry = _runtime()
        matches = [launcher for launcher in registry.launchers()
                   if name in (launcher.__qualname__, launcher.__name__,
                               f"{launcher.__module__}.{launcher.__qualname__}")]
        if not matches:
            raise UsageError(f"no launcher named {name!r}; %flydsl status lists them")
        return matches[-1]

    def _why(self, name=None):
        if name is None:
            raise UsageError("%flydsl why <launcher>")
        flyc, _, _ = _runtime()
        launcher = self._find(name)
        records = [artifact.record for _, artifact in launcher._entries() if artifact.record is not None]
        print(f"{launcher.__qualname__}: {launcher.cache_info()}")
        for record in records:
            functions, bindings = record.names()
            print("  runs:  " + ", ".join(functions))
            print("  reads: " + ", ".join(bindings))
        history = [r for r in flyc.compile_log() if r.launcher == launcher.__qualname__]
        if history:
            print(f"  last compile: {history[-1]}")
        if launcher.last_reasons:
            print("  last evicted because: " + "; ".join(launcher.last_reasons))

    def _graph(self, name=None):
        from .dependency_graph import build

        _, factories, registry = _runtime()
        if name is not None:
            return build([self._find(name)], [])
        return build(registry.launchers(), factories.registered())

    def _clear(self):
        _, factories, registry = _runtime()
        for link in factories.registered():
            link.wrapper.cache_clear()
        for launcher in registry.launchers():
            launcher.cache_clear()
        print("flyrt: cleared every compiled artifact and compile factory")

    def _autoreload(self, state=None):
        _, _, registry = _runtime()
        if state not in ("on", "off"):
            raise UsageError("%flydsl autoreload on|off")
        registry.set_autoreload(state == "on")
        print(f"flyrt: autoreload of edited modules is {state}")

    def _cache(self, action=None):
        from IPython.display import display
        import flyrt
        from flyrt.core.tables import Table

        if action not in (None, "clear"):
            raise UsageError("%flydsl cache [clear]")
        if action == "clear":
            flyrt.clear_disk_cache()
            print(f"flyrt: cleared the disk cache at {flyrt.disk_cache_info().directory}")
        info = flyrt.disk_cache_info()
        lookups = info.hits + info.misses
        rate = f"{100 * info.hits / lookups:.0f} %" if lookups else "-"
        headers = ("directory", "state", "entries", "MiB", "cap MiB", "hits", "misses", "hit rate")
        row = (info.directory, "on" if info.enabled else "off (FLYDSL_RUNTIME_ENABLE_CACHE)", info.entries,
               f"{info.bytes / 2**20:.1f}", f"{info.max_bytes / 2**20:.0f}", info.hits, info.misses, rate)
        text = (f"disk cache at {row[0]}: {row[1]}; {row[2]} entries, {row[3]} of {row[4]} MiB; "
                f"this process: {row[5]} hits, {row[6]} misses ({row[7]})")
        display(Table(headers, [row], text))

    def _bounds(self, state=None):
        import flyrt

        if state not in ("on", "off"):
            raise UsageError("%flydsl bounds on|off")
        flyrt.set_bounds_checks(state == "on")
        print(f"flyrt: bounds checks are {state}" + ("" if state == "on" else " (fast mode)") +
              " for kernels from the next call on")

    def _traceback(self, mode=None):
        from flyrt.core import errors

        if mode not in ("user", "full"):
            raise UsageError("%flydsl traceback user|full")
        errors.set_full_tracebacks(mode == "full")
        print(f"flyrt: errors raised while tracing show {'every frame' if mode == 'full' else 'your frames'}")

    def _drift(self, mode=None):
        import importlib.util

        from flyrt import flydsl_adapter

        if mode not in ("raise", "recompile"):
            raise UsageError("%flydsl drift raise|recompile")
        if importlib.util.find_spec("flydsl") is None:
            raise UsageError("flydsl is not installed in this environment")
        if not flydsl_adapter.install(global_drift=mode):
            raise UsageError("the installed flydsl is not one the adapter knows; its caches are not guarded")
        print(f"flyrt: a changed global captured by a FlyDSL function now makes it {mode}")


    def _bench(self, text):
        from . import perf_watch

        work = None
        first, _, rest = text.partition(" ")
        if first.startswith(("bytes=", "flops=")):
            kind, _, amount = first.partition("=")
            try:
                work = (kind, float(eval(amount, self.shell.user_ns)))
            except Exception as error:
                raise UsageError(f"%flydsl bench: {kind}={amount} is not a number ({error})") from None
            text = rest.strip()
        if not text:
            raise UsageError("%flydsl bench [bytes=N|flops=N] <expression>")
        try:
            fn = eval(compile(f"lambda: ({text})", "<%flydsl bench>", "eval"), self.shell.user_ns)
        except SyntaxError as error:
            raise UsageError(f"%flydsl bench: not an expression: {text} ({error.msg})") from None
        perf_watch.bench(text, fn, work)

    def _perfwatch(self, state=None):
        from . import perf_watch

        if state not in ("on", "off"):
            raise UsageError("%flydsl perfwatch on|off")
        perf_watch.set_watching(state == "on")
        print(f"flyrt: perfwatch is {state}" + (": benches (%flydsl bench) are timed again when what they ran "
                                                "recompiles" if state == "on" else ""))


FlydslMagics.flydsl.__doc__ = __doc__  # what %flydsl? shows
