"""The language kernel authors write, as it traces: scalar values, vectors,
blocks (shared memory, barriers, shuffles), matrices, tensors, structured
control flow, and the trace that records their ops. ``flyrt.expr`` is its
public face."""
