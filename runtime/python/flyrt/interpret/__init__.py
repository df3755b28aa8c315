"""Interpreter mode (``FLYDSL_INTERPRET=1``, ``flyrt.set_interpret``,
``launcher.interpret``): launchers and kernels run as plain Python on
concrete values, so ``print()``, pdb and debugpy work inside kernels; results
are the compiled CPU target's (see eager_builder and numerics for where they
are exact). mode: the switches; launch: running a launcher; eager_builder:
what each op does; block_threads: a block's threads, one at a time."""

from .mode import follow_environment, set_interpret
