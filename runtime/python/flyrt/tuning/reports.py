"""``perf_report`` and ``Benchmark`` as Triton's ``triton.testing`` has them,
and ``roofline``: figures drawn with matplotlib, shown inline in a notebook.

A Benchmark whose `bytes` or `flops` say how much work each point does turns
the milliseconds its function returns into bytes/s or FLOP/s, and draws this
device's measured limit (device_limits.py) as a line: each point's fraction
of it is in the table too.
"""

import io
import os

from ..core.tables import Table, aligned_text
from .device_limits import device_limits


class Benchmark:
    """One figure: the function is called for each of `x_vals` (given as
    the `x_names` arguments) and each of `line_vals` (the `line_arg`
    argument), with `args` besides; it returns milliseconds, or (ms, min,
    max). `bytes` / `flops`: functions of the same arguments giving a point's
    work, which plots rates against the device's limit. The rest as Triton's."""

    def __init__(self, x_names, x_vals, line_arg, line_vals, line_names, plot_name, args=None, xlabel="", ylabel="",
                 x_log=False, y_log=False, styles=None, bytes=None, flops=None, device=None):
        if bytes is not None and flops is not None:
            raise ValueError("Benchmark: give `bytes` or `flops`, not both (one limit per figure)")
        self.x_names, self.x_vals, self.line_arg = list(x_names), list(x_vals), line_arg
        self.line_vals, self.line_names, self.plot_name = list(line_vals), list(line_names), plot_name
        self.args, self.xlabel, self.ylabel = dict(args or {}), xlabel, ylabel
        self.x_log, self.y_log, self.styles = x_log, y_log, styles
        self.work, self.unit = (bytes, "GB/s") if bytes is not None else (flops, "TFLOP/s") if flops else (None, "ms")
        self.device = device

    def limit(self):
        """(rate in the figure's unit, label) of this device's roof, or None."""
        if self.work is None:
            return None
        limits = device_limits(self.device)
        if self.unit == "GB/s":
            return limits.copy_bytes_per_second / 1e9, f"copy bandwidth, measured ({limits.device})"
        return limits.matrix_flops_per_second / 1e12, f"{limits.matrix}, measured ({limits.device})"


class Mark:
    """What perf_report makes of a function: ``run()`` measures and draws."""

    def __init__(self, fn, benchmarks):
        self.fn, self.benchmarks = fn, benchmarks
        self.figures = []  # the latest run's matplotlib figures

    def _measure(self, bench, extra):
        rows = []
        for x in bench.x_vals:
            xs = x if isinstance(x, (list, tuple)) else [x] * len(bench.x_names)
            named = dict(zip(bench.x_names, xs))
            row = [*xs]
            for line in bench.line_vals:
                arguments = {**named, bench.line_arg: line, **bench.args, **extra}
                got = self.fn(**arguments)
                ms, low, high = got if isinstance(got, (list, tuple)) else (got, got, got)
                if bench.work is not None:
                    scale = bench.work(**arguments) / (1e9 if bench.unit == "GB/s" else 1e12) * 1e3
                    ms, low, high = scale / ms, scale / high, scale / low  # a rate: the slowest call is the lowest
                row.append((ms, low, high))
            rows.append(row)
        return rows

    def _table(self, bench, rows, limit):
        headers = [*bench.x_names] + [f"{name} ({bench.unit})" for name in bench.line_names]
        if limit is not None:
            headers += [f"{name}, % of limit" for name in bench.line_names]
        cells = []
        for row in rows:
            xs, values = row[: len(bench.x_names)], row[len(bench.x_names):]
            cell = [*xs] + [f"{v[0]:.4g}" for v in values]
            if limit is not None:
                cell += [f"{100 * v[0] / limit[0]:.1f}" for v in values]
            cells.append(cell)
        text = aligned_text(bench.plot_name, headers, cells)
        if limit is not None:
            text += f"\nlimit: {limit[0]:.4g} {bench.unit} ({limit[1]})"
        return Table(headers, cells, text)

    def _figure(self, bench, rows, limit):
        figure = _new_figure()
        axes = figure.add_subplot()
        x = [row[0] for row in rows]
        for i, name in enumerate(bench.line_names):
            values = [row[len(bench.x_names) + i] for row in rows]
            style = bench.styles[i] if bench.styles else None
            color, linestyle = style if style else (None, "-")
            axes.plot(x, [v[0] for v in values], label=name, color=color, linestyle=linestyle, marker="o")
            axes.fill_between(x, [v[1] for v in values], [v[2] for v in values], alpha=0.2, color=color)
        if limit is not None:
            axes.axhline(limit[0], color="black", linestyle="--", label=limit[1])
        axes.set_xlabel(bench.xlabel or bench.x_names[0])
        axes.set_ylabel(bench.ylabel or bench.unit)
        axes.set_title(bench.plot_name)
        axes.set_xscale("log" if bench.x_log else "linear")
        axes.set_yscale("log" if bench.y_log else "linear")
        axes.legend()
        figure.tight_layout()
        return figure

    def run(self, show_plots=False, print_data=False, save_path="", return_df=False, **kwargs):
        """Measures every point; `print_data` prints each table, `save_path`
        writes <plot_name>.png and .txt there, `show_plots` shows the figures
        (inline in a notebook); returns the tables when `return_df` (Triton
        returns DataFrames; flyrt, whose dependencies lack pandas, tables)."""
        benchmarks = self.benchmarks if isinstance(self.benchmarks, (list, tuple)) else [self.benchmarks]
        tables, self.figures = [], []
        for bench in benchmarks:
            rows = self._measure(bench, kwargs)
            limit = bench.limit()
            table = self._table(bench, rows, limit)
            figure = self._figure(bench, rows, limit)
            tables.append(table)
            self.figures.append(figure)
            if print_data:
                print(table)
            if save_path:
                os.makedirs(save_path, exist_ok=True)
                figure.savefig(os.path.join(save_path, f"{bench.plot_name}.png"))
                with open(os.path.join(save_path, f"{bench.plot_name}.txt"), "w") as f:
                    f.write(repr(table) + "\n")
            if show_plots:
                show(figure)
        if return_df:
            return tables[0] if len(tables) == 1 else tables
        return None


