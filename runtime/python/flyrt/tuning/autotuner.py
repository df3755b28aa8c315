"""``@flyc.autotune``: a launcher called with the fastest of its configs,
timed per key on the first call that needs it, as Triton's autotuner does,
and tuned again when the code it was timed with changes (tuned_results.py).

A call binds its arguments, makes the key (the `key` arguments' values, a
tensor's shape in place of the tensor, every tensor's dtype and device,
whether bounds checks are on, the launcher's target), and looks the key's result up: in memory (checked by
its guard, nanoseconds when nothing changed), else an earlier result whose
code matches again, else one on disk whose manifest holds here, else it
times each config with ``do_bench`` and keeps the fastest. Then it calls the
launcher with the config's arguments. With ``on_edit="keep"``, an edit that
made a key's result stale keeps its config for the edited code, untimed, so
the edit loop's next result costs one compile, not a sweep; ``retune()``
times those keys again.
"""

import copy
import functools
import hashlib
import os
import time
import inspect
import sys
import traceback
import types
import weakref
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from .. import _core
from ..core import settings
from ..core.cache_info import CacheInfo
from ..core.errors import users_frames
from ..core.fingerprint import fingerprint
from ..drivers import cuda as cuda_driver
from ..drivers import targets
from ..interpret import mode as interpret_mode
from ..invalidation import registry
from ..runtime import compile_log
from ..language.annotations import Tensor
from ..runtime.launcher import JitFunction
from . import timing
from .trials import Progress, table
from .tuned_results import Trial, TunedResult, TunedStore, portable_key, tie

_HISTORY = 8  # earlier results kept per key, for A -> B -> A
_MISSING = object()
_definitions = weakref.WeakValueDictionary()  # (module, name) -> the latest autotuner defined there
_ON_EDIT = ("retune", "keep")
_KEPT = "kept from before an edit: not timed for this code"


class AutotuneError(RuntimeError):
    """No config of an autotuned launcher could run; the message lists why, per config."""


def _problem(error):
    """Why a config could not run, with the user's line it failed at."""
    frames = traceback.extract_tb(users_frames(error.__traceback__) or error.__traceback__)
    where = f" at {frames[-1].filename}:{frames[-1].lineno}" if frames else ""
    first = str(error).strip().splitlines()[0] if str(error).strip() else ""
    return f"{type(error).__name__}{where}: {first}" if first else f"{type(error).__name__}{where}"


def _key_part(value):
    shape = getattr(value, "shape", None)
    return tuple(int(n) for n in shape) if shape is not None and hasattr(value, "dtype") else value


_dtype_texts = {}  # dtype -> its text in keys (str() of a numpy dtype costs a microsecond)


def _tensor_traits(value):
    """(dtype, device) of a tensor argument, as the key tells them apart
    (an FP8 numpy array's format lives in its dtype's metadata)."""
    dtype = value.dtype
    text = _dtype_texts.get(dtype)
    if text is None:
        metadata = getattr(dtype, "metadata", None)
        text = _dtype_texts[dtype] = f"{dtype}{sorted(metadata.items()) if metadata else ''}"
    return text, "cpu" if type(value) is np.ndarray else str(getattr(value, "device", "cpu"))


