"""The invalidation engine, unchanged, on CUDA: a helper edit evicts exactly
its dependents and recompiles only the kernel inlining it (its PTX module is
the only one loaded again), A -> B -> A reuses the loaded module, and CPU and
GPU artifacts of one launcher live side by side."""

import torch

from flyrt import _core
from test_invalidation import (TWO_KERNELS, a_b_a_reuses_the_first_artifact, compiles, elementwise,
                               helper_redefined_later)


def run_cuda(launcher, n=8):
    x = torch.arange(n, dtype=torch.float32, device="cuda")
    out = torch.zeros(n, device="cuda")
    launcher(x, out)
    return out.cpu().numpy()


def test_helper_edit_on_the_gpu(make_module):
    helper_redefined_later(make_module, run_cuda)


def test_back_to_a_known_version_reuses_its_loaded_module(make_module):
    a_b_a_reuses_the_first_artifact(make_module, run_cuda)


def test_only_the_kernel_inlining_the_helper_is_recompiled(make_module):
    mod = make_module(TWO_KERNELS)
    assert run_cuda(mod.launch)[3] == 8.0
    compiled, reused = _core.compiled_part_counts()
    exec("def helper(v):\n    return v * 10.0\n", mod.__dict__)
    assert run_cuda(mod.launch)[3] == 60.0
    after = _core.compiled_part_counts()
    assert (after[0] - compiled, after[1] - reused) == (1, 2)  # one PTX module; the launcher, the other kernel


def test_cpu_and_gpu_artifacts_are_evicted_together(make_module):
    import numpy as np

    mod = make_module(elementwise("x[i] * SCALE", "SCALE = 2.0\n"))
    x = np.arange(8, dtype=np.float32)
    out = np.zeros(8, np.float32)
    mod.launch(x, out)
    assert run_cuda(mod.launch)[3] == 6.0
    assert mod.launch.cache_info().size == 2
    mod.SCALE = 3.0
    mod.launch(x, out)
    assert out[3] == 9.0 and run_cuda(mod.launch)[3] == 9.0
    assert compiles(mod.launch) == 4
