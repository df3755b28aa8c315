"""Example kernels written in flyrt (``import flyrt.expr as fx``)."""
