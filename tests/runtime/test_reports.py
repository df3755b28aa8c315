"""flyrt.testing's figures on the CPU target: perf_report / Benchmark as
Triton's (a table per figure, an image of the right shape), rates against
this device's measured limits, measured once and kept, and the roofline."""

import numpy as np
import pytest
from matplotlib.image import imread

import flyrt.compiler as flyc
import flyrt.expr as fx
import flyrt.testing as testing
from flyrt.tuning import device_limits as limits_module

pytestmark = pytest.mark.compiled_for()  # CPU behaviour; the GPU targets' code is tested elsewhere


@flyc.kernel
def _scale(x: fx.Tensor, y: fx.Tensor, n: fx.Int32):
    i = fx.block_idx.x * fx.block_dim.x + fx.thread_idx.x
    if i < n:
        y[i] = x[i] * 2.0


@flyc.jit
def scale(x: fx.Tensor, y: fx.Tensor, n: fx.Int32):
    _scale(x, y, n).launch(grid=((n + 255) // 256,), block=(256,))


@pytest.fixture
def limits(tmp_path, monkeypatch):
    """Device limits measured afresh into a disk cache in tmp_path; counts measurements."""
    monkeypatch.setenv("FLYDSL_RUNTIME_ENABLE_CACHE", "1")
    monkeypatch.setenv("FLYDSL_RUNTIME_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(limits_module, "_measured", {})
    measured = []
    real = limits_module._measure_cpu
    monkeypatch.setattr(limits_module, "_measure_cpu", lambda name: measured.append(name) or real(name))
    return measured


def report(**extra):
    return testing.perf_report(testing.Benchmark(
        x_names=["n"], x_vals=[1 << 12, 1 << 16], line_arg="provider", line_vals=["flyrt", "numpy"],
        line_names=["flyrt", "numpy"], plot_name="scale", xlabel="elements", x_log=True,
        styles=[("blue", "-"), ("green", "--")], **extra))


def timed(n, provider):
    x, y = np.ones(n, np.float32), np.empty(n, np.float32)
    work = (lambda: scale(x, y, n)) if provider == "flyrt" else (lambda: np.multiply(x, 2.0, out=y))
    return tuple(testing.do_bench(work, warmup=1, rep=5, quantiles=[0.5, 0.2, 0.8], device="cpu"))


def test_perf_report_gives_a_table_and_an_image_of_the_right_shape(tmp_path, capsys):
    mark = report()(timed)
    table = mark.run(print_data=True, save_path=str(tmp_path), return_df=True)
    assert table.headers == ["n", "flyrt (ms)", "numpy (ms)"] and [row[0] for row in table.rows] == [4096, 65536]
    assert all(float(cell) > 0 for row in table.rows for cell in row[1:])
    assert "scale" in capsys.readouterr().out
    image = imread(tmp_path / "scale.png")
    assert image.shape[:2] == (400, 640)
    assert (tmp_path / "scale.txt").read_text().startswith("scale\n")
    axes = mark.figures[0].axes[0]
    assert axes.get_xscale() == "log" and [line.get_label() for line in axes.get_lines()] == ["flyrt", "numpy"]


def test_rates_are_read_against_the_measured_limit_measured_once(limits):
    mark = report(bytes=lambda n, **_: 8 * n)(timed)
    table = mark.run(return_df=True)
    assert table.headers[-2:] == ["flyrt, % of limit", "numpy, % of limit"] and "GB/s" in table.headers[1]
    assert "limit:" in repr(table) and "copy bandwidth, measured" in repr(table)
    assert [line.get_label() for line in mark.figures[0].axes[0].get_lines()][-1].startswith("copy bandwidth")
    found = testing.device_limits("cpu")
    assert found.copy_bytes_per_second > 1e8 and found.matrix_flops_per_second > 1e8 and len(limits) == 1
    limits_module._measured.clear()  # a new process: from the disk cache, not measured again
    assert testing.device_limits("cpu") == found and len(limits) == 1


def test_the_roofline_places_each_point_under_its_roof(limits):
    n = 1 << 16
    x, y = np.ones(n, np.float32), np.empty(n, np.float32)
    ms = testing.do_bench(lambda: scale(x, y, n), warmup=1, rep=5, device="cpu", return_mode="median")
    figure = testing.roofline([("scale", n, 8 * n, ms)], device="cpu", show_plot=False)
    labels = [line.get_label() for line in figure.axes[0].get_lines()]
    assert labels[0].startswith("copy ") and labels[1].startswith("scale: ") and labels[1].endswith(" %")
    assert figure.axes[0].get_xscale() == "log"


def test_bad_benchmarks_are_clear_errors():
    with pytest.raises(ValueError, match="give `bytes` or `flops`, not both"):
        testing.Benchmark(x_names=["n"], x_vals=[1], line_arg="p", line_vals=[1], line_names=["a"], plot_name="x",
                          bytes=lambda n: n, flops=lambda n: n)
    with pytest.raises(ValueError, match="device is 'gpu', 'cpu' or None"):
        testing.device_limits("tpu")