def _new_figure():
    """A 640 x 400 pixel matplotlib figure (no pyplot: no GUI backend, no global state)."""
    try:
        from matplotlib.figure import Figure
    except ImportError:
        raise ImportError("flyrt.testing draws with matplotlib, which is not installed: pip install matplotlib") \
            from None
    return Figure(figsize=(6.4, 4.0), dpi=100)


def show(figure):
    """Shows a figure where a notebook or console shows images (a PNG)."""
    try:
        from IPython import get_ipython
        from IPython.display import Image, display
    except ImportError:
        return
    if get_ipython() is not None:
        buffer = io.BytesIO()
        figure.savefig(buffer, format="png")
        display(Image(data=buffer.getvalue(), format="png"))


def perf_report(benchmarks):
    """Decorator, as Triton's: a function of a Benchmark's arguments becomes a
    Mark, whose ``run()`` measures it at every point and draws the figure."""
    return lambda fn: Mark(fn, benchmarks)


def roofline(points, device=None, show_plot=True):
    """The roofline of this device (its measured copy bandwidth and matrix
    rate) with each of `points`, (label, flops, bytes, ms), placed by its
    arithmetic intensity and achieved FLOP/s; returns the matplotlib figure."""
    limits = device_limits(device)
    peak, bandwidth = limits.matrix_flops_per_second, limits.copy_bytes_per_second
    figure = _new_figure()
    axes = figure.add_subplot()
    intensities = [flops / max(moved, 1) for _, flops, moved, _ in points] or [1.0]
    low, high = min(intensities + [peak / bandwidth]) / 4, max(intensities + [peak / bandwidth]) * 4
    ridge = peak / bandwidth
    axes.plot([low, ridge, high], [bandwidth * low, peak, peak], color="black",
              label=f"copy {bandwidth / 1e9:.0f} GB/s, {limits.matrix} {peak / 1e12:.3g} TFLOP/s (measured)")
    for (label, flops, moved, ms), intensity in zip(points, intensities):
        achieved = flops / ms * 1e3
        roof = min(peak, bandwidth * intensity)
        axes.plot([intensity], [achieved], marker="o", linestyle="", label=f"{label}: {100 * achieved / roof:.0f} %")
    axes.set_xscale("log")
    axes.set_yscale("log")
    axes.set_xlabel("arithmetic intensity (FLOP/byte)")
    axes.set_ylabel("FLOP/s")
    axes.set_title(f"roofline of {limits.device}")
    axes.legend(fontsize="small")
    figure.tight_layout()
    if show_plot:
        show(figure)
    return figure