class Autotuner:
    def __init__(self, launcher, configs, key, prune_configs_by=None, reset_to_zero=None, restore_value=None,
                 warmup=25, rep=100, do_bench=None, precompile=None, on_edit="retune"):
        self._host = not isinstance(launcher, JitFunction)
        if self._host and not isinstance(launcher, types.FunctionType):
            raise TypeError(f"flyc.autotune decorates a @flyc.jit launcher or a Python function, not {launcher!r}")
        self._code = launcher if self._host else launcher.fn  # the Python code a result is for
        self._signature = inspect.signature(launcher) if self._host else launcher.signature
        name = launcher.__qualname__
        parameters = list(self._signature.parameters)
        self.configs = list(configs)
        if not self.configs:
            raise ValueError(f"autotune of launcher '{name}': no configs given")

        def check(what, names):
            unknown = [n for n in names if n not in parameters]
            if unknown:
                raise ValueError(f"autotune of launcher '{name}': {what} {', '.join(map(repr, unknown))} names no "
                                 f"parameter; its parameters are {', '.join(parameters)}")

        check("key", key)
        check("reset_to_zero", reset_to_zero or ())
        check("restore_value", restore_value or ())
        tuned = []
        for config in self.configs:
            check(f"config {config.describe()} sets", config.all_kwargs())
            tuned.extend(name for name in config.all_kwargs() if name not in tuned)
        clash = [n for n in tuned if n in key]
        if clash:
            raise ValueError(f"autotune of launcher '{name}': {', '.join(map(repr, clash))} is both tuned and in the "
                             "key")
        self.fn, self.keys = launcher, list(key)
        self._tuned_names, self._tuned_set = tuned, set(tuned)
        self._names = list(parameters)
        self._key_slots = [(name, parameters.index(name)) for name in key]
        # a launcher's tensors are its fx.Tensor parameters; a host function's, whatever has a shape and dtype
        self._tensor_slots = None if self._host else [
            (n, parameters.index(n)) for n, p in self._signature.parameters.items() if p.annotation is Tensor]
        self._defaults = {n: p.default for n, p in self._signature.parameters.items()
                          if p.default is not inspect.Parameter.empty}
        prune = dict(prune_configs_by or {})
        self._early_prune, self._perf_model = prune.get("early_config_prune"), prune.get("perf_model")
        self._top_k = prune.get("top_k", 1.0)
        self.reset_to_zero, self.restore_value = list(reset_to_zero or ()), list(restore_value or ())
        self._do_bench, self._warmup, self._rep = do_bench, warmup, rep
        if precompile is not None and not self._host:
            raise ValueError(f"autotune of launcher '{name}': precompile is for host functions (a launcher's "
                             "configs are compiled ahead by its own warmup())")
        self._precompile = precompile
        if on_edit not in _ON_EDIT:
            raise ValueError(f"autotune of launcher '{name}': on_edit is 'retune' or 'keep', not {on_edit!r}")
        self._on_edit = on_edit
        functools.update_wrapper(self, launcher, updated=())
        self.best_config = None  # the config of the latest call
        self._results, self._earlier = {}, {}  # key -> TunedResult; key -> [earlier TunedResults]
        self._latest = None  # (key, TunedResult) of the latest tuning or reuse
        self._counts = {"hits": 0, "misses": 0, "tunings": 0, "evictions": 0}
        # What decides a result besides the code: two tuners differing in these share nothing.
        self._choice = [repr(sorted(c.all_kwargs().items())) for c in self.configs] + [
            repr(self.keys), repr(self.reset_to_zero), repr(self.restore_value), repr(self._top_k),
            fingerprint(self._early_prune), fingerprint(self._perf_model)]
        self._store = TunedStore(self._code, name, self.configs, self._choice)
        self.not_persisted = None  # why the latest tuning's result is not on disk (None: it is, or the cache is off)
        self._adopt_earlier_definition()

    def _adopt_earlier_definition(self):
        """A definition run again (its cell re-run, its module reloaded) makes
        a new autotuner: it takes over the results of the one before when
        that has the same configs, key and pruning and, now, the same code; each result's own
        guard then says whether it still fits (and a notice why not)."""
        where = (self._code.__module__, self.__qualname__)
        before = _definitions.get(where)
        _definitions[where] = self
        if before is None or before._choice != self._choice or fingerprint(before._code) != fingerprint(self._code):
            return
        self._results, self._earlier = dict(before._results), {k: list(v) for k, v in before._earlier.items()}

    def __repr__(self):
        return f"<flyrt autotuned launcher {self.__qualname__}: {len(self.configs)} configs, key {self.keys}>"

    # -- the call -------------------------------------------------------------

    def __call__(self, *args, **kwargs):
        __tracebackhide__ = True
        if kwargs and not self._tuned_set.isdisjoint(kwargs):
            given = ", ".join(name for name in self._tuned_names if name in kwargs)
            raise TypeError(f"autotuned launcher '{self.__qualname__}': {given} is set by its configs, not by the "
                            "call")
        key = self._key(args, kwargs)
        result = self._results.get(key)
        reasons = result.changes() if result is not None else None
        if result is not None and not reasons:
            self._counts["hits"] += 1
        else:
            result = self._resolve(key, self._named(args, kwargs), args, kwargs, result, reasons)
        config = self.best_config = result.config
        if config.pre_hook is not None:
            config.pre_hook({**self._named(args, kwargs), **config.all_kwargs()})
        return self.fn(*args, **kwargs, **config.arguments)

    def _named(self, args, kwargs):
        """The call's arguments by name, with the defaults of those not given."""
        return {**self._defaults, **dict(zip(self._names, args)), **kwargs}

    def _key(self, args, kwargs):
        # The call path, where nothing is tuned: the key is read from the arguments as they came.
        count, defaults = len(args), self._defaults
        values = [args[i] if i < count else kwargs.get(name, defaults.get(name, _MISSING))
                  for name, i in self._key_slots]
        if _MISSING in values:
            missing = self._key_slots[values.index(_MISSING)][0]
            raise TypeError(f"autotuned launcher '{self.__qualname__}': missing the argument '{missing}'")
        parts = [_key_part(value) for value in values]
        if self._tensor_slots is not None:
            parts += [_tensor_traits(args[i] if i < count else kwargs[name]) for name, i in self._tensor_slots
                      if i < count or name in kwargs]
        else:
            parts += [_tensor_traits(value) for value in (*args, *kwargs.values()) if hasattr(value, "shape")
                      and hasattr(value, "dtype")]
        # bounds checks compile other code: its timings are another result's
        return tuple(parts) + (_core.bounds_checks(), "host" if self._host else self.fn.target)

    # -- finding or making a key's result ---------------------------------------

    def _resolve(self, key, named, args, kwargs, stale, reasons):
        """The result for `key` when it has none that fits: an earlier one, one
        from disk, or a new tuning; the notice says what replaced a stale one."""
        start = time.perf_counter()
        self._counts["misses"] += 1
        notice = None
        if stale is not None:
            self._counts["evictions"] += 1
            notice = registry.note_recompile(f"autotuned {self.__qualname__}", reasons)
            del self._results[key]
        result = self._earlier_match(key)
        source = "reused"
        if result is None:
            # on disk the device is named (model and architecture), not numbered: identical GPUs share it
            device = self._device(args, kwargs)
            disk_key = None if device is None else portable_key(list(key[:-1]) + [device[1]])
            result, source = self._store.load(disk_key, self._code, self.__qualname__), "disk"
        if result is None and stale is not None and self._on_edit == "keep":
            result, source = self._keep(key, stale, named, args, kwargs), "kept"
        if result is None:
            result, source = self._tune(key, named, args, kwargs, device, disk_key), "tuned"
        self._results[key] = result
        earlier = self._earlier.setdefault(key, [])
        if result not in earlier:
            earlier.append(result)
            del earlier[:-_HISTORY]
        self._latest = (key, result)
        if notice is not None:
            self._explain(notice, source, result, stale)
        why = f"{'; '.join(dict.fromkeys(reasons))}; " if reasons else ""
        compile_log.record(compile_log.CompileRecord(
            f"autotuned {self.__qualname__}", self._describe(key), f"{why}best {result.config.describe()}",
            (time.perf_counter() - start) * 1e3, {"reused": "tuning reused", "disk": "tuning from disk",
                                                  "kept": "tuning kept"}.get(source, "tuned")))
        return result

    def _explain(self, notice, source, result, stale):
        best = result.config.describe()
        if source == "tuned":
            ms = next((t.ms for t in result.trials if t.config is result.config), None)
            timed = f" ({ms:.4f} ms)" if ms is not None else ""
            notice.outcome = "re-tuned"
            notice.detail = f"tuned again for the code as it is now: best {best}{timed}, was {stale.config.describe()}"
        elif source == "kept":
            notice.outcome = "recompiled"
            notice.detail = (f"kept {best}, the config tuned before the edit, without timing the edited code "
                             f"(on_edit='keep'; {self.__qualname__}.retune() times it again)")
        else:
            notice.outcome = "re-validated"
            place = "earlier" if source == "reused" else "on disk"
            notice.detail = f"the config tuned {place} for the code as it is now is back: {best} (nothing timed)"

    def _earlier_match(self, key):
        for result in reversed(self._earlier.get(key, [])):
            if result.record is not None and not result.record.changes():
                result.record.refresh()
                return result
        return None

    def _device(self, args, kwargs):
        """("gpu" or "cpu", the device's name) of a call with these
        arguments, or None when no config completes them."""
        if self._host:
            return _host_device(args, kwargs)
        for config in self.configs:
            try:
                key = self.fn._key_of_call(tuple(args), {**kwargs, **config.all_kwargs()})
                break
            except (TypeError, ValueError):
                continue
        else:
            return None
        code, ordinal = key[1], key[2]
        target = targets.description(code, ordinal, settings.cpu_warp_size())
        if code == targets.CPU:
            return "cpu", _target_text(target)
        name = cuda_driver.device(ordinal)["name"] if code == targets.CUDA else targets.NAMES[code]
        return "gpu", f"{name} {_target_text(target)}"

    def _describe(self, key):
        named = [f"{name}={value!r}" for name, value in zip(self.keys, key)]
        return ", ".join(named) or "(no key)"

    # -- timing ---------------------------------------------------------------

    def _pruned(self, named):
        configs = self.configs
        if self._early_prune is not None:
            configs = list(self._early_prune(configs, named))
        if self._perf_model is not None and len(configs) > 1:
            top_k = self._top_k
            count = int(len(configs) * top_k) if isinstance(top_k, float) and top_k <= 1.0 else int(top_k)
            estimate = {id(c): self._perf_model(**named, **c.all_kwargs()) for c in configs}
            configs = sorted(configs, key=lambda c: estimate[id(c)])[:max(1, count)]
        return configs

    def _tune(self, key, named, args, kwargs, device, disk_key):
        configs = self._pruned(named)
        if len(configs) == 1:  # nothing to choose between, as Triton does
            return TunedResult(configs[0], [Trial(configs[0], None, "the only config")], None, None)
        if not self._host and interpret_mode.wants_interpretation(self.fn):
            return TunedResult(configs[0], [Trial(configs[0], None, "interpreted: not timed")], None, None)
        # A host function is timed where its first call's launches ran (its tensors may hide in its
        # arguments); a launcher where its key says. No device: every config's call fails, and says why.
        timer = None if self._host else (device or ("cpu",))[0]
        # The call itself sees its arguments as given: what the timed calls wrote is undone.
        saved = {name: copy.deepcopy(named[name]) for name in dict.fromkeys(self.restore_value + self.reset_to_zero)}
        progress = Progress(f"autotune {self.__qualname__} [{self._describe(key)}]", len(configs))
        tried, records = [], []
        self._warm(configs, args, kwargs)
        try:
            for done, config in enumerate(configs):
                progress.step(done, config)
                ms, problem, ran = self._time(config, args, kwargs, named, timer)
                self._restore(named, saved)
                tried.append(Trial(config, ms, problem))
                records.extend(ran or ())
        finally:  # an interrupt too: the arguments as they were, nothing written to disk
            self._restore(named, saved)
        self._counts["tunings"] += 1
        timed = [t for t in tried if t.ms is not None]
        if not timed:
            reasons = "\n".join(f"  {t.config.describe()}: {t.problem}" for t in tried)
            progress.finish("no config ran")
            raise AutotuneError(f"autotuned launcher '{self.__qualname__}' [{self._describe(key)}]: no config "
                                f"could run:\n{reasons}")
        best = min(timed, key=lambda t: t.ms)
        record, specs = tie(records, self._code, self.__qualname__, self._host)
        result = TunedResult(best.config, tried, record, specs)
        progress.finish(f"best {best.config.describe()}, {best.ms:.4f} ms")
        self.not_persisted = self._store.save(disk_key, result)
        return result

    def _warm(self, configs, args, kwargs):
        """Compiles every config's kernels before any is timed, on threads at once: their traces take turns
        (Python), their compiles (LLVM, the GPU's assembler) run side by side. A launcher's through its
        warmup(), a host function's through its `precompile` (none: not ahead). A config that cannot
        compile is left to its timing, which fails again and says why."""
        compile_ahead = self._precompile if self._host else self.fn.warmup
        if compile_ahead is None:
            return
        if not self._host:  # configs a launcher specializes alike compile once, not once a thread
            distinct = {}
            for config in configs:
                try:
                    distinct.setdefault(self.fn._key_of_call(tuple(args), {**kwargs, **config.all_kwargs()}), config)
                except Exception:  # noqa: BLE001  reported by the config's timing
                    pass
            configs = list(distinct.values())
            if not configs:
                return

        def warm(config):
            try:
                compile_ahead(*args, **kwargs, **config.all_kwargs())
            except Exception:  # noqa: BLE001  reported by the config's timing
                pass

        with ThreadPoolExecutor(max_workers=min(len(configs), os.cpu_count() or 1)) as pool:
            list(pool.map(warm, configs))

    def _keep(self, key, stale, named, args, kwargs):
        """`stale`'s config for the code as it is now, untimed: one call of it (its arguments restored after)
        records what that code depends on, so a later edit is seen. The edited code failing raises its own
        error, and the stale result stays for the next call to try again."""
        config = stale.config
        saved = {name: copy.deepcopy(named[name]) for name in dict.fromkeys(self.restore_value + self.reset_to_zero)}
        before = registry.artifact_calls()
        try:
            self._call_config(config, args, kwargs, named)
        except BaseException:
            self._results[key] = stale
            raise
        finally:
            self._restore(named, saved)
        ran = [artifact.record for _, artifact in registry.ran_since(before) if artifact.record is not None]
        record, _ = tie(ran, self._code, self.__qualname__, self._host)
        return TunedResult(config, [Trial(config, None, _KEPT)], record, None)

    def _call_config(self, config, args, kwargs, named):
        """One call of `config` as the tuner makes it: `reset_to_zero` zeroed and the pre-hook run first."""
        for name in self.reset_to_zero:
            _zero(named[name])
        if config.pre_hook is not None:
            config.pre_hook({**named, **config.all_kwargs()})
        self.fn(*args, **kwargs, **config.all_kwargs())

    def _time(self, config, args, kwargs, named, device):
        """(median ms, None, records) of `config`, or (None, why not, None):
        records, of every launcher artifact its calls ran."""

        def call():
            self._call_config(config, args, kwargs, named)

        before = registry.artifact_calls()
        try:
            if self._do_bench is None:
                ms = timing.do_bench(call, warmup=self._warmup, rep=self._rep, quantiles=(0.5,), device=device)
            else:  # the caller's, called as Triton's autotuner calls it
                ms = self._do_bench(call, quantiles=(0.5, 0.2, 0.8))
                ms = ms[0] if isinstance(ms, (list, tuple)) else ms
        except KeyboardInterrupt:
            raise
        except Exception as error:
            return None, _problem(error), None
        ran = [artifact.record for _, artifact in registry.ran_since(before) if artifact.record is not None]
        return ms, None, ran

    def _restore(self, named, saved):
        for name, value in saved.items():
            _copy_into(named[name], value)

    # -- introspection ----------------------------------------------------------

    @property
    def configs_timings(self):
        """{config: median ms (None: could not run)} of the latest tuning."""
        return {} if self._latest is None else {t.config: t.ms for t in self._latest[1].trials}

    def trials(self):
        """The table of what the latest tuning (or reuse) of a key tried."""
        if self._latest is None:
            raise LookupError(f"autotuned launcher '{self.__qualname__}' has not been tuned yet")
        key, result = self._latest
        return table(f"autotune {self.__qualname__} [{self._describe(key)}]", result.trials, result.config)

    def cache_info(self):
        """Calls served by a kept result (hits), calls that needed one
        (misses), tunings timed (compiles), results set aside as stale
        (evictions), results held (size)."""
        c = self._counts
        return CacheInfo(c["hits"], c["misses"], c["tunings"], c["evictions"], len(self._results))

    def retune(self):
        """Keys whose config was kept across an edit (``on_edit="keep"``) are
        timed again by their next call; returns how many."""
        kept = [key for key, result in self._results.items() if result.trials[0].problem == _KEPT]
        for key in kept:
            del self._results[key]
            self._earlier[key] = [r for r in self._earlier.get(key, []) if r.trials[0].problem != _KEPT]
        return len(kept)

    def cache_clear(self):
        """Forgets every result in memory (not on disk)."""
        self._results.clear()
        self._earlier.clear()
        self._latest = None


