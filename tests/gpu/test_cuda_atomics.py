"""Atomics and fences on the GPU, against numpy: the histogram (shared and
global atomics), the one-launch sum whose last block combines the partials
(fences and an acq_rel ticket), old values, every integer operation, float
adds (BFloat16 too, sm_90), compare-and-swap, and every scope and order."""

import numpy as np
import pytest
import torch

import flyrt.compiler as flyc
import flyrt.expr as fx
import test_atomics as cpu
from cuda_arrays import cuda, host, on_gpu
from kernels.histogram import histogram
from kernels.split_sum import split_sum

RNG = np.random.default_rng(11)


@pytest.mark.parametrize("bins", [1, 64, 4096])
def test_histogram(bins):
    n = 4_000_037
    values = RNG.integers(0, bins, n).astype(np.int32)
    *_, counts, _, _, _ = on_gpu(histogram, values, np.zeros(bins, np.int32), n, 264, bins)
    np.testing.assert_array_equal(counts, np.bincount(values, minlength=bins))


def test_split_sum_in_one_launch():
    n, blocks = 3_000_017, 264
    x = RNG.integers(-8, 8, n).astype(np.float32)
    moved = [cuda(a) for a in (x, np.zeros(blocks, np.float32), np.zeros(1, np.int32), np.zeros(1, np.float32))]
    for _ in range(3):
        split_sum(*moved, n, blocks)
        torch.cuda.synchronize()
        assert host(moved[3])[0] == x.sum() and host(moved[2])[0] == 0


def test_slots_are_claimed_once():
    n = 1_000_000
    _, order, _ = on_gpu(cpu.claim_slots, np.zeros(1, np.int32), np.full(n, -1, np.int32), n)
    np.testing.assert_array_equal(np.sort(order), np.arange(n))


@pytest.mark.parametrize("dtype", [np.int32, np.uint32, np.int64, np.uint64])
def test_every_integer_operation(dtype):
    n = 300_000
    x, start = cpu.integer_case(dtype, n)
    _, out, old, _ = on_gpu(cpu.apply_all, x, start.copy(), np.zeros((8, n), dtype), n)
    cpu.check_integer_case(x, start, out, old)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, torch.bfloat16])
def test_float_add_and_sub(dtype):
    # Sums of small integers are exact in any order while every partial sum
    # fits the significand: integers up to 256 in BFloat16, 2048 in Float16.
    n, most = {torch.bfloat16: (1024, 1), torch.float16: (20_000, 4)}.get(dtype, (200_000, 4))
    x = torch.randint(-most, most + 1, (n,), device="cuda").to(dtype)
    out = torch.zeros(8, dtype=dtype, device="cuda")
    cpu.scaled_fetch_add(x, out, n)
    groups = [x[k::4].double() for k in range(4)]
    expected = torch.stack([g.sum() * 0.5 for g in groups] + [-g.sum() for g in groups])
    assert torch.equal(out.double(), expected)


def test_compare_and_swap():
    n = 100_000
    t, old, won, _ = on_gpu(cpu.swap_in, np.zeros(16, np.int64), np.zeros(n, np.int64), np.zeros(n, np.bool_), n)
    winners = np.flatnonzero(won)
    assert len(winners) == 16 and sorted(winners % 16) == list(range(16))
    np.testing.assert_array_equal(t[winners % 16], winners + 1)


@flyc.kernel
def _each_scope_and_order(counts: fx.Tensor, n: fx.Int32):
    i = fx.block_idx.x * fx.block_dim.x + fx.thread_idx.x
    if i < n:
        fx.atomic_add(counts, 0, 1, scope="block", order="relaxed")
        fx.atomic_add(counts, 1, 1, scope="device", order="acquire")
        fx.atomic_add(counts, 2, 1, scope="system", order="release")
        fx.atomic_add(counts, 3, 1, scope="device", order="acq_rel")
        fx.atomic_add(counts, 4, 1, scope="system", order="seq_cst")
        fx.memory_fence(scope="block", order="acquire")
        fx.memory_fence(scope="system", order="seq_cst")


@flyc.jit
def each_scope_and_order(counts: fx.Tensor, n: fx.Int32):
    _each_scope_and_order(counts, n).launch(grid=((n + 127) // 128,), block=(128,))


def test_every_scope_and_order():
    n = 100_003
    counts, _ = on_gpu(each_scope_and_order, np.zeros(5, np.int32), n)
    np.testing.assert_array_equal(counts, [n] * 5)
    ptx = each_scope_and_order.lower(np.zeros(5, np.int32), n, target="cuda").device_code["_each_scope_and_order"]
    for text in ("atom.relaxed.cta.add.u32", "atom.acquire.gpu.add.u32", "atom.release.sys.add.u32",
                 "atom.acq_rel.gpu.add.u32", "fence.sc.sys;", "fence.acq_rel.cta;"):
        assert text in ptx, text
