"""Kernels that overlap the one before on the GPU: a kernel that calls
fx.wait_for_prior_grids() starts while the kernel ahead of it still runs
(that one called fx.launch_dependents()), in a stream and in a CUDA graph,
and reads that kernel's results after its wait; one that does not wait
starts only after the kernel ahead has ended."""

import pytest
import torch

import flyrt.compiler as flyc
import flyrt.expr as fx

from test_grid_dependency import scale_then_shift

SPINS = 200_000  # a bound on the first kernel's wait: far past a launch's few microseconds


@flyc.kernel
def _hold(flag: fx.Tensor, seen: fx.Tensor, spins: fx.Int32):
    fx.launch_dependents()
    count = 0
    while fx.atomic_or(flag, 0, 0, scope="device") == 0 and count < spins:
        count += 1
    seen[0] = fx.select(count < spins, 1, 0)  # the next kernel raised the flag while this one ran


@flyc.kernel
def _raise(flag: fx.Tensor, done: fx.Tensor, waits: fx.Constexpr[bool]):
    fx.atomic_xchg(flag, 0, 1, scope="device")
    if fx.const_expr(waits):
        fx.wait_for_prior_grids()
    done[0] = 1


@flyc.jit
def hold_then_raise(flag: fx.Tensor, seen: fx.Tensor, done: fx.Tensor, spins: fx.Int32, waits: fx.Constexpr[bool]):
    _hold(flag, seen, spins).launch(grid=(1,), block=(1,))
    _raise(flag, done, waits).launch(grid=(1,), block=(1,))


def _flags():
    return [torch.zeros(1, dtype=torch.int32, device="cuda") for _ in range(3)]


@pytest.mark.skipif(torch.cuda.get_device_capability() < (9, 0), reason="programmatic dependent launch is sm_90's")
@pytest.mark.parametrize("waits", [True, False], ids=["waits", "does-not-wait"])
def test_a_kernel_that_waits_runs_beside_the_one_ahead(waits):
    flag, seen, done = _flags()
    hold_then_raise(flag, seen, done, SPINS, waits)
    torch.cuda.synchronize()
    assert (seen.item(), done.item()) == (1 if waits else 0, 1)


@pytest.mark.skipif(torch.cuda.get_device_capability() < (9, 0), reason="programmatic dependent launch is sm_90's")
def test_in_a_cuda_graph_too():
    flag, seen, done = _flags()
    hold_then_raise(flag, seen, done, SPINS, True)  # compiled and loaded outside the capture
    torch.cuda.synchronize()
    stream = torch.cuda.Stream()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.stream(stream), torch.cuda.graph(graph, stream=stream):
        hold_then_raise(flag, seen, done, SPINS, True)
    for _ in range(3):
        flag.zero_(), seen.zero_(), done.zero_()
        graph.replay()
        torch.cuda.synchronize()
        assert (seen.item(), done.item()) == (1, 1)


def test_the_kernel_behind_reads_the_results_of_the_one_ahead():
    n = 1 << 22
    generator = torch.Generator(device="cuda").manual_seed(5)
    x = torch.randn(n, device="cuda", generator=generator)
    offsets = torch.randn(n, device="cuda", generator=generator)
    y, out = torch.empty_like(x), torch.empty_like(x)
    for factor in (2.0, -3.0, 0.5, 4.0, -1.0):  # each launch's results, not the one's before
        scale_then_shift(x, y, offsets, out, n, factor)
        torch.testing.assert_close(out, x * factor + offsets, rtol=0, atol=0)