def _host_device(args, kwargs):
    """The device a host function's result is for, as its disk key names it:
    ("gpu", the GPU's name) when a CUDA/ROCm torch tensor is an argument,
    else ("cpu", this CPU's target), with the GPU's name beside it where
    launchers run on one by default (tensors its arguments hold, unseen
    here, may well be there)."""
    for value in (*args, *kwargs.values()):
        device = getattr(value, "device", None)
        if getattr(device, "type", None) == "cuda":
            import torch

            return "gpu", torch.cuda.get_device_name(device)
    cpu = _target_text(targets.cpu(settings.cpu_warp_size()))
    if timing.default_device() == "gpu":
        torch = sys.modules.get("torch")
        gpu = torch.cuda.get_device_name() if torch is not None and torch.cuda.is_available() else \
            targets.default_name()
        return "cpu", f"{cpu}, beside {gpu}"
    return "cpu", cpu


def _target_text(target):
    """A target as a disk key names it: its processor and a digest of its
    full id (a long feature list)."""
    return f"{target.cpu} {hashlib.sha256(target.id.encode()).hexdigest()[:12]}"


def _zero(tensor):
    if hasattr(tensor, "zero_"):
        tensor.zero_()
    else:
        tensor[...] = 0


def _copy_into(tensor, value):
    if hasattr(tensor, "copy_"):
        tensor.copy_(value)
    else:
        tensor[...] = value


