"""``%flydsl bench`` and ``%flydsl perfwatch``: an expression timed in the
notebook, and timed again when what it ran recompiles.

A bench remembers the launcher artifacts its calls ran (their dependency
records). With perfwatch on, after every cell each remembered bench whose
artifacts a launcher no longer holds (evicted, or replaced because something
they depend on changed) is timed again, and one line says how its time moved
and why.
"""

_benches = {}  # expression -> Bench, the latest of each
_watching = [False]


class Bench:
    def __init__(self, expression, fn):
        self.expression, self.fn, self.ms, self.records = expression, fn, None, []

    def time(self):
        """Times the expression (do_bench's median, ms) and notes what it ran."""
        from flyrt.testing import do_bench
        from flyrt.invalidation.registry import artifact_calls, ran_since

        before = artifact_calls()
        self.ms = do_bench(self.fn, return_mode="median")
        self.records = [artifact.record for _, artifact in ran_since(before) if artifact.record is not None]
        return self.ms

    def replaced(self):
        """Why artifacts it ran are no longer held by their launchers (empty: they all are)."""
        from flyrt.invalidation.registry import artifact_calls

        held = artifact_calls()
        reasons = [reason for record in self.records if id(record.artifact) not in held
                   for reason in record.last_reason or ["its artifact was dropped"]]
        return list(dict.fromkeys(reasons))


def _format(ms):
    return f"{ms * 1e3:.1f} µs" if ms < 1 else f"{ms:.3f} ms"


def bench(expression, fn, work=None):
    """Times `fn` (the cell's `expression`) and prints its median; with
    `work` ("bytes" or "flops", amount), its rate and the fraction of this
    device's measured limit. Remembered for perfwatch."""
    timed = _benches[expression] = Bench(expression, fn)
    ms = timed.time()
    line = f"flyrt: {expression}: {_format(ms)} (median of do_bench)"
    if work is not None:
        from flyrt.testing import device_limits

        kind, amount = work
        limits = device_limits()
        rate = amount / ms * 1e3
        if kind == "bytes":
            line += f", {rate / 1e9:.1f} GB/s = {100 * rate / limits.copy_bytes_per_second:.1f} % of the copy " \
                    f"bandwidth measured on {limits.device}"
        else:
            line += f", {rate / 1e12:.3g} TFLOP/s = {100 * rate / limits.matrix_flops_per_second:.1f} % of " \
                    f"{limits.matrix} measured on {limits.device}"
    print(line)


def set_watching(on):
    _watching[0] = on


def after_cell(code, succeeded):
    """With perfwatch on: times again each bench whose artifacts were replaced, and says how it moved."""
    if not _watching[0]:
        return
    for timed in list(_benches.values()):
        reasons = timed.replaced()
        if not reasons:
            continue
        before = timed.ms
        try:
            after = timed.time()
        except Exception as error:  # the expression no longer runs: say so, keep the kernel
            print(f"flyrt perfwatch: {timed.expression} no longer runs ({type(error).__name__}: {error})")
            del _benches[timed.expression]
            continue
        ratio = after / before
        change = f"{ratio:.2f}x slower" if ratio >= 1 else f"{1 / ratio:.2f}x faster"
        print(f"flyrt perfwatch: {timed.expression}: {_format(before)} -> {_format(after)} ({change}) after "
              f"{'; '.join(reasons)}")
