"""fx.printf on an NVIDIA GPU: CUDA's vprintf, formatted by the driver on the
host as C's printf (the text the CPU target prints), written to the
process's stdout by the time the launcher returns (a kernel replayed in a
CUDA graph: by the time flyrt.synchronize() returns)."""

import torch

import flyrt
import test_printf as cpu


def test_a_gpu_kernel_prints_what_the_cpu_does_before_the_launcher_returns(capfd):
    x = torch.tensor([0.5, -1.25, 3.0, 7.0], device="cuda")
    cpu.formats(x, 3)
    printed = capfd.readouterr().out
    assert sorted(printed.splitlines()) == sorted(cpu.expected_formats(x.cpu().numpy(), 3).splitlines())


def test_a_printing_kernel_captured_in_a_cuda_graph_prints_at_each_replay(capfd):
    out = torch.zeros(64 * 32, dtype=torch.int32, device="cuda")
    cpu.steps(out, 1)  # compiled and loaded outside the capture
    capfd.readouterr()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        cpu.steps(out, 1)
    for _ in range(2):
        graph.replay()
    flyrt.synchronize()  # waits, and flushes what the replays printed
    lines = capfd.readouterr().out.splitlines()
    assert sorted(lines) == sorted(2 * [f"thread {t} step {s}" for t in range(32) for s in range(3)])