def autotune(configs, key, prune_configs_by=None, reset_to_zero=None, restore_value=None, warmup=25, rep=100,
             do_bench=None, precompile=None, on_edit="retune"):
    """Decorator over ``@flyc.jit``: calls the launcher with the fastest of
    `configs` (``flyc.Config``) for each `key` (parameter names), as Triton's
    ``triton.autotune`` (same arguments: `prune_configs_by` a dict of
    ``early_config_prune``, ``perf_model`` and ``top_k``; `reset_to_zero`
    and `restore_value`, parameter names; `warmup`/`rep` ms per config for
    `do_bench`). The result for a key is tied to the code it was timed with:
    tuned again when that changes, kept on disk for a new process while its
    dependencies hold. Before timing, every config's kernels are compiled on
    threads at once: a launcher's by its ``warmup()``, a host function's by
    `precompile`, called as the function with a config's arguments would be
    (compiling, not running: its launchers' ``warmup()``). `on_edit`: what
    an edit to the code a key was tuned for does to that key's next call:
    "retune" (time every config again) or "keep" (the config chosen before,
    compiled for the edited code, untimed until ``retune()``)."""
    def make(launcher):
        return Autotuner(launcher, configs, key, prune_configs_by, reset_to_zero, restore_value, warmup, rep,
                         do_bench, precompile, on_edit)

    return make
