"""Programmatic dependent launch: a kernel that starts before the kernel
ahead of it in the stream has ended, so that its launch and its first
instructions overlap that kernel's last ones (a split-KV decode's combine
kernel behind its main one).

- ``fx.launch_dependents()`` in the kernel ahead lets the next kernel be
  scheduled now, once every block of this one has called it or ended.
- ``fx.wait_for_prior_grids()`` in the kernel behind waits until the kernels
  ahead of it have ended and their writes are visible. Before the wait it
  may read only what was written before those kernels began (arguments the
  host filled, tables); each thread reads their results after its own wait.

A kernel that calls ``fx.wait_for_prior_grids()`` is launched with CUDA's
programmatic stream serialization on NVIDIA GPUs from sm_90. Everywhere else
(older GPUs, AMD GPUs, the CPU, interpreter mode) kernels run one after
another as the stream orders them, and both calls do nothing.
"""

from .tracing import current, line


def wait_for_prior_grids():
    """Waits until the kernels ahead of this one in the stream have ended,
    their writes visible to this thread."""
    current().builder.wait_for_prior_grids(line())


def launch_dependents():
    """Lets the kernel after this one in the stream start before this one
    ends (it waits for this one's writes at its ``fx.wait_for_prior_grids()``)."""
    current().builder.launch_dependents(line())
